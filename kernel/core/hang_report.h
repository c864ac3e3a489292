/* The hang report: what every CPU and thread is doing, on an NMI that is not a panic's. */
#pragma once
#include "arch/trap.h"

void hang_report(struct trap_frame *f);
