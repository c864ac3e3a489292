#include "evloop.h"
#include "heartbeat.h"

static void dispatch(struct ax_evloop *l, struct kmsg *m)
{
	if (m->source != EP_KERNEL) {
		if (l->on_message)
			l->on_message(l, m);
	} else if (m->type == KMSG_NOTIFY) {
		/* rs's ping only needs the loop to turn (the heartbeat is bumped at the top). */
		uint64_t bits = m->w[0] & ~AX_PING_BIT;
		if (bits && l->on_notify)
			l->on_notify(l, bits);
	} else if (l->on_report) {
		l->on_report(l, m);
	}
}

int64_t ax_evloop_run(struct ax_evloop *l)
{
	struct kmsg m;
	while (!l->stop) {
		ax_heartbeat();
		if (l->poll && l->poll(l))
			continue;
		if (!l->doorbell) {
			int64_t r = ax_receive(EP_ANY, &m);
			if (r < 0)
				return r;
			dispatch(l, &m);
			continue;
		}
		/* Read the doorbell, poll once more, then sleep unless it moved meanwhile: a ring
		 * after the read is never lost, one before it is found by the poll. */
		uint64_t seen = *l->doorbell;
		if (l->poll && l->poll(l))
			continue;
		int64_t r = ax_wait(l->doorbell, seen);
		if (r < 0)
			return r;
		if (r & KW_IPC) {
			/* Something is queued for us, so this receive does not block. */
			if ((r = ax_receive(EP_ANY, &m)) < 0)
				return r;
			dispatch(l, &m);
		}
	}
	return 0;
}
