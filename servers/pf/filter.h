/* pf's decision for one request: the connection table first, then the rules, with the
 * fragment memory and the counters. Pure code (no kernel calls), host-tested
 * (tests/unit/test_pf_filter.c); pf.c feeds it requests and the clock. */
#pragma once
#include "match.h"
#include "state.h"

#define PF_FRAGS 64
#define PF_TMO_FRAG (30 * PF_SEC)

/* A first fragment's verdict, for the later fragments of its datagram. */
struct pf_frag {
	uint32_t src, dst;
	uint16_t id;
	uint8_t proto, verdict;
	uint64_t expires;
};

struct pf_counters {
	uint64_t passed[2], blocked[2]; /* [PF_IN], [PF_OUT] */
	uint64_t bad;                   /* requests pf could not parse (blocked) */
	uint64_t state_pass;            /* passed by a connection-table entry */
	uint64_t states_made, state_full;
	uint64_t frag_follow, frag_unknown; /* later fragments: by their first's verdict / passed unseen */
	uint64_t notes;                 /* closing packets ip passed by the flow table and told us of */
};

struct pf_filter {
	struct pf_rule rules[PF_MAX_RULES];
	uint64_t hits[PF_MAX_RULES];
	int nrules;
	struct pf_state_table states;
	struct pf_frag frags[PF_FRAGS];
	uint32_t frag_next;
	struct pf_counters c;
};

void pf_filter_init(struct pf_filter *f);
/* Replaces the rule list (n <= PF_MAX_RULES) and zeroes the match counters. */
void pf_filter_set_rules(struct pf_filter *f, const struct pf_rule *rules, int n);
/* Judges one request at time now (ns): PF_PASS or PF_BLOCK, *rule = the deciding rule
 * (1-based; 0 = default, a state, a fragment or a bad request). */
uint32_t pf_filter_judge(struct pf_filter *f, const struct pf_req *req, uint64_t now, uint32_t *rule);
/* Whether the answer to the connection-opening SYN of request req (TCP, SYN without ACK,
 * which pf just passed) would pass too: the SYN-ACK back, by a connection-table entry or by
 * a rule that keeps no state (one that keeps state must see it, to make its entry). Nothing
 * changes: ip may pass that SYN-ACK by the flow table (pf_flow.h). */
bool pf_filter_reply_passes(struct pf_filter *f, const struct pf_req *req, uint64_t now);
/* The connection-table key of packet p, false if p cannot have one (not TCP, UDP or ICMP
 * echo; a later fragment). */
bool pf_pkt_key(const struct pf_pkt *p, struct pf_key *k);
