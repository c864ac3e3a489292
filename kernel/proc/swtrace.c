/* The switch trace (swtrace.h). */
#include "swtrace.h"
#include "proc/proc.h"
#include "smp/percpu.h"
#include "arch/x86.h"
#include "axolotl/kcall.h"

static struct swtrace_ev {
	uint64_t tsc;
	uint32_t from, to; /* endpoints of the threads switched from and to (0: the idle thread) */
	uint32_t waker;    /* who made `to` ready (thread.woken_by) */
	uint64_t what;     /* the CPU | why << 8 (KSW_*) | the call << 16 (a kernel or Linux call number) */
} ring[SWTRACE_N];
static uint64_t count;

void swtrace_note(const struct cpu *c, const struct thread *prev, const struct thread *next)
{
	struct swtrace_ev *e = &ring[count % SWTRACE_N];
	uint64_t why, call = 0;
	if (c->irq_depth)
		why = KSW_IRQ;
	else if (!prev->proc)
		why = KSW_IDLE;
	else if (prev->state == T_READY)
		why = KSW_PREEMPT;
	else if (c->klock_call == KC_COUNT + 1)
		why = KSW_LINUX, call = c->lx_nr;
	else if (c->klock_call)
		why = KSW_KCALL, call = c->klock_call - 1;
	else
		why = KSW_OTHER;
	e->tsc = rdtsc();
	e->from = prev->proc ? thread_ep(prev) : 0;
	e->to = next->proc ? thread_ep(next) : 0;
	e->waker = next->proc ? next->woken_by : 0;
	e->what = c->index | why << 8 | call << 16;
	count++;
}

uint64_t swtrace_count(void) { return count; }

int64_t swtrace_info(uint64_t arg)
{
	uint64_t seq = arg >> 3, f = arg & 7;
	if (seq >= count || count - seq > SWTRACE_N)
		return -KE_SRCH;
	const struct swtrace_ev *e = &ring[seq % SWTRACE_N];
	switch (f) {
	case KSWF_TSC:
		return (int64_t)(e->tsc & INT64_MAX); /* (a negative answer is an error) */
	case KSWF_FROM:
		return e->from;
	case KSWF_TO:
		return e->to;
	case KSWF_WAKER:
		return e->waker;
	case KSWF_WHAT:
		return (int64_t)e->what;
	default:
		return -KE_INVAL;
	}
}
