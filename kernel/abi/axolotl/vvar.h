/* The vvar page and the clock arithmetic the kernel and the vDSO share.
 *
 * The kernel fills one page (struct vvar) once at boot, before the first user process, and
 * maps it read-only, one page below the vDSO, into every Linux process (kernel/linux/vdso.c),
 * and into a native process that asks (KC_INFO KI_VVAR: lib/axrt's ax_time_ns reads the
 * clock from it without a kernel call).
 * The clock in it never changes after that: the TSC rate, the TSC at boot and the wall-clock
 * time at boot are fixed (there is no clock_settime and no frequency adjustment), so readers
 * need no sequence counter. Should the clock ever change at run time, a seqcount goes here;
 * the kernel, the vDSO and the native programs of an image are built together from one tree.
 * The one field that moves is thread_deaths, a single counter read on its own.
 *
 * Pure code, no kernel or libc headers: included by the kernel (arch/time.c, linux/lxtime.c),
 * the vDSO (kernel/vdso/vdso.c, user code) and the host unit test (tests/unit/test_vdso.c). */
#pragma once
#include <stdbool.h>
#include "lx_abi.h"
#include <stdint.h>

/* Linux clock ids. */
#define VCLOCK_REALTIME 0
#define VCLOCK_MONOTONIC 1
#define VCLOCK_PROCESS_CPUTIME_ID 2
#define VCLOCK_THREAD_CPUTIME_ID 3
#define VCLOCK_MONOTONIC_RAW 4
#define VCLOCK_REALTIME_COARSE 5
#define VCLOCK_MONOTONIC_COARSE 6
#define VCLOCK_BOOTTIME 7

#define VNS_PER_S 1000000000ull
#define VCLOCK_RES_NS 1 /* clock_getres of the TSC clocks (the _COARSE ones: the tick) */

/* vvar.flags */
#define VVAR_CLOCK_TSC 1     /* the wall and monotonic clocks come from the TSC: else every call traps */
#define VVAR_GETCPU_RDTSCP 2 /* every CPU's TSC_AUX holds its index: getcpu is RDTSCP */

struct vvar {
	uint32_t flags;    /* VVAR_*; 0 until the kernel filled the page */
	uint32_t shift;    /* ns since boot = (tsc - tsc_boot) * mult >> shift */
	uint64_t mult;
	uint64_t tsc_boot; /* the TSC when the clock read 0 */
	uint64_t epoch_ns; /* LX_CLOCK_REALTIME - LX_CLOCK_MONOTONIC: the wall clock at boot, ns since 1970 */
	uint64_t res_ns;   /* clock_getres of the TSC clocks */
	uint64_t coarse_res_ns; /* clock_getres of the _COARSE clocks (the tick) */
	/* Threads that have ended since boot, counted when each is marked dead: a server holding
	 * blocked callers (vfs) knows that one it found alive at count N is alive while the
	 * count is still N, without a kernel call per caller per look. */
	uint64_t thread_deaths;
};

/* Nanoseconds since boot at TSC value tsc: 0 before tsc_boot (a CPU whose TSC lags the boot
 * CPU's). The product has 128 bits: exact for any uptime that fits the 64-bit result (584
 * years). */
static inline uint64_t vclock_tsc_to_ns(uint64_t tsc, uint64_t tsc_boot, uint64_t mult, uint32_t shift)
{
	if (tsc < tsc_boot)
		return 0;
	return (uint64_t)(((unsigned __int128)(tsc - tsc_boot) * mult) >> (shift & 63));
}

/* The multiplier for a TSC of hz ticks per second at a shift of 32, rounded to nearest. The
 * rounding costs at most hz / (2^33 * 10^9) of the time (6e-10 at 5 GHz, 50 us a day), far
 * below the error of the calibration against the PIT that measured hz. */
#define VCLOCK_SHIFT 32
static inline uint64_t vclock_mult(uint64_t hz)
{
	if (hz < 1000000)
		hz = 1000000;
	return ((VNS_PER_S << VCLOCK_SHIFT) + hz / 2) / hz;
}

/* Whether clock clk is one the TSC gives (the wall and monotonic clocks); the CPU-time
 * clocks and unknown ids are the kernel's alone, and the vDSO hands them to the system call. */
static inline bool vclock_is_tsc(int64_t clk)
{
	switch (clk) {
	case VCLOCK_REALTIME:
	case VCLOCK_REALTIME_COARSE:
	case VCLOCK_MONOTONIC:
	case VCLOCK_MONOTONIC_RAW:
	case VCLOCK_MONOTONIC_COARSE:
	case VCLOCK_BOOTTIME:
		return true;
	}
	return false;
}

/* The value of clock clk for TSC value tsc, computed exactly as the kernel's clock_ns()
 * (kernel/linux/lxtime.c) does; false if the vDSO must make the system call instead. */
static inline bool vvar_clock_ns(const struct vvar *v, int64_t clk, uint64_t tsc, uint64_t *ns)
{
	if (!(v->flags & VVAR_CLOCK_TSC) || !vclock_is_tsc(clk))
		return false;
	uint64_t up = vclock_tsc_to_ns(tsc, v->tsc_boot, v->mult, v->shift);
	*ns = clk == VCLOCK_REALTIME || clk == VCLOCK_REALTIME_COARSE ? v->epoch_ns + up : up;
	return true;
}

/* clock_getres of the clocks vvar_clock_ns serves; false for the others. */
static inline bool vvar_clock_res(const struct vvar *v, int64_t clk, uint64_t *ns)
{
	if (!(v->flags & VVAR_CLOCK_TSC) || !vclock_is_tsc(clk))
		return false;
	*ns = clk == VCLOCK_REALTIME_COARSE || clk == VCLOCK_MONOTONIC_COARSE ? v->coarse_res_ns : v->res_ns;
	return true;
}
