/* Linux clocks and sleeping, served by the kernel (kernel/linux/linux.c). Time since boot
 * comes from the TSC-calibrated clock (nanosecond resolution), the wall clock adds the
 * CMOS clock's reading at boot, CPU time is accounted at every context switch (microsecond
 * resolution). Sleeps end on the timer tick (10 ms at the default hz=100).
 *
 * The vDSO (kernel/vdso/vdso.c) computes the wall and monotonic clocks in user space from
 * the same numbers with the same arithmetic (axolotl/vvar.h), so both give the same value for
 * the same TSC reading; programs reach this file for them only without a vDSO. */
#include "linux/lxtime.h"
#include "lx_abi.h"
#include "proc/wait.h"
#include "arch/rtc.h"
#include "arch/time.h"
#include "mm/aspace.h"
#include "smp/percpu.h"
#include "core/config.h"
#include <axolotl/vvar.h>

#define NS 1000000000ull

struct lx_timespec {
	int64_t sec, nsec;
};

/* The clock's value in ns, or -EINVAL for a clock we do not have. */
static int64_t clock_ns(struct thread *me, uint64_t clk, uint64_t *out)
{
	uint64_t up = time_ns_since_boot();
	switch (clk) {
	case LX_CLOCK_REALTIME:
	case LX_CLOCK_REALTIME_COARSE:
		*out = rtc_epoch_ns_at_boot() + up;
		return 0;
	case LX_CLOCK_MONOTONIC:
	case LX_CLOCK_MONOTONIC_RAW:
	case LX_CLOCK_MONOTONIC_COARSE:
	case LX_CLOCK_BOOTTIME:
		*out = up;
		return 0;
	case LX_CLOCK_PROCESS_CPUTIME_ID: /* every thread's, the caller's current run included */
		*out = (proc_cpu_us(me->proc) + time_us_since_boot() - this_cpu()->run_since_us) * 1000;
		return 0;
	case LX_CLOCK_THREAD_CPUTIME_ID:
		*out = (me->cpu_us + time_us_since_boot() - this_cpu()->run_since_us) * 1000;
		return 0;
	}
	return -KE_INVAL;
}

static int64_t put_timespec(uint64_t uptr, uint64_t ns)
{
	struct lx_timespec ts = { (int64_t)(ns / NS), (int64_t)(ns % NS) };
	return copy_to_user((void *)uptr, &ts, sizeof(ts)) ? -KE_FAULT : 0;
}

int64_t lx_clock_gettime(struct thread *me, uint64_t clk, uint64_t uptr)
{
	uint64_t ns;
	int64_t r = clock_ns(me, clk, &ns);
	return r ? r : put_timespec(uptr, ns);
}

int64_t lx_clock_getres(struct thread *me, uint64_t clk, uint64_t uptr)
{
	uint64_t ns;
	int64_t r = clock_ns(me, clk, &ns);
	if (r || !uptr)
		return r;
	/* The vDSO answers the same for the clocks it serves (kernel/linux/vdso.c fills res_ns
	 * and coarse_res_ns with these). */
	bool coarse = clk == LX_CLOCK_REALTIME_COARSE || clk == LX_CLOCK_MONOTONIC_COARSE;
	bool cputime = clk == LX_CLOCK_PROCESS_CPUTIME_ID || clk == LX_CLOCK_THREAD_CPUTIME_ID;
	return put_timespec(uptr, coarse ? NS / kernel_hz : cputime ? 1000 : VCLOCK_RES_NS);
}

int64_t lx_gettimeofday(struct thread *me, uint64_t tv, uint64_t tz)
{
	uint64_t ns;
	clock_ns(me, LX_CLOCK_REALTIME, &ns);
	struct lx_timespec v = { (int64_t)(ns / NS), (int64_t)(ns % NS / 1000) };
	static const uint32_t no_zone[2];
	if (tv && copy_to_user((void *)tv, &v, sizeof(v)))
		return -KE_FAULT;
	if (tz && copy_to_user((void *)tz, no_zone, sizeof(no_zone)))
		return -KE_FAULT;
	return 0;
}

int64_t lx_time(struct thread *me, uint64_t tloc)
{
	uint64_t ns;
	clock_ns(me, LX_CLOCK_REALTIME, &ns);
	int64_t s = (int64_t)(ns / NS);
	if (tloc && copy_to_user((void *)tloc, &s, sizeof(s)))
		return -KE_FAULT;
	return s;
}

/* Sleeps until the clock reaches `until` (ns); on an interruption writes what is left. */
static int64_t sleep_until(struct thread *me, uint64_t clk, uint64_t until, uint64_t rem)
{
	uint64_t now;
	int64_t r = clock_ns(me, clk, &now);
	if (r || now >= until)
		return r;
	/* The sleep counts whole microseconds from a microsecond reading up to 999 ns behind
	 * `now`: 999 ns more keep it from ending before `until`. */
	r = wait_sleep(me, until - now + 999);
	if (r == -KE_INTR && rem) {
		clock_ns(me, clk, &now);
		put_timespec(rem, until > now ? until - now : 0);
	}
	return r;
}

static int64_t get_request(uint64_t uptr, uint64_t *ns)
{
	struct lx_timespec ts;
	if (copy_from_user(&ts, (const void *)uptr, sizeof(ts)))
		return -KE_FAULT;
	if (ts.sec < 0 || ts.nsec < 0 || ts.nsec >= (int64_t)NS)
		return -KE_INVAL;
	*ns = (uint64_t)ts.sec > (UINT64_MAX / 2) / NS ? UINT64_MAX / 2 : (uint64_t)ts.sec * NS + (uint64_t)ts.nsec;
	return 0;
}

int64_t lx_clock_nanosleep(struct thread *me, uint64_t clk, uint64_t flags, uint64_t req, uint64_t rem)
{
	uint64_t ns, now;
	int64_t r = get_request(req, &ns);
	if (r == 0 && clk != LX_CLOCK_REALTIME && clk != LX_CLOCK_MONOTONIC && clk != LX_CLOCK_BOOTTIME)
		r = -KE_INVAL;
	if (r)
		return r;
	if (flags & LX_TIMER_ABSTIME)
		return sleep_until(me, clk, ns, 0);
	clock_ns(me, clk, &now);
	return sleep_until(me, clk, now + ns, rem);
}

int64_t lx_nanosleep(struct thread *me, uint64_t req, uint64_t rem)
{
	return lx_clock_nanosleep(me, LX_CLOCK_MONOTONIC, 0, req, rem);
}

int64_t lx_timeout(struct thread *me, uint64_t uptr, uint64_t clk, bool absolute, uint64_t *ns)
{
	int64_t r = get_request(uptr, ns);
	if (r || !absolute)
		return r;
	uint64_t now;
	if ((r = clock_ns(me, clk, &now)))
		return r;
	*ns = *ns > now ? *ns - now : 0;
	return 0;
}

int64_t lx_getrusage(struct thread *me, uint64_t who, uint64_t uptr)
{
	/* All CPU time counts as user time (the kernel's share is not separated); the
	 * maximum resident set is every mapped page, since memory is allocated eagerly. */
	uint64_t now_run = time_us_since_boot() - this_cpu()->run_since_us;
	uint64_t us = who == 1 ? me->cpu_us + now_run : proc_cpu_us(me->proc) + now_run;
	int64_t ru[18] = { 0 }; /* struct rusage: two timevals, then 14 longs */
	ru[0] = (int64_t)(us / 1000000), ru[1] = (int64_t)(us % 1000000);
	uint64_t pages = 0;
	for (uint32_t i = 0; i < me->proc->nmaps; i++)
		pages += me->proc->maps[i].npages;
	ru[4] = (int64_t)(pages * 4); /* ru_maxrss in KiB */
	return copy_to_user((void *)uptr, ru, sizeof(ru)) ? -KE_FAULT : 0;
}
