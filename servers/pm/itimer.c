/* alarm, setitimer and getitimer (ITIMER_REAL): a process's real-time interval timer is a
 * deadline and a reload interval on the monotonic clock, kept in its table entry (so a
 * restarted pm keeps them). pm's loop looks at the deadlines between messages
 * (lx_itimer_poll) and sleeps no longer than until the nearest; one that passed sends
 * SIGALRM as the kernel does on Linux (si_code SI_KERNEL) and reloads. Resolution: the
 * kernel's timeouts are checked on the boot CPU's tick (10 ms). Not inherited by fork,
 * kept by execve, dropped at exit, as on Linux. ITIMER_VIRTUAL and ITIMER_PROF (CPU-time
 * timers) are EINVAL: docs/posix.md. */
#include "pm.h"
#include "evloop.h"

#define ITIMER_REAL 0
#define LX_SIGALRM 14
#define SI_KERNEL 0x80
#define NS_PER_US 1000ull
#define NS_PER_S 1000000000ull

struct lx_timeval {
	int64_t sec, usec;
};
struct lx_itimerval {
	struct lx_timeval interval, value;
};

static uint64_t tv_ns(const struct lx_timeval *t) { return (uint64_t)t->sec * NS_PER_S + (uint64_t)t->usec * NS_PER_US; }

/* Linux's timeval rounding of what is left: up to the next microsecond. */
static struct lx_timeval ns_tv(uint64_t ns)
{
	uint64_t us = (ns + NS_PER_US - 1) / NS_PER_US;
	return (struct lx_timeval){ (int64_t)(us / 1000000), (int64_t)(us % 1000000) };
}

static uint64_t left_ns(const struct lxproc *p, uint64_t now)
{
	if (!p->alarm_at_ns)
		return 0;
	return p->alarm_at_ns > now ? p->alarm_at_ns - now : 1; /* due: fires at the next look */
}

static struct lx_itimerval current(const struct lxproc *p, uint64_t now)
{
	return (struct lx_itimerval){ ns_tv(p->alarm_every_ns), ns_tv(left_ns(p, now)) };
}

static void arm(struct lxproc *p, uint64_t value_ns, uint64_t every_ns, uint64_t now)
{
	p->alarm_at_ns = value_ns ? now + value_ns : 0;
	p->alarm_every_ns = value_ns ? every_ns : 0;
}

static bool valid(const struct lx_timeval *t) { return t->sec >= 0 && t->usec >= 0 && t->usec < 1000000 && t->sec < (1ll << 31); }

int64_t lx_setitimer(struct lxproc *p, int64_t which, uint64_t new_va, uint64_t old_va)
{
	if (which != ITIMER_REAL)
		return -LX_EINVAL;
	struct lx_itimerval nv = { { 0, 0 }, { 0, 0 } };
	/* (a NULL new value disarms, as Linux has long accepted) */
	if (new_va && ax_vcopy(p->ep, (const void *)new_va, EP_NONE, &nv, sizeof(nv)) < 0)
		return -LX_EFAULT;
	if (!valid(&nv.value) || !valid(&nv.interval))
		return -LX_EINVAL;
	uint64_t now = ax_time_ns();
	struct lx_itimerval old = current(p, now);
	if (old_va && ax_vcopy(EP_NONE, &old, p->ep, (void *)old_va, sizeof(old)) < 0)
		return -LX_EFAULT;
	arm(p, tv_ns(&nv.value), tv_ns(&nv.interval), now);
	return 0;
}

int64_t lx_getitimer(struct lxproc *p, int64_t which, uint64_t cur_va)
{
	if (which != ITIMER_REAL)
		return -LX_EINVAL;
	struct lx_itimerval cur = current(p, ax_time_ns());
	return ax_vcopy(EP_NONE, &cur, p->ep, (void *)cur_va, sizeof(cur)) < 0 ? -LX_EFAULT : 0;
}

int64_t lx_alarm(struct lxproc *p, uint64_t secs)
{
	uint64_t now = ax_time_ns(), left = left_ns(p, now);
	arm(p, (uint64_t)(uint32_t)secs * NS_PER_S, 0, now);
	/* what was left, in whole seconds rounded to the nearest, and 1 rather than 0 */
	uint64_t s = left / NS_PER_S;
	if ((left % NS_PER_S) >= NS_PER_S / 2 || (!s && left))
		s++;
	return (int64_t)s;
}

bool lx_itimer_poll(struct ax_evloop *l)
{
	uint64_t now = ax_time_ns(), next = 0;
	for (int i = 0; i < MAX_PROCS; i++) {
		struct lxproc *p = &lx_procs[i];
		if (!p->used || !p->alarm_at_ns)
			continue;
		if (p->zombie) {
			p->alarm_at_ns = p->alarm_every_ns = 0;
			continue;
		}
		if (p->alarm_at_ns <= now) {
			kcall6(KC_LX_SIGNAL, p->ep, LX_SIGALRM, 0, 0, SI_KERNEL, 0);
			if (p->alarm_every_ns) { /* the next period after now: missed ones are not made up */
				uint64_t late = now - p->alarm_at_ns;
				p->alarm_at_ns += (late / p->alarm_every_ns + 1) * p->alarm_every_ns;
			} else {
				p->alarm_at_ns = 0;
				continue;
			}
		}
		uint64_t in = p->alarm_at_ns - now;
		next = next && next < in ? next : in;
	}
	l->wait_ns = next; /* 0: no timer, the loop just receives */
	return false;
}
