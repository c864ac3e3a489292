/* The Linux system calls pm serves so far: console output, the terminal query, ids. The
 * caller's memory is read with KC_VCOPY; a bad pointer is EFAULT, never a crash of pm.
 * Everything else is ENOSYS, logged once per call by name. docs/posix.md has the list. */
#include "pm.h"
#include "linux_syscalls.h"

#define LX_READ 0
#define LX_WRITE 1
#define LX_IOCTL 16
#define LX_WRITEV 20
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

#define IOV_MAX 1024
#define MAX_IO (1u << 20) /* bytes one write may move (Linux moves at most 0x7ffff000) */

const char *lx_name(uint32_t nr)
{
	size_t n = sizeof(linux_syscall_names) / sizeof(linux_syscall_names[0]);
	return nr < n ? linux_syscall_names[nr] : NULL;
}

/* Console output is gathered so that one write or writev of up to 4 KiB reaches the console
 * in one piece, not interleaved with other programs' output. */
static char out[4096];
static size_t out_len;

static void flush_out(void)
{
	if (out_len)
		ax_write(out, out_len);
	out_len = 0;
}

/* Copies len bytes at the caller's address to the console buffer, flushing when full. */
static int64_t write_out(struct lxproc *p, uint64_t buf, uint64_t len)
{
	uint64_t done = 0;
	if (len > MAX_IO)
		len = MAX_IO;
	while (done < len) {
		if (out_len == sizeof(out))
			flush_out();
		uint64_t n = len - done < sizeof(out) - out_len ? len - done : sizeof(out) - out_len;
		if (ax_vcopy(p->ep, (const void *)(buf + done), EP_NONE, out + out_len, n) < 0)
			return done ? (int64_t)done : -LX_EFAULT;
		out_len += n;
		done += n;
	}
	return (int64_t)done;
}

static bool console_fd(uint64_t fd) { return fd <= 2; }

static int64_t lx_writev(struct lxproc *p, uint64_t fd, uint64_t iov, uint64_t cnt)
{
	if (!console_fd(fd) || fd == 0)
		return -LX_EBADF;
	if (cnt > IOV_MAX)
		return -LX_EINVAL;
	int64_t total = 0;
	for (uint64_t i = 0; i < cnt; i++) {
		uint64_t v[2];
		if (ax_vcopy(p->ep, (const void *)(iov + i * 16), EP_NONE, v, sizeof(v)) < 0)
			return total ? total : -LX_EFAULT;
		if (v[1] > MAX_IO)
			return total ? total : -LX_EINVAL;
		int64_t r = write_out(p, v[0], v[1]);
		if (r < 0)
			return total ? total : r;
		total += r;
		if ((uint64_t)r < v[1])
			break;
	}
	return total;
}

int64_t lx_serve(struct lxproc *p, uint32_t nr, const uint64_t a[6])
{
	switch (nr) {
	case LX_READ:
		return a[0] == 0 ? 0 : -LX_EBADF; /* no terminal input yet: end of file */
	case LX_WRITE: {
		int64_t r = console_fd(a[0]) && a[0] ? write_out(p, a[1], a[2]) : -LX_EBADF;
		flush_out();
		return r;
	}
	case LX_WRITEV: {
		int64_t r = lx_writev(p, a[0], a[1], a[2]);
		flush_out();
		return r;
	}
	case LX_IOCTL:
		return console_fd(a[0]) ? -LX_ENOTTY : -LX_EBADF; /* the console is no tty yet */
	case LX_GETPID:
	case LX_GETTID:
	case LX_SET_TID_ADDRESS: /* one thread: its id is the pid */
		return p->pid;
	case LX_GETPPID:
		return 1;
	case LX_UNAME:
		return lx_uname(p, a[0]);
	case LX_SYSINFO:
		return lx_sysinfo(p, a[0], lx_total_frames, lx_nprocs());
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
