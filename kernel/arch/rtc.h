/* The CMOS real-time clock (rtc.c). */
#pragma once
#include "lib/types.h"

void rtc_init(void);
/* Nanoseconds since 1970 at uptime 0: wall clock = this + time since boot. 0 if the CMOS
 * clock was absent or nonsense. */
uint64_t rtc_epoch_ns_at_boot(void);
