/* Text views of the scheduler's state for the kernel log, for diagnosing a stuck system
 * (the NMI hang report, core/hang_report.c). */
#pragma once
#include "arch/trap.h"

/* One line: what this CPU runs now, interrupted at f. */
void dump_this_cpu(const struct trap_frame *f);
/* One line per live thread: state, what it waits for, where it last left user mode. */
void dump_threads(void);
