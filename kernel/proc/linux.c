/* Linux system calls (rax below KC_BASE). The kernel serves the few that are pure mechanism
 * on the calling thread — the FS base for thread-local storage, exit, yield, anonymous
 * memory (lxmem.c), clocks and sleeping (lxtime.c) — and forwards
 * every other one to the process's POSIX server as one kernel IPC call (KMSG_LINUX; the
 * server reads and writes the caller's memory with KC_VCOPY). No server: -ENOSYS. */
#include "proc/linux.h"
#include "proc/ipc.h"
#include "proc/lxmem.h"
#include "proc/lxtime.h"
#include "proc/sched.h"
#include "arch/x86.h"
#include "console/log.h"
#include "mm/aspace.h"
#include "core/config.h"

#define LX_MMAP 9
#define LX_MPROTECT 10
#define LX_MUNMAP 11
#define LX_BRK 12
#define LX_MADVISE 28
#define LX_SCHED_YIELD 24
#define LX_NANOSLEEP 35
#define LX_GETTIMEOFDAY 96
#define LX_TIME 201
#define LX_CLOCK_GETTIME 228
#define LX_CLOCK_GETRES 229
#define LX_CLOCK_NANOSLEEP 230
#define LX_MAP_ANONYMOUS 0x20
#define LX_EXIT 60
#define LX_ARCH_PRCTL 158
#define LX_EXIT_GROUP 231
#define ARCH_SET_FS 0x1002
#define ARCH_GET_FS 0x1003
#define LX_EINTR 4

static int64_t arch_prctl(struct thread *me, uint64_t code, uint64_t addr)
{
	switch (code) {
	case ARCH_SET_FS:
		if (addr >= USER_TOP)
			return -KE_PERM; /* Linux: EPERM for a non-canonical or kernel address */
		me->fs_base = addr;
		wrmsr(MSR_FS_BASE, addr);
		return 0;
	case ARCH_GET_FS:
		return copy_to_user((void *)addr, &me->fs_base, sizeof(me->fs_base)) ? -KE_FAULT : 0;
	default:
		return -KE_INVAL;
	}
}

int64_t kc_linux_route(struct thread *me, endpoint_t child, uint64_t slot, uint64_t ubits)
{
	struct thread *t = ep_lookup(child);
	if (!t)
		return -KE_DEADSRCDST;
	struct proc *p = t->proc;
	if (p->parent != thread_ep(me) || p == me->proc)
		return -KE_PERM;
	uint64_t bits[KMSG_LINUX_MAX / 64];
	if (slot >= LINUX_SERVERS)
		return -KE_INVAL;
	if (copy_from_user(bits, (const void *)ubits, sizeof(bits)))
		return -KE_FAULT;
	for (uint32_t nr = 0; nr < KMSG_LINUX_MAX; nr++)
		if (bits[nr / 64] & (1ull << (nr % 64)))
			p->linux_route[nr] = (uint8_t)slot;
	return 0;
}

/* The POSIX server for call nr: its routed slot, else slot 0; 0 if none. */
static endpoint_t server_for(const struct proc *p, uint64_t nr)
{
	endpoint_t ep = p->linux_servers[p->linux_route[nr]];
	return ep ? ep : p->linux_servers[0];
}

/* One call to the POSIX server; the caller blocks until it answers. */
static int64_t forward(struct thread *me, endpoint_t server, uint64_t nr, const uint64_t a[6])
{
	struct kmsg m = { .type = KMSG_LINUX | (uint32_t)nr };
	for (int i = 0; i < 6; i++)
		m.w[i] = a[i];
	m.w[6] = me->proc->id;
	int64_t r = ipc_send(me, server, &m, true);
	if (r == -KE_DEADSRCDST)
		return -LX_EINTR; /* the server died: the call is interrupted, the program may retry */
	return r < 0 ? r : (int64_t)me->ipc_msg.w[0];
}

int64_t linux_syscall(struct thread *me, uint64_t nr, const uint64_t a[6])
{
	switch (nr) {
	case LX_ARCH_PRCTL:
		return arch_prctl(me, a[0], a[1]);
	case LX_EXIT:
	case LX_EXIT_GROUP:
		/* One thread per process for now: both end the process. The POSIX server, its
		 * parent, gets the status in the exit report. */
		proc_exit(me->proc, (int64_t)(a[0] & 0xff));
		schedule();
		return 0;
	case LX_SCHED_YIELD:
		me->state = T_READY;
		schedule();
		return 0;
	case LX_MMAP:
		if (!(a[3] & LX_MAP_ANONYMOUS))
			break; /* file mappings are the POSIX server's */
		return lx_mmap(me, a[0], a[1], a[2], a[3]);
	case LX_MUNMAP:
		return lx_munmap(me, a[0], a[1]);
	case LX_MPROTECT:
		return lx_mprotect(me, a[0], a[1], a[2]);
	case LX_MADVISE:
		return lx_madvise(me, a[0], a[1], a[2]);
	case LX_CLOCK_GETTIME:
		return lx_clock_gettime(me, a[0], a[1]);
	case LX_CLOCK_GETRES:
		return lx_clock_getres(me, a[0], a[1]);
	case LX_GETTIMEOFDAY:
		return lx_gettimeofday(me, a[0], a[1]);
	case LX_TIME:
		return lx_time(me, a[0]);
	case LX_NANOSLEEP:
		return lx_nanosleep(me, a[0], a[1]);
	case LX_CLOCK_NANOSLEEP:
		return lx_clock_nanosleep(me, a[0], a[1], a[2], a[3]);
	case LX_BRK:
		/* No program break: brk(x) answers 0, which C libraries take as "brk cannot grow"
		 * and use anonymous mmap instead (musl and glibc both do). */
		return 0;
	}
	endpoint_t server = nr < KMSG_LINUX_MAX ? server_for(me->proc, nr) : 0;
	if (server)
		return forward(me, server, nr, a);
	static uint8_t logged[KMSG_LINUX_MAX];
	if (nr < KMSG_LINUX_MAX && !logged[nr]) {
		logged[nr] = 1;
		pr_warn("%s: Linux system call %llu and no POSIX server (ENOSYS)", me->proc->name, (unsigned long long)nr);
	}
	return -KE_NOSYS;
}
