/* KC_WAIT: sleep until a doorbell word changes or kernel IPC is pending (thesis §2.5.2). */
#pragma once
#include "lib/types.h"

struct thread;
int64_t kc_wait(struct thread *me, uint64_t doorbell, uint64_t seen, uint64_t timeout_ns);
/* Sleeps ns (rounded up to the tick); -KE_INTR if kernel IPC arrives first. */
int64_t wait_sleep(struct thread *me, uint64_t ns);
/* Wakes blocked waiters whose timeout passed; called from every timer tick. */
void wait_timer_tick(void);
extern uint64_t wait_mwait_count, wait_block_count; /* which path served the waits */
