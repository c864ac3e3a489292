/* Linux clocks and sleeping served by the kernel (lxtime.c). Results are Linux values. */
#pragma once
#include "proc/proc.h"

int64_t lx_clock_gettime(struct thread *me, uint64_t clk, uint64_t uptr);
int64_t lx_clock_getres(struct thread *me, uint64_t clk, uint64_t uptr);
int64_t lx_gettimeofday(struct thread *me, uint64_t tv, uint64_t tz);
int64_t lx_time(struct thread *me, uint64_t tloc);
int64_t lx_nanosleep(struct thread *me, uint64_t req, uint64_t rem);
int64_t lx_clock_nanosleep(struct thread *me, uint64_t clk, uint64_t flags, uint64_t req, uint64_t rem);
/* getrusage(RUSAGE_SELF 0 or RUSAGE_THREAD 1); RUSAGE_CHILDREN is pm's (it reaps). */
int64_t lx_getrusage(struct thread *me, uint64_t who, uint64_t uptr);
/* The time from now until a timeout given as a user timespec: relative, or an absolute
 * time of clock clk. 0 (ns set) or -EFAULT / -EINVAL. */
int64_t lx_timeout(struct thread *me, uint64_t uptr, uint64_t clk, bool absolute, uint64_t *ns);
