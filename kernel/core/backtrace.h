#pragma once
#include "lib/types.h"
/* Name of the kernel function containing addr and the offset into it, or NULL. */
const char *ksym_lookup(uint64_t addr, uint64_t *offset);
/* Prints rip and then the return addresses found by walking the rbp chain. */
void backtrace_print(uint64_t rip, uint64_t rbp);
/* For a trap frame: also shows the return address at RSP, which is the only trace of
 * the caller when the trapping function keeps no frame pointer. */
void backtrace_print_trap(uint64_t rip, uint64_t rsp, uint64_t rbp);
