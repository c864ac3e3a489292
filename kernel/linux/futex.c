/* Linux futexes, served by the kernel: wait, wake, their bitset variants, requeue,
 * compare-and-requeue and wake-op — what musl's and glibc's mutexes, condition variables,
 * thread joins (LX_CLONE_CHILD_CLEARTID) and barriers use. A futex is named by a key: with
 * LX_FUTEX_PRIVATE_FLAG, or in memory no other process shares, its process and user address;
 * without the flag in a shared mapping (MAP_SHARED, shared by fork), the memory object and
 * the offset in it, so processes sharing the memory share the futex (process-shared
 * mutexes, condition variables and semaphores), as Linux. Waiters are found among the
 * threads in a futex wait (a bitmap of slots) and woken oldest first. */
#include "linux/futex.h"
#include "lx_abi.h"
#include "proc/ipc.h"
#include "linux/lxtime.h"
#include "linux/signal.h"
#include "proc/wait.h"
#include "mm/aspace.h"

static uint64_t seq;
/* Threads that blocked in a futex wait, by slot: a wake looks at these alone, not the whole
 * thread table (1024 slots, thousands of loads per wake: it was a third of the kernel lock's
 * hold time under memcached). A bit may outlive its wait (a thread killed while it slept,
 * its slot reused); the state check below skips such a bit and clears it. */
static uint64_t in_wait[MAX_THREADS / 64];

/* A futex's name: the process or the shared memory object, and the address or offset. */
struct fkey {
	const void *space;
	uint64_t off;
};

static struct fkey key_of(struct proc *p, uint64_t va, bool shared)
{
	for (uint32_t i = 0; shared && i < p->nmaps; i++) {
		const struct mapping *m = &p->maps[i];
		if (va >= m->va && va - m->va < m->npages * PAGE_SIZE)
			return m->shared && m->mo ? (struct fkey){ m->mo, m->first_page * PAGE_SIZE + (va - m->va) }
						  : (struct fkey){ p, va };
	}
	return (struct fkey){ p, va };
}

/* The oldest thread waiting on futex k with a bit of bits, or NULL. */
static struct thread *oldest_waiter(struct fkey k, uint32_t bits)
{
	struct thread *best = NULL;
	for (uint32_t w = 0; w < MAX_THREADS / 64; w++)
		for (uint64_t m = in_wait[w]; m; m &= m - 1) {
			uint32_t i = w * 64 + (uint32_t)__builtin_ctzll(m);
			struct thread *t = &threads[i];
			if (t->state != T_BLOCKED || t->blocked_on != B_FUTEX) {
				in_wait[w] &= ~(1ull << (i % 64)); /* stale */
				continue;
			}
			if (t->lxt.futex_space == k.space && t->lxt.futex_va == k.off && (t->lxt.futex_bits & bits) &&
			    (!best || t->lxt.futex_seq < best->lxt.futex_seq))
				best = t;
		}
	return best;
}

static int64_t wake_key(struct fkey k, uint64_t n, uint32_t bits)
{
	int64_t woken = 0;
	for (struct thread *t; (uint64_t)woken < n && (t = oldest_waiter(k, bits)); woken++)
		ipc_wake(t, 0);
	return woken;
}

int64_t futex_wake(struct proc *p, uint64_t va, uint64_t n, uint32_t bits)
{
	return wake_key((struct fkey){ p, va }, n, bits);
}

/* A signal ended the wait. As Linux: a wait without a timeout is made again after a handler
 * with LX_SA_RESTART (or when none ran), else EINTR; a timed one always ends with EINTR (Linux
 * restarts it only when no handler ran: a spurious EINTR is the futex's right). The library's
 * blocking reads rely on this (lib/sock: a read must not end with EINTR under LX_SA_RESTART). */
static int64_t interrupted(struct thread *me, uint64_t utimeout)
{
	if (!utimeout)
		me->lxt.lx_restart = true; /* (lx_nr: linux_syscall set it) */
	return -LX_EINTR;
}

static int64_t futex_wait(struct thread *me, uint64_t va, struct fkey k, uint32_t val, uint64_t utimeout,
			  bool absolute, uint64_t clk, uint32_t bits)
{
	uint32_t cur;
	uint64_t ns = 0;
	if (!bits)
		return -KE_INVAL;
	if (utimeout) {
		int64_t r = lx_timeout(me, utimeout, clk, absolute, &ns);
		if (r)
			return r;
		if (!ns)
			return -KE_TIMEDOUT;
	}
	if (copy_from_user(&cur, (const void *)va, 4))
		return -KE_FAULT;
	if (cur != val)
		return -LX_EAGAIN;
	if (signal_pending(me))
		return interrupted(me, utimeout);
	int slot = -1;
	if (utimeout && (slot = wait_timer_add(me, ns)) < 0)
		return -LX_EAGAIN; /* no timer slot: a spurious return the caller retries */
	me->lxt.futex_space = k.space;
	me->lxt.futex_va = k.off;
	me->lxt.futex_bits = bits;
	me->lxt.futex_seq = ++seq;
	uint32_t i = (uint32_t)(me - threads);
	in_wait[i / 64] |= 1ull << (i % 64);
	int64_t r = ipc_block(me, B_FUTEX, EP_NONE);
	in_wait[i / 64] &= ~(1ull << (i % 64));
	wait_timer_del(slot, me);
	return r == -KE_INTR ? interrupted(me, utimeout) : r;
}

/* Wakes up to n waiters of k and moves up to n2 more to k2. */
static int64_t requeue(struct fkey k, uint64_t n, struct fkey k2, uint64_t n2)
{
	int64_t done = wake_key(k, n, ~0u);
	for (struct thread *t; n2 && (t = oldest_waiter(k, ~0u)); n2--, done++)
		t->lxt.futex_space = k2.space, t->lxt.futex_va = k2.off;
	return done;
}

/* LX_FUTEX_WAKE_OP: *va2 = *va2 OP arg (old value kept), wake n on va, and n2 on va2 if
 * old CMP cmparg. */
static int64_t wake_op(struct fkey k, uint64_t va2, struct fkey k2, uint64_t n, uint64_t n2, uint32_t op)
{
	uint32_t kind = (op >> 28) & 7, cmp = (op >> 24) & 15, arg = (op >> 12) & 0xfff, cmparg = op & 0xfff;
	if (op & (8u << 28))
		arg = arg >= 32 ? 0 : 1u << arg; /* FUTEX_OP_OPARG_SHIFT */
	uint32_t old, nv;
	if (copy_from_user(&old, (const void *)va2, 4))
		return -KE_FAULT;
	switch (kind) {
	case 0: nv = arg; break;
	case 1: nv = old + arg; break;
	case 2: nv = old | arg; break;
	case 3: nv = old & ~arg; break;
	case 4: nv = old ^ arg; break;
	default: return -LX_ENOSYS;
	}
	/* Under the kernel lock no thread of ours runs kernel code, but another CPU may run the
	 * process in user mode: this read-modify-write is not atomic against it. Only glibc
	 * versions older than the ones we run use WAKE_OP; good enough for them. */
	if (copy_to_user((void *)va2, &nv, 4))
		return -KE_FAULT;
	int64_t done = wake_key(k, n, ~0u);
	bool hit;
	switch (cmp) {
	case 0: hit = old == cmparg; break;
	case 1: hit = old != cmparg; break;
	case 2: hit = (int32_t)old < (int32_t)cmparg; break;
	case 3: hit = (int32_t)old <= (int32_t)cmparg; break;
	case 4: hit = (int32_t)old > (int32_t)cmparg; break;
	case 5: hit = (int32_t)old >= (int32_t)cmparg; break;
	default: return -LX_ENOSYS;
	}
	return done + (hit ? wake_key(k2, n2, ~0u) : 0);
}

int64_t lx_futex(struct thread *me, uint64_t va, uint64_t op, uint64_t val, uint64_t utimeout, uint64_t va2,
		 uint64_t val3)
{
	uint32_t cmd = op & ~(uint64_t)(LX_FUTEX_PRIVATE_FLAG | LX_FUTEX_CLOCK_REALTIME);
	uint64_t clk = op & LX_FUTEX_CLOCK_REALTIME ? 0 : 1; /* LX_CLOCK_REALTIME : LX_CLOCK_MONOTONIC */
	if ((va & 3) || va >= USER_TOP)
		return -KE_INVAL;
	struct proc *p = me->proc;
	bool shared = !(op & LX_FUTEX_PRIVATE_FLAG);
	struct fkey k = key_of(p, va, shared);
	uint64_t n2 = utimeout; /* the requeue calls pass a count where the timeout goes */
	switch (cmd) {
	case LX_FUTEX_WAIT:
		return futex_wait(me, va, k, (uint32_t)val, utimeout, false, 1, ~0u);
	case LX_FUTEX_WAIT_BITSET:
		return futex_wait(me, va, k, (uint32_t)val, utimeout, true, clk, (uint32_t)val3);
	case LX_FUTEX_WAKE:
		return wake_key(k, (uint32_t)val, ~0u);
	case LX_FUTEX_WAKE_BITSET:
		return val3 ? wake_key(k, (uint32_t)val, (uint32_t)val3) : -KE_INVAL;
	case LX_FUTEX_CMP_REQUEUE: {
		uint32_t cur;
		if ((va2 & 3) || va2 >= USER_TOP)
			return -KE_INVAL;
		if (copy_from_user(&cur, (const void *)va, 4))
			return -KE_FAULT;
		if (cur != (uint32_t)val3)
			return -LX_EAGAIN;
		return requeue(k, (uint32_t)val, key_of(p, va2, shared), (uint32_t)n2);
	}
	case LX_FUTEX_REQUEUE:
		if ((va2 & 3) || va2 >= USER_TOP)
			return -KE_INVAL;
		return requeue(k, (uint32_t)val, key_of(p, va2, shared), (uint32_t)n2);
	case LX_FUTEX_WAKE_OP:
		if ((va2 & 3) || va2 >= USER_TOP)
			return -KE_INVAL;
		return wake_op(k, va2, key_of(p, va2, shared), (uint32_t)val, (uint32_t)n2, (uint32_t)val3);
	default:
		return -LX_ENOSYS; /* PI futexes and FUTEX_WAITV are not offered */
	}
}
