/* The root service (boot module 0, rs): started by the kernel, and started again by it when
 * it dies, with what it held (its legacy) and its children (kernel/proc/root.c). */
#pragma once
#include "proc/proc.h"

void proc_start_init(void);
/* p (the root) is ending, under the kernel lock, its handles already in a legacy: its
 * successor starts now, adopts its children and is given the legacy. */
void root_died(struct proc *p);
/* KC_ALIVE(timeout_ms): the root arms its watchdog or beats (0 disarms); -EPERM for any
 * other process, -EINVAL past WATCH_MAX_MS. Under the kernel lock. */
int64_t root_alive(struct thread *me, uint64_t timeout_ms);
/* Every timer tick (acts on CPU 0 only, one comparison while the root beats): kills a root
 * that has not beaten for its timeout although it had the CPU (proc/rootwatch.h). */
void root_watch_tick(const struct trap_frame *f);
