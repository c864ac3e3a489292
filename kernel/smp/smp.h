#pragma once
#include "lib/types.h"
struct cpu;
/* Starts every enabled CPU the MADT lists with INIT-SIPI-SIPI, one after another. */
void smp_boot_aps(void);
/* Sets up the calling CPU's tables, LAPIC and tick (boot CPU and APs alike). */
void cpu_bringup(struct cpu *c);
