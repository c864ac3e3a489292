/* Going to sleep on an empty channel without losing a wake-up (README.md, "Doorbell").
 * The consumer raises `sleeping`, looks at the queue once more and only then waits on the
 * doorbell; the producer, after a push, rings the doorbell if `sleeping` is up, and takes
 * it down (once per sleep). Both sides
 * put a sequentially consistent fence between their store and their load, so at least one
 * of them sees the other. The waiting itself is the platform's. */
#pragma once
#include "spsc.h"

struct chan_platform {
	/* Sleep until *doorbell != seen (or anything else the platform wakes us for). */
	int (*wait)(const volatile uint64_t *doorbell, uint64_t seen, void *ctx);
	/* Wake the consumer sleeping in wait(). */
	void (*wake)(void *ctx);
	void *ctx;
};

/* Consumer: wait until the queue is not empty, or the platform wakes us for another
 * reason. Returns 1 if it slept, 0 if the queue already held a message, CHAN_ECORRUPT. */
int chan_sleep(struct spsc *q, const struct chan_platform *p);
/* Producer, after one or more pushes: wake the consumer if it is going to sleep, taking
 * its flag down (the next push before it sleeps again does not ring).
 * Returns 1 if it rang, 0 if not. */
int chan_kick(struct spsc *q, const struct chan_platform *p);
