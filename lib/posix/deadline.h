/* A timer's deadline on the monotonic clock (ax_time_ns) with its reload, and Linux's struct
 * itimerspec: pm's interval and POSIX timers (servers/pm/itimer.c) and vfs's timerfd
 * (servers/vfs/timerfd.c) keep their timers so. */
#pragma once
#include <stdbool.h>
#include "lx_abi.h"
#include <stdint.h>
#include "axrt.h"

#define LX_NS_PER_S 1000000000ull

struct lx_deadline {
	uint64_t at_ns;    /* the next expiration, 0: disarmed */
	uint64_t every_ns; /* between expirations, 0: once */
};

struct lx_timespec {
	int64_t sec, nsec;
};
struct lx_itimerspec {
	struct lx_timespec interval, value;
};

static inline bool lx_timespec_valid(const struct lx_timespec *t)
{
	return t->sec >= 0 && t->nsec >= 0 && t->nsec < (int64_t)LX_NS_PER_S;
}

static inline uint64_t lx_timespec_ns(const struct lx_timespec *t)
{
	return (uint64_t)t->sec * LX_NS_PER_S + (uint64_t)t->nsec;
}

/* What is left of d at now: 0 when disarmed, 1 ns when due but not yet fired. */
static inline uint64_t lx_deadline_left(const struct lx_deadline *d, uint64_t now)
{
	return !d->at_ns ? 0 : d->at_ns > now ? d->at_ns - now : 1;
}

/* Arms d value_ns from now, or with `absolute` at value_ns on the monotonic clock or (wall)
 * on the wall clock, turned into a monotonic deadline now (one in the past is due at once);
 * reloading every every_ns. A value of 0 disarms. */
static inline void lx_deadline_set(struct lx_deadline *d, uint64_t value_ns, uint64_t every_ns, bool absolute,
				   bool wall, uint64_t now)
{
	d->every_ns = value_ns ? every_ns : 0;
	if (!value_ns) {
		d->at_ns = 0;
	} else if (absolute) {
		uint64_t base = wall ? ax_wall_ns() : now;
		d->at_ns = value_ns > base ? now + (value_ns - base) : now;
	} else {
		d->at_ns = now + value_ns;
	}
}

/* The expirations of d by now (0: not due); d then reloads past now, or disarms (missed
 * periods are counted, not made up). */
static inline uint64_t lx_deadline_fire(struct lx_deadline *d, uint64_t now)
{
	if (!d->at_ns || now < d->at_ns)
		return 0;
	uint64_t n = 1 + (d->every_ns ? (now - d->at_ns) / d->every_ns : 0);
	d->at_ns = d->every_ns ? d->at_ns + n * d->every_ns : 0;
	return n;
}

/* The sooner of next (ns from now, 0: none) and d's deadline. */
static inline uint64_t lx_deadline_sooner(uint64_t next, const struct lx_deadline *d, uint64_t now)
{
	uint64_t in = lx_deadline_left(d, now);
	return !in ? next : !next || in < next ? in : next;
}

/* d as Linux's itimerspec at now (what is left, the reload). */
static inline struct lx_itimerspec lx_deadline_spec(const struct lx_deadline *d, uint64_t now)
{
	uint64_t left = lx_deadline_left(d, now);
	return (struct lx_itimerspec){ { (int64_t)(d->every_ns / LX_NS_PER_S), (int64_t)(d->every_ns % LX_NS_PER_S) },
				       { (int64_t)(left / LX_NS_PER_S), (int64_t)(left % LX_NS_PER_S) } };
}

/* Whether a clock id's absolute times are wall-clock times: LX_CLOCK_REALTIME, CLOCK_REALTIME_ALARM. */
static inline bool lx_clock_is_wall(int32_t clock) { return clock == 0 || clock == 8; }

/* timer_gettime/timerfd_gettime: d at now as an itimerspec into ep's memory at va; 0 or
 * -EFAULT. */
static inline int64_t lx_deadline_put(const struct lx_deadline *d, uint64_t now, endpoint_t ep, uint64_t va)
{
	struct lx_itimerspec cur = lx_deadline_spec(d, now);
	return ax_vcopy(EP_NONE, &cur, ep, (void *)va, sizeof(cur)) < 0 ? -14 /* EFAULT */ : 0;
}

/* timer_settime/timerfd_settime: the new setting from ep's memory at new_va (checked), the
 * old one at now into old_va when given, then d armed as lx_deadline_set does. 0, -EFAULT
 * or -EINVAL; on an error d is as it was. */
static inline int64_t lx_deadline_settime(struct lx_deadline *d, endpoint_t ep, uint64_t new_va, uint64_t old_va,
					  bool absolute, bool wall, uint64_t now)
{
	struct lx_itimerspec nv;
	if (ax_vcopy(ep, (const void *)new_va, EP_NONE, &nv, sizeof(nv)) < 0)
		return -14; /* EFAULT */
	if (!lx_timespec_valid(&nv.value) || !lx_timespec_valid(&nv.interval))
		return -22; /* EINVAL */
	if (old_va && lx_deadline_put(d, now, ep, old_va))
		return -14;
	lx_deadline_set(d, lx_timespec_ns(&nv.value), lx_timespec_ns(&nv.interval), absolute, wall, now);
	return 0;
}
