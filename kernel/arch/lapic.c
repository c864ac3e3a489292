#include "arch/lapic.h"
#include "arch/x86.h"
#include "arch/time.h"
#include "arch/trap.h"
#include "mm/vmm.h"
#include "core/panic.h"

enum {
	REG_ID = 0x20, REG_VER = 0x30, REG_TPR = 0x80, REG_EOI = 0xb0, REG_SVR = 0xf0,
	REG_ESR = 0x280, REG_ICR_LO = 0x300, REG_ICR_HI = 0x310, REG_LVT_TIMER = 0x320,
	REG_LVT_LINT0 = 0x350, REG_LVT_LINT1 = 0x360, REG_LVT_ERR = 0x370,
	REG_TIMER_INIT = 0x380, REG_TIMER_CUR = 0x390, REG_TIMER_DIV = 0x3e0,
};
#define LVT_MASKED (1u << 16)
#define LVT_PERIODIC (1u << 17)
#define LVT_DELIVERY_NMI (4u << 8)
#define APIC_BASE_EN (1u << 11)
#define APIC_BASE_EXTD (1u << 10)

static volatile uint32_t *mmio;
static bool x2;
static bool ready;
static uint64_t timer_hz; /* timer input clock after the divide-by-16 */

static uint32_t rd(uint32_t reg)
{
	return x2 ? (uint32_t)rdmsr(0x800 + reg / 16) : mmio[reg / 4];
}

static void wr(uint32_t reg, uint32_t v)
{
	if (x2)
		wrmsr(0x800 + reg / 16, v);
	else
		mmio[reg / 4] = v;
}

void lapic_setup(uint64_t mmio_phys, bool allow_x2apic)
{
	uint64_t base = rdmsr(MSR_APIC_BASE);
	/* Firmware may already have switched to x2APIC (many-CPU machines); then we must keep it. */
	x2 = (base & APIC_BASE_EXTD) || allow_x2apic;
	if (!x2) {
		if (!mmio_phys)
			mmio_phys = base & ~0xfffull;
		mmio = vmm_map_mmio(mmio_phys, PAGE_SIZE);
		if (!mmio)
			panic("cannot map the local APIC");
	}
	ready = true;
}

bool lapic_ready(void) { return ready; }
bool lapic_x2apic_mode(void) { return x2; }

void lapic_init_cpu(void)
{
	uint64_t base = rdmsr(MSR_APIC_BASE) | APIC_BASE_EN;
	if (x2)
		base |= APIC_BASE_EXTD;
	wrmsr(MSR_APIC_BASE, base);
	wr(REG_TPR, 0);
	wr(REG_LVT_ERR, VEC_APIC_ERROR);
	wr(REG_ESR, 0);
	wr(REG_ESR, 0);
	wr(REG_LVT_TIMER, LVT_MASKED);
	/* LINT1 is the platform's NMI line on every CPU (what firmware's MADT "local APIC NMI"
	 * entries say on PCs, and where QEMU's monitor `nmi` arrives): delivered as an NMI, the
	 * hang report (core/hang_report.c). Reset leaves it masked on the APs. */
	wr(REG_LVT_LINT1, LVT_DELIVERY_NMI);
	wr(REG_SVR, 0x100 | VEC_SPURIOUS);
	lapic_eoi();
}

uint32_t lapic_id(void)
{
	return x2 ? rd(REG_ID) : rd(REG_ID) >> 24;
}

void lapic_eoi(void) { wr(REG_EOI, 0); }

/* The destination half of the ICR keeps what was last written to it, so it is written only
 * when the destination changes: each xAPIC register access traps into a hypervisor (about
 * 5 us each under QEMU's TCG, which also takes its global lock), and a 2-CPU machine always
 * sends to the same one. `dest` is the sending CPU's record of it (its APIC's ICR is its
 * own): 0 unknown, else the destination + 1; NULL writes it unconditionally. */
void lapic_send_ipi(uint32_t apic_id, uint32_t icr_low, uint32_t *dest)
{
	uint64_t f = irq_save();
	if (x2) {
		wrmsr(0x830, ((uint64_t)apic_id << 32) | icr_low);
	} else {
		if (!dest || *dest != apic_id + 1) {
			mmio[REG_ICR_HI / 4] = apic_id << 24;
			if (dest)
				*dest = apic_id + 1;
		}
		mmio[REG_ICR_LO / 4] = icr_low;
		for (int i = 0; i < 1000000 && (mmio[REG_ICR_LO / 4] & (1u << 12)); i++)
			cpu_relax(); /* delivery pending */
	}
	irq_restore(f);
}

void lapic_send_nmi_all_others(void) { lapic_send_ipi(0, ICR_NMI | ICR_ASSERT | ICR_ALL_BUT_SELF, NULL); }

void lapic_timer_calibrate(void)
{
	wr(REG_TIMER_DIV, 0x3); /* divide by 16 */
	wr(REG_LVT_TIMER, LVT_MASKED);
	uint64_t best = 0;
	for (int i = 0; i < 3; i++) {
		wr(REG_TIMER_INIT, 0xffffffffu);
		pit_wait_ms(10);
		uint64_t ticks = 0xffffffffu - rd(REG_TIMER_CUR);
		if (!best || ticks < best)
			best = ticks;
	}
	wr(REG_TIMER_INIT, 0);
	timer_hz = best * 100;
	if (timer_hz < 10000)
		timer_hz = 62500000; /* nonsense reading: assume a 1 GHz bus / 16 */
}

uint64_t lapic_timer_hz(void) { return timer_hz; }

void lapic_timer_start(uint32_t hz)
{
	if (!hz) {
		wr(REG_LVT_TIMER, LVT_MASKED);
		wr(REG_TIMER_INIT, 0);
		return;
	}
	wr(REG_TIMER_DIV, 0x3);
	wr(REG_LVT_TIMER, VEC_TIMER | LVT_PERIODIC);
	uint64_t count = timer_hz / hz;
	wr(REG_TIMER_INIT, (uint32_t)(count ? count : 1));
}
