/* pf's flow table: the flows pf has passed, which ip may pass again without asking (the
 * fast path of the T junction, docs/network.md "pf"). pf stays the authority: it alone
 * writes the table; ip only reads it.
 *
 * - ip makes the memory and exports it as ip/pf.flows beside pf.req and pf.ans, importable
 *   by pf alone (read-write); pf imports it with the channels. When a pf imports it, ip
 *   clears it first, so a new pf starts from an empty table. Each side uses its own
 *   compile-time size (PF_FLOW_SLOTS) and never a size read from the shared page.
 * - Which packets may take it: IPv4, not a fragment, UDP, or TCP without SYN, FIN or RST.
 *   A connection's opening (its SYN) always waits for pf; its SYN-ACK too, unless pf, when
 *   it passed the SYN, judged the answer would pass as well (by the state the SYN made, or
 *   by a rule that keeps none): then pf puts the answer's flow and an entry of the SYN-ACK's
 *   own (key.zero PF_FLOW_K_SYNACK), and the SYN-ACK passes at once (ip's `pf_synack`).
 *   Its closing (FIN or RST, no SYN) of a flow
 *   in the table passes at once too, and pf hears of it by a note it does not answer
 *   (pf_proto.h PF_REQ_NOTE), so it still tracks the connection's phases. ICMP and
 *   everything else always goes to pf.
 * - An entry says: pf passed a packet of exactly this key (direction, interface, protocol,
 *   addresses, ports) under rule generation `gen`, and ip may pass that key's packets until
 *   `expires_ns` (ax_time_ns). pf gives PF_FLOW_TTL_NS, below the shortest lifetime of a
 *   connection-table entry (5 s after a RST), so a cached pass is one pf would still give,
 *   and pf sees every flow at least once a TTL (its entries stay fresh).
 * - Any change of the rules bumps the table's `gen`: every entry is void at once.
 * - Entries are written under a sequence count (odd while pf writes), and ip copies one,
 *   checks the count did not move and the key is the one it looks for, then uses its copy.
 *   A pf that writes garbage can only make ip ask it again or pass what it would have
 *   passed anyway.
 * - Counters: packets passed this way count in ip's `pf_fast` (pf's own counters and rule
 *   hits count only what it judged).
 * Pure C: built into ip, pf and the host unit tests (tests/unit/test_pf_flow.c). */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#define PF_FLOW_MAGIC 0x31574c46u     /* "FLW1" */
#define PF_FLOW_SLOTS 4096            /* a power of two */
#define PF_FLOW_TTL_NS 1000000000ull  /* 1 s */

struct pf_flow_key {
	uint32_t src, dst;     /* as in the packet (network order) */
	uint16_t sport, dport; /* as in the packet (network order) */
	uint8_t proto, dir, ifindex, zero;
};
_Static_assert(sizeof(struct pf_flow_key) == 16, "no padding");

struct pf_flow {
	uint32_t seq;          /* odd while pf writes the entry */
	uint32_t gen;          /* rule generation it was judged under */
	uint64_t expires_ns;
	struct pf_flow_key key;
};
_Static_assert(sizeof(struct pf_flow) == 32, "32-byte entries");

struct pf_flow_table {
	uint32_t magic, nslots; /* set by ip, for people reading a dump */
	uint32_t gen;           /* bumped by pf at every rule change */
	uint32_t zero;
	uint64_t reserved[6];
	struct pf_flow e[PF_FLOW_SLOTS];
};
_Static_assert(sizeof(struct pf_flow_table) == 64 + PF_FLOW_SLOTS * 32, "a cache line of header");


#define PF_FLOW_FIN 0x01
#define PF_FLOW_SYN 0x02
#define PF_FLOW_RST 0x04
#define PF_FLOW_ACK 0x10

/* The flow key of an IPv4 packet whose first n bytes are h, UDP or TCP, not a fragment, with
 * its ports in h; *tcp_flags its TCP flags (0 for UDP). */
static inline bool pf_flow_key_any(const uint8_t *h, uint32_t n, uint8_t dir, uint8_t ifindex,
				   struct pf_flow_key *k, uint8_t *tcp_flags)
{
	if (n < 20 || (h[0] >> 4) != 4)
		return false;
	uint32_t ihl = (uint32_t)(h[0] & 0xf) * 4;
	if (ihl < 20 || (((uint32_t)h[6] << 8 | h[7]) & 0x3fff)) /* MF or an offset: a fragment */
		return false;
	uint8_t proto = h[9];
	*tcp_flags = 0;
	if (proto == 6) {
		if (n < ihl + 14)
			return false;
		*tcp_flags = h[ihl + 13];
	} else if (proto != 17 || n < ihl + 8) {
		return false;
	}
	*k = (struct pf_flow_key){ .proto = proto, .dir = dir, .ifindex = ifindex };
	__builtin_memcpy(&k->src, h + 12, 4);
	__builtin_memcpy(&k->dst, h + 16, 4);
	__builtin_memcpy(&k->sport, h + ihl, 2);
	__builtin_memcpy(&k->dport, h + ihl + 2, 2);
	return true;
}

/* The key of a packet that may take the fast path: UDP, or TCP without SYN/FIN/RST. */
static inline bool pf_flow_key_of(const uint8_t *h, uint32_t n, uint8_t dir, uint8_t ifindex,
				  struct pf_flow_key *k)
{
	uint8_t f;
	return pf_flow_key_any(h, n, dir, ifindex, k, &f) && !(f & (PF_FLOW_FIN | PF_FLOW_SYN | PF_FLOW_RST));
}

/* key.zero of the entry that lets a SYN-ACK pass: pf passed the connection's SYN and judged
 * its answer would pass as well (by state, or by a rule that keeps none). */
#define PF_FLOW_K_SYNACK 1

/* The key of a TCP SYN-ACK (SYN and ACK, no FIN or RST) that may pass by its own entry. */
static inline bool pf_flow_key_synack(const uint8_t *h, uint32_t n, uint8_t dir, uint8_t ifindex,
				      struct pf_flow_key *k)
{
	uint8_t f;
	if (!pf_flow_key_any(h, n, dir, ifindex, k, &f) || k->proto != 6 ||
	    (f & (PF_FLOW_FIN | PF_FLOW_SYN | PF_FLOW_RST | PF_FLOW_ACK)) != (PF_FLOW_SYN | PF_FLOW_ACK))
		return false;
	k->zero = PF_FLOW_K_SYNACK;
	return true;
}

/* The flow of the packets that answer key's (the other direction, the ends swapped). */
static inline struct pf_flow_key pf_flow_key_reverse(const struct pf_flow_key *k)
{
	struct pf_flow_key r = *k;
	r.src = k->dst, r.dst = k->src;
	r.sport = k->dport, r.dport = k->sport;
	r.dir = (uint8_t)(k->dir ? 0 : 1); /* PF_IN 0, PF_OUT 1 (pf_proto.h) */
	r.zero = 0;
	return r;
}

/* The key of a TCP packet that closes its connection (FIN or RST, no SYN): ip passes it at
 * once when its flow is in the table and tells pf with a note (pf_proto.h PF_REQ_NOTE). */
static inline bool pf_flow_key_closing(const uint8_t *h, uint32_t n, uint8_t dir, uint8_t ifindex,
				       struct pf_flow_key *k)
{
	uint8_t f;
	return pf_flow_key_any(h, n, dir, ifindex, k, &f) && k->proto == 6 &&
	       (f & (PF_FLOW_FIN | PF_FLOW_RST)) && !(f & PF_FLOW_SYN);
}

static inline uint32_t pf_flow_hash(const struct pf_flow_key *k)
{
	uint64_t x = ((uint64_t)k->src << 32 | k->dst) * 0x9e3779b97f4a7c15ull;
	x ^= ((uint64_t)k->sport << 32 | (uint64_t)k->dport << 16 | (uint64_t)k->proto << 8 | k->dir) +
	     ((uint64_t)k->ifindex << 40) + ((uint64_t)k->zero << 4);
	x *= 0xc2b2ae3d27d4eb4full;
	return (uint32_t)(x >> 32);
}

static inline bool pf_flow_key_eq(const struct pf_flow_key *a, const struct pf_flow_key *b)
{
	return a->src == b->src && a->dst == b->dst && a->sport == b->sport && a->dport == b->dport &&
	       a->proto == b->proto && a->dir == b->dir && a->ifindex == b->ifindex && a->zero == b->zero;
}

/* pf: records that it passed key now (direct-mapped: a collision replaces the older flow). */
static inline void pf_flow_put(struct pf_flow_table *t, const struct pf_flow_key *k, uint64_t now)
{
	struct pf_flow *e = &t->e[pf_flow_hash(k) & (PF_FLOW_SLOTS - 1)];
	uint32_t seq = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);
	__atomic_store_n(&e->seq, seq | 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	e->key = *k;
	e->gen = __atomic_load_n(&t->gen, __ATOMIC_RELAXED);
	e->expires_ns = now + PF_FLOW_TTL_NS;
	__atomic_store_n(&e->seq, (seq | 1) + 1, __ATOMIC_RELEASE);
}

/* pf: every entry void (the rules changed). */
static inline void pf_flow_invalidate(struct pf_flow_table *t)
{
	__atomic_fetch_add(&t->gen, 1, __ATOMIC_RELEASE);
}

/* ip: whether pf passed key, under the current rules, less than a TTL ago. */
static inline bool pf_flow_passes(const volatile struct pf_flow_table *t, const struct pf_flow_key *k,
				  uint64_t now)
{
	const volatile struct pf_flow *v = &t->e[pf_flow_hash(k) & (PF_FLOW_SLOTS - 1)];
	uint32_t s1 = __atomic_load_n(&v->seq, __ATOMIC_ACQUIRE);
	if (s1 & 1)
		return false;
	struct pf_flow e;
	__builtin_memcpy(&e, (const void *)v, sizeof(e));
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&v->seq, __ATOMIC_RELAXED) != s1)
		return false;
	return pf_flow_key_eq(&e.key, k) && e.gen == __atomic_load_n(&t->gen, __ATOMIC_ACQUIRE) &&
	       now < e.expires_ns;
}
