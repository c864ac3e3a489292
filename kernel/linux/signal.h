/* Linux signals: dispositions, masks, posting, and delivery on the way back to user mode
 * (signal.c). pm decides who gets a signal (kill, LX_SIGCHLD, the terminal's ^C); the kernel
 * keeps the per-process actions and per-thread masks and builds the handler frames. */
#pragma once
#include "proc/proc.h"
#include "lx_abi.h"

/* Posts sig to thread t (to_thread) or to any thread of p that does not block it.
 * Returns 1 if it was discarded because it is ignored, else 0. */
int signal_post(struct proc *p, struct thread *t, int sig, int32_t pid, int32_t code, uint64_t value);
/* Waits with mask in place of the thread's own (rt_sigsuspend, ppoll, pselect6,
 * epoll_pwait); the old mask is kept to come back after the handler (setup_frame), or by
 * signal_mask_settle if no handler is due. */
void signal_mask_swap(struct thread *t, uint64_t mask);
/* Puts a swapped-in mask back if no signal is pending that a handler would run for. */
void signal_mask_settle(struct thread *t);
/* execve: handlers back to default (ignored stay ignored), alternate stack gone. */
void signal_exec_reset(struct thread *t);
/* The signals a forked child of lx starts holding (lx_proc.sig_forkign): those lx ignores. */
uint64_t signal_fork_ignored(const struct lx_proc *lx);

int64_t lx_rt_sigaction(struct thread *me, uint64_t sig, uint64_t uact, uint64_t uoact, uint64_t size);
int64_t lx_rt_sigprocmask(struct thread *me, uint64_t how, uint64_t uset, uint64_t uoset, uint64_t size);
int64_t lx_rt_sigpending(struct thread *me, uint64_t uset, uint64_t size);
int64_t lx_rt_sigsuspend(struct thread *me, uint64_t uset, uint64_t size);
int64_t lx_rt_sigtimedwait(struct thread *me, uint64_t uset, uint64_t uinfo, uint64_t utimeout, uint64_t size);
/* pause: sleeps until a signal is delivered; always -EINTR. */
int64_t lx_pause(struct thread *me);
int64_t lx_sigaltstack(struct thread *me, uint64_t uss, uint64_t uoss);
int64_t lx_rt_sigreturn(struct thread *me, struct trap_frame *f);
