#include "proc/sched.h"
#include "proc/klock.h"
#include "proc/swtrace.h"
#include "smp/ipi.h"
#include "arch/desc.h"
#include "arch/lapic.h"
#include "arch/x86.h"
#include "arch/time.h"
#include "core/config.h"
#include "core/panic.h"
#include "mm/aspace.h"
#include "mm/heap.h"
#include "mm/vmm.h"
#include "smp/percpu.h"

struct runq {
	struct thread *head[NPRIO], *tail[NPRIO];
	uint32_t len;
	bool tick_on;
};
static struct runq rqs[MAX_CPUS];

extern void switch_to(struct thread *prev, struct thread *next);

struct thread *current_thread(void) { return this_cpu()->current; }

static void rq_push(uint32_t cpu, struct thread *t)
{
	struct runq *q = &rqs[cpu];
	t->rq_next = NULL;
	if (q->tail[t->prio])
		q->tail[t->prio]->rq_next = t;
	else
		q->head[t->prio] = t;
	q->tail[t->prio] = t;
	q->len++;
}

static struct thread *rq_pop(uint32_t cpu)
{
	struct runq *q = &rqs[cpu];
	for (int p = 0; p < NPRIO; p++) {
		struct thread *t = q->head[p];
		if (t) {
			q->head[p] = t->rq_next;
			if (!q->head[p])
				q->tail[p] = NULL;
			q->len--;
			return t;
		}
	}
	return NULL;
}

/* Least-loaded online CPU that is not dedicated to another thread. */
static uint32_t pick_cpu(struct thread *t)
{
	uint32_t best = UINT32_MAX, best_load = UINT32_MAX;
	for (uint32_t i = 0; i < ncpus; i++) {
		struct cpu *c = cpus[i];
		if (!c || !c->online || (c->dedicated && c->dedicated != t))
			continue;
		uint32_t load = rqs[i].len + (c->current && c->current != c->idle ? 1 : 0);
		if (load < best_load) {
			best = i;
			best_load = load;
		}
	}
	return best == UINT32_MAX ? 0 : best;
}

/* Whether CPU i has nothing to run and t may run there: its idle thread runs, its queue is
 * empty, and it is not dedicated to another thread. */
static bool cpu_idle(uint32_t i, const struct thread *t)
{
	return cpus[i] && cpus[i]->online && cpus[i]->current == cpus[i]->idle && !rqs[i].len &&
	       (!cpus[i]->dedicated || cpus[i]->dedicated == t);
}

/* The priority of what CPU i runs (NPRIO for its idle thread). */
static uint32_t running_prio(uint32_t i)
{
	const struct cpu *c = cpus[i];
	return c->current == c->idle ? NPRIO : c->current->prio;
}

/* Whether t may take CPU i at once: it is idle, or runs something less urgent than t (and
 * nothing queued there is as urgent as t). */
static bool cpu_takes(uint32_t i, const struct thread *t)
{
	if (!cpus[i] || !cpus[i]->online || (cpus[i]->dedicated && cpus[i]->dedicated != t))
		return false;
	if (running_prio(i) <= t->prio)
		return false;
	for (uint32_t p = 0; p <= t->prio; p++)
		if (rqs[i].head[p])
			return false;
	return true;
}

/* Where a woken thread that may move should run: where it ran (warm caches) while that CPU
 * is idle; else an idle CPU (this one first: a wake from an interrupt taken in idle); else
 * a CPU running something less urgent, which it preempts; else where it ran, behind what
 * runs there. So a woken thread never waits while a CPU sleeps or runs a lower priority. */
static uint32_t wake_cpu(struct thread *t)
{
	uint32_t prev = (uint32_t)t->cpu, me = this_cpu_index();
	if (cpus[prev]->dedicated == t || cpu_idle(prev, t))
		return prev;
	if (cpu_idle(me, t))
		return me;
	for (uint32_t i = 0; i < ncpus; i++)
		if (cpu_idle(i, t))
			return i;
	if (cpu_takes(prev, t))
		return prev;
	for (uint32_t i = 0; i < ncpus; i++)
		if (cpu_takes(i, t))
			return i;
	return prev;
}

/* Tells CPU i that t was queued there, if it must know now: an idle CPU must wake, a CPU
 * running something less urgent must switch. One running a
 * thread as urgent as t finds t when that thread blocks, yields or its tick comes: no IPI
 * (an IPI exits to the hypervisor on a virtual machine; on QEMU it takes its global lock).
 * The IPI goes out after the kernel lock is released (sched_send_deferred). */
static void notify_cpu(uint32_t i, const struct thread *t)
{
	if (running_prio(i) <= t->prio) {
		KSTAT_INC(KST_IPI_SAVED);
		return;
	}
	struct cpu *c = this_cpu();
	c->resched_pending[i / 64] |= 1ull << (i % 64);
	c->resched_any = true;
}

void sched_send_deferred(void)
{
	struct cpu *c = this_cpu();
	c->resched_any = false;
	for (uint32_t w = 0; w < MAX_CPUS / 64; w++) {
		uint64_t m = c->resched_pending[w];
		c->resched_pending[w] = 0;
		for (; m; m &= m - 1)
			smp_send_resched(w * 64 + (uint32_t)__builtin_ctzll(m));
	}
}

/* Whether a thread woken toward idle CPU `to` may wait here instead: the wake comes from a
 * system call of this CPU's thread (not an interrupt), which is likely to block soon (a
 * server kicks its peer at the end of a pass, then waits). Then the woken thread runs
 * here when the waker blocks, with no IPI and no halted CPU to wake; if the waker goes on
 * instead, its next kernel call sends the woken thread to the idle CPU
 * (sched_release_deferred), and its tick at the latest runs it here. One at a time. */
static bool may_defer(struct cpu *c, const struct thread *t, uint32_t to)
{
	return to != c->index && c->irq_depth == 0 && !c->deferred && c->current != c->idle &&
	       c->current->proc && !c->dedicated && cpu_idle(to, t);
}

/* A thread queued on another CPU that this idle one (me) should run instead: the most urgent
 * one free to move here, waiting behind a thread that runs there. A thread is queued behind
 * a busy CPU when no CPU was idle at its wake; without this it would wait there, however
 * long that CPU stays busy (a server that polls), while this CPU sleeps. A waker's kept
 * thread (that CPU's deferred) is left for its hand-off; its tick moves it if the waker
 * goes on. Callers are never dedicated CPUs (their one thread is pinned there). */
static struct thread *steal(uint32_t me)
{
	struct thread *best = NULL;
	for (uint32_t j = 0; j < ncpus; j++) {
		struct cpu *o = cpus[j];
		if (j == me || !o || !o->online || !rqs[j].len || o->current == o->idle)
			continue;
		for (uint32_t p = 0; p < NPRIO && (!best || p < best->prio); p++)
			for (struct thread *x = rqs[j].head[p]; x; x = x->rq_next)
				if (x->pinned < 0 && x != o->deferred) {
					best = x;
					break;
				}
	}
	if (!best || !sched_remove(best))
		return NULL;
	KSTAT_INC(KST_STEALS);
	best->cpu = (int32_t)me;
	return best;
}

/* Whether another CPU has a thread steal() would take (read without the lock: a stale
 * answer costs one look under it, or one tick's delay). */
static bool steal_worth_a_look(uint32_t me)
{
	for (uint32_t j = 0; j < ncpus; j++)
		if (j != me && cpus[j] && READ_ONCE(rqs[j].len) && READ_ONCE(cpus[j]->current) != cpus[j]->idle)
			return true;
	return false;
}

void sched_make_ready(struct thread *t)
{
	/* New threads go to the least-loaded CPU; a woken one as wake_cpu says. */
	struct cpu *c = this_cpu();
	if (t->pinned >= 0)
		t->cpu = t->pinned;
	else if (t->cpu < 0 || (cpus[t->cpu]->dedicated && cpus[t->cpu]->dedicated != t))
		t->cpu = (int32_t)pick_cpu(t);
	else {
		uint32_t to = wake_cpu(t);
		if (may_defer(c, t, to)) {
			c->deferred = t;
			c->deferred_due = false;
			c->deferred_to = to; /* where it would have gone (idle, and not this CPU) */
			to = c->index;
			KSTAT_INC(KST_WAKE_DEFERRED);
			/* more urgent than the waker: it takes the CPU at the waker's return */
			if (t->prio < c->current->prio)
				c->need_resched = true;
		} else if (to != (uint32_t)t->cpu) {
			KSTAT_INC(KST_WAKE_MOVES);
		}
		t->cpu = (int32_t)to;
	}
	t->state = T_READY;
	t->woken_by = c->irq_depth ? SWT_IRQ : c->current && c->current->proc ? thread_ep(c->current) : 0;
	rq_push((uint32_t)t->cpu, t);
	KSTAT_INC(KST_WAKES);
	if ((uint32_t)t->cpu != this_cpu_index())
		notify_cpu((uint32_t)t->cpu, t);
}

static void set_tick(uint32_t cpu, bool on)
{
	if (rqs[cpu].tick_on != on) {
		rqs[cpu].tick_on = on;
		lapic_timer_start(on ? kernel_hz : 0);
	}
}

void schedule(void)
{
	struct cpu *c = this_cpu();
	struct thread *prev = c->current;
	if (prev->state == T_RUNNING)
		prev->state = T_READY;
	if (prev->state == T_READY && prev != c->idle) {
		if ((prev->pinned >= 0 && prev->pinned != (int32_t)c->index) ||
		    (c->dedicated && c->dedicated != prev))
			sched_make_ready(prev); /* pinned elsewhere, or this core was dedicated to
						   another thread, since it last ran */
		else
			rq_push(c->index, prev);
	}
	if (prev->state == T_DEAD)
		c->last_dead = prev; /* reaped by whoever runs next, once off this stack */
	struct thread *next = rq_pop(c->index);
	if (!next && !c->dedicated)
		next = steal(c->index);
	if (!next)
		next = c->idle;
	if (next == c->deferred)
		c->deferred = NULL; /* it runs here after all: the hand-off worked */
	next->state = T_RUNNING;
	next->cpu = (int32_t)c->index;
	/* A dedicated core runs its one thread, or idles waiting for it, without a periodic
	 * tick: nothing else can become runnable there, and wake-ups come by IPI. */
	set_tick(c->index, !(c->dedicated && (next == c->dedicated || next == c->idle)));
	if (next == prev)
		return;
	swtrace_note(c, prev, next);
	c->stat[KST_SWITCHES]++;
	next->runs++;
	uint64_t now = time_us_since_boot();
	uint64_t ran = now - c->run_since_us;
	prev->cpu_us += ran;
	if (prev->proc)
		prev->proc->cpu_us += ran; /* the process's total, for KI_PROC_CPU_US */
	c->run_since_us = now;
	/* User x87/SSE state follows its thread (FXSAVE; the kernel itself never touches it,
	 * being built with -mgeneral-regs-only). */
	if (prev->proc && prev->state != T_DEAD)
		__asm__ volatile("fxsave64 %0" : "=m"(prev->fpu));
	if (next->proc) {
		__asm__ volatile("fxrstor64 %0" : : "m"(next->fpu));
		wrmsr(MSR_FS_BASE, next->fs_base);
	}
	c->current = next;
	c->kstack_top = next->kstack_top;
	c->tss.rsp[0] = next->kstack_top;
	/* The idle thread borrows the address space it finds (its kernel half is every space's):
	 * under TCG each CR3 write empties the whole software TLB, so A -> idle -> A costs none
	 * and A -> idle -> B one. loaded_cr3 stays, so as_flush still reaches this CPU, and
	 * as_destroy takes the space away from a CPU that idles in it. */
	if (next->proc) {
		uint64_t cr3 = next->proc->as->cr3;
		c->loaded_cr3 = cr3;
		if ((read_cr3() & PTE_ADDR) != cr3) {
			write_cr3(cr3);
			c->stat[KST_AS_SWITCHES]++;
		}
	}
	devpriv_switch(next->proc);
	switch_to(prev, next);
	sched_reap_dead();
}

void thread_start_unlock(void);
void thread_start_unlock(void)
{
	sched_reap_dead();
	kunlock();
}

bool sched_remove(struct thread *t)
{
	struct cpu *c = cpus[t->cpu];
	if (c && c->deferred == t)
		c->deferred = NULL;
	struct runq *q = &rqs[t->cpu];
	for (int p = 0; p < NPRIO; p++) {
		struct thread **pp = &q->head[p], *prevt = NULL;
		for (; *pp; prevt = *pp, pp = &(*pp)->rq_next) {
			if (*pp != t)
				continue;
			*pp = t->rq_next;
			if (q->tail[p] == t)
				q->tail[p] = prevt;
			q->len--;
			return true;
		}
	}
	return false;
}

void sched_release_deferred(void)
{
	struct cpu *c = this_cpu();
	struct thread *t = c->deferred;
	c->deferred = NULL;
	if (!t || t->state != T_READY || t->cpu != (int32_t)c->index)
		return;
	/* Where it would have gone, if that CPU is still idle; else any idle one. */
	uint32_t to = cpu_idle(c->deferred_to, t) ? c->deferred_to : UINT32_MAX;
	for (uint32_t i = 0; i < ncpus && to == UINT32_MAX; i++)
		if (i != c->index && cpu_idle(i, t))
			to = i;
	if (to == UINT32_MAX || !sched_remove(t))
		return;
	KSTAT_INC(KST_DEFER_MOVED);
	t->cpu = (int32_t)to;
	rq_push(to, t);
	notify_cpu(to, t);
}

void sched_user_return(void)
{
	struct cpu *c = this_cpu();
	if (!c->need_resched && c->current->state != T_DEAD)
		return;
	klock();
	c->need_resched = false;
	/* A thread kept here for its waker that has not blocked within a tick goes to an idle
	 * CPU: a waker more urgent than it that never blocks (it polls, or its waits return at
	 * once) would otherwise keep it from running at all while other CPUs sleep. */
	if (c->deferred && c->deferred_due)
		sched_release_deferred();
	schedule();
	kunlock();
}

void sched_tick(struct trap_frame *f)
{
	(void)f;
	struct cpu *c = this_cpu();
	/* Round robin: another runnable thread gets the CPU when this one returns to user mode.
	 * The length is read without the lock: a stale value only delays by one tick. */
	if (c->deferred)
		c->deferred_due = c->need_resched = true; /* kept a tick: it moves (sched_user_return) */
	if (READ_ONCE(rqs[c->index].len))
		c->need_resched = true;
}

void sched_init_cpu(void)
{
	struct cpu *c = this_cpu();
	struct thread *idle = kzalloc(sizeof(*idle));
	if (!idle)
		panic("no memory for the idle thread");
	idle->state = T_RUNNING;
	idle->prio = NPRIO - 1;
	idle->cpu = (int32_t)c->index;
	idle->pinned = (int32_t)c->index;
	idle->kstack_top = c->stack_top;
	c->idle = idle;
	c->current = idle;
	c->kstack_top = c->stack_top;
	rqs[c->index].tick_on = true;
}

__noreturn void sched_idle_loop(void)
{
	struct cpu *c = this_cpu();
	for (;;) {
		irq_disable();
		ipi_poll();
		if (rqs[c->index].len || (!c->dedicated && steal_worth_a_look(c->index))) {
			klock();
			schedule(); /* its own queue, else a thread waiting elsewhere (steal) */
			kunlock();
		}
		/* sti takes effect after hlt starts: a wake-up IPI cannot slip in between. */
		c->stat[KST_IDLE_HALTS]++;
		uint64_t t0 = rdtsc();
		__asm__ volatile("sti; hlt" ::: "memory");
		c->stat[KST_IDLE_CYCLES] += rdtsc() - t0;
	}
}

void sched_resched_cpu(uint32_t cpu)
{
	cpus[cpu]->need_resched = true;
	if (cpu != this_cpu_index())
		smp_send_resched(cpu);
}

void sched_undedicate(struct thread *t)
{
	for (uint32_t i = 0; i < ncpus; i++) {
		if (!cpus[i] || cpus[i]->dedicated != t)
			continue;
		cpus[i]->dedicated = NULL;
		sched_resched_cpu(i); /* its next schedule() turns the tick back on */
	}
}

int sched_dedicate(struct thread *t, uint32_t cpu)
{
	if (cpu >= ncpus || !cpus[cpu] || !cpus[cpu]->online || cpu == 0)
		return -KE_INVAL; /* the boot CPU keeps serving everyone else */
	if (cpus[cpu]->dedicated && cpus[cpu]->dedicated != t)
		return -KE_BUSY;
	if (cpus[cpu]->dedicated != t)
		sched_undedicate(t); /* one dedicated core per thread */
	cpus[cpu]->dedicated = t;
	t->pinned = (int32_t)cpu;
	/* Whoever runs there now leaves at its next kernel entry or tick (schedule()); everybody
	 * queued there who is free to move goes elsewhere now. */
	struct thread *cur = cpus[cpu]->current;
	if (cur != t && cur != cpus[cpu]->idle)
		sched_resched_cpu(cpu);
	struct thread *list = NULL, *x;
	while ((x = rq_pop(cpu)) != NULL) {
		x->rq_next = list;
		list = x;
	}
	while ((x = list) != NULL) {
		list = x->rq_next;
		if (x == t || x->pinned == (int32_t)cpu) {
			rq_push(cpu, x);
		} else {
			x->cpu = -1;
			x->state = T_BLOCKED;
			sched_make_ready(x);
		}
	}
	return 0;
}
