/* The switch trace: every context switch of every CPU, the last SWTRACE_N kept in a ring
 * (KI_SWTRACE, /proc/axolotl/switches, docs/benchmarks.md "Who runs after whom"). Always
 * on: a switch costs a few stores more. Written under the kernel lock. */
#pragma once
#include <stdint.h>

struct thread;
struct cpu;

#define SWTRACE_N 4096
#define SWT_IRQ 0xffffffffu /* woken_by: an interrupt handler */

/* Notes the switch on c from prev to next (schedule()). */
void swtrace_note(const struct cpu *c, const struct thread *prev, const struct thread *next);
/* KI_SWTRACE: field (arg & 7, KSWF_*) of event arg >> 3 (numbered from 0 at boot);
 * KI_SWTRACE_COUNT: events so far. */
int64_t swtrace_info(uint64_t arg);
uint64_t swtrace_count(void);
