/* The Linux system calls pm serves so far: process ids and credentials (system information
 * is in sysinfo.c; files are vfs's). The caller's memory is reached with KC_VCOPY only; a bad
 * pointer is EFAULT, never a crash of pm. Everything else is ENOSYS, logged once per call by
 * name. docs/posix.md has the list. */
#include "pm.h"
#include "linux_syscalls.h"

#define LX_GETPID 39
#define LX_GETPPID 110
#define LX_GETUID 102
#define LX_GETGID 104
#define LX_GETEUID 107
#define LX_GETEGID 108
#define LX_GETTID 186
#define LX_SET_TID_ADDRESS 218
#define LX_UNAME 63
#define LX_UMASK 95
#define LX_GETRLIMIT 97
#define LX_SYSINFO 99
#define LX_SETRLIMIT 160
#define LX_SCHED_SETAFFINITY 203
#define LX_SCHED_GETAFFINITY 204
#define LX_PRLIMIT64 302
#define LX_GETRANDOM 318


const char *lx_name(uint32_t nr)
{
	size_t n = sizeof(linux_syscall_names) / sizeof(linux_syscall_names[0]);
	return nr < n ? linux_syscall_names[nr] : NULL;
}

int64_t lx_serve(struct lxproc *p, uint32_t nr, const uint64_t a[6])
{
	switch (nr) {
	case LX_GETPID:
	case LX_GETTID:
	case LX_SET_TID_ADDRESS: /* one thread: its id is the pid */
		return p->pid;
	case LX_GETPPID:
		return 1;
	case LX_UNAME:
		return lx_uname(p, a[0]);
	case LX_SYSINFO:
		return lx_sysinfo(p, a[0]);
	case LX_GETRANDOM:
		return lx_getrandom(p, a[0], a[1]);
	case LX_UMASK: {
		uint32_t old = p->umask;
		p->umask = (uint32_t)a[0] & 0777;
		return old;
	}
	case LX_PRLIMIT64:
		return lx_prlimit(p, a[0], a[1], a[2], a[3]);
	case LX_GETRLIMIT:
		return lx_prlimit(p, 0, a[0], 0, a[1]);
	case LX_SETRLIMIT:
		return lx_prlimit(p, 0, a[0], a[1], 0);
	case LX_SCHED_GETAFFINITY:
		return lx_sched_getaffinity(p, a[0], a[1], a[2]);
	case LX_SCHED_SETAFFINITY:
		return a[0] && a[0] != (uint64_t)p->pid ? -LX_EINVAL : 0; /* accepted; placement is rs's */
	case LX_GETUID:
	case LX_GETGID:
	case LX_GETEUID:
	case LX_GETEGID:
		return 0;
	}
	static uint8_t logged[1024];
	if (nr < sizeof(logged) && !logged[nr]) {
		logged[nr] = 1;
		const char *name = lx_name(nr);
		ax_printf("pm: %s: unsupported system call %s (%u): ENOSYS\n", p->name, name ? name : "(unassigned)", nr);
	}
	return -LX_ENOSYS;
}
