/* pf's connection table: `keep state` entries keyed by protocol and the two ends, seen
 * from this host (local = source of an outgoing packet, destination of an incoming one), so
 * one entry passes both directions. ICMP echo uses the echo id as the local "port" and 0 as
 * the remote one. A local address 0 (a socket bound to any address, from udp's or tcp's
 * table in ds) matches every local address. Pure code, host-tested
 * (tests/unit/test_pf_state.c). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PF_STATES 1024
#define PF_STATE_BUCKETS 256

#define PF_SEC 1000000000ull
#define PF_TMO_UDP (60 * PF_SEC)
#define PF_TMO_ICMP (10 * PF_SEC)
#define PF_TMO_TCP_OPENING (30 * PF_SEC)
#define PF_TMO_TCP_EST (24 * 3600 * PF_SEC)
#define PF_TMO_TCP_CLOSING (30 * PF_SEC)
#define PF_TMO_TCP_RST (5 * PF_SEC)

enum { PFS_OPENING = 0, PFS_EST = 1, PFS_CLOSING = 2, PFS_RESET = 3 };

struct pf_key {
	uint8_t proto;
	uint32_t laddr, raddr;  /* host order */
	uint16_t lport, rport;
};

struct pf_state {
	struct pf_key k;
	uint8_t used, phase;    /* phase: PFS_* (TCP; others stay PFS_EST) */
	uint8_t dir;            /* direction of the packet that created it */
	bool replied;           /* a packet went the other way */
	int16_t next;           /* bucket chain, -1 ends it */
	uint64_t expires;       /* ns */
	uint64_t packets;
};

struct pf_state_table {
	int16_t bucket[PF_STATE_BUCKETS];
	int16_t free_head;
	uint32_t count;
	struct pf_state e[PF_STATES];
};

void pf_state_init(struct pf_state_table *t);
/* The live entry for key (expired ones are dropped on the way), or NULL. */
struct pf_state *pf_state_find(struct pf_state_table *t, const struct pf_key *k, uint64_t now);
/* A new entry (or the existing one) for key, expiring at now + tmo; NULL when the table is
 * full of live entries. */
struct pf_state *pf_state_insert(struct pf_state_table *t, const struct pf_key *k, uint8_t dir, uint64_t now,
				 uint64_t tmo);
/* Drops every expired entry; returns how many. */
uint32_t pf_state_expire(struct pf_state_table *t, uint64_t now);
/* The n-th live entry in table order (for listing), or NULL past the last. */
const struct pf_state *pf_state_nth(const struct pf_state_table *t, uint32_t n);
