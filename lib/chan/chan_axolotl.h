/* Axolotl's chan_platform: KC_WAIT to sleep, KC_NOTIFY to wake (lib/chan/chan_axolotl.c). */
#pragma once
#include "doorbell.h"
#include "watch.h"

struct chan_axolotl_peer {
	uint32_t ep;       /* producer side: the consumer's endpoint */
	uint64_t bits;     /* producer side: notification bits meaning "channel has data" */
	int64_t last_wait; /* consumer side: KW_* result of the last wait (KW_IPC: receive now) */
};

/* Fills p with the hooks; peer is the ctx both hooks get. */
void chan_axolotl_platform(struct chan_platform *p, struct chan_axolotl_peer *peer);

/* Producer: looks at the watch of q, whose consumer is p's peer (watch.h): rings the consumer
 * once at CW_RING, complains to rs at CW_STUCK (naming the channel w->name). True while
 * messages wait in q: the caller's loop then looks again within CHAN_WATCH_LOOK_NS. */
bool chan_ax_watch(struct chan_watch *w, struct spsc *q, const struct chan_platform *p);
