/* The three-stage pipeline of the recovery tests (README.md): source -> relay -> sink over
 * channels named in ds. What the stages share: the message and its check word. */
#pragma once
#include "axrt.h"
#include "spsc.h"

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
