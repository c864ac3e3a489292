/* Platform hooks for Axolotl user programs: the consumer sleeps in KC_WAIT on the channel's
 * doorbell, the producer wakes it with a KC_NOTIFY (a pending notification ends KC_WAIT,
 * and on a dedicated MWAIT core the doorbell store alone already has). */
#include <axrt.h>
#include "chan_axolotl.h"
#include "service.h"

static int chan_ax_wait(const volatile uint64_t *doorbell, uint64_t seen, void *ctx)
{
	struct chan_axolotl_peer *self = ctx;
	int64_t r = ax_wait(doorbell, seen);
	self->last_wait = r;
	return r < 0 ? CHAN_EINVAL : 0;
}

static void chan_ax_wake(void *ctx)
{
	const struct chan_axolotl_peer *peer = ctx;
	ax_notify(peer->ep, peer->bits);
}

void chan_axolotl_platform(struct chan_platform *p, struct chan_axolotl_peer *peer)
{
	p->wait = chan_ax_wait;
	p->wake = chan_ax_wake;
	p->ctx = peer;
}

bool chan_ax_watch(struct chan_watch *w, struct spsc *q, const struct chan_platform *p)
{
	uint64_t stalled;
	const struct chan_axolotl_peer *peer = p->ctx;
	enum chan_watch_verdict v = chan_watch(w, q, ax_time_ns, &stalled);
	if (v == CW_RING)
		p->wake(p->ctx); /* the sleeping flag aside: a lost wake-up would be ours */
	else if (v == CW_STUCK && peer->ep)
		ax_svc_complain(peer->ep, w->name, stalled / 1000000);
	return v != CW_IDLE;
}
