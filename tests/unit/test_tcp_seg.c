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

/* The reference sum: 16-bit big-endian words, folded. */
static uint16_t ref_sum(const uint8_t *b, size_t n)
{
	uint32_t s = 0;
	for (size_t k = 0; k < n; k += 2)
		s += (uint32_t)b[k] << 8 | (k + 1 < n ? b[k + 1] : 0);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* Fills in both checksums of a packet make_tcp built (tot bytes). */
static void set_csums(uint8_t *b, size_t tot)
{
	size_t hl = (size_t)(b[0] & 15) * 4, tl = tot - hl;
	b[10] = b[11] = 0;
	be16(b + 10, (uint16_t)~ref_sum(b, hl));
	uint8_t *ps = malloc(12 + tl);
	memcpy(ps, b + 12, 8);
	ps[8] = 0, ps[9] = 6;
	be16(ps + 10, (uint16_t)tl);
	b[hl + 16] = b[hl + 17] = 0;
	memcpy(ps + 12, b + hl, tl);
	be16(b + hl + 16, (uint16_t)~ref_sum(ps, 12 + tl));
	free(ps);
}

/* ts_sum16 against the reference at every length and offset, carries included (all ones). */
static void sums(void)
{
	static uint8_t b[5000];
	uint64_t seed = 3;
	for (int round = 0; round < 3000; round++) {
		size_t n = unit_rand(&seed) % 4096, off = unit_rand(&seed) % 2 * 2;
		for (size_t k = 0; k < n; k++)
			b[off + k] = round % 3 == 0 ? 0xff : (uint8_t)unit_rand(&seed);
		uint32_t start = (uint32_t)(unit_rand(&seed) % 0x10000);
		uint16_t mine = (uint16_t)ts_sum16(b + off, n, start);
		uint8_t m2[2];
		memcpy(m2, &mine, 2);
		uint8_t s2[2];
		memcpy(s2, &start, 2);
		/* the reference of the bytes, plus the start value (memory order) */
		uint32_t want = ref_sum(b + off, n) + ((uint32_t)s2[0] << 8 | s2[1]);
		while (want >> 16)
			want = (want & 0xffff) + (want >> 16);
		uint32_t got = (uint32_t)m2[0] << 8 | m2[1];
		CHECK(got == want || (got == 0xffff && want == 0) || (got == 0 && want == 0xffff));
	}
}

static void checksums(void)
{
	uint8_t b[1600];
	uint64_t seed = 7;
	for (size_t pay = 0; pay < 1460; pay += 1 + pay / 3) {
		size_t n = make_tcp(b, pay, (int)(pay % 3), (int)(pay % 4));
		for (size_t k = 20; k < n; k++)
			if (k < 24 || k >= (size_t)(b[0] & 15) * 4 + 20)
				b[k] = (uint8_t)unit_rand(&seed);
		be16(b + 2, (uint16_t)n);
		set_csums(b, n);
		struct ts_seginfo i;
		CHECK_EQ_I64(ts_tcp_check(b, TS_HDR_COPY, n, &i), TS_SEG_OK);
		CHECK(ts_csum_ok(b, &i));
		/* our sum agrees with the reference, in memory order */
		uint16_t mine = (uint16_t)ts_sum16(b, n, 0);
		uint8_t m2[2];
		memcpy(m2, &mine, 2);
		CHECK_EQ_U64((uint32_t)m2[0] << 8 | m2[1], ref_sum(b, n));
		size_t k = unit_rand(&seed) % n;
		b[k] ^= (uint8_t)(1 + unit_rand(&seed) % 255); /* any changed byte is seen */
		if (ts_tcp_check(b, TS_HDR_COPY, n, &i) == TS_SEG_OK)
			CHECK(!ts_csum_ok(b, &i));
	}
}

/* A data segment of the stream 10.0.2.2:5555 -> 10.0.2.15:80: seq, ack, flags, window. */
static size_t seg(uint8_t *b, uint32_t seq, uint32_t ack, uint8_t flags, uint16_t wnd, size_t pay,
		  struct ts_seginfo *i)
{
	size_t n = make_tcp(b, pay, 0, 0);
	be16(b + 24, (uint16_t)(seq >> 16)), be16(b + 26, (uint16_t)seq);
	be16(b + 28, (uint16_t)(ack >> 16)), be16(b + 30, (uint16_t)ack);
	b[33] = flags;
	be16(b + 34, wnd);
	set_csums(b, n);
	CHECK_EQ_I64(ts_tcp_check(b, TS_HDR_COPY, n, i), TS_SEG_OK);
	return n;
}

static void receive_offload(void)
{
	uint8_t b[5000];
	struct ts_seginfo i;
	struct ts_gro g = { 0 };
	seg(b, 1000, 77, 0x10, 500, 1000, &i);
	CHECK(ts_gro_candidate(b, &i));
	ts_gro_start(&g, b, &i, 1000);
	seg(b, 2000, 77, 0x10, 600, 1000, &i);
	CHECK(ts_gro_append(&g, b, &i, 1000));
	seg(b, 3500, 77, 0x10, 600, 1000, &i); /* a gap */
	CHECK(!ts_gro_append(&g, b, &i, 1000));
	seg(b, 3000, 78, 0x10, 600, 1000, &i); /* another ACK */
	CHECK(!ts_gro_append(&g, b, &i, 1000));
	seg(b, 3000, 77, 0x10, 600, 1000, &i);
	b[1] = 3; /* ECN CE */
	CHECK(!ts_gro_append(&g, b, &i, 1000));
	seg(b, 3000, 77, 0x10, 600, 1000, &i);
	b[23] = 81; /* another port */
	CHECK_EQ_I64(ts_tcp_check(b, TS_HDR_COPY, 1040, &i), TS_SEG_OK);
	CHECK(!ts_gro_append(&g, b, &i, 1000));
	seg(b, 3000, 77, 0x18, 700, 500, &i); /* PSH: the last one */
	CHECK(ts_gro_append(&g, b, &i, 500));
	seg(b, 3500, 77, 0x10, 700, 500, &i);
	CHECK(!ts_gro_append(&g, b, &i, 500));
	CHECK_EQ_U64(g.n, 3);
	CHECK_EQ_U64(g.payload, 2500);
	ts_gro_finish(&g);
	CHECK_EQ_U64(g.si.tot_len, 2540);
	CHECK_EQ_U64((uint32_t)g.hdr[2] << 8 | g.hdr[3], 2540);
	CHECK_EQ_U64(ts_sum16(g.hdr, 20, 0), 0xffff); /* a valid IP header again */
	CHECK_EQ_U64(g.hdr[33], 0x18);
	CHECK_EQ_U64((uint32_t)g.hdr[34] << 8 | g.hdr[35], 700);
	CHECK_EQ_U64((uint32_t)g.hdr[24] << 24 | (uint32_t)g.hdr[25] << 16 | (uint32_t)g.hdr[26] << 8 | g.hdr[27], 1000);
	/* what is never merged */
	seg(b, 1, 1, 0x12, 1, 10, &i);
	CHECK(!ts_gro_candidate(b, &i)); /* SYN */
	seg(b, 1, 1, 0x11, 1, 10, &i);
	CHECK(!ts_gro_candidate(b, &i)); /* FIN */
	seg(b, 1, 1, 0x10, 1, 0, &i);
	CHECK(!ts_gro_candidate(b, &i)); /* no data */
	size_t n = make_tcp(b, 10, 1, 0);
	b[33 + 4] = 0x10;
	CHECK_EQ_I64(ts_tcp_check(b, TS_HDR_COPY, n, &i), TS_SEG_OK);
	CHECK(!ts_gro_candidate(b, &i)); /* IP options */
	/* at most TS_GRO_SEGS segments and TS_GRO_BYTES bytes */
	seg(b, 0, 5, 0x10, 1, 100, &i);
	ts_gro_start(&g, b, &i, 100);
	uint32_t k = 1;
	for (; k < 100; k++) {
		seg(b, k * 100, 5, 0x10, 1, 100, &i);
		if (!ts_gro_append(&g, b, &i, 100))
			break;
	}
	CHECK_EQ_U64(k, TS_GRO_SEGS);
	seg(b, 0, 5, 0x10, 1, 4000, &i);
	ts_gro_start(&g, b, &i, 4000);
	for (k = 1; k < 100; k++) {
		seg(b, k * 4000, 5, 0x10, 1, 4000, &i);
		if (!ts_gro_append(&g, b, &i, 4000))
			break;
	}
	CHECK_EQ_U64(k, 16);
	CHECK(40 + g.payload <= TS_GRO_BYTES && 40 + g.payload + 4000 > TS_GRO_BYTES);
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
	RUN(sums);
	RUN(checksums);
	RUN(receive_offload);
	return unit_end();
}
