/* pf's packet side (servers/pf/match.c, state.c, filter.c): header parsing and its refusals,
 * rule matching (last match wins, quick), the connection table (both directions, timeouts,
 * TCP phases, ICMP echo ids, wildcard local address, a full table), fragments, counters,
 * and a mutation fuzz of request headers. */
#include "unit.h"
#include "filter.h"

#define A(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (uint32_t)(d))
#define LOCAL A(10, 0, 2, 15)
#define GW A(10, 0, 2, 2)
#define S PF_SEC

static struct pf_filter f;
static char err[PF_ERR_LEN];

static void put_be16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8), p[1] = (uint8_t)v; }
static void put_be32(uint8_t *p, uint32_t v) { put_be16(p, (uint16_t)(v >> 16)), put_be16(p + 2, (uint16_t)v); }

/* A request for an IPv4 packet of `payload` bytes after a 20-byte header. */
static struct pf_req ip_req(uint8_t dir, uint8_t proto, uint32_t src, uint32_t dst, uint32_t payload)
{
	struct pf_req r = { .id = 1, .dir = dir, .ifindex = 0 };
	uint32_t tot = 20 + payload;
	r.pkt_len = tot;
	r.hdr_len = (uint16_t)(tot < PF_HDR_MAX ? tot : PF_HDR_MAX);
	r.hdr[0] = 0x45;
	put_be16(r.hdr + 2, (uint16_t)tot);
	put_be16(r.hdr + 4, 0x1234);
	r.hdr[8] = 64;
	r.hdr[9] = proto;
	put_be32(r.hdr + 12, src);
	put_be32(r.hdr + 16, dst);
	return r;
}

static struct pf_req udp(uint8_t dir, uint32_t src, uint16_t sp, uint32_t dst, uint16_t dp)
{
	struct pf_req r = ip_req(dir, 17, src, dst, 8 + 32);
	put_be16(r.hdr + 20, sp);
	put_be16(r.hdr + 22, dp);
	put_be16(r.hdr + 24, 8 + 32);
	return r;
}

static struct pf_req tcp(uint8_t dir, uint32_t src, uint16_t sp, uint32_t dst, uint16_t dp, uint8_t flags)
{
	struct pf_req r = ip_req(dir, 6, src, dst, 20);
	put_be16(r.hdr + 20, sp);
	put_be16(r.hdr + 22, dp);
	r.hdr[32] = 5 << 4;
	r.hdr[33] = flags;
	return r;
}

static struct pf_req echo(uint8_t dir, uint32_t src, uint32_t dst, uint8_t type, uint16_t id)
{
	struct pf_req r = ip_req(dir, 1, src, dst, 64);
	r.hdr[20] = type;
	put_be16(r.hdr + 24, id);
	return r;
}

static void rules(const char *text)
{
	static struct pf_rule rs[PF_MAX_RULES];
	int n = pf_parse_file(text, strlen(text), rs, PF_MAX_RULES, err);
	if (n < 0)
		fprintf(stderr, "%s\n", err);
	pf_filter_init(&f);
	pf_filter_set_rules(&f, rs, n < 0 ? 0 : n);
}

static uint32_t judge(struct pf_req r, uint64_t now)
{
	uint32_t rule;
	return pf_filter_judge(&f, &r, now, &rule);
}

static uint32_t judge_rule(struct pf_req r, uint32_t *rule) { return pf_filter_judge(&f, &r, 0, rule); }

static void parse_headers(void)
{
	struct pf_pkt p;
	struct pf_req r = udp(PF_IN, GW, 53, LOCAL, 40000);
	REQUIRE(pf_pkt_parse(&r, &p) == 0);
	CHECK_EQ_U64(p.src, GW);
	CHECK_EQ_U64(p.dst, LOCAL);
	CHECK(p.ports);
	CHECK_EQ_U64(p.sport, 53);
	CHECK_EQ_U64(p.dport, 40000);
	r = tcp(PF_OUT, LOCAL, 1000, GW, 80, PF_TH_SYN);
	REQUIRE(pf_pkt_parse(&r, &p) == 0);
	CHECK_EQ_U64(p.tcp_flags, PF_TH_SYN);
	r = echo(PF_OUT, LOCAL, GW, 8, 77);
	REQUIRE(pf_pkt_parse(&r, &p) == 0);
	CHECK_EQ_U64(p.icmp_id, 77);
	CHECK(!p.ports);
	/* refusals */
	r = udp(2, GW, 1, LOCAL, 2);
	CHECK_EQ_I64(pf_pkt_parse(&r, &p), PF_BAD_DIR);
	r = udp(PF_IN, GW, 1, LOCAL, 2), r.hdr_len = PF_HDR_MAX + 1;
	CHECK_EQ_I64(pf_pkt_parse(&r, &p), PF_BAD_LEN);
	r = udp(PF_IN, GW, 1, LOCAL, 2), r.hdr_len = 19, r.pkt_len = 19;
	CHECK_EQ_I64(pf_pkt_parse(&r, &p), PF_BAD_LEN);
	r = udp(PF_IN, GW, 1, LOCAL, 2), r.hdr[0] = 0x65;
	CHECK_EQ_I64(pf_pkt_parse(&r, &p), PF_BAD_IP);
	r = udp(PF_IN, GW, 1, LOCAL, 2), r.hdr[0] = 0x44;
	CHECK_EQ_I64(pf_pkt_parse(&r, &p), PF_BAD_IP);
	r = udp(PF_IN, GW, 1, LOCAL, 2), put_be16(r.hdr + 2, 1000); /* longer than the packet */
	CHECK_EQ_I64(pf_pkt_parse(&r, &p), PF_BAD_IP);
	r = udp(PF_IN, GW, 1, LOCAL, 2), put_be16(r.hdr + 2, 24); /* UDP header cut short */
	CHECK_EQ_I64(pf_pkt_parse(&r, &p), PF_BAD_L4);
	r = ip_req(PF_IN, 6, GW, LOCAL, 10); /* TCP without room for its flags */
	CHECK_EQ_I64(pf_pkt_parse(&r, &p), PF_BAD_L4);
	r = ip_req(PF_IN, 47, GW, LOCAL, 0); /* other protocols need nothing after IP */
	CHECK_EQ_I64(pf_pkt_parse(&r, &p), 0);
	/* a later fragment has no ports, whatever its bytes say */
	r = udp(PF_IN, GW, 53, LOCAL, 7777), put_be16(r.hdr + 6, 185);
	REQUIRE(pf_pkt_parse(&r, &p) == 0);
	CHECK(p.later_frag && !p.ports);
}

static void last_match_and_quick(void)
{
	uint32_t rule;
	rules("block in proto udp to any port 7777\n"
	      "pass in proto udp from 10.0.2.2 to any port 7000-7999\n"
	      "block in quick proto udp to any port 9999\n"
	      "pass in proto udp to any port 9999\n");
	CHECK_EQ_U64(judge_rule(udp(PF_IN, A(10, 0, 2, 3), 5, LOCAL, 7777), &rule), PF_BLOCK);
	CHECK_EQ_U64(rule, 1);
	CHECK_EQ_U64(judge_rule(udp(PF_IN, GW, 5, LOCAL, 7777), &rule), PF_PASS); /* the later rule wins */
	CHECK_EQ_U64(rule, 2);
	CHECK_EQ_U64(judge_rule(udp(PF_IN, GW, 5, LOCAL, 9999), &rule), PF_BLOCK); /* quick */
	CHECK_EQ_U64(rule, 3);
	CHECK_EQ_U64(judge_rule(udp(PF_OUT, LOCAL, 5, GW, 7777), &rule), PF_PASS); /* out: default */
	CHECK_EQ_U64(rule, 0);
	CHECK_EQ_U64(judge_rule(tcp(PF_IN, GW, 5, LOCAL, 7777, 0), &rule), PF_PASS); /* tcp */
	CHECK_EQ_U64(f.hits[0], 1);
	CHECK_EQ_U64(f.hits[1], 1);
	CHECK_EQ_U64(f.hits[2], 1);
	CHECK_EQ_U64(f.hits[3], 0);
	CHECK_EQ_U64(f.c.blocked[PF_IN], 2);
	CHECK_EQ_U64(f.c.passed[PF_IN], 2);
	CHECK_EQ_U64(f.c.passed[PF_OUT], 1);
	/* interface and prefixes */
	rules("block on 1 from 192.168.0.0/16\n");
	struct pf_req r = udp(PF_IN, A(192, 168, 4, 4), 1, LOCAL, 2);
	CHECK_EQ_U64(judge(r, 0), PF_PASS);
	r.ifindex = 1;
	CHECK_EQ_U64(judge(r, 0), PF_BLOCK);
	put_be32(r.hdr + 12, A(192, 169, 0, 1));
	CHECK_EQ_U64(judge(r, 0), PF_PASS);
	/* a port rule without proto matches TCP and UDP, not ICMP */
	rules("block to any port 0-65535\n");
	CHECK_EQ_U64(judge(udp(PF_IN, GW, 1, LOCAL, 2), 0), PF_BLOCK);
	CHECK_EQ_U64(judge(tcp(PF_IN, GW, 1, LOCAL, 2, 0), 0), PF_BLOCK);
	CHECK_EQ_U64(judge(echo(PF_IN, GW, LOCAL, 8, 1), 0), PF_PASS);
}

static void udp_state_both_ways(void)
{
	rules("block\npass out proto udp keep state\n");
	CHECK_EQ_U64(judge(udp(PF_IN, GW, 53, LOCAL, 40000), 0), PF_BLOCK); /* nothing asked */
	CHECK_EQ_U64(judge(udp(PF_OUT, LOCAL, 40000, GW, 53), 0), PF_PASS);
	CHECK_EQ_U64(f.states.count, 1);
	CHECK_EQ_U64(judge(udp(PF_IN, GW, 53, LOCAL, 40000), 1 * S), PF_PASS); /* the answer */
	CHECK_EQ_U64(judge(udp(PF_IN, GW, 54, LOCAL, 40000), 1 * S), PF_BLOCK); /* another port */
	CHECK_EQ_U64(judge(udp(PF_IN, A(10, 0, 2, 3), 53, LOCAL, 40000), 1 * S), PF_BLOCK);
	/* refreshed by each packet; gone 60 s after the last */
	CHECK_EQ_U64(judge(udp(PF_IN, GW, 53, LOCAL, 40000), 59 * S), PF_PASS);
	CHECK_EQ_U64(judge(udp(PF_IN, GW, 53, LOCAL, 40000), 118 * S), PF_PASS);
	CHECK_EQ_U64(judge(udp(PF_IN, GW, 53, LOCAL, 40000), 179 * S), PF_BLOCK);
	CHECK_EQ_U64(f.states.count, 0);
	CHECK(f.c.state_pass == 3);
	CHECK(f.c.states_made == 1);
	/* the table holds state, a block rule added later does not cut the connection */
	CHECK_EQ_U64(judge(udp(PF_OUT, LOCAL, 40000, GW, 53), 200 * S), PF_PASS);
	const struct pf_state *s = pf_state_nth(&f.states, 0);
	REQUIRE(s);
	CHECK_EQ_U64(s->k.laddr, LOCAL);
	CHECK_EQ_U64(s->k.rport, 53);
	CHECK(!pf_state_nth(&f.states, 1));
}

static void tcp_phases(void)
{
	rules("block\npass in proto tcp to any port 80 keep state\n");
	CHECK_EQ_U64(judge(tcp(PF_IN, GW, 5000, LOCAL, 80, PF_TH_SYN), 0), PF_PASS);
	struct pf_key k = { 6, LOCAL, GW, 80, 5000 };
	struct pf_state *s = pf_state_find(&f.states, &k, 0);
	REQUIRE(s);
	CHECK_EQ_U64(s->phase, PFS_OPENING);
	CHECK_EQ_U64(s->expires, PF_TMO_TCP_OPENING);
	CHECK_EQ_U64(judge(tcp(PF_OUT, LOCAL, 80, GW, 5000, PF_TH_SYN | PF_TH_ACK), 1 * S), PF_PASS);
	CHECK_EQ_U64(judge(tcp(PF_IN, GW, 5000, LOCAL, 80, PF_TH_ACK), 2 * S), PF_PASS);
	CHECK_EQ_U64(s->phase, PFS_EST);
	CHECK_EQ_U64(s->expires, 2 * S + PF_TMO_TCP_EST);
	CHECK_EQ_U64(judge(tcp(PF_OUT, LOCAL, 80, GW, 5000, PF_TH_ACK), 3600 * S), PF_PASS); /* an hour idle */
	CHECK_EQ_U64(judge(tcp(PF_OUT, LOCAL, 80, GW, 5000, PF_TH_FIN | PF_TH_ACK), 3601 * S), PF_PASS);
	CHECK_EQ_U64(s->phase, PFS_CLOSING);
	CHECK_EQ_U64(judge(tcp(PF_IN, GW, 5000, LOCAL, 80, PF_TH_RST), 3602 * S), PF_PASS);
	CHECK_EQ_U64(s->phase, PFS_RESET);
	CHECK_EQ_U64(judge(tcp(PF_OUT, LOCAL, 80, GW, 5000, PF_TH_ACK), 3602 * S + PF_TMO_TCP_RST), PF_BLOCK);
	/* an opening connection that never answers goes after 30 s */
	CHECK_EQ_U64(judge(tcp(PF_IN, GW, 5001, LOCAL, 80, PF_TH_SYN), 0), PF_PASS);
	CHECK_EQ_U64(judge(tcp(PF_OUT, LOCAL, 80, GW, 5001, PF_TH_ACK), 31 * S), PF_BLOCK);
}

/* Whether a passed SYN's answer would pass (ip may then pass the SYN-ACK without asking):
 * by the state the SYN made, or by a rule that keeps none; never when a rule would make
 * state of the SYN-ACK; nothing about the filter changes. */
static void reply_to_a_passed_syn(void)
{
	struct pf_req syn = tcp(PF_IN, GW, 5000, LOCAL, 80, PF_TH_SYN);
	rules("block\npass in proto tcp to any port 80 keep state\n");
	CHECK(!pf_filter_reply_passes(&f, &syn, 0));                       /* no state yet: blocked */
	CHECK_EQ_U64(judge(syn, 0), PF_PASS);
	struct pf_counters before = f.c;
	uint32_t states = f.states.count;
	uint64_t hits0 = f.hits[0], hits1 = f.hits[1];
	CHECK(pf_filter_reply_passes(&f, &syn, 1));                        /* by the state */
	CHECK(!memcmp(&before, &f.c, sizeof(before)) && f.states.count == states);
	CHECK(f.hits[0] == hits0 && f.hits[1] == hits1);
	rules("");
	CHECK(pf_filter_reply_passes(&f, &syn, 0));                        /* no rules: default pass */
	rules("pass in proto tcp to any port 80\nblock out proto tcp\n");
	CHECK(!pf_filter_reply_passes(&f, &syn, 0));                       /* the answer is blocked */
	rules("pass out proto tcp keep state\n");
	CHECK(!pf_filter_reply_passes(&f, &syn, 0));                       /* pf must see it: it makes state */
	rules("");
	CHECK(!pf_filter_reply_passes(&f, &(struct pf_req){ 0 }, 0));      /* garbage */
	CHECK(!pf_filter_reply_passes(&f, &(struct pf_req){ .dir = 7 }, 0));
	struct pf_req r = tcp(PF_IN, GW, 5000, LOCAL, 80, PF_TH_SYN | PF_TH_ACK);
	CHECK(!pf_filter_reply_passes(&f, &r, 0));                         /* a SYN-ACK is no opening */
	r = tcp(PF_IN, GW, 5000, LOCAL, 80, PF_TH_ACK);
	CHECK(!pf_filter_reply_passes(&f, &r, 0));
	r = udp(PF_IN, GW, 5000, LOCAL, 53);
	CHECK(!pf_filter_reply_passes(&f, &r, 0));
	r = tcp(PF_OUT, LOCAL, 40000, GW, 80, PF_TH_SYN);                  /* ours out: the answer comes in */
	CHECK(pf_filter_reply_passes(&f, &r, 0));
	rules("block in proto tcp from any port 80\n");
	CHECK(!pf_filter_reply_passes(&f, &r, 0));
}

static void icmp_echo_by_id(void)
{
	rules("block\npass out proto icmp keep state\n");
	CHECK_EQ_U64(judge(echo(PF_OUT, LOCAL, GW, 8, 42), 0), PF_PASS);
	CHECK_EQ_U64(judge(echo(PF_IN, GW, LOCAL, 0, 42), 1 * S), PF_PASS);
	CHECK_EQ_U64(judge(echo(PF_IN, GW, LOCAL, 0, 43), 1 * S), PF_BLOCK); /* another id */
	CHECK_EQ_U64(judge(echo(PF_IN, GW, LOCAL, 3, 42), 1 * S), PF_BLOCK); /* not an echo */
	CHECK_EQ_U64(judge(echo(PF_IN, GW, LOCAL, 0, 42), 1 * S + PF_TMO_ICMP), PF_BLOCK);
}

static void table_limits(void)
{
	struct pf_state_table *t = &f.states;
	pf_state_init(t);
	/* a wildcard local address (a socket bound to any) matches every local address */
	struct pf_key any = { 17, 0, GW, 5000, 53 }, k = { 17, LOCAL, GW, 5000, 53 };
	REQUIRE(pf_state_insert(t, &any, PF_OUT, 0, PF_TMO_UDP));
	CHECK(pf_state_find(t, &k, 1));
	k.lport = 5001;
	CHECK(!pf_state_find(t, &k, 1));
	/* full: refused while everything lives, accepted once something expired */
	for (uint32_t i = 1; i < PF_STATES; i++) {
		struct pf_key x = { 17, LOCAL, i, 1, 2 };
		REQUIRE(pf_state_insert(t, &x, PF_OUT, 0, i == 7 ? 5 * S : PF_TMO_UDP));
	}
	CHECK_EQ_U64(t->count, PF_STATES);
	struct pf_key x = { 17, LOCAL, 99999, 1, 2 };
	CHECK(!pf_state_insert(t, &x, PF_OUT, 1, PF_TMO_UDP));
	CHECK(pf_state_insert(t, &x, PF_OUT, 6 * S, PF_TMO_UDP));
	CHECK_EQ_U64(t->count, PF_STATES);
	/* the same key twice is one entry */
	CHECK(pf_state_insert(t, &x, PF_OUT, 6 * S, PF_TMO_UDP) == pf_state_find(t, &x, 6 * S));
	CHECK_EQ_U64(pf_state_expire(t, PF_TMO_UDP + 7 * S), PF_STATES);
	CHECK_EQ_U64(t->count, 0);
	/* the filter counts a full table and still passes */
	rules("pass keep state\n");
	for (uint32_t i = 0; i < PF_STATES + 5; i++)
		CHECK_EQ_U64(judge(udp(PF_OUT, LOCAL, (uint16_t)(i + 1), GW, 53), 0), PF_PASS);
	CHECK_EQ_U64(f.c.state_full, 5);
}

static void fragments(void)
{
	rules("block in proto udp to any port 7777\n");
	struct pf_req first = udp(PF_IN, GW, 1, LOCAL, 7777), later = first;
	put_be16(first.hdr + 6, 0x2000); /* MF, offset 0 */
	put_be16(later.hdr + 6, 185);    /* offset 1480 */
	CHECK_EQ_U64(judge(first, 0), PF_BLOCK);
	CHECK_EQ_U64(judge(later, 1), PF_BLOCK); /* follows its first fragment */
	CHECK_EQ_U64(f.c.frag_follow, 1);
	put_be16(later.hdr + 4, 0x9999);         /* another datagram, first never seen */
	CHECK_EQ_U64(judge(later, 1), PF_PASS);
	CHECK_EQ_U64(f.c.frag_unknown, 1);
	put_be16(later.hdr + 4, 0x1234);
	CHECK_EQ_U64(judge(later, PF_TMO_FRAG + 1), PF_PASS); /* forgotten after 30 s */
	struct pf_req ok = udp(PF_IN, GW, 1, LOCAL, 53);
	put_be16(ok.hdr + 6, 0x2000);
	put_be16(ok.hdr + 4, 0x4444);
	CHECK_EQ_U64(judge(ok, 0), PF_PASS);
	put_be16(ok.hdr + 6, 100);
	CHECK_EQ_U64(judge(ok, 0), PF_PASS);
}

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint64_t next(void) { return rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17; }

/* Mutated requests: every one gets a verdict, bad ones are counted, nothing reads outside the
 * request (ASan), and the counters add up. */
static void header_fuzz(void)
{
	rules("block in proto udp to any port 7777\npass out keep state\npass in proto tcp to any port 80 keep state\n"
	      "block in quick on 1 from 10.0.0.0/8\n");
	struct pf_req seeds[] = { udp(PF_IN, GW, 53, LOCAL, 7777), udp(PF_OUT, LOCAL, 4000, GW, 53),
				  tcp(PF_IN, GW, 5000, LOCAL, 80, PF_TH_SYN), echo(PF_OUT, LOCAL, GW, 8, 9),
				  ip_req(PF_IN, 47, GW, LOCAL, 200) };
	uint64_t verdicts = 0;
	for (int i = 0; i < 300000; i++) {
		struct pf_req *r = malloc(sizeof(*r));
		*r = seeds[next() % 5];
		int m = 1 + (int)(next() % 4);
		for (int k = 0; k < m; k++) {
			uint64_t x = next();
			uint8_t *b = (uint8_t *)r;
			switch (x % 4) {
			case 0: b[(x >> 8) % sizeof(*r)] = (uint8_t)(x >> 32); break;
			case 1: r->hdr[(x >> 8) % 40] ^= (uint8_t)(1u << ((x >> 16) % 8)); break;
			case 2: r->hdr_len = (uint16_t)(x >> 16); break;
			default: r->pkt_len = (uint32_t)(x >> 16) % 200; break;
			}
		}
		uint32_t rule, v = pf_filter_judge(&f, r, (uint64_t)i * 1000000, &rule);
		REQUIRE(v == PF_PASS || v == PF_BLOCK);
		REQUIRE(rule <= (uint32_t)f.nrules);
		free(r);
		verdicts++;
	}
	CHECK_EQ_U64(f.c.passed[0] + f.c.passed[1] + f.c.blocked[0] + f.c.blocked[1] + f.c.bad, verdicts);
	CHECK(f.c.bad > 1000);
	CHECK(f.c.passed[0] + f.c.passed[1] > 1000);
	CHECK(f.c.blocked[0] > 100);
	CHECK(f.states.count <= PF_STATES);
}

int main(void)
{
	unit_begin(__FILE__);
	RUN(parse_headers);
	RUN(last_match_and_quick);
	RUN(udp_state_both_ways);
	RUN(tcp_phases);
	RUN(reply_to_a_passed_syn);
	RUN(icmp_echo_by_id);
	RUN(table_limits);
	RUN(fragments);
	RUN(header_fuzz);
	return unit_end();
}
