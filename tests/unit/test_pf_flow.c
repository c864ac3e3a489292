/* pf's flow table (lib/net/pf_flow.h): which packets may take ip's fast path, and the
 * entries pf writes and ip reads: a match, another key, expiry, rule changes, an entry
 * being written, and garbage from a broken pf. */
#include "unit.h"
#include "pf_flow.h"

static struct pf_flow_table table;

static uint16_t htons_(uint16_t v) { return (uint16_t)(v << 8 | v >> 8); }

/* An IPv4 header (20 bytes) and 20 bytes of transport header. */
static uint32_t packet(uint8_t *h, uint8_t proto, uint8_t tcp_flags, uint16_t frag)
{
	memset(h, 0, 40);
	h[0] = 0x45;
	h[6] = (uint8_t)(frag >> 8);
	h[7] = (uint8_t)frag;
	h[9] = proto;
	memcpy(h + 12, "\x0a\x00\x02\x02", 4);
	memcpy(h + 16, "\x0a\x00\x02\x0f", 4);
	h[20] = 0x9c, h[21] = 0x40; /* source port 40000 */
	h[22] = 0x00, h[23] = 0x50; /* destination port 80 */
	h[33] = tcp_flags;
	return 40;
}

static void which_packets_qualify(void)
{
	uint8_t h[40];
	struct pf_flow_key k;
	CHECK(pf_flow_key_of(h, packet(h, 6, 0x10, 0), 0, 0, &k));         /* ACK */
	CHECK(k.sport == htons_(40000) && k.dport == htons_(80) && k.proto == 6 && k.dir == 0);
	CHECK(pf_flow_key_of(h, packet(h, 6, 0x18, 0), 1, 2, &k));         /* PSH ACK, out */
	CHECK(k.dir == 1 && k.ifindex == 2);
	CHECK(pf_flow_key_of(h, packet(h, 6, 0x10, 0x4000), 0, 0, &k));    /* DF is no fragment */
	CHECK(pf_flow_key_of(h, packet(h, 17, 0, 0), 0, 0, &k));           /* UDP */
	CHECK(!pf_flow_key_of(h, packet(h, 6, 0x02, 0), 0, 0, &k));        /* SYN */
	CHECK(!pf_flow_key_of(h, packet(h, 6, 0x12, 0), 0, 0, &k));        /* SYN ACK */
	CHECK(!pf_flow_key_of(h, packet(h, 6, 0x11, 0), 0, 0, &k));        /* FIN */
	CHECK(!pf_flow_key_of(h, packet(h, 6, 0x14, 0), 0, 0, &k));        /* RST */
	CHECK(!pf_flow_key_of(h, packet(h, 1, 0, 0), 0, 0, &k));           /* ICMP */
	CHECK(!pf_flow_key_of(h, packet(h, 17, 0, 0x2000), 0, 0, &k));     /* MF */
	CHECK(!pf_flow_key_of(h, packet(h, 17, 0, 0x0010), 0, 0, &k));     /* a later fragment */
	/* closing packets: FIN or RST without SYN, TCP only, with the same key as the flow's */
	struct pf_flow_key d;
	uint8_t f;
	CHECK(pf_flow_key_closing(h, packet(h, 6, 0x11, 0), 0, 0, &k));    /* FIN ACK */
	CHECK(pf_flow_key_of(h, packet(h, 6, 0x10, 0), 0, 0, &d) && pf_flow_key_eq(&k, &d));
	CHECK(pf_flow_key_closing(h, packet(h, 6, 0x04, 0), 0, 0, &k));    /* RST */
	CHECK(!pf_flow_key_closing(h, packet(h, 6, 0x03, 0), 0, 0, &k));   /* SYN FIN */
	CHECK(!pf_flow_key_closing(h, packet(h, 6, 0x10, 0), 0, 0, &k));   /* ACK */
	CHECK(!pf_flow_key_closing(h, packet(h, 17, 0, 0), 0, 0, &k));     /* UDP */
	CHECK(!pf_flow_key_closing(h, packet(h, 6, 0x11, 0x2000), 0, 0, &k)); /* a fragment */
	/* any flags: pf records the SYN it passed */
	CHECK(pf_flow_key_any(h, packet(h, 6, 0x02, 0), 0, 0, &k, &f) && f == 0x02 && pf_flow_key_eq(&k, &d));
	CHECK(!pf_flow_key_any(h, packet(h, 1, 0, 0), 0, 0, &k, &f));      /* ICMP */
	packet(h, 6, 0x10, 0);
	CHECK(pf_flow_key_of(h, 34, 0, 0, &k) && !pf_flow_key_of(h, 33, 0, 0, &k)); /* TCP flags cut */
	packet(h, 17, 0, 0);
	CHECK(pf_flow_key_of(h, 28, 0, 0, &k) && !pf_flow_key_of(h, 27, 0, 0, &k)); /* UDP ports cut */
	packet(h, 17, 0, 0);
	h[0] = 0x65;
	CHECK(!pf_flow_key_of(h, 40, 0, 0, &k));                           /* IPv6 */
	h[0] = 0x44;
	CHECK(!pf_flow_key_of(h, 40, 0, 0, &k));                           /* IHL 16 */
	h[0] = 0x4f;
	CHECK(!pf_flow_key_of(h, 40, 0, 0, &k));                           /* options past the copy */
}

static void entries_match_expire_and_die_with_the_rules(void)
{
	uint8_t h[40];
	struct pf_flow_key k, other;
	memset(&table, 0, sizeof(table));
	REQUIRE(pf_flow_key_of(h, packet(h, 6, 0x10, 0), 0, 0, &k));
	CHECK(!pf_flow_passes(&table, &k, 1)); /* an empty table passes nothing */
	pf_flow_put(&table, &k, 1000);
	CHECK(pf_flow_passes(&table, &k, 1000));
	CHECK(pf_flow_passes(&table, &k, 1000 + PF_FLOW_TTL_NS - 1));
	CHECK(!pf_flow_passes(&table, &k, 1000 + PF_FLOW_TTL_NS));         /* expired */
	other = k;
	other.dir = 1;
	CHECK(!pf_flow_passes(&table, &other, 1000));                      /* the other direction */
	other = k;
	other.dport ^= 1;
	CHECK(!pf_flow_passes(&table, &other, 1000));
	pf_flow_invalidate(&table);                                        /* a rule changed */
	CHECK(!pf_flow_passes(&table, &k, 1000));
	pf_flow_put(&table, &k, 2000);
	CHECK(pf_flow_passes(&table, &k, 2000));
	/* an entry being written is not trusted */
	struct pf_flow *e = &table.e[pf_flow_hash(&k) & (PF_FLOW_SLOTS - 1)];
	e->seq |= 1;
	CHECK(!pf_flow_passes(&table, &k, 2000));
	e->seq++;
	CHECK(pf_flow_passes(&table, &k, 2000));
}

static void a_synack_passes_by_its_own_entry(void)
{
	/* pf passed a SYN in and judged its SYN-ACK would pass: it puts the answer's flow and the
	 * SYN-ACK's own entry (key.zero PF_FLOW_K_SYNACK); only a SYN-ACK looks for the latter */
	uint8_t h[40], o[40];
	struct pf_flow_key syn, r, sa, ack;
	uint8_t f;
	memset(&table, 0, sizeof(table));
	REQUIRE(pf_flow_key_any(h, packet(h, 6, 0x02, 0), 0, 3, &syn, &f));
	r = pf_flow_key_reverse(&syn);
	CHECK(r.src == syn.dst && r.dst == syn.src && r.sport == syn.dport && r.dport == syn.sport);
	CHECK(r.dir == 1 && r.ifindex == 3 && r.proto == 6 && r.zero == 0);
	/* the answer as ip sees it going out: the ends swapped */
	packet(o, 6, 0x12, 0);
	memcpy(o + 12, h + 16, 4), memcpy(o + 16, h + 12, 4);
	memcpy(o + 20, h + 22, 2), memcpy(o + 22, h + 20, 2);
	REQUIRE(pf_flow_key_synack(o, 40, 1, 3, &sa));
	CHECK(sa.zero == PF_FLOW_K_SYNACK && !pf_flow_key_eq(&sa, &r));
	CHECK(!pf_flow_key_of(o, 40, 1, 3, &ack));                         /* SYN-ACK: no plain key */
	o[33] = 0x02;
	CHECK(!pf_flow_key_synack(o, 40, 1, 3, &ack));                     /* a SYN alone */
	o[33] = 0x13;
	CHECK(!pf_flow_key_synack(o, 40, 1, 3, &ack));                     /* SYN ACK FIN */
	o[33] = 0x16;
	CHECK(!pf_flow_key_synack(o, 40, 1, 3, &ack));                     /* SYN ACK RST */
	o[33] = 0x10;
	REQUIRE(pf_flow_key_of(o, 40, 1, 3, &ack) && pf_flow_key_eq(&ack, &r));
	CHECK(!pf_flow_passes(&table, &sa, 10));
	pf_flow_put(&table, &r, 10);
	CHECK(!pf_flow_passes(&table, &sa, 10));                           /* the flow's entry is not the SYN-ACK's */
	struct pf_flow_key x = r;
	x.zero = PF_FLOW_K_SYNACK;
	pf_flow_put(&table, &x, 10);
	CHECK(pf_flow_passes(&table, &sa, 10) && pf_flow_passes(&table, &ack, 10)); /* both kept */
	CHECK((pf_flow_hash(&sa) & (PF_FLOW_SLOTS - 1)) != (pf_flow_hash(&r) & (PF_FLOW_SLOTS - 1))); /* its own slot */
	pf_flow_invalidate(&table);
	CHECK(!pf_flow_passes(&table, &sa, 10));
}

static void garbage_never_passes_another_key(void)
{
	/* A broken pf fills the table with noise, every entry looking current and complete:
	 * only an entry whose key is exactly the one asked for may pass (what pf could have
	 * written on purpose). */
	uint64_t x = 88172645463325252ull;
	uint8_t *bytes = (uint8_t *)&table;
	for (size_t i = 0; i < sizeof(table); i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		bytes[i] = (uint8_t)x;
	}
	for (int i = 0; i < PF_FLOW_SLOTS; i++) {
		table.e[i].seq &= ~1u;
		table.e[i].gen = table.gen;
		table.e[i].expires_ns = UINT64_MAX;
	}
	uint8_t h[40];
	struct pf_flow_key k;
	int passed = 0;
	for (int i = 0; i < 100000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		packet(h, (x & 1) ? 6 : 17, 0x10, 0);
		memcpy(h + 12, &x, 8);
		if (!pf_flow_key_of(h, 40, (uint8_t)(x >> 62), 0, &k))
			continue;
		passed += pf_flow_passes(&table, &k, x >> 1);
	}
	CHECK(passed == 0);
}

static void hash_spreads_flows(void)
{
	/* 2000 connections from one client to one server port land in many slots. */
	static uint8_t used[PF_FLOW_SLOTS];
	memset(used, 0, sizeof(used));
	int distinct = 0;
	for (uint32_t port = 30000; port < 32000; port++) {
		struct pf_flow_key k = { .src = 0x0202000a, .dst = 0x0f02000a, .sport = (uint16_t)port, .dport = 0x5000,
					 .proto = 6 };
		uint32_t slot = pf_flow_hash(&k) & (PF_FLOW_SLOTS - 1);
		distinct += !used[slot];
		used[slot] = 1;
	}
	CHECK(distinct > 1200); /* a uniform hash gives about 1590 of 4096 slots */
}

int main(void)
{
	unit_begin(__FILE__);
	RUN(which_packets_qualify);
	RUN(a_synack_passes_by_its_own_entry);
	RUN(entries_match_expire_and_die_with_the_rules);
	RUN(garbage_never_passes_another_key);
	RUN(hash_spreads_flows);
	return unit_end();
}
