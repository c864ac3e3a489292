/* The CMOS real-time clock, read once at boot to give LX_CLOCK_REALTIME its epoch (the wall
 * clock then runs on the TSC-based uptime). Registers per the MC146818: BCD or binary,
 * 12 or 24 hour, as status register B says; read twice until equal so an update in the
 * middle cannot tear the value. */
#include "arch/rtc.h"
#include "lx_abi.h"
#include "arch/x86.h"
#include "arch/time.h"

static uint64_t epoch_ns_at_boot; /* wall-clock time when time_ns_since_boot() was 0 */

static uint8_t cmos(uint8_t reg)
{
	outb(0x70, reg);
	return inb(0x71);
}

static void read_all(uint8_t v[7])
{
	for (int spins = 0; spins < 1000000 && (cmos(0x0a) & 0x80); spins++)
		; /* update in progress */
	static const uint8_t regs[7] = { 0x00, 0x02, 0x04, 0x07, 0x08, 0x09, 0x32 };
	for (int i = 0; i < 7; i++)
		v[i] = cmos(regs[i]);
}

static uint32_t bcd(uint8_t x) { return (x & 0x0f) + (x >> 4) * 10u; }

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian). */
static int64_t days_from_civil(int64_t y, uint32_t m, uint32_t d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	uint32_t yoe = (uint32_t)(y - era * 400);
	uint32_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	uint32_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

void rtc_init(void)
{
	uint8_t a[7], b[7];
	read_all(a);
	for (int tries = 0; tries < 5; tries++) {
		read_all(b);
		bool same = true;
		for (int i = 0; i < 7; i++)
			same &= a[i] == b[i];
		if (same)
			break;
		for (int i = 0; i < 7; i++)
			a[i] = b[i];
	}
	uint8_t status_b = cmos(0x0b);
	bool binary = status_b & 0x04, h24 = status_b & 0x02;
	bool pm = !h24 && (a[2] & 0x80);
	a[2] &= 0x7f;
	uint32_t v[7];
	for (int i = 0; i < 7; i++)
		v[i] = binary ? a[i] : bcd(a[i]);
	uint32_t hour = v[2];
	if (!h24)
		hour = hour % 12 + (pm ? 12 : 0);
	uint32_t year = v[6] >= 19 && v[6] <= 99 ? v[6] * 100 + v[5] : 2000 + v[5];
	if (v[4] < 1 || v[4] > 12 || v[3] < 1 || v[3] > 31 || hour > 23 || v[1] > 59 || v[0] > 60)
		return; /* no sensible clock: the epoch stays 1970 */
	uint64_t s = (uint64_t)(days_from_civil(year, v[4], v[3]) * 86400) + hour * 3600u + v[1] * 60u + v[0];
	epoch_ns_at_boot = s * 1000000000ull - time_ns_since_boot();
}

uint64_t rtc_epoch_ns_at_boot(void) { return epoch_ns_at_boot; }
