/* relay: the middle stage, the one the recovery tests kill, hang and update. Imports
 * source/out (consumer) and sink/in (producer), checks each message, stamps it with its
 * running count and forwards it. Forwarding is peek, push, then pop: a crash between push
 * and pop makes the message arrive twice (the sink drops the duplicate by sequence number),
 * never lose it. State: the count, saved in ds as relay/state every 4096 messages and
 * exactly on a live update. Built twice: relay (version 1) and relay2 (RELAY_VERSION=2).
 *   relay [restarted=N | update=1] [hb=H] */
#include "pipeline.h"
#include "chan_name.h"
#include "chan_axolotl.h"
#include "ds_client.h"
#include "service.h"
#include "heartbeat.h"

#ifndef RELAY_VERSION
#define RELAY_VERSION 1
#endif
#define CHECKPOINT 4096

struct relay_state { /* relay/state in ds */
	uint64_t count;
	uint32_t version, pad;
};

static struct {
	struct chan_import in_mem, out_mem;
	struct spsc in, out;
	struct chan_axolotl_peer sink;
	struct chan_platform plat;
	bool attached;
	uint64_t count, dropped;
} r;

static void save_state(void)
{
	struct relay_state st = { r.count, RELAY_VERSION, 0 };
	dsc_put("state", &st, sizeof(st));
}

static void detach(struct ax_evloop *l)
{
	chan_unimport(&r.in_mem);
	chan_unimport(&r.out_mem);
	r.attached = false;
	l->doorbell = NULL;
	l->sleeping = NULL;
}

/* Imports both channels, retrying for up to 5 s (at boot the neighbours may not have
 * exported yet). 0 or an error. */
static int64_t attach(struct ax_evloop *l)
{
	static const uint64_t never_rung = 0;
	int64_t e = 0;
	/* By the clock, not by tries: the wait returns at once while kernel IPC is pending (a
	 * notification from rs that the loop will take later), and 500 such tries took no time
	 * at all on a boot where the sink exported its channel late. */
	for (uint64_t end = ax_time_ns() + 5000000000ull; ax_time_ns() < end;) {
		if (!r.in_mem.va)
			e = chan_import("source", "out", &r.in_mem);
		if (r.in_mem.va && !r.out_mem.va)
			e = chan_import("sink", "in", &r.out_mem);
		if (r.in_mem.va && r.out_mem.va)
			break;
		ax_heartbeat(); /* waiting for peers is not hanging */
		if (ax_wait_timeout(&never_rung, 0, 10000000) & KW_IPC)
			kcall0(KC_YIELD);
	}
	if (!r.in_mem.va || !r.out_mem.va)
		return e ? e : -KE_AGAIN;
	if (spsc_attach(&r.in, r.in_mem.va, r.in_mem.bytes, SPSC_CONSUMER) < 0 ||
	    spsc_attach(&r.out, r.out_mem.va, r.out_mem.bytes, SPSC_PRODUCER) < 0 ||
	    r.in.slot_size != PL_SLOT || r.out.slot_size != PL_SLOT) {
		detach(l);
		return -KE_INVAL;
	}
	r.sink.ep = r.out_mem.owner;
	r.attached = true;
	l->doorbell = (const volatile uint64_t *)(const void *)&r.in.sh->bell;
	l->sleeping = &r.in.sh->sleeping;
	return 0;
}

static bool poll(struct ax_evloop *l)
{
	if (!r.attached)
		return false;
	l->wait_ns = 0;
	int moved = 0;
	for (; moved < 256; moved++) {
		struct pl_msg m;
		int e = spsc_peek(&r.in, &m);
		if (e == CHAN_EAGAIN)
			break;
		if (e == CHAN_ECORRUPT) {
			ax_printf("relay: source/out is corrupt (impossible index): detached from it, still serving\n");
			detach(l);
			break;
		}
		if (!pl_valid(&m)) {
			if (r.dropped++ < 3 || r.dropped % 10 == 0)
				ax_printf("relay: dropped invalid message %llu (seq field %#llx)\n",
					  (unsigned long long)r.dropped, (unsigned long long)m.seq);
			spsc_pop(&r.in, &m);
			continue;
		}
		m.stamp = r.count + 1;
		m.relay_version = RELAY_VERSION;
		if (spsc_push(&r.out, &m) == CHAN_EAGAIN) {
			l->wait_ns = 1000000; /* the sink is behind: look again in 1 ms */
			break;
		}
		spsc_pop(&r.in, &m); /* only now is the message ours to forget */
		if (++r.count % CHECKPOINT == 0)
			save_state();
	}
	if (moved && r.attached)
		chan_kick(&r.out, &r.plat);
	return moved > 0;
}

static int64_t quiesce(struct ax_evloop *l)
{
	save_state();
	ax_printf("relay v%d: quiesced at count %llu\n", RELAY_VERSION, (unsigned long long)r.count);
	detach(l);
	return 0;
}

static void resume(struct ax_evloop *l)
{
	int64_t e = attach(l);
	ax_printf("relay v%d: resumed at count %llu (%lld)\n", RELAY_VERSION, (unsigned long long)r.count, (long long)e);
}

static void on_message(struct ax_evloop *l, struct kmsg *m)
{
	(void)l;
	ax_reply(m->source, m);
}

int main(int argc, char **argv)
{
	ax_svc_init(argc, argv);
	struct relay_state st;
	uint32_t len = 0;
	bool have = (ax_svc.update || ax_svc.restarts) && dsc_get("relay", "state", &st, &len) == 0 && len == sizeof(st);
	r.count = have ? st.count : 0;
	r.sink.bits = PL_WAKE_BIT;
	chan_axolotl_platform(&r.plat, &r.sink);
	struct ax_evloop l = { .on_message = on_message, .poll = poll, .quiesce = quiesce, .resume = resume };
	int64_t e = attach(&l);
	if (e < 0) {
		ax_printf("relay v%d: cannot attach to its channels: %lld\n", RELAY_VERSION, (long long)e);
		return 1;
	}
	if (ax_svc.update) {
		if ((e = ax_svc_ready()) < 0) {
			ax_printf("relay v%d: update not committed (%lld)\n", RELAY_VERSION, (long long)e);
			return 1;
		}
		ax_printf("relay v%d: took over at count %llu (from version %u)\n", RELAY_VERSION,
			  (unsigned long long)r.count, have ? st.version : 0);
	} else {
		ax_printf("relay v%d: attached, restart %u, count %llu%s\n", RELAY_VERSION, ax_svc.restarts,
			  (unsigned long long)r.count, have ? " (from the checkpoint)" : "");
	}
	/* The state taken over is ours now: put it under this instance (once committed), so a
	 * ds restart before our next checkpoint has it republished (ds_client republishes only
	 * what its own instance put). */
	if (have)
		save_state();
	return (int)ax_evloop_run(&l);
}
