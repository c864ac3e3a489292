/* The kernel lock: one ticket lock over processes, threads, run queues, IPC and memory
 * objects. The kernel is not preemptible and runs with interrupts off, so the lock is
 * held for short, bounded stretches; the data plane (channels) never enters the kernel.
 * While waiting for it a CPU keeps serving remote calls, so a holder that shoots down a
 * TLB entry cannot deadlock with a CPU waiting here. See docs/decisions.md. */
#pragma once
#include "lib/spinlock.h"
#include "smp/ipi.h"

extern spinlock_t kernel_lock;

static inline void klock(void)
{
	uint32_t me = __atomic_fetch_add(&kernel_lock.next, 1, __ATOMIC_RELAXED);
	while (__atomic_load_n(&kernel_lock.owner, __ATOMIC_ACQUIRE) != me) {
		ipi_poll();
		cpu_relax();
	}
}

static inline void kunlock(void) { spin_unlock(&kernel_lock); }
