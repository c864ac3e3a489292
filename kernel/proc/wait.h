/* KC_WAIT: sleep until a doorbell word changes or kernel IPC is pending (thesis §2.5.2). */
#pragma once
#include "lib/types.h"

struct thread;
int64_t kc_wait(struct thread *me, uint64_t doorbell, uint64_t seen, uint64_t timeout_ns);
/* Sleeps ns (rounded up to the tick); -KE_INTR if kernel IPC arrives first. */
int64_t wait_sleep(struct thread *me, uint64_t ns);
/* A deadline timeout_ns from now for a thread about to block in B_WAIT (woken with 0) or
 * B_FUTEX (woken with -KE_TIMEDOUT); the slot, or -1 if every slot is taken. */
int wait_timer_add(struct thread *me, uint64_t timeout_ns);
/* Forgets the deadline of slot if it is still me's. */
void wait_timer_del(int slot, struct thread *me);
/* Wakes blocked waiters whose timeout passed; called from every timer tick. */
void wait_timer_tick(void);
extern uint64_t wait_mwait_count, wait_block_count; /* which path served the waits */
