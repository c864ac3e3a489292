/* Time from the TSC, calibrated against the PIT at boot. The TSC is read on whichever CPU
 * the caller runs on; invariance is not checked (cpu_features.invtsc): QEMU's is constant. */
#pragma once
#include "lib/types.h"

extern uint64_t tsc_hz;
void time_calibrate(void);         /* measures tsc_hz and the LAPIC timer rate */
uint64_t time_ns_since_boot(void); /* 0 until calibrated; nanosecond resolution */
uint64_t time_us_since_boot(void); /* time_ns_since_boot() / 1000 */
/* The numbers behind time_ns_since_boot (for the vDSO's vvar page): ns since boot =
 * (TSC - boot) * mult >> shift. Fixed once time_calibrate has run. */
void time_clock_params(uint64_t *boot, uint64_t *mult, uint32_t *shift);
void udelay(uint64_t us);
/* Runs the PIT channel 2 one-shot for ms milliseconds, calling poll each spin. */
void pit_wait_ms(uint32_t ms);
