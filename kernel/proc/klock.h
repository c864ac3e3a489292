/* The kernel lock: one lock over processes, threads, run queues, IPC and memory objects.
 * The kernel is not preemptible and runs with interrupts off, so the lock is held for
 * short, bounded stretches; the data plane (channels) never enters the kernel.
 *
 * It is a test-and-set lock, not a ticket lock: on a virtual machine with more vCPUs than
 * the host has cores, a ticket lock hands the lock to the next waiter in line even when the
 * host has descheduled it, and every other CPU spins until the host runs it again (make run
 * with 4 vCPUs on 2 host cores moved 6 Mbit/s where 2 vCPUs moved 330). Whoever runs takes
 * a free test-and-set lock. A waiter spins for a bounded time, then halts with interrupts
 * on until the holder's release kicks it (klock.c), so spinning never takes the host CPU
 * from the holder. While waiting a CPU keeps serving remote calls, so a holder that shoots
 * down a TLB entry cannot deadlock with a CPU waiting here. See docs/decisions.md. */
#pragma once
#include "lib/types.h"
#include "arch/x86.h"
#include "smp/percpu.h"

extern volatile uint32_t kernel_lock;        /* 0 free, else the holder's CPU index + 1 */
extern volatile uint32_t kernel_lock_sleepers; /* CPUs halted in klock_slow */

void klock_slow(void);
void klock_kick(void);
void sched_send_deferred(void); /* proc/sched.c */

/* Takes the lock if it is free: a compare-exchange, not an exchange, so a waiter never
 * writes over the holder's number (klock_mine would then lie to both). */
static inline bool klock_try(void)
{
	uint32_t free = 0;
	return __atomic_compare_exchange_n(&kernel_lock, &free, this_cpu_index() + 1, false, __ATOMIC_ACQUIRE,
					   __ATOMIC_RELAXED);
}

static inline void klock(void)
{
	if (!__builtin_expect(klock_try(), 1))
		klock_slow();
	this_cpu()->klock_since = rdtsc();
}

static inline void kunlock(void)
{
	/* How long this CPU held the lock, whoever took it: a call that blocked handed it on
	 * to the thread it switched to, whose release ends the hold (charged to the call). */
	struct cpu *c = this_cpu();
	uint64_t held = rdtsc() - c->klock_since;
	c->stat[KST_KLOCK_HOLD_CYCLES] += held;
	if (c->klock_call) {
		c->kc_stat[c->klock_call - 1][KCS_HOLD_CYCLES] += held;
		c->klock_call = 0;
	}
	/* The exchange is a full barrier: either a waiter going to halt sees the lock free,
	 * or this sees its count (klock_slow raises the count before its last look). */
	__atomic_exchange_n(&kernel_lock, 0, __ATOMIC_SEQ_CST);
	if (__builtin_expect(__atomic_load_n(&kernel_lock_sleepers, __ATOMIC_RELAXED) != 0, 0))
		klock_kick();
	/* Reschedule IPIs decided under the lock go out now: sending one is slow on a virtual
	 * machine, and the other CPUs should not wait for the lock meanwhile. */
	if (__builtin_expect(this_cpu()->resched_any, 0))
		sched_send_deferred();
}
void klock_init(void);

/* Whether this CPU holds the lock (a fault taken inside a kernel call, say). */
static inline bool klock_mine(void)
{
	return __atomic_load_n(&kernel_lock, __ATOMIC_RELAXED) == this_cpu_index() + 1;
}
