/* source: the first stage. Owns the channel to the relay, exports it in ds as source/out,
 * and pushes count=N numbered messages at rate=R per second (bounded load).
 * Injectable faults (`service inject source WORD`): `garbage` pushes 50 messages that fail
 * the check, in between the real ones as space allows; `corrupt` writes an impossible head index into the channel. */
#include "pipeline.h"
#include "chan_name.h"
#include "chan_axolotl.h"
#include "service.h"

static struct {
	struct spsc q;
	struct chan_export ex;
	struct chan_axolotl_peer peer;
	struct chan_platform plat;
	uint64_t count, rate, sent, t0;
	uint64_t garbage, garbage_left, rng; /* injected garbage pushed so far / still to push */
	bool done;
} src;

static void on_attach(struct chan_export *e, endpoint_t importer)
{
	(void)e;
	src.peer.ep = importer; /* wake the new relay from now on */
	ax_printf("source: %#x attached to source/out\n", (unsigned)importer);
}

/* Injected garbage goes in between the real messages, as space allows. */
static void push_garbage(void)
{
	while (src.garbage_left) {
		uint64_t junk[4];
		for (int k = 0; k < 4; k++)
			junk[k] = src.rng ^= src.rng << 13, src.rng ^= src.rng >> 7, src.rng ^= src.rng << 17;
		if (spsc_push(&src.q, junk) != 0)
			return;
		src.garbage++;
		if (--src.garbage_left == 0)
			ax_printf("source: pushed %llu garbage messages\n", (unsigned long long)src.garbage);
	}
}

static bool poll(struct ax_evloop *l)
{
	push_garbage();
	if (src.done)
		return false;
	uint64_t due = (ax_time_ns() - src.t0) / 1000 * src.rate / 1000000;
	if (due > src.count)
		due = src.count;
	uint64_t before = src.sent;
	while (src.sent < due) {
		struct pl_msg m = { src.sent, pl_payload(src.sent), 0, 0, 0 };
		m.check = pl_check(m.seq, m.payload);
		if (spsc_push(&src.q, &m) != 0)
			break; /* full: the relay is behind or being restarted; try again later */
		src.sent++;
	}
	if (src.sent != before && src.peer.ep)
		chan_kick(&src.q, &src.plat);
	if (src.sent == src.count) {
		src.done = true;
		l->wait_ns = 0;
		ax_printf("source: all %llu messages pushed\n", (unsigned long long)src.count);
	}
	return false; /* paced by time: sleep until the next tick */
}

static void inject(struct ax_evloop *l, const char *word)
{
	(void)l;
	if (!strcmp(word, "garbage")) {
		src.rng = ax_rdtsc() | 1;
		src.garbage_left = 50;
		push_garbage();
		chan_kick(&src.q, &src.plat);	} else if (!strcmp(word, "corrupt")) {
		atomic_store(&src.q.sh->head, atomic_load(&src.q.sh->tail) + 4 * PL_SLOTS);
		chan_kick(&src.q, &src.plat);
		ax_printf("source: wrote an impossible head index into source/out\n");
	} else {
		ax_printf("source: no fault named %s\n", word);
	}
}

int main(int argc, char **argv)
{
	ax_svc_init(argc, argv);
	src.count = pl_arg(argc, argv, "count", 100000);
	src.rate = pl_arg(argc, argv, "rate", 20000);
	int64_t r = pl_export(&src.ex, "out", SPSC_PRODUCER, &src.q, on_attach);
	if (r < 0)
		return 1;
	src.peer.bits = PL_WAKE_BIT;
	chan_axolotl_platform(&src.plat, &src.peer);
	ax_printf("source: exported source/out (%d), %llu messages at %llu/s\n", (int)r,
		  (unsigned long long)src.count, (unsigned long long)src.rate);
	src.t0 = ax_time_ns();
	struct ax_evloop l = { .on_message = pl_on_message, .poll = poll, .inject = inject, .wait_ns = 1000000 };
	return (int)ax_evloop_run(&l);
}
