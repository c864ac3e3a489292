/* The root service (boot module 0, rs): started by the kernel, and started again by it when
 * it dies, with what it held (its legacy) and its children (kernel/proc/root.c). */
#pragma once
#include "proc/proc.h"

void proc_start_init(void);
/* p (the root) is ending, under the kernel lock, its handles already in a legacy: its
 * successor starts now, adopts its children and is given the legacy. */
void root_died(struct proc *p);
