/* Linux processes and threads: pm's KC_LX_* calls and the thread calls the kernel serves
 * (lxproc.c). */
#pragma once
#include "proc/proc.h"

/* Whether t waits for me's answer to a call it made (its user state is stable). */
bool held_by(const struct thread *t, const struct thread *me);
/* KC_LX_PASS (lxpass.c). */
/* exit (one thread) or exit_group (the process); never returns. */
void lx_exit(struct thread *me, uint64_t code, bool group);
int64_t lx_set_tid_address(struct thread *me, uint64_t addr);
/* set_robust_list(head, len) or get_robust_list(pid, head_ptr, len_ptr). */
int64_t lx_robust_list(struct thread *me, bool set, uint64_t a0, uint64_t a1, uint64_t a2);
