/* The root's watchdog verdict (kernel/proc/root.c, KC_ALIVE): pure, so the host tests it
 * (tests/unit/test_rootwatch.c). */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#define WATCH_MAX_MS 3600000u /* the longest timeout KC_ALIVE takes (an hour) */

enum watch_verdict {
	WATCH_EARLY,   /* its timeout has not passed yet */
	WATCH_STARVED, /* no beat, but it had too little CPU to beat with: look again later */
	WATCH_HUNG,    /* no beat although it had the CPU, or it waits in IPC: kill it */
};

/* quiet_us: time since the root's last beat; cpu_us: CPU time it used since then; in_ipc:
 * it is blocked sending, receiving or awaiting a reply, which has no timeout (only a peer
 * ends it). Ready, running or asleep in a timed wait, it is hung only once it used half
 * the timeout in CPU time: the guest's CPU time includes time a busy host did not run its
 * virtual CPU, and a root that sat in a run queue could not beat (rs_hang.c's rule). */
static inline enum watch_verdict watch_verdict(uint64_t quiet_us, uint64_t timeout_us, uint64_t cpu_us,
					       bool in_ipc)
{
	if (quiet_us < timeout_us)
		return WATCH_EARLY;
	return in_ipc || cpu_us >= timeout_us / 2 ? WATCH_HUNG : WATCH_STARVED;
}

/* Timer ticks (hz a second) that cover ms milliseconds; at least one. */
static inline uint64_t watch_ticks(uint64_t ms, uint32_t hz)
{
	uint64_t t = (ms * hz + 999) / 1000;
	return t ? t : 1;
}
