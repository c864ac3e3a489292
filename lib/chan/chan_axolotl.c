/* Platform hooks for Axolotl user programs: the consumer sleeps in KC_WAIT on the channel's
 * doorbell, the producer wakes it with a KC_NOTIFY (a pending notification ends KC_WAIT).
 * Not built yet; link it into a program that uses channels. */
#include <axrt.h>
#include "doorbell.h"

struct chan_axolotl_peer {
	endpoint_t ep;  /* the consumer's endpoint */
	uint64_t bits;  /* notification bits that mean "channel has data" */
};

static int chan_ax_wait(const volatile uint64_t *doorbell, uint64_t seen, void *ctx)
{
	(void)ctx;
	return (int)ax_wait(doorbell, seen);
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
