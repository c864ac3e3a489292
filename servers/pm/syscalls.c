/* The Linux system calls pm serves so far: process ids and credentials (system information
 * is in sysinfo.c; files are vfs's). The caller's memory is reached with KC_VCOPY only; a bad
 * pointer is EFAULT, never a crash of pm. Everything else is ENOSYS, logged once per call by
 * name. docs/posix.md has the list. */
#include "pm.h"
#include "lx_abi.h"
#include "linux_syscalls.h"
#include "vfs_proto.h"

#define LX_REMOVEXATTR_LAST 199 /* setxattr 188 .. fremovexattr 199 */

const char *lx_name(uint32_t nr)
{
	size_t n = sizeof(linux_syscall_names) / sizeof(linux_syscall_names[0]);
	return nr < n ? linux_syscall_names[nr] : NULL;
}

/* setpgid(pid, pgid): the caller or one of its children, into a group of its session. */
static int64_t setpgid(struct lxproc *me, int64_t pid, int64_t pgid)
{
	if (pid < 0 || pgid < 0)
		return -LX_EINVAL;
	struct lxproc *q = pid ? lx_find_pid((int32_t)pid) : me;
	if (!q || q->zombie || (q != me && q->ppid != me->pid))
		return -LX_ESRCH;
	if (q->sid != me->sid || q->pid == q->sid)
		return -LX_EPERM; /* another session, or a session leader */
	int32_t g = pgid ? (int32_t)pgid : q->pid;
	if (g != q->pid) { /* joining: the group must exist in the session */
		bool ok = false;
		for (int i = 0; i < MAX_PROCS && !ok; i++)
			ok = lx_procs[i].used && lx_procs[i].pgid == g && lx_procs[i].sid == me->sid;
		if (!ok)
			return -LX_EPERM;
	}
	q->pgid = g;
	return 0;
}

static int64_t id_of(struct lxproc *me, int64_t pid, bool session)
{
	struct lxproc *q = pid ? lx_find_pid((int32_t)pid) : me;
	if (!q)
		return -LX_ESRCH;
	return session ? q->sid : q->pgid;
}

/* capget/capset: root has every capability (Linux's 41), other users none. */
#define CAP_V3 0x20080522u
static int64_t capget(struct lxproc *p, uint64_t hdr, uint64_t data, bool set)
{
	uint32_t h[2];
	if (ax_vcopy(p->ep, (const void *)hdr, EP_NONE, h, sizeof(h)) < 0)
		return -LX_EFAULT;
	if (h[0] != CAP_V3 && h[0] != 0x19980330u && h[0] != 0x20071026u) {
		h[0] = CAP_V3; /* the version the kernel prefers, as Linux answers */
		return ax_vcopy(EP_NONE, h, p->ep, (void *)hdr, sizeof(h)) < 0 ? -LX_EFAULT : -LX_EINVAL;
	}
	if (h[1] && h[1] != (uint32_t)p->pid && !lx_find_pid((int32_t)h[1]))
		return -LX_ESRCH;
	struct lxproc *t = h[1] ? lx_find_pid((int32_t)h[1]) : p;
	bool root = lx_privileged(t ? t : p);
	if (set) { /* root keeps what it has; another process has nothing to raise */
		uint32_t want[6] = { 0 };
		if (!root && data && ax_vcopy(p->ep, (const void *)data, EP_NONE, want, sizeof(want)) < 0)
			return -LX_EFAULT;
		for (int i = 0; !root && i < 6; i++)
			if (want[i])
				return -LX_EPERM;
		return 0;
	}
	if (!data)
		return 0;
	const uint32_t all[2] = { root ? 0xffffffffu : 0, root ? 0x1ffu : 0 }; /* root: every capability */
	uint32_t d[6] = { all[0], all[0], 0, all[1], all[1], 0 }; /* effective, permitted, inheritable x2 */
	size_t n = h[0] == 0x19980330u ? 3 : 6;
	return ax_vcopy(EP_NONE, d, p->ep, (void *)data, n * 4) < 0 ? -LX_EFAULT : 0;
}

static int64_t prctl(struct lxproc *p, endpoint_t thread, uint64_t op, uint64_t arg)
{
	switch (op) {
	case 15: { /* PR_SET_NAME */
		char name[16];
		if (ax_vcopy(p->ep, (const void *)arg, EP_NONE, name, sizeof(name)) < 0)
			return -LX_EFAULT;
		name[15] = 0;
		ksnprintf(p->name, sizeof(p->name), "%s", name);
		if (thread == p->ep) { /* the main thread's name is the process's (/proc/PID/comm, vfs's) */
			struct kmsg m = { .type = VFS_COMM, .w = { p->ep } };
			memcpy(&m.w[1], name, sizeof(name));
			lx_vfs_call(&m);
		}
		return 0;
	}
	case 16: { /* PR_GET_NAME */
		char name[16] = { 0 };
		ksnprintf(name, sizeof(name), "%s", p->name);
		return ax_vcopy(EP_NONE, name, p->ep, (void *)arg, sizeof(name)) < 0 ? -LX_EFAULT : 0;
	}
	case 1: /* PR_SET_PDEATHSIG */
		if (arg > 64)
			return -LX_EINVAL;
		p->pdeathsig = (uint8_t)arg;
		return 0;
	case 2: /* PR_GET_PDEATHSIG */
	case 37: { /* PR_GET_CHILD_SUBREAPER */
		int32_t v = op == 2 ? p->pdeathsig : p->subreaper;
		return ax_vcopy(EP_NONE, &v, p->ep, (void *)arg, sizeof(v)) < 0 ? -LX_EFAULT : 0;
	}
	case 36: /* PR_SET_CHILD_SUBREAPER */
		p->subreaper = arg != 0;
		return 0;
	case 4:  /* PR_SET_DUMPABLE */
		return arg > 1 ? -LX_EINVAL : 0;
	case 38: /* PR_SET_NO_NEW_PRIVS: once set, for good */
		if (arg != 1)
			return -LX_EINVAL;
		p->no_new_privs = true;
		return 0;
	case 39: /* PR_GET_NO_NEW_PRIVS */
		return p->no_new_privs;
	case 3: /* PR_GET_DUMPABLE */
		return 1;
	case 7: /* PR_GET_KEEPCAPS */
		return p->keepcaps;
	case 8: /* PR_SET_KEEPCAPS */
		if (arg > 1)
			return -LX_EINVAL;
		p->keepcaps = arg;
		return 0;
	case 29: /* PR_SET_TIMERSLACK (0: back to the default) */
		p->timerslack_ns = arg;
		return 0;
	case 30: /* PR_GET_TIMERSLACK */
		return (int64_t)(p->timerslack_ns ? p->timerslack_ns : 50000);
	case 21: /* PR_GET_SECCOMP: no filter */
		return 0;
	case 23: /* PR_CAPBSET_READ: root's bounding set has every capability there is */
		return arg <= 40 ? 1 : -LX_EINVAL;
	}
	return -LX_EINVAL;
}

int64_t lx_put_rusage(struct lxproc *p, uint64_t addr, uint64_t cpu_us)
{
	int64_t ru[18] = { 0 }; /* two timevals, then 14 longs */
	ru[0] = (int64_t)(cpu_us / 1000000), ru[1] = (int64_t)(cpu_us % 1000000);
	return ax_vcopy(EP_NONE, ru, p->ep, (void *)addr, sizeof(ru)) < 0 ? -LX_EFAULT : 0;
}

/* times(): CPU times in clock ticks (100 Hz; all counted as user time), the result is
 * ticks since boot. */
static int64_t times(struct lxproc *p, uint64_t buf)
{
	int64_t self = kcall2(KC_INFO, KI_PROC_CPU_US, p->ep);
	uint64_t t[4] = { self > 0 ? (uint64_t)self / 10000 : 0, 0, p->children_us / 10000, 0 };
	if (buf && ax_vcopy(EP_NONE, t, p->ep, (void *)buf, sizeof(t)) < 0)
		return -LX_EFAULT;
	return (int64_t)(ax_time_ns() / 10000000ull);
}

/* getrusage: the kernel answers RUSAGE_SELF and RUSAGE_THREAD; the children are ours. */
static int64_t getrusage(struct lxproc *p, int64_t who, uint64_t buf)
{
	if (who != -1)
		return -LX_EINVAL;
	return lx_put_rusage(p, buf, p->children_us);
}

int64_t lx_serve(struct lxcall *c)
{
	struct lxproc *p = c->p;
	const uint64_t *a = c->a;
	uint32_t nr = c->nr;
	switch (nr) {
	case LX_SYS_clone:
		return lx_clone(c, a[0], a[1], a[2], a[3], a[4]);
	case LX_SYS_fork:
		return lx_clone(c, LX_SIGCHLD, 0, 0, 0, 0);
	case LX_SYS_vfork:
		return lx_clone(c, LX_CLONE_VFORK | LX_CLONE_VM | LX_SIGCHLD, 0, 0, 0, 0);
	case LX_SYS_execve:
		return lx_execve(c, a[0], a[1], a[2]);
	case LX_SYS_wait4:
		return lx_wait4(c);
	case LX_SYS_kill:
		return lx_kill(p, (int32_t)a[0], a[1]);
	case LX_SYS_tkill:
		return lx_tgkill(p, -1, (int32_t)a[0], a[1]);
	case LX_SYS_tgkill:
		return lx_tgkill(p, (int32_t)a[0], (int32_t)a[1], a[2]);
	case LX_SYS_getppid:
		return p->ppid;
	case LX_SYS_getpgid:
		return id_of(p, (int32_t)a[0], false);
	case LX_SYS_getpgrp:
		return p->pgid;
	case LX_SYS_setpgid:
		return setpgid(p, (int32_t)a[0], (int32_t)a[1]);
	case LX_SYS_getsid:
		return id_of(p, (int32_t)a[0], true);
	case LX_SYS_setsid:
		if (p->pgid == p->pid)
			return -LX_EPERM; /* a group leader cannot start a session */
		p->sid = p->pgid = p->pid;
		return p->pid;
	case LX_SYS_prctl:
		return prctl(p, c->thread, a[0], a[1]);
	case LX_SYS_times:
		return times(p, a[0]);
	case LX_SYS_getrusage:
		return getrusage(p, (int64_t)a[0], a[1]);
	case LX_SYS_uname:
		return lx_uname(p, a[0]);
	case LX_SYS_sysinfo:
		return lx_sysinfo(p, a[0]);
	case LX_SYS_getrandom:
		return lx_getrandom(p, a[0], a[1]);
	case LX_SYS_prlimit64:
		return lx_prlimit(p, a[0], a[1], a[2], a[3]);
	case LX_SYS_getrlimit:
		return lx_prlimit(p, 0, a[0], 0, a[1]);
	case LX_SYS_setrlimit:
		return lx_prlimit(p, 0, a[0], a[1], 0);
	case LX_SYS_sched_getaffinity:
		return lx_sched_getaffinity(p, a[0], a[1], a[2]);
	case LX_SYS_sched_setaffinity:
		return a[0] && a[0] != (uint64_t)p->pid ? -LX_EINVAL : 0; /* accepted; placement is rs's */
	case LX_SYS_personality: /* PER_LINUX only; 0xffffffff asks */
		return a[0] == 0 || (uint32_t)a[0] == 0xffffffffu ? 0 : -LX_EINVAL;
	case LX_SYS_capget:
	case LX_SYS_capset:
		return capget(p, a[0], a[1], nr == LX_SYS_capset);
	case LX_SYS_clock_settime: /* the clock is the machine's: not settable from a program */
		return -LX_EPERM;
	case LX_SYS_alarm:
		return lx_alarm(p, a[0]);
	case LX_SYS_timer_create:
		return lx_timer_create(p, a[0], a[1], a[2]);
	case LX_SYS_timer_settime:
		return lx_timer_settime(p, a[0], a[1], a[2], a[3]);
	case LX_SYS_timer_gettime:
		return lx_timer_gettime(p, a[0], a[1]);
	case LX_SYS_timer_getoverrun:
		return lx_timer_getoverrun(p, a[0]);
	case LX_SYS_timer_delete:
		return lx_timer_delete(p, a[0]);
	case LX_SYS_setitimer:
		return lx_setitimer(p, (int64_t)a[0], a[1], a[2]);
	case LX_SYS_getitimer:
		return lx_getitimer(p, (int64_t)a[0], a[1]);
	}
	bool served;
	int64_t r = lx_creds_call(p, nr, a, &served);
	if (served)
		return r;
	if (nr >= LX_SYS_setxattr && nr <= LX_REMOVEXATTR_LAST)
		return -LX_EOPNOTSUPP; /* extended attributes: the file system has none */
	static uint8_t logged[1024];
	if (nr < sizeof(logged) && !logged[nr]) {
		logged[nr] = 1;
		const char *name = lx_name(nr);
		ax_printf("pm: %s: unsupported system call %s (%u): ENOSYS\n", p->name, name ? name : "(unassigned)", nr);
	}
	return -LX_ENOSYS;
}
