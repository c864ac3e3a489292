/* Doorbell and sleeping flag (doorbell.h). */
#include "doorbell.h"

int chan_sleep(struct spsc *q, const struct chan_platform *p)
{
	struct spsc_shared *sh = q->sh;
	/* Read the bell before raising the flag: any ring after this point differs from seen,
	 * so the wait below returns at once. */
	uint64_t seen = atomic_load_explicit(&sh->bell, memory_order_acquire);
	atomic_store_explicit(&sh->sleeping, 1, memory_order_relaxed);
	/* Pairs with the fence in chan_kick: either the producer sees sleeping == 1 or we see
	 * its head (store-load ordering needs a full fence on both sides). */
	atomic_thread_fence(memory_order_seq_cst);
	long n = spsc_count(q);
	int r = 0;
	if (n == 0) {
		/* The kernel's KC_WAIT reads a plain uint64_t; _Atomic uint64_t has the same
		 * size and alignment on x86-64. */
		p->wait((const volatile uint64_t *)(const void *)&sh->bell, seen, p->ctx);
		r = 1;
	} else if (n < 0) {
		r = (int)n;
	}
	atomic_store_explicit(&sh->sleeping, 0, memory_order_relaxed);
	return r;
}

int chan_kick(struct spsc *q, const struct chan_platform *p)
{
	struct spsc_shared *sh = q->sh;
	atomic_thread_fence(memory_order_seq_cst); /* pairs with the fence in chan_sleep */
	/* Ring once per sleep: the flag comes down with the ring, so the pushes that follow
	 * before the consumer runs (a burst, or a consumer that cannot run until we block on
	 * its CPU) do not notify it again and again. It wakes for this ring and drains them
	 * all; then it raises the flag again before it sleeps. The load first: a consumer that
	 * is awake costs no write to its line. */
	if (!atomic_load_explicit(&sh->sleeping, memory_order_relaxed) ||
	    !atomic_exchange_explicit(&sh->sleeping, 0, memory_order_relaxed))
		return 0;
	/* Only the producer writes the bell: no read-modify-write needed. Release, so a
	 * consumer that reads the new value also sees the pushes before it. */
	uint64_t b = atomic_load_explicit(&sh->bell, memory_order_relaxed);
	atomic_store_explicit(&sh->bell, b + 1, memory_order_release);
	p->wake(p->ctx);
	return 1;
}
