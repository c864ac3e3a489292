/* tcp's pure code (servers/tcp/seg.c): the headers of packets ip hands up, the RX ring
 * accounting that opens the receive window only as the application consumes, and the
 * socket-table line. */
#include "unit.h"
#include "seg.h"

static void be16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8), p[1] = (uint8_t)v; }

/* An IPv4/TCP packet 10.0.2.2:5555 -> 10.0.2.15:80 with IP options, TCP options and
 * `payload` bytes; returns its length. */
static size_t make_tcp(uint8_t *b, size_t payload, int ip_opt_words, int tcp_opt_words)
{
	size_t hl = 20 + 4 * (size_t)ip_opt_words, thl = 20 + 4 * (size_t)tcp_opt_words, tot = hl + thl + payload;
	memset(b, 0, tot);
	b[0] = (uint8_t)(0x40 | (hl / 4));
	be16(b + 2, (uint16_t)tot);
	b[8] = 64;
	b[9] = 6;
	b[12] = 10, b[13] = 0, b[14] = 2, b[15] = 2;
	b[16] = 10, b[17] = 0, b[18] = 2, b[19] = 15;
	be16(b + hl, 5555);
	be16(b + hl + 2, 80);
	b[hl + 12] = (uint8_t)((thl / 4) << 4);
	return tot;
}

static void good_packets(void)
{
	uint8_t b[300];
	struct ts_seginfo i;
	size_t n = make_tcp(b, 100, 0, 0);
	CHECK_EQ_I64(ts_tcp_check(b, TS_HDR_COPY, n, &i), TS_SEG_OK);
	CHECK_EQ_U64(i.sport, 0xb315); /* 5555, network order */
	CHECK_EQ_U64(i.dport, 0x5000);
	CHECK_EQ_U64(i.hlen, 20);
	CHECK_EQ_U64(i.thlen, 20);
	CHECK_EQ_U64(i.tot_len, 140);
	n = make_tcp(b, 0, 10, 10); /* maximal IP options, 60-byte TCP header, no data */
	CHECK_EQ_I64(ts_tcp_check(b, TS_HDR_COPY, n, &i), TS_SEG_OK);
	CHECK_EQ_U64(i.hlen, 60);
	CHECK_EQ_U64(i.thlen, 60);
	n = make_tcp(b, 4, 0, 0); /* padding after the IP length */
	CHECK_EQ_I64(ts_tcp_check(b, TS_HDR_COPY, n + 20, &i), TS_SEG_OK);
}

static void malformed_packets(void)
{
	uint8_t b[300];
	struct ts_seginfo i;
	size_t n = make_tcp(b, 100, 0, 0);
	CHECK_EQ_I64(ts_tcp_check(b, TS_HDR_COPY, 19, &i), TS_SEG_SHORT);
	CHECK_EQ_I64(ts_tcp_check(b, TS_HDR_COPY, n - 1, &i), TS_SEG_SHORT);
	CHECK_EQ_I64(ts_tcp_check(b, 30, n, &i), TS_SEG_SHORT); /* the copy lacks the TCP header */
	b[0] = 0x65;
	CHECK_EQ_I64(ts_tcp_check(b, TS_HDR_COPY, n, &i), TS_SEG_VERSION);
	b[0] = 0x44;
	CHECK_EQ_I64(ts_tcp_check(b, TS_HDR_COPY, n, &i), TS_SEG_VERSION);
	n = make_tcp(b, 100, 0, 0);
	b[9] = 17;
	CHECK_EQ_I64(ts_tcp_check(b, TS_HDR_COPY, n, &i), TS_SEG_PROTO);
	n = make_tcp(b, 100, 0, 0);
	b[6] = 0x20; /* more fragments */
	CHECK_EQ_I64(ts_tcp_check(b, TS_HDR_COPY, n, &i), TS_SEG_FRAGMENT);
	b[6] = 0, b[7] = 1; /* an offset */
	CHECK_EQ_I64(ts_tcp_check(b, TS_HDR_COPY, n, &i), TS_SEG_FRAGMENT);
	n = make_tcp(b, 100, 0, 0);
	b[32] = 4 << 4; /* data offset 4 */
	CHECK_EQ_I64(ts_tcp_check(b, TS_HDR_COPY, n, &i), TS_SEG_DOFF);
	n = make_tcp(b, 10, 0, 0);
	b[32] = 15 << 4; /* 60-byte TCP header in a 50-byte packet */
	CHECK_EQ_I64(ts_tcp_check(b, TS_HDR_COPY, n, &i), TS_SEG_DOFF);
	n = make_tcp(b, 0, 0, 0);
	be16(b + 2, 30); /* IP length too short for a TCP header */
	CHECK_EQ_I64(ts_tcp_check(b, TS_HDR_COPY, n, &i), TS_SEG_SHORT);
}

/* A ring of 1000 bytes as sockbuf fills it: messages never wrap, a message that does not fit
 * before the end skips to 0. */
struct model {
	uint64_t produced, released;
	uint64_t ends[64];
	unsigned head, n;
};

static uint64_t put(struct model *m, struct ts_ring *r, uint32_t len)
{
	uint64_t before = m->produced, pos = before % 1000;
	uint64_t skip = len > 1000 - pos ? 1000 - pos : 0;
	m->produced = before + skip + len;
	m->ends[(m->head + m->n++) % 64] = m->produced;
	ts_ring_commit(r, before, m->produced, len);
	return skip;
}

static void release_one(struct model *m)
{
	m->released = m->ends[m->head % 64];
	m->head++, m->n--;
}

static void ring_accounting(void)
{
	struct model m = { 0 };
	struct ts_ring r = { 0 };
	uint64_t data = 0, consumed_data = 0;
	uint32_t lens[64];
	unsigned lh = 0;
	uint64_t seed = 7;
	for (int step = 0; step < 100000; step++) {
		uint32_t len = (uint32_t)(unit_rand(&seed) % 400);
		uint64_t pos = m.produced % 1000, skip = len > 1000 - pos ? 1000 - pos : 0;
		bool room = m.produced - m.released + skip + len <= 1000 && m.n < 60;
		if (room && unit_rand(&seed) % 2) {
			put(&m, &r, len);
			lens[(lh + m.n - 1) % 64] = len;
			data += len;
		} else if (m.n) {
			consumed_data += lens[lh % 64];
			lh++;
			release_one(&m);
		}
		/* what the consumer is done with, in stream bytes, never more than it released */
		CHECK_EQ_U64(ts_ring_consumed(&r, m.released), consumed_data);
		if (UNIT_FAILED())
			return;
	}
	CHECK(data > 1000000);
	/* a lying `released` (past what was produced) is clamped: at most everything */
	CHECK(ts_ring_consumed(&r, m.produced + 5000) <= data);
}

static void full_skip_table(void)
{
	struct ts_ring r = { 0 };
	/* more unreleased skips than the table holds: counted as stream bytes, the window
	 * opens early (by the skips) but never stays shut */
	uint64_t p = 0;
	for (int i = 0; i < 12; i++) {
		uint64_t before = p;
		p += 3 + 10; /* a skip of 3, a message of 10 */
		ts_ring_commit(&r, before, p, 10);
	}
	CHECK_EQ_U64(r.n, 8);
	CHECK_EQ_U64(ts_ring_consumed(&r, p), r.data);
	CHECK_EQ_U64(r.n, 0);
}

static void socket_line(void)
{
	char buf[57];
	struct ts_connview v = { .slot = 3, .sock = 12, .state = "estab", .laddr = 0x0f02000a, .raddr = 0x0202000a,
				 .lport = 80, .rport = 40000, .rxq = 1, .txq = 131072 };
	ts_fmt_conn(buf, sizeof(buf), &v);
	CHECK_STR(buf, "3 12 estab 10.0.2.15:80 10.0.2.2:40000 1 131072");
	v.slot = -1, v.sock = 0, v.state = ts_state_name(10);
	ts_fmt_conn(buf, sizeof(buf), &v);
	CHECK_STR(buf, "- - time_wait 10.0.2.15:80 10.0.2.2:40000 1 131072");
	CHECK_STR(ts_state_name(1), "listen");
	CHECK_STR(ts_state_name(99), "?");
	CHECK_STR(ts_state_name(-1), "?");
	/* the longest line still fits the 56 bytes NETQ carries */
	v = (struct ts_connview){ .slot = 191, .sock = 4000000000u, .state = "fin_wait1", .laddr = 0xffffffff,
				  .raddr = 0xffffffff, .lport = 65535, .rport = 65535, .rxq = 4000000000u, .txq = 4000000000u };
	ts_fmt_conn(buf, sizeof(buf), &v);
	CHECK(strlen(buf) <= 56);
}

/* The ACK war seen over loopback (both windows zero, both ends one byte past the other's
 * window after a probe) and its neighbours that must still reach lwIP. */
static void ack_war(void)
{
	/* what one end of the war received (pcb and header as gdb showed them) */
	struct ts_oow war = { .flags = 0x10, .seqno = 1504619, .ackno = 1898819, .wnd = 0,
			      .rcv_nxt = 1504618, .rcv_wnd = 0, .lastack = 1898819, .snd_wnd = 0 };
	CHECK(ts_oow_dup_ack(&war));
	struct ts_oow o = war;
	o.flags = 0x18; /* PSH changes nothing */
	CHECK(ts_oow_dup_ack(&o));
	o = war, o.seqno = war.rcv_nxt; /* lwIP ACKs this too when its window is zero */
	CHECK(ts_oow_dup_ack(&o));
	o = war, o.wnd = 4096; /* a window update: it must get through */
	CHECK(!ts_oow_dup_ack(&o));
	o = war, o.ackno = war.lastack + 1; /* new data acknowledged */
	CHECK(!ts_oow_dup_ack(&o));
	o = war, o.datalen = 1; /* a probe: lwIP must see it (and answer it) */
	CHECK(!ts_oow_dup_ack(&o));
	for (uint8_t f = 0; f < 0x20; f++) { /* SYN, FIN, RST, or no ACK: never ours to drop */
		o = war, o.flags = f;
		CHECK(ts_oow_dup_ack(&o) == (f == 0x10 || f == 0x18));
	}
	o = war, o.rcv_wnd = 1000; /* an open window: in-window duplicates are lwIP's (dupacks) */
	CHECK(!ts_oow_dup_ack(&o));
	o.seqno = war.rcv_nxt + 1000; /* one past the window */
	CHECK(ts_oow_dup_ack(&o));
	/* serial-number arithmetic across the wrap */
	o = war, o.rcv_nxt = 0xfffffff0u, o.rcv_wnd = 0x20, o.seqno = 0x0000000fu;
	CHECK(!ts_oow_dup_ack(&o));
	o.seqno = 0x00000010u;
	CHECK(ts_oow_dup_ack(&o));
	o.seqno = 0xffffffefu;
	CHECK(ts_oow_dup_ack(&o));
}

static void fuzz(void)
{
	uint64_t seed = 1;
	for (int i = 0; i < 200000; i++) {
		size_t len = unit_rand(&seed) % 120;
		uint8_t *b = malloc(len ? len : 1);
		if (i % 2 && len >= 40) {
			make_tcp(b, len - 40, 0, 0);
			for (int k = 0; k < 3; k++)
				b[unit_rand(&seed) % len] = (uint8_t)unit_rand(&seed);
		} else {
			for (size_t k = 0; k < len; k++)
				b[k] = (uint8_t)unit_rand(&seed);
		}
		size_t plen = len + unit_rand(&seed) % 3 * (unit_rand(&seed) % 100);
		struct ts_seginfo si;
		if (ts_tcp_check(b, len < TS_HDR_COPY ? len : TS_HDR_COPY, plen, &si) == TS_SEG_OK) {
			CHECK(si.tot_len <= plen && si.hlen >= 20 && si.thlen >= 20 && si.hlen + si.thlen <= si.tot_len);
			CHECK((size_t)si.hlen + 20 <= len);
		}
		free(b);
	}
}

int main(void)
{
	unit_begin(__FILE__);
	RUN(good_packets);
	RUN(malformed_packets);
	RUN(ring_accounting);
	RUN(full_skip_table);
	RUN(socket_line);
	RUN(ack_war);
	RUN(fuzz);
	return unit_end();
}
