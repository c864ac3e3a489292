#pragma once
#include "lib/types.h"
struct trap_frame;

/* Prints the message and a backtrace, halts every other CPU with an NMI and stops. */
__noreturn void panic(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void nmi_handler(struct trap_frame *f);
/* Ends the QEMU run with status (v << 1) | 1 when booted with qemu_exit; else halts. */
__noreturn void qemu_exit(uint32_t v);
