/* Self-test of the kernel lock (proc/klock.h): every CPU takes it again and again, holding
 * it longer than a waiter spins, so waiters halt and are kicked by the releases; no two may
 * ever be inside at once and no increment may be lost.
 * The vCPUs of a TCG guest are host threads: on a loaded host with fewer cores than vCPUs,
 * one can run all its rounds before the next is scheduled at all, and nobody ever waits. So
 * the CPUs start together (a barrier) and go on past ROUNDS until some CPU has taken the slow
 * path, for at most SEEK_S seconds. */
#include "core/ktest.h"
#include "arch/time.h"
#include "arch/x86.h"
#include "proc/klock.h"
#include "smp/ipi.h"
#include "smp/percpu.h"

enum { ROUNDS = 100, HOLD_US = 100, SEEK_S = 20 };

static volatile uint64_t counter, rounds_done;
static volatile uint32_t inside, overlaps, finished, arrived;
static uint64_t halts0, contended0, seek_until_ns;

static uint64_t sum_stat(enum kstat k);

static bool slow_path_seen(void)
{
	return sum_stat(KST_KLOCK_HALTS) > halts0 && sum_stat(KST_KLOCK_CONTENDED) > contended0;
}

static void hammer(void *arg)
{
	(void)arg;
	struct cpu *c = this_cpu();
	/* Remote calls run in an interrupt handler, where a waiter only spins: run this one as
	 * a system call would, where waiters halt. Interrupts that come while it halts nest. */
	uint32_t depth = c->irq_depth;
	c->irq_depth = 0;
	__atomic_fetch_add(&arrived, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&arrived, __ATOMIC_SEQ_CST) < ncpus_online)
		cpu_relax();
	uint64_t r;
	for (r = 0; r < ROUNDS || (!slow_path_seen() && time_ns_since_boot() < seek_until_ns); r++) {
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
	__atomic_fetch_add(&rounds_done, r, __ATOMIC_SEQ_CST);
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
	counter = rounds_done = 0;
	overlaps = finished = arrived = 0;
	uint64_t halts = halts0 = sum_stat(KST_KLOCK_HALTS), kicks = sum_stat(KST_IPI_KICK);
	uint64_t contended = contended0 = sum_stat(KST_KLOCK_CONTENDED);
	seek_until_ns = time_ns_since_boot() + SEEK_S * 1000000000ull;
	smp_call_all(hammer, NULL);
	KT_ASSERT(finished == ncpus_online, "%u of %u CPUs finished", finished, ncpus_online);
	KT_ASSERT(!overlaps, "%u times two CPUs held the lock at once", overlaps);
	KT_ASSERT(rounds_done >= (uint64_t)ROUNDS * ncpus_online && counter == rounds_done,
		  "counter %llu, rounds %llu, at least %llu", (unsigned long long)counter,
		  (unsigned long long)rounds_done, (unsigned long long)ROUNDS * ncpus_online);
	KT_ASSERT(!kernel_lock && !kernel_lock_sleepers, "lock %u sleepers %u after the test", kernel_lock,
		  kernel_lock_sleepers);
	halts = sum_stat(KST_KLOCK_HALTS) - halts;
	contended = sum_stat(KST_KLOCK_CONTENDED) - contended;
	/* Every CPU held it for 100 us at a time while the others wanted it: some waited past
	 * their 20 us of spinning and halted (a kick or any interrupt woke them), within
	 * SEEK_S seconds however the host scheduled the vCPUs. */
	KT_ASSERT(contended > 0 && halts > 0, "contended %llu halted %llu: the slow path never ran",
		  (unsigned long long)contended, (unsigned long long)halts);
	ktest_info("cpus=%u rounds=%llu contended=%llu halts=%llu kicks=%llu", ncpus_online,
		   (unsigned long long)rounds_done, (unsigned long long)contended,
		   (unsigned long long)halts, (unsigned long long)(sum_stat(KST_IPI_KICK) - kicks));
	return KTEST_OK;
}
