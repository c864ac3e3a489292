/* Linux processes and threads: pm's KC_LX_* calls and the thread calls the kernel serves
 * (lxproc.c). */
#pragma once
#include "proc/proc.h"

int64_t kc_lx_pid(struct thread *me, endpoint_t child, uint64_t pid);
int64_t kc_lx_fork(struct thread *me, endpoint_t ep, uint64_t pid, uint64_t stack);
int64_t kc_lx_thread(struct thread *me, endpoint_t ep, uint64_t tid, uint64_t stack, uint64_t tls, uint64_t flags,
		     uint64_t clear_tid);
int64_t kc_lx_exec(struct thread *me, endpoint_t ep, uint64_t handle, uint64_t size, uint64_t uargs,
		   uint64_t args_len);
int64_t kc_lx_munmap(struct thread *me, endpoint_t ep, uint64_t addr, uint64_t len);
int64_t kc_lx_mmap(struct thread *me, endpoint_t ep, uint64_t handle, uint64_t addr, uint64_t len,
		   uint64_t prot_flags, uint64_t off);
/* Whether t waits for me's answer to a call it made (its user state is stable). */
bool held_by(const struct thread *t, const struct thread *me);
/* KC_LX_PASS (lxpass.c). */
int64_t kc_lx_pass(struct thread *me, endpoint_t ep, endpoint_t dst, uint64_t umsg);
/* exit (one thread) or exit_group (the process); never returns. */
void lx_exit(struct thread *me, uint64_t code, bool group);
int64_t lx_set_tid_address(struct thread *me, uint64_t addr);
/* set_robust_list(head, len) or get_robust_list(pid, head_ptr, len_ptr). */
int64_t lx_robust_list(struct thread *me, bool set, uint64_t a0, uint64_t a1, uint64_t a2);
