/* The seam between the native kernel and the Linux personality (kernel/linux/,
 * docs/kernel-api.md "The Linux personality"): the only Linux header the kernel's other
 * files include. A thread carries its Linux state (struct lx_thread, below; unused in native
 * threads); a process points to its own (struct lx_proc, linux/lxstate.h; NULL for native
 * processes). The native kernel calls into the personality only through what is declared
 * here: the Linux system call entry, the signal work on the way back to user mode and on a
 * user fault, the Linux kernel calls (KC_LX_*, KC_LINUX_ROUTE, KC_WAKE) and the vDSO. */
#pragma once
#include "lib/types.h"
#include <axolotl/kcall.h>

#define LX_NSIG 64 /* (the UAPI headers give user space the old 32) */

struct proc;
struct thread;
struct trap_frame;
struct lx_proc;

/* A thread's Linux state (linux/lxproc.c, linux/signal.c, linux/futex.c). */
struct lx_thread {
	int32_t tid;
	uint64_t clear_tid;        /* LX_CLONE_CHILD_CLEARTID / set_tid_address: zeroed, woken at exit */
	uint64_t robust_list;      /* set_robust_list head (stored, returned) */
	uint64_t sigmask, sigpending;
	uint64_t saved_mask;       /* rt_sigsuspend: the mask to restore after the handler */
	bool has_saved_mask;
	int32_t sigpid[LX_NSIG], sigcode[LX_NSIG];
	uint64_t sigval[LX_NSIG];  /* si_value of a pending SI_TIMER/SI_QUEUE signal */
	uint64_t sigwait;          /* rt_sigtimedwait: the signals it waits for (posted ones wake it) */
	uint64_t altstack_sp, altstack_size;
	uint32_t altstack_flags;
	bool in_lxcall;            /* blocked in a call forwarded to a POSIX server */
	bool lx_restart;           /* that call answered -LX_ERESTARTSYS: EINTR or run again */
	bool lx_restart_nohand;    /* ...but EINTR after a handler even with LX_SA_RESTART (ppoll...) */
	uint64_t lx_nr;            /* the Linux call being served (for a restart) */
	const void *futex_space;   /* B_FUTEX: the futex's key (futex.c): the process or the shared
	                              memory object, and the address or offset in it; the bitset */
	uint64_t futex_va;
	uint32_t futex_bits;
	uint64_t futex_seq;        /* wait order: the oldest waiter is woken first */
};

/* The entry (linux/linux.c): rax below KC_BASE, kernel lock held; returns the value for rax. */
int64_t linux_syscall(struct thread *me, uint64_t nr, const uint64_t a[6]);

/* Signals (linux/signal.c). True if t has a pending signal it does not block (a wait it is
 * in should end). */
bool signal_pending(const struct thread *t);
/* Before returning to user mode from a system call or interrupt: runs the restart logic of
 * an interrupted call and delivers one pending signal (builds the handler frame in f, or
 * ends the process). Takes the kernel lock only when there is something to do. */
void signal_user_return(struct trap_frame *f);
/* A user-mode fault of a Linux process: true if a handler frame was set up in f. */
bool signal_fault(struct thread *t, struct trap_frame *f, uint64_t cr2);

/* The Linux kernel calls (docs/kernel-api.md section 8b). */
int64_t kc_lx_pid(struct thread *me, endpoint_t child, uint64_t pid);
int64_t kc_lx_fork(struct thread *me, endpoint_t ep, uint64_t pid, uint64_t stack);
int64_t kc_lx_thread(struct thread *me, endpoint_t ep, uint64_t tid, uint64_t stack, uint64_t tls, uint64_t flags,
		     uint64_t clear_tid);
int64_t kc_lx_exec(struct thread *me, endpoint_t ep, uint64_t handle, uint64_t size, uint64_t uargs,
		   uint64_t args_len);
int64_t kc_lx_signal(struct thread *me, endpoint_t target, uint64_t sig, uint64_t flags, uint64_t pid,
		     uint64_t code, uint64_t value);
int64_t kc_lx_mmap(struct thread *me, endpoint_t ep, uint64_t handle, uint64_t addr, uint64_t len,
		   uint64_t prot_flags, uint64_t offset);
int64_t kc_lx_munmap(struct thread *me, endpoint_t ep, uint64_t addr, uint64_t len);
/* KC_LX_PASS (linux/lxpass.c). */
int64_t kc_lx_pass(struct thread *me, endpoint_t ep, endpoint_t dst, uint64_t umsg);
/* KC_LINUX_ROUTE: a parent sends some of its child's Linux calls to another POSIX server. */
int64_t kc_linux_route(struct thread *me, endpoint_t child, uint64_t slot, uint64_t ubits);
/* KC_WAKE: a Linux process's wake word, rung by the servers (linux/wakeword.c). */
int64_t kc_wake(struct thread *me, uint64_t op, uint64_t a, uint64_t b);
/* p's Linux pid, or -KE_SRCH for a native process (KI_LX_PID). */
int64_t lx_pid_of(const struct proc *p);

/* The vDSO (linux/vdso.c). Builds its two shared objects, once at boot, after time and the
 * RTC are set and every CPU is up; before the first user process. Without memory,
 * processes get no vDSO. */
void vdso_init(void);
/* The address of the vvar page in p (a native process), mapped read-only now if it is not
 * yet; 0 if there is none or no room. */
uint64_t vdso_map_vvar(struct proc *p);
/* A thread was marked dead: the vvar page's thread_deaths goes up. */
void vdso_thread_died(void);
