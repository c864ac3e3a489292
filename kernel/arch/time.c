#include "arch/time.h"
#include "arch/x86.h"
#include <axolotl/vvar.h>

uint64_t tsc_hz;
/* The clock: ns since boot = (TSC - tsc_boot) * tsc_mult >> VCLOCK_SHIFT, the arithmetic the
 * vDSO repeats in user space from the same numbers (axolotl/vvar.h); fixed after calibration. */
static uint64_t tsc_boot, tsc_mult;

#define PIT_HZ 1193182u

void pit_wait_ms(uint32_t ms)
{
	uint32_t count = PIT_HZ / 1000 * ms;
	if (count > 0xffff)
		count = 0xffff;
	/* Channel 2, gate on, speaker off; mode 0 (interrupt on terminal count), binary. */
	outb(0x61, (inb(0x61) & ~0x02) | 0x01);
	outb(0x43, 0xb0);
	outb(0x42, count & 0xff);
	outb(0x42, count >> 8);
	/* OUT2 (port 0x61 bit 5) goes high when the count reaches zero. */
	for (uint64_t spins = 0; !(inb(0x61) & 0x20); spins++)
		if (spins > 100000000ull)
			break; /* no PIT: give up rather than hang the boot */
}

void time_calibrate(void)
{
	/* Best of three 10 ms windows guards against a vCPU being descheduled. */
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 3; i++) {
		uint64_t t0 = rdtsc();
		pit_wait_ms(10);
		uint64_t d = rdtsc() - t0;
		if (d < best)
			best = d;
	}
	tsc_hz = best * 100;
	if (tsc_hz < 1000000)
		tsc_hz = 1000000000; /* nonsense reading: assume 1 GHz rather than divide by ~0 */
	tsc_mult = vclock_mult(tsc_hz);
	tsc_boot = rdtsc();
}

uint64_t time_ns_since_boot(void)
{
	if (!tsc_hz)
		return 0;
	return vclock_tsc_to_ns(rdtsc_ordered(), tsc_boot, tsc_mult, VCLOCK_SHIFT);
}

uint64_t time_us_since_boot(void) { return time_ns_since_boot() / 1000; }

void time_clock_params(uint64_t *boot, uint64_t *mult, uint32_t *shift)
{
	*boot = tsc_boot;
	*mult = tsc_mult;
	*shift = VCLOCK_SHIFT;
}

void udelay(uint64_t us)
{
	uint64_t hz = tsc_hz ? tsc_hz : 3000000000ull;
	uint64_t end = rdtsc() + us * (hz / 1000000);
	while (rdtsc() < end)
		cpu_relax();
}
