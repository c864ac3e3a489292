/* Self-tests: every CPU online, IPIs, timer ticks. */
#include "core/ktest.h"
#include "acpi/acpi.h"
#include "arch/lapic.h"
#include "arch/ioapic.h"
#include "arch/time.h"
#include "arch/x86.h"
#include "smp/ipi.h"
#include "smp/percpu.h"

KTEST(cpus_online)
{
	KT_ASSERT(ncpus_online == ncpus, "%u of %u CPUs online", ncpus_online, ncpus);
	if (madt_found)
		KT_ASSERT(ncpus == madt.ncpus, "MADT lists %u CPUs, %u known", madt.ncpus, ncpus);
	for (uint32_t i = 0; i < ncpus; i++) {
		KT_ASSERT(cpus[i] && cpus[i]->index == i, "cpu%u structure is wrong", i);
		for (uint32_t j = 0; j < i; j++)
			KT_ASSERT(cpus[i]->apic_id != cpus[j]->apic_id, "cpu%u and cpu%u share APIC ID %u",
				  i, j, cpus[i]->apic_id);
	}
	return KTEST_OK;
}

struct whoami {
	uint32_t index, apic_id;
	uint64_t gs_self;
};

static void report_whoami(void *arg)
{
	struct whoami *w = arg;
	w->index = this_cpu_index();
	w->apic_id = lapic_id();
	w->gs_self = (uint64_t)this_cpu();
}

KTEST(ipi_roundtrip)
{
	if (ncpus_online < 2) {
		ktest_skip("one CPU");
		return KTEST_SKIPPED;
	}
	for (uint32_t i = 0; i < ncpus; i++) {
		if (i == this_cpu_index())
			continue;
		struct whoami w = { UINT32_MAX, UINT32_MAX, 0 };
		enum { ROUNDS = 50 };
		uint64_t t0 = rdtsc();
		for (int r = 0; r < ROUNDS; r++)
			KT_ASSERT(smp_call(i, report_whoami, &w) == 0, "cpu%u is not online", i);
		uint64_t cycles = (rdtsc() - t0) / ROUNDS;
		KT_ASSERT(w.index == i, "call for cpu%u ran on cpu%u", i, w.index);
		KT_ASSERT(w.apic_id == cpus[i]->apic_id, "cpu%u has APIC ID %u, expected %u", i, w.apic_id,
			  cpus[i]->apic_id);
		KT_ASSERT(w.gs_self == (uint64_t)cpus[i], "cpu%u GS base is wrong", i);
		ktest_info("cpu%u apic=%u roundtrip_cycles=%llu", i, w.apic_id, (unsigned long long)cycles);
	}
	return KTEST_OK;
}

/* Every CPU broadcasts shootdowns at every other at once, from interrupt context with
 * interrupts off: this deadlocks unless waiting CPUs keep serving their own queues. */
static volatile uint32_t storm_done;
enum { STORM_ROUNDS = 200 };

static void storm(void *arg)
{
	(void)arg;
	for (int r = 0; r < STORM_ROUNDS; r++)
		tlb_shootdown(0xffffd00000000000ull, 1);
	__atomic_fetch_add(&storm_done, 1, __ATOMIC_SEQ_CST);
}

KTEST(ipi_storm_no_deadlock)
{
	if (ncpus_online < 2) {
		ktest_skip("one CPU");
		return KTEST_SKIPPED;
	}
	storm_done = 0;
	smp_call_all(storm, NULL);
	KT_ASSERT(storm_done == ncpus_online, "%u of %u CPUs finished", storm_done, ncpus_online);
	ktest_info("cpus=%u shootdowns=%u", ncpus_online, STORM_ROUNDS * ncpus_online);
	return KTEST_OK;
}

KTEST(resched_ipi)
{
	if (ncpus_online < 2) {
		ktest_skip("one CPU");
		return KTEST_SKIPPED;
	}
	for (uint32_t i = 1; i < ncpus; i++) {
		uint64_t before = cpus[i]->resched_ipis;
		smp_send_resched(i);
		uint64_t t0 = time_us_since_boot();
		while (cpus[i]->resched_ipis == before && time_us_since_boot() - t0 < 2000000)
			cpu_relax();
		KT_ASSERT(cpus[i]->resched_ipis > before, "cpu%u did not take the reschedule IPI", i);
	}
	return KTEST_OK;
}

KTEST(timer_ticks)
{
	uint64_t before[MAX_CPUS];
	for (uint32_t i = 0; i < ncpus; i++)
		before[i] = cpus[i]->ticks;
	KT_ASSERT(irq_enabled(), "interrupts are off");
	udelay(300000); /* 300 ms: 30 ticks at 100 Hz */
	for (uint32_t i = 0; i < ncpus; i++) {
		uint64_t d = cpus[i]->ticks - before[i];
		ktest_info("cpu%u ticks=%llu in 300ms", i, (unsigned long long)d);
		KT_ASSERT(d >= 3, "cpu%u took only %llu timer ticks in 300 ms", i, (unsigned long long)d);
	}
	return KTEST_OK;
}

KTEST(ioapic)
{
	if (!madt_found || !madt.nioapics) {
		ktest_skip("no I/O APIC in the MADT");
		return KTEST_SKIPPED;
	}
	KT_ASSERT(ioapic_count() == madt.nioapics, "%u of %u I/O APICs set up", ioapic_count(),
		  madt.nioapics);
	for (uint32_t i = 0; i < ioapic_count(); i++)
		KT_ASSERT(ioapic_pins(i) >= 16 && ioapic_pins(i) <= 240, "I/O APIC %u has %u pins", i,
			  ioapic_pins(i));
	return KTEST_OK;
}
