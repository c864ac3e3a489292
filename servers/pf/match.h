/* pf's view of a packet: the headers ip copied into a request, parsed and validated, and
 * matching them against one rule or a rule list. Pure code, host-tested
 * (tests/unit/test_pf_match.c). */
#pragma once
#include "rules.h"
#include "pf_proto.h"

#define PF_PROTO_ICMP 1
#define PF_PROTO_TCP 6
#define PF_PROTO_UDP 17

/* TCP flags. */
#define PF_TH_FIN 0x01
#define PF_TH_SYN 0x02
#define PF_TH_RST 0x04
#define PF_TH_ACK 0x10

struct pf_pkt {
	uint8_t dir, ifindex, proto;
	bool ports;       /* sport/dport hold TCP or UDP ports (first fragment only) */
	bool later_frag;  /* a fragment other than the first: no transport header */
	bool first_frag;  /* offset 0 with more fragments to come */
	uint32_t src, dst;/* host order */
	uint16_t sport, dport, ipid;
	uint8_t tcp_flags, icmp_type;
	uint16_t icmp_id; /* echo request/reply */
};

/* Why a request is refused (counted; the packet is blocked). */
enum pf_bad {
	PF_BAD_DIR = -1,      /* dir neither in nor out */
	PF_BAD_LEN = -2,      /* hdr_len/pkt_len impossible */
	PF_BAD_IP = -3,       /* not IPv4, header length or total length wrong */
	PF_BAD_L4 = -4        /* first fragment too short for its transport header */
};

/* Parses the request's headers into *p: 0, or a PF_BAD_* code. */
int pf_pkt_parse(const struct pf_req *req, struct pf_pkt *p);
/* Whether rule r matches packet p. */
bool pf_rule_match(const struct pf_rule *r, const struct pf_pkt *p);
/* The deciding rule's index in rules[0..n) (last match wins, the first matching quick rule
 * ends the search), or -1 when none matches (default: pass). */
int pf_rules_eval(const struct pf_rule *rules, int n, const struct pf_pkt *p);
