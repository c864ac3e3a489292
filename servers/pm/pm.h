/* pm: the POSIX personality's process manager (README.md). Shared between its files. */
#pragma once
#include "axrt.h"
#include "lx_abi.h"
#include "deadline.h"

#define LX_NLIMITS 16 /* RLIMIT_* */

/* A process's credentials (creds.c); all zero: root. */
#define PM_NGROUPS 6 /* supplementary groups: what one VFS_CREDS message carries */
struct lxcreds {
	uint32_t uid, euid, suid, fsuid;
	uint32_t gid, egid, sgid, fsgid;
	uint32_t ngroups;
	uint32_t groups[PM_NGROUPS];
};

struct lxproc {
	endpoint_t ep;  /* the process id (kcall.h): the endpoint its first thread had */
	int32_t pid, ppid, pgid, sid;
	char name[32];
	bool used;
	bool zombie;    /* ended, status kept for the parent's wait4 */
	bool toplevel;  /* started by run=: its end is logged */
	int32_t status; /* Linux wait status once a zombie */
	uint64_t cpu_us;      /* CPU time it used (from its exit report) */
	uint64_t children_us; /* CPU time of the children it has reaped, and theirs */
	uint8_t exit_signal; /* sent to the parent at the end (clone's low byte; LX_SIGCHLD) */
	endpoint_t vfork_parent; /* thread held in vfork until this child execs or ends */
	uint64_t limits[LX_NLIMITS][2]; /* soft, hard (prlimit64) */
	struct lx_deadline alarm; /* LX_ITIMER_REAL (itimer.c) */
	bool subreaper;       /* PR_SET_CHILD_SUBREAPER: orphans below it come to it, not to pid 1 */
	uint8_t pdeathsig;    /* PR_SET_PDEATHSIG: the signal it gets when its parent ends */
	bool no_new_privs, keepcaps; /* PR_SET_NO_NEW_PRIVS (inherited, kept for good), PR_SET_KEEPCAPS */
	uint64_t timerslack_ns;      /* PR_SET_TIMERSLACK (0: the default, 50 us) */
	struct lxcreds creds;
};

/* A POSIX timer (timer_create; itimer.c), in the kept table like the processes. */
struct lxtimer {
	int32_t pid;         /* its process, 0: a free entry */
	int32_t id;          /* timer_t as the process sees it */
	int32_t clock;
	uint8_t notify;      /* SIGEV_SIGNAL, SIGEV_NONE or SIGEV_THREAD_ID */
	uint8_t signo;
	endpoint_t thread;   /* SIGEV_THREAD_ID: the thread that gets the signal */
	uint64_t value;      /* sigev_value, delivered as si_value */
	struct lx_deadline when;
	uint32_t overrun;    /* expirations the last signal stood for, less one */
};
#define MAX_LXTIMERS 128
extern struct lxtimer *lx_timers;

#define PM_HOLD INT64_MIN /* lx_serve's "no answer now": the caller stays blocked */

/* The call being served: who made it (the thread to answer) and from which process. */
struct lxcall {
	endpoint_t thread;
	struct lxproc *p;
	uint32_t nr;
	uint64_t a[6];
};

/* Credentials (creds.c): the get/set calls (*served false: not one of them); a fork's child
 * gets its parent's; whether `from` may signal `to` (Linux's rule: root, or a real or
 * effective uid that is the target's real or saved one); whether p is root. */
int64_t lx_creds_call(struct lxproc *p, uint32_t nr, const uint64_t *a, bool *served);
void lx_creds_fork(struct lxproc *child, const struct lxproc *parent);
/* After a successful execve: setid[0] (setid[1]) = the file's owner (group) | 1 << 32 when
 * it is set-user-ID (set-group-ID), else 0. */
void lx_creds_exec(struct lxproc *p, const uint64_t setid[2]);
bool lx_may_signal(const struct lxproc *from, const struct lxproc *to);
bool lx_privileged(const struct lxproc *p);

/* Process table (ptable.c). */
struct lxproc *lx_find(endpoint_t ep);
struct lxproc *lx_find_pid(int32_t pid);
struct lxproc *lx_alloc(void);
int32_t lx_new_pid(void);
/* Remembers a thread's tid (clone) and finds it again; 0 if unknown. */
void lx_thread_add(int32_t tid, endpoint_t ep, int32_t pid);
endpoint_t lx_thread_ep(int32_t tid, int32_t *pid);
void lx_threads_forget(int32_t pid);
extern struct lxproc *lx_procs; /* MAX_PROCS, in kept memory */
#define MAX_PROCS 128
/* The tables, from our predecessor (true: pm restarted and took them over) or new. */
bool lx_table_init(void);
/* vfs's endpoint, or 0. */
endpoint_t lx_vfs(void);
/* A call to vfs (m is its message, then the answer): 0 or a negative kernel error, -KE_SRCH
 * when the system has no vfs. A vfs that ended (killed, crashed, hung) and is being
 * restarted is waited for, up to 2 s. */
int64_t lx_vfs_call(struct kmsg *m);
/* The exit of process p (a kernel report): zombie, LX_SIGCHLD, waiters. */
void lx_ended(struct lxproc *p, int32_t status);
/* An answer to a held call. */
void lx_answer(endpoint_t thread, int64_t r);

/* A struct rusage with this CPU time (as user time) at addr in p; 0 or -EFAULT. */
int64_t lx_put_rusage(struct lxproc *p, uint64_t addr, uint64_t cpu_us);

/* fork.c: clone, fork, vfork, execve. */
int64_t lx_clone(struct lxcall *c, uint64_t flags, uint64_t stack, uint64_t ptid, uint64_t ctid, uint64_t tls);
int64_t lx_execve(struct lxcall *c, uint64_t path, uint64_t argv, uint64_t envp);

/* wait.c: wait4, kill and relatives, held-call cancellation. */
int64_t lx_wait4(struct lxcall *c);
int64_t lx_kill(struct lxproc *from, int64_t pid, uint64_t sig);
int64_t lx_tgkill(struct lxproc *from, int64_t tgid, int64_t tid, uint64_t sig);
void lx_retry_waits(void);
void lx_cancel(endpoint_t thread);

/* Serves one forwarded Linux system call; returns the result for the caller's rax, or
 * PM_HOLD. */
int64_t lx_serve(struct lxcall *c);
/* The Linux name of a system call number, or NULL. */
const char *lx_name(uint32_t nr);

/* sysinfo.c */
int64_t lx_uname(struct lxproc *p, uint64_t buf);
int64_t lx_sysinfo(struct lxproc *p, uint64_t buf);
int64_t lx_getrandom(struct lxproc *p, uint64_t buf, uint64_t len);
void lx_limits_init(struct lxproc *p);
int64_t lx_prlimit(struct lxproc *p, uint64_t pid, uint64_t res, uint64_t newp, uint64_t oldp);
int64_t lx_sched_getaffinity(struct lxproc *p, uint64_t pid, uint64_t len, uint64_t mask);
/* itimer.c: alarm, setitimer, getitimer; the loop's look at the deadlines (sends SIGALRM,
 * sets the loop's longest sleep; never reports work). */
int64_t lx_alarm(struct lxproc *p, uint64_t secs);
int64_t lx_setitimer(struct lxproc *p, int64_t which, uint64_t new_va, uint64_t old_va);
int64_t lx_getitimer(struct lxproc *p, int64_t which, uint64_t cur_va);
struct ax_evloop;
bool lx_itimer_poll(struct ax_evloop *l);
/* timer_create, timer_settime, timer_gettime, timer_getoverrun, timer_delete; and the
 * process's timers dropped (execve, exit). */
int64_t lx_timer_create(struct lxproc *p, uint64_t clock, uint64_t sev_va, uint64_t id_va);
int64_t lx_timer_settime(struct lxproc *p, uint64_t id, uint64_t flags, uint64_t new_va, uint64_t old_va);
int64_t lx_timer_gettime(struct lxproc *p, uint64_t id, uint64_t cur_va);
int64_t lx_timer_getoverrun(struct lxproc *p, uint64_t id);
int64_t lx_timer_delete(struct lxproc *p, uint64_t id);
void lx_timers_drop(struct lxproc *p);
/* pm.c */
int lx_nprocs(void);
extern uint64_t lx_total_frames;
