/* Scheduling: per-CPU run queues with 8 priorities (0 highest), round robin within a
 * priority, affinity by pinning, dedicated cores. All under the kernel lock. */
#pragma once
#include "proc/proc.h"

void sched_init_cpu(void);          /* the calling context becomes this CPU's idle thread */
__noreturn void sched_idle_loop(void);
/* Makes t runnable on its CPU (chosen now if it is not pinned) and kicks that CPU. */
void sched_make_ready(struct thread *t);
/* Switches to the next runnable thread of this CPU. The caller has set current->state
 * (T_READY re-queues it, T_BLOCKED/T_DEAD do not). Called and returns with klock held. */
void schedule(void);
/* Timer tick on this CPU (interrupt context, from user mode or idle). */
void sched_tick(struct trap_frame *f);
/* Gives cpu to t alone: nothing else is placed there and its tick stops. -1 if refused. */
int sched_dedicate(struct thread *t, uint32_t cpu);
struct thread *current_thread(void);
/* Removes a ready thread from its run queue. */
/* Takes a ready thread off its run queue; false if it was not queued. */
bool sched_remove(struct thread *t);
/* The current thread goes on instead of blocking (a kernel call that does not wait, a wait
 * that returned at once, a tick since the hand-off): a thread it woke and kept on this CPU
 * (sched_make_ready) goes to an idle CPU now. */
void sched_release_deferred(void);
/* Before returning to user mode: leave the CPU if the thread died or its slice is over. */
void sched_user_return(void);
/* Frees the thread this CPU just switched away from, if it was dead. */
void sched_reap_dead(void);
void syscall_init_cpu(void);
/* Gives back every core dedicated to t (placement changed, or t died). */
void sched_undedicate(struct thread *t);
/* CPU cpu schedules at its next return to user mode (an IPI if it is another CPU). */
void sched_resched_cpu(uint32_t cpu);
