/* Self-test of the message-signalled interrupt vectors of user drivers (proc/msi.c): the
 * pool's bookkeeping (every vector once, none left, freed ones given last), the message
 * address and data, and the handler: a message for a vector nobody holds (what a dead
 * driver's device may still send) is counted, acknowledged (EOI) and harmless, in xAPIC and
 * x2APIC mode alike. The device's side (a real MSI-X write) is test_igb.py's. */
#include "core/ktest.h"
#include "arch/lapic.h"
#include "arch/time.h"
#include "arch/trap.h"
#include "arch/x86.h"
#include "proc/devpriv.h"
#include "proc/msipool.h"
#include "smp/ipi.h"
#include "smp/percpu.h"

static bool wait_strays(uint64_t want)
{
	for (int i = 0; i < 1000 && msi_strays() < want; i++)
		udelay(100);
	return msi_strays() >= want;
}

KTEST(msi_vectors)
{
	struct msi_pool p = { .size = VEC_MSI_COUNT };
	uint64_t seen = 0;
	for (uint32_t k = 0; k < VEC_MSI_COUNT; k++) {
		int i = msi_pool_alloc(&p);
		KT_ASSERT(i >= 0 && i < VEC_MSI_COUNT, "allocation %u gave %d", k, i);
		KT_ASSERT(!(seen >> i & 1), "vector %d given twice", i);
		seen |= 1ull << i;
	}
	KT_ASSERT(msi_pool_alloc(&p) == -1 && msi_pool_free_count(&p) == 0, "a full pool gave a vector");
	msi_pool_free(&p, 5);
	msi_pool_free(&p, 9);
	msi_pool_free(&p, VEC_MSI_COUNT + 3); /* out of range: ignored */
	KT_ASSERT(msi_pool_free_count(&p) == 2, "%u free, want 2", msi_pool_free_count(&p));
	/* the search goes on after the last one given (31): 5, then 9, then none */
	KT_ASSERT(msi_pool_alloc(&p) == 5 && msi_pool_alloc(&p) == 9 && msi_pool_alloc(&p) == -1, "reuse order");
	msi_pool_free(&p, 9);
	msi_pool_free(&p, 20);
	KT_ASSERT(msi_pool_alloc(&p) == 20, "a vector freed before the cursor came first");
	/* the message */
	KT_ASSERT(msi_address(0) == 0xfee00000ull && msi_address(3) == 0xfee03000ull, "address");
	KT_ASSERT(msi_data(VEC_MSI_BASE + 7) == VEC_MSI_BASE + 7, "data");
	KT_ASSERT(VEC_MSI_BASE > VEC_TIMER && VEC_MSI_BASE + VEC_MSI_COUNT <= VEC_IPI_CALL, "vector range");
	/* The handler: a message for a vector no driver holds, delivered as the device's would
	 * be (a fixed interrupt at that vector, here a self-IPI), twice: the second arrives only
	 * if the first was acknowledged. */
	msi_install_handlers();
	uint64_t s0 = msi_strays();
	uint32_t self = lapic_id();
	bool was_on = irq_enabled(); /* (an earlier test may leave them off) */
	irq_enable();
	for (uint64_t k = 1; k <= 2; k++) {
		smp_send_ipi(self, (VEC_MSI_BASE + VEC_MSI_COUNT - 1) | ICR_FIXED | ICR_ASSERT);
		if (!wait_strays(s0 + k)) {
			if (!was_on)
				irq_disable();
			ktest_fail("message %llu to an unbound vector was not taken (%s)", (unsigned long long)k,
				   lapic_x2apic_mode() ? "x2APIC" : "xAPIC");
			return KTEST_FAILED;
		}
	}
	if (!was_on)
		irq_disable();
	ktest_info("%s: 2 messages to an unbound vector taken and acknowledged", lapic_x2apic_mode() ? "x2APIC" : "xAPIC");
	return KTEST_OK;
}
