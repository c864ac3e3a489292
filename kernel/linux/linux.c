/* Linux system calls (rax below KC_BASE). The kernel serves the few that are pure mechanism
 * on the calling thread — the FS base for thread-local storage, exit, yield, anonymous
 * memory (lxmem.c), clocks and sleeping (lxtime.c; the vDSO answers most clock reads without
 * coming here, linux/vdso.c), getcpu — and forwards
 * every other one to the process's POSIX server as one kernel IPC call (KMSG_LINUX; the
 * server reads and writes the caller's memory with KC_VCOPY). No server: -ENOSYS. */
#include "linux/linux.h"
#include "linux/lxstate.h"
#include "lx_abi.h"
#include "proc/ipc.h"
#include "linux/futex.h"
#include "linux/lxmem.h"
#include "linux/lxproc.h"
#include "linux/signal.h"
#include "linux/lxtime.h"
#include "proc/legacy.h"
#include "proc/wait.h"
#include "proc/sched.h"
#include "arch/x86.h"
#include "console/log.h"
#include "mm/aspace.h"
#include "core/config.h"
#include "smp/percpu.h"

#define LX_MAX_ERRNO 4095
#define SUCCESSOR_POLL_NS 10000000ull

static int64_t arch_prctl(struct thread *me, uint64_t code, uint64_t addr)
{
	switch (code) {
	case LX_ARCH_SET_FS:
		if (addr >= USER_TOP)
			return -KE_PERM; /* Linux: EPERM for a non-canonical or kernel address */
		me->fs_base = addr;
		wrmsr(MSR_FS_BASE, addr);
		return 0;
	case LX_ARCH_GET_FS:
		return copy_to_user((void *)addr, &me->fs_base, sizeof(me->fs_base)) ? -KE_FAULT : 0;
	default:
		return -KE_INVAL;
	}
}

int64_t kc_linux_route(struct thread *me, endpoint_t child, uint64_t slot, uint64_t ubits)
{
	int64_t err;
	struct proc *p = proc_child(me, child, &err);
	if (!p)
		return err;
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

/* Writes to a pipe or socket whose reader is gone fail with EPIPE and raise SIGPIPE in the
 * writing thread (not for sends with LX_MSG_NOSIGNAL), as Linux does. */
static bool raises_sigpipe(uint64_t nr, const uint64_t a[6])
{
	switch (nr) {
	case LX_SYS_write: case LX_SYS_writev: case LX_SYS_pwrite64: case LX_SYS_pwritev: case LX_SYS_splice: case LX_SYS_sendfile:
		return true;
	case LX_SYS_sendto:
		return !(a[3] & LX_MSG_NOSIGNAL);
	case LX_SYS_sendmsg:
		return !(a[2] & LX_MSG_NOSIGNAL);
	}
	return false;
}

static int64_t forward_call(struct thread *me, endpoint_t server, uint64_t nr, const uint64_t a[6]);

/* ppoll, pselect6 and epoll_pwait(2) wait with the signal mask they are given: the kernel
 * swaps it in for the call and puts the old one back afterwards — after the handler, when
 * a signal ends the wait (as sigsuspend). Returns 0, or -EINVAL / -EFAULT. */
static int64_t wait_mask(struct thread *me, uint64_t nr, const uint64_t a[6], bool *swapped)
{
	uint64_t uset = 0, size = 0, mask;
	*swapped = false;
	if (!me->proc->lx)
		return 0;
	if (nr == LX_SYS_ppoll) {
		uset = a[3], size = a[4];
	} else if (nr == LX_SYS_epoll_pwait || nr == LX_SYS_epoll_pwait2) {
		uset = a[4], size = a[5];
	} else if (nr == LX_SYS_pselect6 && a[5]) {
		uint64_t pair[2]; /* { const sigset_t *, size_t } */
		if (copy_from_user(pair, (const void *)a[5], sizeof(pair)))
			return -KE_FAULT;
		uset = pair[0], size = pair[1];
	}
	if (!uset)
		return 0;
	if (size != 8)
		return -KE_INVAL;
	if (copy_from_user(&mask, (const void *)uset, 8))
		return -KE_FAULT;
	signal_mask_swap(me, mask);
	*swapped = true;
	return 0;
}

/* poll, select, epoll_wait and their variants: a handler ends them with EINTR even under
 * LX_SA_RESTART (Linux's ERESTARTNOHAND); they are made again only when no handler ran. */
static bool waits_for_events(uint64_t nr)
{
	return nr == LX_SYS_poll || nr == LX_SYS_select || nr == LX_SYS_epoll_wait || nr == LX_SYS_ppoll || nr == LX_SYS_pselect6 ||
	       nr == LX_SYS_epoll_pwait || nr == LX_SYS_epoll_pwait2;
}

/* One call to the POSIX server; the caller blocks until it answers. */
static int64_t forward(struct thread *me, endpoint_t server, uint64_t nr, const uint64_t a[6])
{
	bool swapped;
	int64_t mr = wait_mask(me, nr, a, &swapped);
	if (mr)
		return mr;
	int64_t r = forward_call(me, server, nr, a);
	if (swapped)
		signal_mask_settle(me); /* no handler to run first: the old mask now */
	if (me->lxt.lx_restart && waits_for_events(nr)) /* Linux never restarts these after a handler */
		me->lxt.lx_restart_nohand = true;
	return r;
}

/* The server died before it answered. If a successor serves already (it took over the Linux
 * calls sent to the dead one, legacy.h) or may come (the dead one's memory is kept for it: a
 * restart or a live update), the call is made again, as Linux makes a call again after an
 * LX_SA_RESTART handler; while none serves yet the caller waits 10 ms first (and again, as long
 * as the legacy waits). Calls that make a process may have made it already: they end with
 * EINTR, as every call does whose server does not come back. docs/kernel-api.md, "Routing". */
static int64_t server_died(struct thread *me, endpoint_t server, uint64_t nr)
{
	bool makes_process = nr == LX_SYS_clone || nr == LX_SYS_fork || nr == LX_SYS_vfork || nr == LX_SYS_clone3;
	bool succeeded = server_for(me->proc, nr) != server;
	if (makes_process || (!succeeded && !legacy_pending(server)))
		return -LX_EINTR;
	int64_t r = succeeded ? 0 : wait_sleep(me, SUCCESSOR_POLL_NS);
	if (r && r != -KE_INTR)
		return -LX_EINTR;
	me->lxt.lx_restart = true; /* a signal meanwhile: its handler's LX_SA_RESTART decides, as for any call */
	return -LX_EINTR;
}

/* An answer no Linux call can give: more bytes than the caller asked for, or an error number
 * past Linux's last. A server that gives one is broken (the fault campaign saw syscall answer
 * from the wrong stack slot, and tcphash's write loop, told it wrote more than it asked,
 * went on past its buffer and sent what lay there). The caller gets EIO instead; the first
 * such answer per call number is logged. */
static int64_t answer_checked(endpoint_t server, uint64_t nr, const uint64_t a[6], int64_t r)
{
	uint64_t most;
	switch (nr) {
	case LX_SYS_recvfrom:
		if (a[3] & LX_MSG_TRUNC)
			return r; /* a datagram's real length, however long */
		most = a[2];
		break;
	case LX_SYS_read: case LX_SYS_write: case LX_SYS_pread64: case LX_SYS_pwrite64: case LX_SYS_sendto: case LX_SYS_readlink:
	case LX_SYS_getdents64: most = a[2]; break;
	case LX_SYS_sendfile: most = a[3]; break;
	case LX_SYS_getrandom: most = a[1]; break;
	default: return r;
	}
	if (r >= -LX_MAX_ERRNO && (r <= 0 || (uint64_t)r <= most))
		return r;
	static uint8_t logged[KMSG_LINUX_MAX];
	if (nr < KMSG_LINUX_MAX && !logged[nr]) {
		logged[nr] = 1;
		kprintf("linux: call %llu for at most %llu bytes answered %lld (by server %#x or one it passed the "
			"call to): EIO instead\n", (unsigned long long)nr, (unsigned long long)most, (long long)r, server);
	}
	return -LX_EIO;
}

static int64_t forward_call(struct thread *me, endpoint_t server, uint64_t nr, const uint64_t a[6])
{
	struct kmsg m = { .type = KMSG_LINUX | (uint32_t)nr };
	for (int i = 0; i < 6; i++)
		m.w[i] = a[i];
	m.w[6] = me->proc->id;
	me->lxt.in_lxcall = true;
	int64_t r = ipc_send(me, server, &m, true);
	me->lxt.in_lxcall = false;
	if (r == -KE_DEADSRCDST)
		return server_died(me, server, nr);
	if (r == 0)
		r = answer_checked(server, nr, a, (int64_t)me->ipc_msg.w[0]);
	if (r == -LX_EPIPE && raises_sigpipe(nr, a))
		signal_post(me->proc, me, LX_SIGPIPE, me->proc->lx ? me->proc->lx->pid : 0, 0, 0);
	if (r == -LX_ERESTARTSYS) {
		/* Given back for a signal: signal_user_return makes it EINTR or runs it again. */
		me->lxt.lx_restart = true;
		return -LX_EINTR;
	}
	return r;
}

/* Calls that need the process's Linux state (pm gave it a pid: KC_LX_PID). */
static int64_t linux_process_call(struct thread *me, uint64_t nr, const uint64_t a[6], bool *served)
{
	*served = true;
	switch (nr) {
	case LX_SYS_getpid:
		return me->proc->lx->pid;
	case LX_SYS_gettid:
		return me->lxt.tid;
	case LX_SYS_set_tid_address:
		return lx_set_tid_address(me, a[0]);
	case LX_SYS_set_robust_list:
		return lx_robust_list(me, true, a[0], a[1], 0);
	case LX_SYS_get_robust_list:
		return lx_robust_list(me, false, a[0], a[1], a[2]);
	case LX_SYS_futex:
		return lx_futex(me, a[0], a[1], a[2], a[3], a[4], a[5]);
	case LX_SYS_rt_sigaction:
		return lx_rt_sigaction(me, a[0], a[1], a[2], a[3]);
	case LX_SYS_rt_sigprocmask:
		return lx_rt_sigprocmask(me, a[0], a[1], a[2], a[3]);
	case LX_SYS_rt_sigreturn:
		return lx_rt_sigreturn(me, me->uframe);
	case LX_SYS_rt_sigpending:
		return lx_rt_sigpending(me, a[0], a[1]);
	case LX_SYS_rt_sigtimedwait:
		return lx_rt_sigtimedwait(me, a[0], a[1], a[2], a[3]);
	case LX_SYS_rt_sigsuspend:
		return lx_rt_sigsuspend(me, a[0], a[1]);
	case LX_SYS_sigaltstack:
		return lx_sigaltstack(me, a[0], a[1]);
	case LX_SYS_pause:
		return lx_pause(me);
	case LX_SYS_getrusage:
		if (a[0] != 0 && a[0] != 1)
			break; /* RUSAGE_CHILDREN and errors: pm's */
		return lx_getrusage(me, a[0], a[1]);
	case LX_SYS_exit:
		lx_exit(me, a[0], false);
		return 0;
	}
	*served = false;
	return 0;
}

/* getcpu(cpu, node, cache): the CPU the caller runs on now, node 0 (the vDSO's answer when
 * the CPUs have no RDTSCP). */
static int64_t lx_getcpu(uint64_t ucpu, uint64_t unode)
{
	uint32_t cpu = this_cpu_index(), node = 0;
	if ((ucpu && copy_to_user((void *)ucpu, &cpu, 4)) || (unode && copy_to_user((void *)unode, &node, 4)))
		return -KE_FAULT;
	return 0;
}

int64_t linux_syscall(struct thread *me, uint64_t nr, const uint64_t a[6])
{
	me->proc->linux_calls++;
	me->lxt.lx_nr = nr; /* what a restart runs again (a call that sets lx_restart) */
	if (me->proc->lx) {
		bool served;
		int64_t r = linux_process_call(me, nr, a, &served);
		if (served)
			return r;
	}
	switch (nr) {
	case LX_SYS_arch_prctl:
		return arch_prctl(me, a[0], a[1]);
	case LX_SYS_exit:
	case LX_SYS_exit_group:
		/* The POSIX server, the parent, gets a Linux wait status in the exit report. */
		lx_exit(me, a[0], true);
		return 0;
	case LX_SYS_sched_yield:
		me->state = T_READY;
		schedule();
		return 0;
	case LX_SYS_mmap:
		if (!(a[3] & LX_MAP_ANONYMOUS))
			break; /* file mappings are the POSIX server's */
		return lx_mmap(me, a[0], a[1], a[2], a[3]);
	case LX_SYS_munmap:
		return lx_munmap(me, a[0], a[1]);
	case LX_SYS_mprotect:
		return lx_mprotect(me, a[0], a[1], a[2]);
	case LX_SYS_madvise:
		return lx_madvise(me, a[0], a[1], a[2]);
	case LX_SYS_msync:
		return lx_msync(me, a[0], a[1], a[2]);
	case LX_SYS_clock_gettime:
		return lx_clock_gettime(me, a[0], a[1]);
	case LX_SYS_clock_getres:
		return lx_clock_getres(me, a[0], a[1]);
	case LX_SYS_gettimeofday:
		return lx_gettimeofday(me, a[0], a[1]);
	case LX_SYS_time:
		return lx_time(me, a[0]);
	case LX_SYS_getcpu:
		return lx_getcpu(a[0], a[1]);
	case LX_SYS_nanosleep:
		return lx_nanosleep(me, a[0], a[1]);
	case LX_SYS_clock_nanosleep:
		return lx_clock_nanosleep(me, a[0], a[1], a[2], a[3]);
	case LX_SYS_brk:
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
