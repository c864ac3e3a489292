#include "evloop.h"
#include "heartbeat.h"
#include "service.h"

static void dispatch(struct ax_evloop *l, struct kmsg *m)
{
	if (m->source != EP_KERNEL) {
		if (l->on_message)
			l->on_message(l, m);
	} else if (m->type == KMSG_NOTIFY) {
		/* rs's ping only needs the loop to turn (the heartbeat is bumped at the top). */
		uint64_t bits = m->w[0] & ~AX_PING_BIT;
		if (bits & AX_RS_BIT)
			ax_svc_commands(l);
		bits &= ~AX_RS_BIT;
		if (bits && l->on_notify)
			l->on_notify(l, bits);
	} else if (l->on_report) {
		l->on_report(l, m);
	}
}

static const uint64_t never_rung;

/* A loop that always finds work must still answer its callers (a driver importing our pool,
 * the console's queries, rs): every few busy turns, a wait that cannot sleep (the doorbell
 * already differs from `seen`) tells whether kernel IPC is queued. */
#define BUSY_TURNS_PER_LOOK 16

static int64_t serve_queued(struct ax_evloop *l, struct kmsg *m)
{
	int64_t r = ax_wait(&never_rung, 1);
	if (r > 0 && (r & KW_IPC)) {
		if ((r = ax_receive(EP_ANY, m)) < 0)
			return r;
		dispatch(l, m);
	}
	return r < 0 ? r : 0;
}

int64_t ax_evloop_run(struct ax_evloop *l)
{
	struct kmsg m;
	uint32_t busy = 0;
	if (l->restartable && ax_svc.update) {
		/* A replacement's new instance: set up as after a restart, the update commits. */
		int64_t e = ax_svc_ready();
		ax_printf("%s: %s (build %s)\n", ax_svc.name, e == 0 ? "took over (live update)" : "update not committed",
			  ax_build_tag[0] ? ax_build_tag : "v1");
	}
	while (!l->stop) {
		ax_heartbeat();
		if (l->poll && l->poll(l)) {
			if (++busy % BUSY_TURNS_PER_LOOK == 0 && serve_queued(l, &m) < 0)
				return -1;
			continue;
		}
		if (!l->doorbell && !l->wait_ns) {
			int64_t r = ax_receive(EP_ANY, &m);
			if (r < 0)
				return r;
			dispatch(l, &m);
			continue;
		}
		/* Read the doorbell, raise the sleeping flag, poll once more, then sleep unless the
		 * doorbell moved meanwhile: a ring after the read is never lost, work that arrived
		 * before it is found by the poll (lib/chan/README.md, "Going to sleep"). */
		const volatile uint64_t *bell = l->doorbell ? l->doorbell : &never_rung;
		uint64_t seen = *bell;
		if (l->sleeping) {
			atomic_store_explicit(l->sleeping, 1, memory_order_relaxed);
			atomic_thread_fence(memory_order_seq_cst);
		}
		bool work = l->poll && l->poll(l);
		int64_t r = work ? 0 : ax_wait_timeout(bell, seen, l->wait_ns);
		if (l->sleeping)
			atomic_store_explicit(l->sleeping, 0, memory_order_relaxed);
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
