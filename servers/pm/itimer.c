/* alarm, setitimer and getitimer (LX_ITIMER_REAL), and POSIX timers (timer_create ...).
 * A process's real-time interval timer is a
 * deadline and a reload interval on the monotonic clock, kept in its table entry (so a
 * restarted pm keeps them). pm's loop looks at the deadlines between messages
 * (lx_itimer_poll) and sleeps no longer than until the nearest; one that passed sends
 * SIGALRM as the kernel does on Linux (si_code SI_KERNEL) and reloads. Resolution: the
 * kernel's timeouts are checked on the boot CPU's tick (10 ms). Not inherited by fork,
 * kept by execve, dropped at exit, as on Linux. ITIMER_VIRTUAL and ITIMER_PROF (CPU-time
 * timers) are EINVAL: docs/posix.md. POSIX timers live in pm's kept table (up to 128): the
 * same deadlines, a signal with si_code SI_TIMER, the timer's id and its sigev_value (to the
 * process, or one thread with SIGEV_THREAD_ID; SIGEV_NONE none), the expirations one signal
 * stood for (timer_getoverrun); deleted at execve and exit; not inherited by fork. */
#include "pm.h"
#include "lx_abi.h"
#include "evloop.h"

#define SI_KERNEL 0x80
#define SI_TIMER (-2)
#define SIGEV_SIGNAL 0
#define SIGEV_NONE 1
#define SIGEV_THREAD_ID 4
#define LX_SIGRTMAX 64
#define NS_PER_US 1000ull
#define NS_PER_S LX_NS_PER_S

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

static struct lx_itimerval current(const struct lxproc *p, uint64_t now)
{
	return (struct lx_itimerval){ ns_tv(p->alarm.every_ns), ns_tv(lx_deadline_left(&p->alarm, now)) };
}

static bool valid(const struct lx_timeval *t) { return t->sec >= 0 && t->usec >= 0 && t->usec < 1000000 && t->sec < (1ll << 31); }

int64_t lx_setitimer(struct lxproc *p, int64_t which, uint64_t new_va, uint64_t old_va)
{
	if (which != LX_ITIMER_REAL)
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
	lx_deadline_set(&p->alarm, tv_ns(&nv.value), tv_ns(&nv.interval), false, false, now);
	return 0;
}

int64_t lx_getitimer(struct lxproc *p, int64_t which, uint64_t cur_va)
{
	if (which != LX_ITIMER_REAL)
		return -LX_EINVAL;
	struct lx_itimerval cur = current(p, ax_time_ns());
	return ax_vcopy(EP_NONE, &cur, p->ep, (void *)cur_va, sizeof(cur)) < 0 ? -LX_EFAULT : 0;
}

int64_t lx_alarm(struct lxproc *p, uint64_t secs)
{
	uint64_t now = ax_time_ns(), left = lx_deadline_left(&p->alarm, now);
	lx_deadline_set(&p->alarm, (uint64_t)(uint32_t)secs * NS_PER_S, 0, false, false, now);
	/* what was left, in whole seconds rounded to the nearest, and 1 rather than 0 */
	uint64_t s = left / NS_PER_S;
	if ((left % NS_PER_S) >= NS_PER_S / 2 || (!s && left))
		s++;
	return (int64_t)s;
}

/* ---- POSIX timers ---- */

struct lx_sigevent {
	uint64_t value;
	int32_t signo, notify;
	int32_t tid;
	int32_t pad[11];
};

static struct lxtimer *timer_of(struct lxproc *p, uint64_t id)
{
	for (int i = 0; i < MAX_LXTIMERS; i++)
		if (lx_timers[i].pid == p->pid && (uint64_t)(uint32_t)lx_timers[i].id == id)
			return &lx_timers[i];
	return NULL;
}

int64_t lx_timer_create(struct lxproc *p, uint64_t clock, uint64_t sev_va, uint64_t id_va)
{
	if (clock != 0 && clock != 1 && clock != 7 && clock != 8 && clock != 9)
		return -LX_EINVAL; /* (the CPU-time clocks are not offered) */
	struct lx_sigevent sev = { .signo = LX_SIGALRM, .notify = SIGEV_SIGNAL };
	if (sev_va && ax_vcopy(p->ep, (const void *)sev_va, EP_NONE, &sev, 20) < 0)
		return -LX_EFAULT;
	endpoint_t thread = 0;
	if (sev.notify != SIGEV_NONE && (sev.signo < 1 || sev.signo > LX_SIGRTMAX))
		return -LX_EINVAL;
	if (sev.notify == SIGEV_THREAD_ID) {
		int32_t owner = 0;
		thread = sev.tid == p->pid ? p->ep : lx_thread_ep(sev.tid, &owner);
		if (!thread || (sev.tid != p->pid && owner != p->pid))
			return -LX_EINVAL; /* a thread of another process */
	} else if (sev.notify != SIGEV_SIGNAL && sev.notify != SIGEV_NONE) {
		return -LX_EINVAL; /* (SIGEV_THREAD is the C library's, over SIGEV_THREAD_ID) */
	}
	struct lxtimer *t = NULL;
	int32_t id = 0;
	for (bool taken = true; taken; id++) { /* the lowest id the process does not use */
		taken = false;
		for (int i = 0; i < MAX_LXTIMERS && !taken; i++)
			taken = lx_timers[i].pid == p->pid && lx_timers[i].id == id;
		if (!taken)
			break;
	}
	for (int i = 0; i < MAX_LXTIMERS && !t; i++)
		if (!lx_timers[i].pid)
			t = &lx_timers[i];
	if (!t)
		return -LX_EAGAIN;
	if (ax_vcopy(EP_NONE, &id, p->ep, (void *)id_va, sizeof(id)) < 0)
		return -LX_EFAULT;
	*t = (struct lxtimer){ .pid = p->pid, .id = id, .clock = (int32_t)clock, .notify = (uint8_t)sev.notify,
			       .signo = (uint8_t)sev.signo, .thread = thread,
			       .value = sev_va ? sev.value : (uint64_t)(uint32_t)id };
	return 0;
}

int64_t lx_timer_settime(struct lxproc *p, uint64_t id, uint64_t flags, uint64_t new_va, uint64_t old_va)
{
	struct lxtimer *t = timer_of(p, id);
	if (!t || (flags & ~(uint64_t)LX_TIMER_ABSTIME))
		return -LX_EINVAL;
	int64_t r = lx_deadline_settime(&t->when, p->ep, new_va, old_va, flags & LX_TIMER_ABSTIME, lx_clock_is_wall(t->clock),
					ax_time_ns());
	if (!r)
		t->overrun = 0;
	return r;
}

int64_t lx_timer_gettime(struct lxproc *p, uint64_t id, uint64_t cur_va)
{
	struct lxtimer *t = timer_of(p, id);
	if (!t)
		return -LX_EINVAL;
	return lx_deadline_put(&t->when, ax_time_ns(), p->ep, cur_va);
}

int64_t lx_timer_getoverrun(struct lxproc *p, uint64_t id)
{
	struct lxtimer *t = timer_of(p, id);
	return t ? (int64_t)t->overrun : -LX_EINVAL;
}

int64_t lx_timer_delete(struct lxproc *p, uint64_t id)
{
	struct lxtimer *t = timer_of(p, id);
	if (!t)
		return -LX_EINVAL;
	t->pid = 0;
	return 0;
}

void lx_timers_drop(struct lxproc *p)
{
	for (int i = 0; i < MAX_LXTIMERS; i++)
		if (lx_timers[i].pid == p->pid)
			lx_timers[i].pid = 0;
}

/* The POSIX timers whose deadline passed: their signals; the ns to the nearest (0: none). */
static uint64_t timers_poll(uint64_t now)
{
	uint64_t next = 0;
	for (int i = 0; i < MAX_LXTIMERS; i++) {
		struct lxtimer *t = &lx_timers[i];
		if (!t->pid || !t->when.at_ns)
			continue;
		struct lxproc *p = lx_find_pid(t->pid);
		if (!p || p->zombie) {
			t->pid = 0; /* (its process ended) */
			continue;
		}
		uint64_t n = lx_deadline_fire(&t->when, now);
		if (n) {
			t->overrun = n - 1 > INT32_MAX ? INT32_MAX : (uint32_t)(n - 1);
			if (t->notify != SIGEV_NONE)
				kcall6(KC_LX_SIGNAL, t->thread ? t->thread : p->ep, t->signo, t->thread ? LXS_THREAD : 0,
				       (uint64_t)(uint32_t)t->id, (uint64_t)(int64_t)SI_TIMER, t->value);
		}
		next = lx_deadline_sooner(next, &t->when, now);
	}
	return next;
}

bool lx_itimer_poll(struct ax_evloop *l)
{
	uint64_t now = ax_time_ns(), next = timers_poll(now);
	for (int i = 0; i < MAX_PROCS; i++) {
		struct lxproc *p = &lx_procs[i];
		if (!p->used || !p->alarm.at_ns)
			continue;
		if (p->zombie) {
			p->alarm = (struct lx_deadline){ 0, 0 };
			continue;
		}
		if (lx_deadline_fire(&p->alarm, now)) /* (one signal for however many periods) */
			kcall6(KC_LX_SIGNAL, p->ep, LX_SIGALRM, 0, 0, SI_KERNEL, 0);
		next = lx_deadline_sooner(next, &p->alarm, now);
	}
	l->wait_ns = next; /* 0: no timer, the loop just receives */
	return false;
}
