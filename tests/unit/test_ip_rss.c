/* ip's flows over a driver's queues (servers/ip/rss.c): which frames are flows, the key the
 * same both ways, a flow's frames sent on the queue it arrives on, moves counted. */
#include "unit.h"
#include "rss.h"
#include <string.h>

/* An Ethernet + IPv4 + ports frame: src/dst addresses and ports as given (host order). */
static uint32_t frame(uint8_t *f, uint8_t proto, uint32_t src, uint16_t sport, uint32_t dst, uint16_t dport)
{
	memset(f, 0, 64);
	f[12] = 0x08, f[13] = 0x00;
	uint8_t *h = f + 14;
	h[0] = 0x45, h[9] = proto;
	for (int i = 0; i < 4; i++) {
		h[12 + i] = (uint8_t)(src >> (24 - 8 * i));
		h[16 + i] = (uint8_t)(dst >> (24 - 8 * i));
	}
	h[20] = (uint8_t)(sport >> 8), h[21] = (uint8_t)sport;
	h[22] = (uint8_t)(dport >> 8), h[23] = (uint8_t)dport;
	return 64;
}

static void flows_of_frames(void)
{
	uint8_t f[64];
	struct rss_key rx, tx;
	uint32_t n = frame(f, 6, 0x0a000202, 40000, 0x0a00020f, 80);
	REQUIRE(rss_flow_of(f, n, true, &rx));
	n = frame(f, 6, 0x0a00020f, 80, 0x0a000202, 40000);
	REQUIRE(rss_flow_of(f, n, false, &tx));
	CHECK(!memcmp(&rx, &tx, sizeof(rx))); /* the answer is the same flow */
	CHECK_EQ_U64(rx.proto, 6);
	n = frame(f, 17, 1, 53, 2, 5353);
	CHECK(rss_flow_of(f, n, true, &rx));
	n = frame(f, 1, 1, 0, 2, 0); /* ICMP: no ports */
	CHECK(!rss_flow_of(f, n, true, &rx));
	n = frame(f, 6, 1, 2, 3, 4);
	f[14 + 7] = 8; /* a later fragment: no ports in it */
	CHECK(!rss_flow_of(f, n, true, &rx));
	n = frame(f, 6, 1, 2, 3, 4);
	f[12] = 0x86, f[13] = 0xdd; /* IPv6 */
	CHECK(!rss_flow_of(f, n, true, &rx));
	n = frame(f, 6, 1, 2, 3, 4);
	f[14] = 0x4f; /* a header of 60 bytes: the ports beyond the frame */
	CHECK(!rss_flow_of(f, n, true, &rx));
	CHECK(!rss_flow_of(f, 14 + 20, true, &rx)); /* no room for ports */
	CHECK(!rss_flow_of(f, 10, true, &rx));
}

static void tx_follows_rx_and_moves_count(void)
{
	static struct rss_table t;
	memset(&t, 0, sizeof(t));
	uint8_t f[64];
	struct rss_key k[64];
	for (int i = 0; i < 64; i++) {
		uint32_t n = frame(f, 6, 0x0a000202, (uint16_t)(40000 + i), 0x0a00020f, 80);
		REQUIRE(rss_flow_of(f, n, true, &k[i]));
		CHECK(!rss_note_rx(&t, &k[i], (unsigned)i % 4));
	}
	uint64_t sum = 0;
	for (int q = 0; q < 4; q++)
		sum += t.flows[q];
	CHECK(sum >= 48 && sum <= 64); /* (two flows may share an entry) */
	int followed = 0;
	for (int i = 0; i < 64; i++)
		followed += rss_tx_queue(&t, &k[i], 4) == (unsigned)i % 4;
	CHECK(followed >= 48);
	/* The last flow noted in an entry keeps its queue; again on another queue: a move. */
	CHECK(!rss_note_rx(&t, &k[63], 3));
	CHECK(rss_note_rx(&t, &k[63], 1));
	CHECK(!rss_note_rx(&t, &k[63], 1));
	CHECK_EQ_U64(rss_tx_queue(&t, &k[63], 4), 1);
	/* Fewer queues than the flow's: a hash within range, the same every time. */
	unsigned q = rss_tx_queue(&t, &k[63], 1);
	CHECK_EQ_U64(q, 0);
	CHECK(!rss_note_rx(&t, &k[63], RSS_MAXQ)); /* out of range: ignored */
	CHECK_EQ_U64(rss_tx_queue(&t, &k[63], 4), 1);
}

static void unknown_flows_spread(void)
{
	static struct rss_table t;
	memset(&t, 0, sizeof(t));
	unsigned per[4] = { 0 };
	for (int i = 0; i < 400; i++) {
		struct rss_key k = { .raddr = 0x0202000a, .laddr = 0x0f02000a, .rport = (uint16_t)(1024 + i),
				     .lport = 0x5000, .proto = 6 };
		unsigned q = rss_tx_queue(&t, &k, 4);
		REQUIRE(q < 4);
		CHECK_EQ_U64(rss_tx_queue(&t, &k, 4), q);
		per[q]++;
	}
	for (int q = 0; q < 4; q++)
		CHECK(per[q] >= 50);
}

int main(void)
{
	unit_begin(__FILE__);
	RUN(flows_of_frames);
	RUN(tx_follows_rx_and_moves_count);
	RUN(unknown_flows_spread);
	return unit_end();
}
