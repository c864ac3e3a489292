/* `perf` and `threads`. `perf`: the kernel's activity counters (axolotl/kstat.h) since the last `perf` (or boot),
 * as totals and per second, and per kernel call the calls with their average kernel-lock
 * wait and hold. Run it, put a load on, run it again: the second shows the load alone. */
#include "perf_cmd.h"
#include "axrt.h"
#include "kstat_text.h"

static uint64_t last[KST_COUNT], last_kc[KC_COUNT + 1][3];
static uint64_t last_ns;

static uint64_t per_s(uint64_t d, uint64_t ns) { return ns ? d * 1000000000ull / ns : 0; }

int perf_main(int argc, char **argv)
{
	(void)argv;
	if (argc != 1) {
		ax_printf("usage: perf\n");
		return 2;
	}
	uint64_t now = (uint64_t)ax_time_ns(), ns = now - last_ns;
	uint64_t v[KST_COUNT];
	for (uint32_t k = 0; k < KST_COUNT; k++) {
		int64_t r = kcall2(KC_INFO, KI_STAT, k);
		if (r < 0) {
			ax_printf("perf: the kernel gives no counter %u\n", k);
			return 1;
		}
		v[k] = (uint64_t)r;
	}
	ax_printf("perf: %llu.%03llu s since %s\n", (unsigned long long)(ns / 1000000000ull),
		  (unsigned long long)(ns / 1000000 % 1000), last_ns ? "the last perf" : "boot");
	ax_printf("  %-20s %14s %12s\n", "counter", "total", "per second");
	for (uint32_t k = 0; k < KST_COUNT; k++) {
		if (k == KST_TSC)
			continue;
		uint64_t d = v[k] - last[k];
		ax_printf("  %-20s %14llu %12llu\n", kstat_names[k], (unsigned long long)d,
			  (unsigned long long)per_s(d, ns));
		last[k] = v[k];
	}
	ax_printf("  %-14s %10s %10s %12s %12s\n", "kernel call", "calls", "per second", "avg wait", "avg hold");
	for (uint32_t c = 0; c <= KC_COUNT; c++) {
		uint64_t x[3];
		for (uint32_t f = 0; f < 3; f++) {
			int64_t r = kcall2(KC_INFO, KI_KCALL_STAT, c | f << 8);
			x[f] = r < 0 ? 0 : (uint64_t)r;
		}
		uint64_t d = x[0] - last_kc[c][0];
		if (d && kstat_kcall_name(c))
			ax_printf("  %-14s %10llu %10llu %12llu %12llu\n", kstat_kcall_name(c), (unsigned long long)d,
				  (unsigned long long)per_s(d, ns), (unsigned long long)((x[1] - last_kc[c][1]) / d),
				  (unsigned long long)((x[2] - last_kc[c][2]) / d));
		for (uint32_t f = 0; f < 3; f++)
			last_kc[c][f] = x[f];
	}
	ax_printf("  (wait and hold in TSC cycles, per call; a call that blocked holds until the switch)\n");
	last_ns = now;
	return 0;
}

/* `threads`: every thread, where it runs and how often it ran (totals since boot). */
int threads_main(int argc, char **argv)
{
	(void)argv;
	static char text[16384];
	if (argc != 1) {
		ax_printf("usage: threads\n");
		return 2;
	}
	int len = threads_format(text, sizeof(text));
	if (len < 0) {
		ax_printf("threads: the kernel's table could not be read\n");
		return 1;
	}
	ax_write(text, (size_t)len); /* as `help` does: ax_printf cuts at 512 bytes */
	return 0;
}
