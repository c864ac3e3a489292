/* The three-stage pipeline of the recovery tests (README.md): source -> relay -> sink over
 * channels named in ds. What the stages share: the message and its check word. */
#pragma once
#include "axrt.h"
#include "spsc.h"
#include "chan_name.h"
#include "evloop.h"

#define PL_SLOT 32
#define PL_SLOTS 1024
#define PL_WAKE_BIT (1ull << 40) /* "your channel has data" (a plain wake-up) */

struct pl_msg {
	uint64_t seq;       /* source: 0, 1, 2, ... */
	uint64_t payload;   /* source: a function of seq */
	uint64_t stamp;     /* relay: how many messages this relay (and its predecessors) forwarded */
	uint32_t relay_version;
	uint32_t check;     /* source: over seq and payload; garbage fails it */
};
_Static_assert(sizeof(struct pl_msg) == PL_SLOT, "one message per slot");

static inline uint64_t pl_payload(uint64_t seq) { return seq * 0x9e3779b97f4a7c15ull ^ 0x5bd1e995u; }
static inline uint32_t pl_check(uint64_t seq, uint64_t payload)
{
	uint64_t h = (seq ^ 0xcbf29ce484222325ull) * 0x100000001b3ull;
	h = (h ^ payload) * 0x100000001b3ull;
	return (uint32_t)(h ^ h >> 32);
}
static inline bool pl_valid(const struct pl_msg *m)
{
	return m->payload == pl_payload(m->seq) && m->check == pl_check(m->seq, m->payload);
}
/* The number after "key=" among the arguments, or def. */
static inline uint64_t pl_arg(int argc, char **argv, const char *key, uint64_t def)
{
	size_t n = strlen(key);
	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], key, n) && argv[i][n] == '=')
			return ax_atou(argv[i] + n + 1);
	return def;
}

/* A pipeline channel of our own, exported as KEY for the relay alone; 0 or an error (said). */
static inline int64_t pl_export(struct chan_export *ex, const char *key, int role, struct spsc *q,
				void (*on_attach)(struct chan_export *, endpoint_t))
{
	*ex = (struct chan_export){ .rights = KP_R | KP_W, .peer = "relay", .on_attach = on_attach };
	ax_strpad(ex->key, sizeof(ex->key), key);
	int64_t r = chan_create(ex, PL_SLOT, PL_SLOTS, role, q);
	if (r == 0)
		r = chan_export(ex);
	if (r < 0)
		ax_printf("%s: cannot export %s: %lld\n", role == SPSC_PRODUCER ? "source" : "sink", key, (long long)r);
	return r;
}

/* Kernel messages to the owners of channels: import requests; anything else is echoed. */
static inline void pl_on_message(struct ax_evloop *l, struct kmsg *m)
{
	(void)l;
	if (!chan_export_serve(m))
		ax_reply(m->source, m);
}
