/* Linux futexes (futex.c). */
#pragma once
#include "proc/proc.h"

int64_t lx_futex(struct thread *me, uint64_t va, uint64_t op, uint64_t val, uint64_t utimeout, uint64_t va2,
		 uint64_t val3);
/* Wakes up to n waiters of p on va whose bitset meets bits; returns how many. */
int64_t futex_wake(struct proc *p, uint64_t va, uint64_t n, uint32_t bits);
