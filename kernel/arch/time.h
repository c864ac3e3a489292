/* Time from the TSC, calibrated against the PIT at boot. */
#pragma once
#include "lib/types.h"

extern uint64_t tsc_hz;
void time_calibrate(void);         /* measures tsc_hz and the LAPIC timer rate */
uint64_t time_us_since_boot(void); /* 0 until calibrated */
void udelay(uint64_t us);
/* Runs the PIT channel 2 one-shot for ms milliseconds, calling poll each spin. */
void pit_wait_ms(uint32_t ms);
