/* sink: the last stage. Owns the channel from the relay, exports it in ds as sink/in, and
 * checks that every one of count=N messages arrives exactly once: a duplicate (the relay
 * crashed between its push and its pop) is dropped by sequence number. It also reports
 * the relay's version changes with whether the relay's stamp carried on (live update kept
 * the state), and what ds tells it about the relay (a subscription to rs/relay). */
#include "pipeline.h"
#include "chan_name.h"
#include "ds_client.h"
#include "service.h"

#define MAX_COUNT (1u << 21)

static uint8_t seen[MAX_COUNT / 8];

static struct {
	struct spsc q;
	struct chan_export ex;
	uint64_t count, unique, dups, bad, last_stamp, next_report;
	uint32_t version;
	bool complete;
} snk;

static void on_attach(struct chan_export *e, endpoint_t importer)
{
	(void)e;
	ax_printf("sink: %#x attached to sink/in\n", (unsigned)importer);
}

static void take(const struct pl_msg *m)
{
	if (!pl_valid(m) || m->seq >= snk.count) {
		snk.bad++;
		return;
	}
	if (m->relay_version != snk.version) {
		if (snk.version)
			ax_printf("sink: relay version %u -> %u at seq %llu, stamp %llu -> %llu (%s)\n", snk.version,
				  m->relay_version, (unsigned long long)m->seq, (unsigned long long)snk.last_stamp,
				  (unsigned long long)m->stamp, m->stamp == snk.last_stamp + 1 ? "continuous" : "jump");
		snk.version = m->relay_version;
	}
	snk.last_stamp = m->stamp;
	uint8_t bit = (uint8_t)(1u << (m->seq % 8));
	if (seen[m->seq / 8] & bit) {
		snk.dups++;
		return;
	}
	seen[m->seq / 8] |= bit;
	snk.unique++;
	if (snk.unique >= snk.next_report) {
		ax_printf("sink: %llu of %llu messages\n", (unsigned long long)snk.unique, (unsigned long long)snk.count);
		snk.next_report += snk.count / 10;
	}
	if (snk.unique == snk.count && !snk.complete) {
		snk.complete = true;
		ax_printf("sink: complete: %llu messages exactly once, %llu duplicates dropped, %llu invalid\n",
			  (unsigned long long)snk.count, (unsigned long long)snk.dups, (unsigned long long)snk.bad);
	}
}

static bool poll(struct ax_evloop *l)
{
	(void)l;
	int n = 0;
	struct pl_msg m;
	for (int e; n < 256 && (e = spsc_pop(&snk.q, &m)) != CHAN_EAGAIN; n++) {
		if (e == CHAN_ECORRUPT) {
			ax_printf("sink: sink/in is corrupt\n");
			l->doorbell = NULL, l->sleeping = NULL, l->poll = NULL;
			return false;
		}
		take(&m);
	}
	return n > 0;
}

/* ds changed something we subscribed to: the relay's entry under rs. */
static void on_notify(struct ax_evloop *l, uint64_t bits)
{
	(void)l;
	if (!(bits & DS_NOTIFY_BIT))
		return;
	char label[DS_NAME_LEN], key[DS_NAME_LEN];
	while (dsc_check(label, key) == 0) {
		uint64_t v[3];
		uint32_t len;
		if (dsc_get(label, key, v, &len) == 0 && len == sizeof(v))
			ax_printf("sink: ds: %s/%s = endpoint %#x, restarts %u, state %llu\n", label, key,
				  (unsigned)v[0], (unsigned)(v[0] >> 32), (unsigned long long)v[1]);
	}
}

int main(int argc, char **argv)
{
	ax_svc_init(argc, argv);
	snk.count = pl_arg(argc, argv, "count", 100000);
	if (snk.count > MAX_COUNT)
		snk.count = MAX_COUNT;
	snk.next_report = snk.count / 10;
	int64_t r = pl_export(&snk.ex, "in", SPSC_CONSUMER, &snk.q, on_attach);
	if (r < 0)
		return 1;
	int64_t s = dsc_subscribe("rs", "relay");
	ax_printf("sink: exported sink/in (%d), watching rs/relay (%d), expecting %llu messages\n", (int)r, (int)s,
		  (unsigned long long)snk.count);
	struct ax_evloop l = { .on_message = pl_on_message, .on_notify = on_notify, .poll = poll,
			       .doorbell = (const volatile uint64_t *)(const void *)&snk.q.sh->bell,
			       .sleeping = &snk.q.sh->sleeping };
	on_notify(&l, DS_NOTIFY_BIT); /* what ds holds already counts as news */
	return (int)ax_evloop_run(&l);
}
