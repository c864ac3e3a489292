/* Linux signals (signal.h). Dispositions live in the process (struct lx_proc), masks and
 * thread-directed pending signals in the thread, process-directed ones in the process until
 * a thread that does not block them returns to user mode. Delivery builds the x86-64 Linux
 * rt_sigframe (return address = SA_RESTORER, ucontext, siginfo, FXSAVE area) on the user
 * stack; rt_sigreturn undoes it. Stop signals are not supported: their default action is
 * treated as "ignore" (docs/posix.md). */
#include "linux/signal.h"
#include "linux/lxstate.h"
#include "lx_abi.h"
#include "arch/time.h"
#include "proc/wait.h"
#include "linux/lxtime.h"
#include "proc/ipc.h"
#include "proc/klock.h"
#include "proc/sched.h"
#include "arch/x86.h"
#include "console/log.h"
#include "mm/aspace.h"
#include "smp/ipi.h"
#include "smp/percpu.h"
#include "lib/string.h"

#define SIG_DFL 0
#define SIG_IGN 1
#define SS_ONSTACK 1
#define SS_DISABLE 2
#define MINSIGSTKSZ 2048
#define SI_USER 0
#define SI_QUEUE (-1)
#define SI_TIMER (-2) /* a POSIX timer's (pm): the pid field is its id, and a value comes */
#define SEGV_MAPERR 1
#define SEGV_ACCERR 2

#define BIT(sig) (1ull << ((sig) - 1))
#define UNBLOCKABLE (BIT(LX_SIGKILL) | BIT(LX_SIGSTOP))
/* Default "ignore" (LX_SIGCHLD, SIGCONT, SIGURG, LX_SIGWINCH) and "stop" (SIGSTOP, SIGTSTP,
 * SIGTTIN, SIGTTOU), which we treat as ignore. */
#define DEFAULT_IGNORE (BIT(17) | BIT(18) | BIT(23) | BIT(28) | BIT(19) | BIT(20) | BIT(21) | BIT(22))
/* Default "terminate with core": SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGSEGV,
 * SIGXCPU, SIGXFSZ, SIGSYS. */
#define DEFAULT_CORE (BIT(3) | BIT(4) | BIT(5) | BIT(6) | BIT(7) | BIT(8) | BIT(11) | BIT(24) | BIT(25) | BIT(31))

static bool ignored(const struct lx_proc *lx, int sig)
{
	const struct lx_sigaction *a = &lx->act[sig - 1];
	return sig != LX_SIGKILL && (a->handler == SIG_IGN || (a->handler == SIG_DFL && (DEFAULT_IGNORE & BIT(sig))));
}

/* A forked child holds the signals it ignores by inheritance until it sets their action or
 * execs: a signal sent before then stays pending instead of being dropped, and acts on the
 * action the child sets. A shell's `cmd & kill $!` needs it: the child of an interactive
 * shell inherits SIGTERM ignored and restores the default only a few calls after fork,
 * while the parent's kill may come first. On Linux the child is practically always first;
 * here the outcome is made certain, and it is one Linux also gives. */
uint64_t signal_fork_ignored(const struct lx_proc *lx)
{
	uint64_t m = 0;
	for (int sig = 1; sig <= LX_NSIG; sig++)
		if (lx->act[sig - 1].handler == SIG_IGN)
			m |= BIT(sig);
	return m & ~UNBLOCKABLE;
}

/* What t cannot take now: its mask and the held signals. */
static uint64_t not_taken(const struct thread *t)
{
	return t->lxt.sigmask | t->proc->lx->sig_forkign;
}

bool signal_pending(const struct thread *t)
{
	const struct lx_proc *lx = t->proc->lx;
	return lx && ((t->lxt.sigpending | lx->sigpending) & ~not_taken(t));
}

void signal_mask_swap(struct thread *t, uint64_t mask)
{
	t->lxt.saved_mask = t->lxt.sigmask;
	t->lxt.has_saved_mask = true;
	t->lxt.sigmask = mask & ~UNBLOCKABLE;
}

void signal_mask_settle(struct thread *t)
{
	if (t->lxt.has_saved_mask && !signal_pending(t)) {
		t->lxt.sigmask = t->lxt.saved_mask;
		t->lxt.has_saved_mask = false;
	}
}

/* Sleeps until a signal t does not block is pending (or t is killed). */
static void wait_for_signal(struct thread *t)
{
	while (!signal_pending(t) && t->state != T_DEAD)
		ipc_block(t, B_WAIT, EP_NONE);
}

/* Makes a thread that may now take a signal notice it: ends a kernel wait, asks the server
 * holding its forwarded call to give it back, or sends its CPU through the kernel. */
static void kick(struct thread *t)
{
	if (t->state == T_BLOCKED) {
		if (t->blocked_on == B_WAIT || t->blocked_on == B_FUTEX) {
			ipc_wake(t, -KE_INTR);
		} else if (t->lxt.in_lxcall && t->blocked_on == B_SEND) {
			ipc_cancel_send(t);
			ipc_wake(t, -LX_ERESTARTSYS); /* never reached the server: run it again */
		} else if (t->lxt.in_lxcall && t->blocked_on == B_REPLY) {
			struct kmsg m = { .type = KMSG_LINUX_CANCEL, .w = { thread_ep(t), t->proc->id } };
			kmsg_post(ep_lookup(t->ipc_peer), &m);
		}
	} else if (t->state == T_RUNNING && t->cpu != (int32_t)this_cpu_index()) {
		smp_send_resched((uint32_t)t->cpu);
	}
}

int signal_post(struct proc *p, struct thread *t, int sig, int32_t pid, int32_t code, uint64_t value)
{
	struct lx_proc *lx = p->lx;
	if (!lx || p->exiting || sig < 1 || sig > LX_NSIG)
		return 0;
	if (sig == LX_SIGKILL) {
		proc_exit(p, LX_SIGKILL);
		return 0;
	}
	/* An ignored signal is dropped when sent, unless the target blocks it (the action may
	 * change before it is unblocked, as Linux's sig_ignored) or holds it (above). */
	const struct thread *target = t ? t : p->main;
	if (ignored(lx, sig) && !(lx->sig_forkign & BIT(sig)) && !(target && (target->lxt.sigmask & BIT(sig))))
		return 1;
	if (t) {
		t->lxt.sigpending |= BIT(sig);
		t->lxt.sigpid[sig - 1] = pid, t->lxt.sigcode[sig - 1] = code, t->lxt.sigval[sig - 1] = value;
		if (!(not_taken(t) & BIT(sig)) || (t->lxt.sigwait & BIT(sig)))
			kick(t);
		return 0;
	}
	lx->sigpending |= BIT(sig);
	lx->sigpid[sig - 1] = pid, lx->sigcode[sig - 1] = code, lx->sigval[sig - 1] = value;
	/* One thread that does not block it is told; any such thread may take it. */
	for (uint32_t i = 1; i < MAX_THREADS; i++) {
		struct thread *o = &threads[i];
		if (o->proc == p && o->state != T_FREE && o->state != T_DEAD && o->blocked_on != B_ZOMBIE &&
		    (!(not_taken(o) & BIT(sig)) || (o->lxt.sigwait & BIT(sig)))) {
			kick(o);
			break;
		}
	}
	return 0;
}

struct lx_siginfo {
	int32_t signo, errno_, code, pad;
	union {
		struct { int32_t pid, uid; } kill;
		uint64_t addr;
	} u;
	uint8_t rest[104];
};
_Static_assert(sizeof(struct lx_siginfo) == 128, "siginfo is 128 bytes");

/* Takes sig off t's own pending set (own) or its process's: the siginfo of what was posted
 * with it (si_value for SI_TIMER and SI_QUEUE). */
static struct lx_siginfo take(struct thread *t, int sig, bool own)
{
	struct lx_proc *lx = t->proc->lx;
	struct lx_siginfo si = { .signo = sig };
	uint64_t value;
	if (own) {
		t->lxt.sigpending &= ~BIT(sig);
		si.code = t->lxt.sigcode[sig - 1], si.u.kill.pid = t->lxt.sigpid[sig - 1], value = t->lxt.sigval[sig - 1];
	} else {
		lx->sigpending &= ~BIT(sig);
		si.code = lx->sigcode[sig - 1], si.u.kill.pid = lx->sigpid[sig - 1], value = lx->sigval[sig - 1];
	}
	if (si.code == SI_TIMER || si.code == SI_QUEUE)
		memcpy(si.rest, &value, sizeof(value));
	return si;
}

/* The lowest pending signal t does not block, taken off its pending set (signo 0: none). */
static struct lx_siginfo take_signal(struct thread *t)
{
	struct lx_proc *lx = t->proc->lx;
	uint64_t mine = t->lxt.sigpending & ~not_taken(t), shared = lx->sigpending & ~not_taken(t);
	uint64_t any = mine | shared;
	if (!any)
		return (struct lx_siginfo){ .signo = 0 };
	int sig = __builtin_ctzll(any) + 1;
	return take(t, sig, mine & BIT(sig));
}

/* The kernel's rt_sigframe, as Linux x86-64 lays it out. */
struct lx_ucontext {
	uint64_t flags, link;
	uint64_t ss_sp;
	int32_t ss_flags, pad;
	uint64_t ss_size;
	uint64_t gregs[23]; /* r8..r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip, eflags,
	                       csgsfs, err, trapno, oldmask, cr2 */
	uint64_t fpstate;
	uint64_t reserved[8];
	uint64_t sigmask;
};

static void force_exit(struct proc *p, int sig)
{
	proc_exit(p, sig | (DEFAULT_CORE & BIT(sig) ? 0x80 : 0));
	schedule(); /* never returns: the thread is dead */
}

/* Builds the handler frame for sig on t's user stack and points f at the handler.
 * A stack that cannot take it ends the process with SIGSEGV, as in Linux. */
static void setup_frame(struct thread *t, struct trap_frame *f, int sig, const struct lx_siginfo *si)
{
	struct lx_sigaction *a = &t->proc->lx->act[sig - 1];
	uint64_t sp = f->rsp;
	bool on_alt = t->lxt.altstack_size && sp - t->lxt.altstack_sp <= t->lxt.altstack_size;
	if ((a->flags & LX_SA_ONSTACK) && t->lxt.altstack_size && !on_alt)
		sp = t->lxt.altstack_sp + t->lxt.altstack_size;
	sp -= 128; /* the interrupted code's red zone */
	uint64_t fp = (sp - 512) & ~63ull;
	uint64_t frame = ((fp - sizeof(struct lx_ucontext) - sizeof(*si) - 8) & ~15ull) - 8;
	uint64_t uc_va = frame + 8, si_va = uc_va + sizeof(struct lx_ucontext);
	struct lx_ucontext uc = { 0 };
	uc.ss_sp = t->lxt.altstack_sp;
	uc.ss_size = t->lxt.altstack_size;
	uc.ss_flags = t->lxt.altstack_size ? (on_alt ? SS_ONSTACK : 0) : SS_DISABLE;
	const uint64_t g[] = { f->r8, f->r9, f->r10, f->r11, f->r12, f->r13, f->r14, f->r15, f->rdi,
			       f->rsi, f->rbp, f->rbx, f->rdx, f->rax, f->rcx, f->rsp, f->rip, f->rflags,
			       0x2b | (0x23ull << 48), f->error, f->vector < 32 ? f->vector : 0, 0, 0 };
	memcpy(uc.gregs, g, sizeof(g));
	uc.fpstate = fp;
	uc.sigmask = t->lxt.has_saved_mask ? t->lxt.saved_mask : t->lxt.sigmask;
	__asm__ volatile("fxsave64 %0" : "=m"(t->fpu)); /* the live user state: we are t */
	if (copy_to_user((void *)fp, t->fpu, 512) || copy_to_user((void *)uc_va, &uc, sizeof(uc)) ||
	    copy_to_user((void *)si_va, si, sizeof(*si)) || copy_to_user((void *)frame, &a->restorer, 8)) {
		pr_warn("%s: no room for a signal %d frame at %#llx: SIGSEGV", t->proc->name, sig,
			(unsigned long long)frame);
		force_exit(t->proc, LX_SIGSEGV);
	}
	if (t->lxt.has_saved_mask) { /* sigsuspend's mask ends with the wait */
		t->lxt.sigmask = t->lxt.saved_mask;
		t->lxt.has_saved_mask = false;
	}
	t->lxt.sigmask |= (a->mask | (a->flags & LX_SA_NODEFER ? 0 : BIT(sig))) & ~UNBLOCKABLE;
	f->rsp = frame;
	f->rip = a->handler;
	f->rdi = (uint64_t)sig;
	f->rsi = si_va;
	f->rdx = uc_va;
	f->rax = 0;
	f->rflags &= ~(0x400ull | 0x100ull); /* DF and TF clear, as the ABI expects */
	if (a->flags & LX_SA_RESETHAND)
		a->handler = SIG_DFL, a->flags &= ~LX_SA_RESETHAND;
}

void signal_user_return(struct trap_frame *f)
{
	struct thread *t = current_thread();
	if (!t->proc || !t->proc->lx || (!t->lxt.lx_restart && !signal_pending(t)))
		return;
	klock();
	for (;;) {
		struct lx_siginfo si = take_signal(t);
		int sig = si.signo;
		struct lx_sigaction *a = sig ? &t->proc->lx->act[sig - 1] : NULL;
		bool handler = a && a->handler > SIG_IGN;
		if (t->lxt.lx_restart) { /* the call was interrupted: run it again, or EINTR */
			bool nohand = t->lxt.lx_restart_nohand;
			t->lxt.lx_restart = t->lxt.lx_restart_nohand = false;
			if (!handler || (!nohand && (a->flags & LX_SA_RESTART))) {
				f->rax = t->lxt.lx_nr;
				f->rip -= 2; /* back onto the `syscall` instruction */
			} else {
				f->rax = (uint64_t)-LX_EINTR;
			}
		}
		if (!sig)
			break;
		if (handler) {
			setup_frame(t, f, sig, &si);
			break;
		}
		if (!ignored(t->proc->lx, sig))
			force_exit(t->proc, sig);
	}
	signal_mask_settle(t); /* a swapped mask with no handler run */
	kunlock();
}

bool signal_fault(struct thread *t, struct trap_frame *f, uint64_t cr2)
{
	int sig;
	switch (f->vector) {
	case 0: case 16: case 19: sig = 8; break;  /* SIGFPE */
	case 6: sig = 4; break;                    /* SIGILL */
	case 1: case 3: sig = 5; break;            /* SIGTRAP */
	case 17: sig = 7; break;                   /* SIGBUS */
	default: sig = LX_SIGSEGV;
	}
	struct lx_sigaction *a = &t->proc->lx->act[sig - 1];
	if (a->handler > SIG_IGN && !(t->lxt.sigmask & BIT(sig))) {
		struct lx_siginfo si = { .signo = sig };
		si.code = sig == LX_SIGSEGV ? (f->error & 1 ? SEGV_ACCERR : SEGV_MAPERR) : 1;
		si.u.addr = f->vector == 14 ? cr2 : f->rip;
		setup_frame(t, f, sig, &si);
		return true;
	}
	/* Blocked, ignored or default: the fault ends the process, as in Linux. */
	pr_warn("%s (pid %d) killed by signal %d: exception %llu error %#llx at rip %#llx, address %#llx",
		t->proc->name, t->proc->lx->pid, sig, (unsigned long long)f->vector,
		(unsigned long long)f->error, (unsigned long long)f->rip, (unsigned long long)cr2);
	force_exit(t->proc, sig);
	return true;
}

void signal_exec_reset(struct thread *t)
{
	struct lx_proc *lx = t->proc->lx;
	for (int i = 0; i < LX_NSIG; i++)
		if (lx->act[i].handler != SIG_IGN)
			lx->act[i] = (struct lx_sigaction){ 0 };
	/* the new program keeps the ignored signals ignored: what was held is dropped now */
	uint64_t held = lx->sig_forkign;
	lx->sig_forkign = 0;
	lx->sigpending &= ~held;
	t->lxt.sigpending &= ~held;
	t->lxt.altstack_sp = t->lxt.altstack_size = 0;
}

static uint32_t mxcsr_mask(void)
{
	static uint32_t mask;
	if (!mask) {
		uint8_t img[512] __attribute__((aligned(16)));
		memset(img, 0, sizeof(img));
		__asm__ volatile("fxsave64 %0" : "=m"(img));
		memcpy(&mask, img + 28, 4);
		if (!mask)
			mask = 0xffbf; /* the architectural default */
	}
	return mask;
}

int64_t lx_rt_sigreturn(struct thread *me, struct trap_frame *f)
{
	struct lx_ucontext uc;
	if (copy_from_user(&uc, (const void *)f->rsp, sizeof(uc)))
		force_exit(me->proc, LX_SIGSEGV);
	const uint64_t *g = uc.gregs;
	/* A forged context must not make the return to user mode fault in the kernel. */
	if (g[16] >= USER_TOP || g[15] >= USER_TOP)
		force_exit(me->proc, LX_SIGSEGV);
	if (uc.fpstate) {
		if (copy_from_user(me->fpu, (const void *)uc.fpstate, 512))
			force_exit(me->proc, LX_SIGSEGV);
		uint32_t mx;
		memcpy(&mx, me->fpu + 24, 4);
		mx &= mxcsr_mask();
		memcpy(me->fpu + 24, &mx, 4);
		__asm__ volatile("fxrstor64 %0" : : "m"(me->fpu));
	}
	f->r8 = g[0], f->r9 = g[1], f->r10 = g[2], f->r11 = g[3], f->r12 = g[4], f->r13 = g[5];
	f->r14 = g[6], f->r15 = g[7], f->rdi = g[8], f->rsi = g[9], f->rbp = g[10], f->rbx = g[11];
	f->rdx = g[12], f->rcx = g[14], f->rsp = g[15], f->rip = g[16];
	const uint64_t user_flags = 0x40dd5; /* CF PF AF ZF SF TF DF OF AC */
	f->rflags = (f->rflags & ~user_flags) | (g[17] & user_flags) | 0x200;
	me->lxt.sigmask = uc.sigmask & ~UNBLOCKABLE;
	me->lxt.lx_restart = false;
	return (int64_t)g[13]; /* rax as it was */
}

int64_t lx_rt_sigaction(struct thread *me, uint64_t sig, uint64_t uact, uint64_t uoact, uint64_t size)
{
	struct lx_proc *lx = me->proc->lx;
	if (size != 8 || sig < 1 || sig > LX_NSIG)
		return -KE_INVAL;
	struct lx_sigaction *a = &lx->act[sig - 1], n;
	if (uact && (sig == LX_SIGKILL || sig == LX_SIGSTOP))
		return -KE_INVAL;
	if (uact && copy_from_user(&n, (const void *)uact, sizeof(n)))
		return -KE_FAULT;
	if (uoact && copy_to_user((void *)uoact, a, sizeof(*a)))
		return -KE_FAULT;
	if (uact) {
		n.mask &= ~UNBLOCKABLE;
		*a = n;
		/* no longer held: a signal that came meanwhile acts on this action (taken on the
		 * way back to user mode if this thread does not block it) or is discarded below */
		lx->sig_forkign &= ~BIT(sig);
		if (ignored(lx, (int)sig)) { /* POSIX: pending instances are discarded */
			lx->sigpending &= ~BIT(sig);
			for (uint32_t i = 1; i < MAX_THREADS; i++)
				if (threads[i].proc == me->proc)
					threads[i].lxt.sigpending &= ~BIT(sig);
		}
	}
	return 0;
}

int64_t lx_rt_sigprocmask(struct thread *me, uint64_t how, uint64_t uset, uint64_t uoset, uint64_t size)
{
	uint64_t set, old = me->lxt.sigmask;
	if (size != 8)
		return -KE_INVAL;
	if (uset && copy_from_user(&set, (const void *)uset, 8))
		return -KE_FAULT;
	if (uset) {
		switch (how) {
		case 0: me->lxt.sigmask |= set; break;  /* SIG_BLOCK */
		case 1: me->lxt.sigmask &= ~set; break; /* SIG_UNBLOCK */
		case 2: me->lxt.sigmask = set; break;   /* SIG_SETMASK */
		default: return -KE_INVAL;
		}
		me->lxt.sigmask &= ~UNBLOCKABLE;
	}
	if (uoset && copy_to_user((void *)uoset, &old, 8))
		return -KE_FAULT;
	return 0;
}

int64_t lx_rt_sigpending(struct thread *me, uint64_t uset, uint64_t size)
{
	uint64_t set = me->lxt.sigpending | me->proc->lx->sigpending;
	if (size != 8)
		return -KE_INVAL;
	return copy_to_user((void *)uset, &set, 8) ? -KE_FAULT : 0;
}

int64_t lx_rt_sigsuspend(struct thread *me, uint64_t uset, uint64_t size)
{
	uint64_t set;
	if (size != 8)
		return -KE_INVAL;
	if (copy_from_user(&set, (const void *)uset, 8))
		return -KE_FAULT;
	signal_mask_swap(me, set);
	wait_for_signal(me);
	/* The old mask comes back with the handler frame (setup_frame), or on the way out
	 * if no handler runs (signal_user_return). */
	return -LX_EINTR;
}

/* rt_sigtimedwait (sigwaitinfo, sigtimedwait, sigwait): the lowest pending signal of the
 * set (the thread's own first) is taken without running a handler, its siginfo copied out;
 * otherwise the thread sleeps until one is posted (signal_post wakes a thread whose sigwait
 * has it), the timeout passes (EAGAIN) or another signal it does not block arrives (EINTR,
 * its handler runs). */
int64_t lx_rt_sigtimedwait(struct thread *me, uint64_t uset, uint64_t uinfo, uint64_t utimeout, uint64_t size)
{
	uint64_t set, ns = 0;
	if (size != 8)
		return -KE_INVAL;
	if (copy_from_user(&set, (const void *)uset, 8))
		return -KE_FAULT;
	set &= ~UNBLOCKABLE;
	if (utimeout) {
		int64_t r = lx_timeout(me, utimeout, 1, false, &ns);
		if (r)
			return r;
	}
	uint64_t deadline = utimeout ? time_us_since_boot() + ns / 1000 : 0;
	struct lx_proc *lx = me->proc->lx;
	for (;;) {
		uint64_t mine = me->lxt.sigpending & set, shared = lx->sigpending & set;
		if (mine | shared) {
			struct lx_siginfo si = take(me, __builtin_ctzll(mine ? mine : shared) + 1, mine != 0);
			if (uinfo && copy_to_user((void *)uinfo, &si, sizeof(si)))
				return -KE_FAULT;
			return si.signo;
		}
		if (signal_pending(me))
			return -LX_EINTR;
		uint64_t now = time_us_since_boot();
		if (utimeout && now >= deadline)
			return -LX_EAGAIN;
		int slot = -1;
		if (utimeout && (slot = wait_timer_add(me, (deadline - now) * 1000)) < 0)
			return -LX_EAGAIN;
		me->lxt.sigwait = set;
		ipc_block(me, B_WAIT, EP_NONE);
		me->lxt.sigwait = 0;
		wait_timer_del(slot, me);
		if (me->state == T_DEAD)
			return -LX_EINTR;
	}
}

int64_t lx_pause(struct thread *me)
{
	wait_for_signal(me);
	return -LX_EINTR;
}

int64_t lx_sigaltstack(struct thread *me, uint64_t uss, uint64_t uoss)
{
	struct { uint64_t sp; int32_t flags, pad; uint64_t size; } ss, old = { me->lxt.altstack_sp, 0, 0, me->lxt.altstack_size };
	uint64_t rsp = me->uframe->rsp;
	bool on = me->lxt.altstack_size && rsp - me->lxt.altstack_sp <= me->lxt.altstack_size;
	old.flags = !me->lxt.altstack_size ? SS_DISABLE : on ? SS_ONSTACK : 0;
	if (uss) {
		if (copy_from_user(&ss, (const void *)uss, sizeof(ss)))
			return -KE_FAULT;
		if (on)
			return -KE_PERM;
		if (ss.flags & ~(SS_DISABLE | SS_ONSTACK))
			return -KE_INVAL;
		if (ss.flags & SS_DISABLE) {
			me->lxt.altstack_sp = me->lxt.altstack_size = 0;
		} else {
			if (ss.size < MINSIGSTKSZ)
				return -LX_ENOMEM;
			me->lxt.altstack_sp = ss.sp, me->lxt.altstack_size = ss.size;
		}
	}
	if (uoss && copy_to_user((void *)uoss, &old, sizeof(old)))
		return -KE_FAULT;
	return 0;
}

int64_t kc_lx_signal(struct thread *me, endpoint_t target, uint64_t sig, uint64_t flags, uint64_t pid,
		     uint64_t code, uint64_t value)
{
	struct thread *t = ep_lookup(target);
	if (!t)
		return -KE_SRCH;
	struct proc *p = t->proc;
	if (p->parent != thread_ep(me) || !p->lx)
		return -KE_PERM;
	if (sig < 1 || sig > LX_NSIG || (flags & ~(uint64_t)(LXS_THREAD | LXS_QUERY)))
		return -KE_INVAL;
	if (flags & LXS_QUERY) {
		/* For LX_SIGCHLD the question is whether children are kept as zombies: not when it
		 * is set to SIG_IGN or has LX_SA_NOCLDWAIT (its default "ignore" keeps them). */
		const struct lx_sigaction *a = &p->lx->act[sig - 1];
		if (sig == LX_SIGCHLD)
			return a->handler == SIG_IGN || (a->flags & LX_SA_NOCLDWAIT);
		return ignored(p->lx, (int)sig);
	}
	return signal_post(p, flags & LXS_THREAD ? t : NULL, (int)sig, (int32_t)pid, (int32_t)code, value);
}
