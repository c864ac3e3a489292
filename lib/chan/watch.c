/* The producer's watch on a consumer that stops reading (watch.h). */
#include "watch.h"

enum chan_watch_verdict chan_watch(struct chan_watch *w, struct spsc *q, uint64_t (*clock)(void), uint64_t *stalled_ns)
{
	if (stalled_ns)
		*stalled_ns = 0;
	long n = q->sh && q->role == SPSC_PRODUCER ? spsc_count(q) : 0;
	if (n <= 0 || q->theirs != w->tail) {
		/* Empty, or the consumer moved (q->theirs: what spsc_count just read): the clock
		 * starts again at the next look that finds the tail here with messages waiting. */
		w->tail = q->theirs;
		w->since_ns = w->rang_ns = w->said_ns = 0;
		return n > 0 ? CW_MOVING : CW_IDLE;
	}
	uint64_t now = clock();
	if (!w->since_ns) {
		w->since_ns = now;
		return CW_MOVING;
	}
	uint64_t stood = now > w->since_ns ? now - w->since_ns : 0;
	if (stalled_ns)
		*stalled_ns = stood;
	if (stood >= CHAN_STALL_SAY_NS) {
		if (!w->said_ns || now - w->said_ns >= CHAN_STALL_AGAIN_NS) {
			w->said_ns = now;
			return CW_STUCK;
		}
		return CW_MOVING;
	}
	if (stood >= CHAN_STALL_RING_NS && !w->rang_ns) {
		w->rang_ns = now;
		return CW_RING;
	}
	return CW_MOVING;
}
