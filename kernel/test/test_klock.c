/* Self-test of the kernel lock (proc/klock.h): every CPU takes it again and again, holding
 * it longer than a waiter spins, so waiters halt and are kicked by the releases; no two may
 * ever be inside at once and no increment may be lost. */
#include "core/ktest.h"
#include "arch/time.h"
#include "arch/x86.h"
#include "proc/klock.h"
#include "smp/ipi.h"
#include "smp/percpu.h"

enum { ROUNDS = 100, HOLD_US = 100 };

static volatile uint64_t counter;
static volatile uint32_t inside, overlaps, finished;

static void hammer(void *arg)
{
	(void)arg;
	struct cpu *c = this_cpu();
	/* Remote calls run in an interrupt handler, where a waiter only spins: run this one as
	 * a system call would, where waiters halt. Interrupts that come while it halts nest. */
	uint32_t depth = c->irq_depth;
	c->irq_depth = 0;
	for (int r = 0; r < ROUNDS; r++) {
		klock();
		if (__atomic_fetch_add(&inside, 1, __ATOMIC_SEQ_CST))
			__atomic_fetch_add(&overlaps, 1, __ATOMIC_SEQ_CST);
		uint64_t v = counter;
		if (r % 4 == 0)
			udelay(HOLD_US);
		counter = v + 1;
		__atomic_fetch_sub(&inside, 1, __ATOMIC_SEQ_CST);
		kunlock();
	}
	c->irq_depth = depth;
	__atomic_fetch_add(&finished, 1, __ATOMIC_SEQ_CST);
}

static uint64_t sum_stat(enum kstat k)
{
	uint64_t s = 0;
	for (uint32_t i = 0; i < ncpus; i++)
		if (cpus[i])
			s += cpus[i]->stat[k];
	return s;
}

KTEST(klock_exclusion)
{
	if (ncpus_online < 2) {
		ktest_skip("one CPU");
		return KTEST_SKIPPED;
	}
	counter = 0;
	overlaps = finished = 0;
	uint64_t halts = sum_stat(KST_KLOCK_HALTS), kicks = sum_stat(KST_IPI_KICK);
	uint64_t contended = sum_stat(KST_KLOCK_CONTENDED);
	smp_call_all(hammer, NULL);
	KT_ASSERT(finished == ncpus_online, "%u of %u CPUs finished", finished, ncpus_online);
	KT_ASSERT(!overlaps, "%u times two CPUs held the lock at once", overlaps);
	KT_ASSERT(counter == (uint64_t)ROUNDS * ncpus_online, "counter %llu, expected %llu",
		  (unsigned long long)counter, (unsigned long long)ROUNDS * ncpus_online);
	KT_ASSERT(!kernel_lock && !kernel_lock_sleepers, "lock %u sleepers %u after the test", kernel_lock,
		  kernel_lock_sleepers);
	halts = sum_stat(KST_KLOCK_HALTS) - halts;
	contended = sum_stat(KST_KLOCK_CONTENDED) - contended;
	/* Every CPU held it for 100 us at a time while the others wanted it: some waited past
	 * their 20 us of spinning and halted (a kick or any interrupt woke them). */
	KT_ASSERT(contended > 0 && halts > 0, "contended %llu halted %llu: the slow path never ran",
		  (unsigned long long)contended, (unsigned long long)halts);
	ktest_info("cpus=%u contended=%llu halts=%llu kicks=%llu", ncpus_online, (unsigned long long)contended,
		   (unsigned long long)halts, (unsigned long long)(sum_stat(KST_IPI_KICK) - kicks));
	return KTEST_OK;
}
