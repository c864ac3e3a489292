/* The wait call. On a core dedicated to the caller whose CPU has MONITOR/MWAIT, the thread
 * arms the monitor on its doorbell and sleeps in MWAIT with the kernel lock released: a plain
 * store to the doorbell by any core wakes it, with no kernel call on the writer's side.
 * Everywhere else the thread blocks in the scheduler and is woken by IPC to it (a notify
 * from whoever rang the doorbell). Either way, pending messages, notifications and kernel
 * reports end the wait, so a server waits on its channels and its kernel IPC at once. */
#include "proc/wait.h"
#include "proc/ipc.h"
#include "proc/klock.h"
#include "proc/proc.h"
#include "proc/sched.h"
#include "linux/hooks.h"
#include "arch/time.h"
#include "mm/aspace.h"
#include "smp/ipi.h"
#include "smp/percpu.h"

uint64_t wait_mwait_count, wait_block_count;

/* Blocked waiters with a deadline, checked on the boot CPU's tick (which never stops: CPU 0
 * is never dedicated). Entries name threads by endpoint, so a waiter killed meanwhile, or
 * its reused slot, is never woken by mistake. */
#define MAX_TIMED 256
static struct { endpoint_t ep; uint64_t deadline_us; } timed[MAX_TIMED];

void wait_timer_tick(void)
{
	if (this_cpu_index() != 0)
		return;
	bool any = false;
	for (int i = 0; i < MAX_TIMED && !any; i++)
		any = READ_ONCE(timed[i].ep) != 0;
	if (!any)
		return;
	klock();
	uint64_t now = time_us_since_boot();
	for (int i = 0; i < MAX_TIMED; i++) {
		if (!timed[i].ep || now < timed[i].deadline_us)
			continue;
		struct thread *t = ep_lookup(timed[i].ep);
		if (t && t->state == T_BLOCKED && t->blocked_on == B_WAIT)
			ipc_wake(t, 0);
		else if (t && t->state == T_BLOCKED && t->blocked_on == B_FUTEX)
			ipc_wake(t, -KE_TIMEDOUT);
		timed[i].ep = 0;
	}
	kunlock();
}

int wait_timer_add(struct thread *me, uint64_t timeout_ns)
{
	for (int i = 0; i < MAX_TIMED; i++) {
		if (timed[i].ep)
			continue;
		timed[i].deadline_us = time_us_since_boot() + timeout_ns / 1000;
		timed[i].ep = thread_ep(me);
		return i;
	}
	return -1;
}

void wait_timer_del(int slot, struct thread *me)
{
	if (slot >= 0 && timed[slot].ep == thread_ep(me))
		timed[slot].ep = 0;
}

static bool ipc_pending(const struct thread *t)
{
	return READ_ONCE(t->notify_pending) || READ_ONCE(t->kmsgs) || READ_ONCE(t->sendq);
}

/* KW_* bits that hold now, or -KE_FAULT if the doorbell cannot be read. */
static int64_t wait_state(struct thread *me, uint64_t doorbell, uint64_t seen)
{
	uint64_t v;
	if (copy_from_user(&v, (const void *)doorbell, sizeof(v)))
		return -KE_FAULT;
	return (v != seen ? KW_DOORBELL : 0) | (ipc_pending(me) ? KW_IPC : 0);
}

/* MONITOR on a user address; a fault (the page unmapped meanwhile) skips it. */
static void monitor_user(uint64_t va)
{
	__asm__ volatile("1: monitor\n"
			 "2:\n\t"
			 ".pushsection .extable, \"a\"\n\t"
			 ".balign 8\n\t"
			 ".quad 1b, 2b\n\t"
			 ".popsection"
			 :
			 : "a"(va), "c"(0), "d"(0)
			 : "memory");
}

static int64_t wait_mwait(struct thread *me, uint64_t doorbell, uint64_t seen, uint64_t timeout_ns)
{
	uint64_t deadline = timeout_ns ? time_us_since_boot() + timeout_ns / 1000 : ~0ull;
	struct cpu *c = this_cpu();
	int64_t r;
	me->mwaiting = true;
	kunlock();
	for (;;) {
		monitor_user(doorbell);
		/* Check after arming: a store before MONITOR is seen here, one after wakes MWAIT. */
		r = wait_state(me, doorbell, seen);
		if (r || me->state == T_DEAD || c->need_resched || time_us_since_boot() >= deadline)
			break;
		/* STI's one-instruction shadow covers MWAIT: an interrupt (IPI) cannot slip in
		 * between and be missed; it ends the MWAIT instead. */
		__asm__ volatile("sti; mwait; cli" : : "a"(0), "c"(0) : "memory");
		ipi_poll();
	}
	klock();
	me->mwaiting = false;
	wait_mwait_count++;
	return wait_state(me, doorbell, seen);
}

int64_t kc_wait(struct thread *me, uint64_t doorbell, uint64_t seen, uint64_t timeout_ns)
{
	if (doorbell & 7)
		return -KE_INVAL;
	KSTAT_INC(KST_WAIT_CALLS);
	int64_t r = wait_state(me, doorbell, seen);
	if (r)
		return r;
	KSTAT_INC(KST_WAIT_SLEEPS);
	struct cpu *c = this_cpu();
	if (c->dedicated == me && c->feat.monitor)
		return wait_mwait(me, doorbell, seen, timeout_ns);
	int slot = -1;
	if (timeout_ns && (slot = wait_timer_add(me, timeout_ns)) < 0)
		return -KE_AGAIN; /* every timer slot in use: the caller polls instead */
	wait_block_count++;
	r = ipc_block(me, B_WAIT, EP_NONE);
	wait_timer_del(slot, me);
	if (r < 0)
		return r;
	return wait_state(me, doorbell, seen);
}

int64_t wait_sleep(struct thread *me, uint64_t ns)
{
	uint64_t deadline = time_us_since_boot() + (ns + 999) / 1000;
	for (uint64_t now; (now = time_us_since_boot()) < deadline;) {
		if (ipc_pending(me) || signal_pending(me))
			return -KE_INTR;
		int slot = wait_timer_add(me, (deadline - now) * 1000);
		if (slot < 0) { /* every timer slot in use: yield until the time has come */
			me->state = T_READY;
			schedule();
			continue;
		}
		int64_t r = ipc_block(me, B_WAIT, EP_NONE);
		wait_timer_del(slot, me);
		if (r < 0)
			return r;
	}
	return 0;
}
