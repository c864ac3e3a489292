/* udp's pure checks (servers/udp/pkt.c): the headers of packets ip hands up, ICMP errors,
 * the TX descriptors an application writes, and the socket-table line. */
#include "unit.h"
#include "pkt.h"

static void be16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8), p[1] = (uint8_t)v; }

/* An IPv4/UDP packet 10.0.2.2:5555 -> 10.0.2.15:7 with `payload` bytes; returns its length. */
static size_t make_udp(uint8_t *b, size_t payload, int opt_words)
{
	size_t hl = 20 + 4 * (size_t)opt_words, tot = hl + 8 + payload;
	memset(b, 0, tot);
	b[0] = (uint8_t)(0x40 | (hl / 4));
	be16(b + 2, (uint16_t)tot);
	b[8] = 64;
	b[9] = 17;
	b[12] = 10, b[13] = 0, b[14] = 2, b[15] = 2;
	b[16] = 10, b[17] = 0, b[18] = 2, b[19] = 15;
	be16(b + hl, 5555);
	be16(b + hl + 2, 7);
	be16(b + hl + 4, (uint16_t)(8 + payload));
	return tot;
}

static void good_packets(void)
{
	uint8_t b[200];
	struct us_udpinfo u;
	size_t n = make_udp(b, 100, 0);
	CHECK_EQ_I64(us_udp_check(b, US_HDR_COPY, n, &u), US_PKT_OK);
	CHECK_EQ_U64(us_ntohs(u.sport), 5555);
	CHECK_EQ_U64(us_ntohs(u.dport), 7);
	CHECK_EQ_U64(us_ntohl(u.src), 0x0a000202);
	CHECK_EQ_U64(us_ntohl(u.dst), 0x0a00020f);
	CHECK_EQ_U64(u.hlen, 20);
	CHECK_EQ_U64(u.ulen, 108);
	CHECK_EQ_U64(u.tot_len, 128);
	/* options, an empty datagram, and a buffer longer than the IP length (padding) */
	n = make_udp(b, 0, 10);
	CHECK_EQ_I64(us_udp_check(b, US_HDR_COPY, n, &u), US_PKT_OK);
	CHECK_EQ_U64(u.hlen, 60);
	n = make_udp(b, 4, 0);
	CHECK_EQ_I64(us_udp_check(b, US_HDR_COPY, n + 20, &u), US_PKT_OK);
	CHECK_EQ_U64(u.tot_len, 32);
}

static void malformed_packets(void)
{
	uint8_t b[200];
	struct us_udpinfo u;
	size_t n = make_udp(b, 100, 0);
	CHECK_EQ_I64(us_udp_check(b, US_HDR_COPY, 19, &u), US_PKT_SHORT);
	CHECK_EQ_I64(us_udp_check(b, US_HDR_COPY, n - 1, &u), US_PKT_SHORT);  /* truncated */
	CHECK_EQ_I64(us_udp_check(b, 24, n, &u), US_PKT_SHORT);               /* copy too short */
	b[0] = 0x65;
	CHECK_EQ_I64(us_udp_check(b, US_HDR_COPY, n, &u), US_PKT_VERSION);
	b[0] = 0x44;
	CHECK_EQ_I64(us_udp_check(b, US_HDR_COPY, n, &u), US_PKT_VERSION);
	b[0] = 0x4f; /* 60-byte header in a packet whose length says less */
	be16(b + 2, 40);
	CHECK_EQ_I64(us_udp_check(b, US_HDR_COPY, n, &u), US_PKT_SHORT);
	n = make_udp(b, 100, 0);
	b[9] = 6;
	CHECK_EQ_I64(us_udp_check(b, US_HDR_COPY, n, &u), US_PKT_PROTO);
	n = make_udp(b, 100, 0);
	b[6] = 0x20; /* MF */
	CHECK_EQ_I64(us_udp_check(b, US_HDR_COPY, n, &u), US_PKT_FRAGMENT);
	b[6] = 0, b[7] = 1; /* offset 8 */
	CHECK_EQ_I64(us_udp_check(b, US_HDR_COPY, n, &u), US_PKT_FRAGMENT);
	b[6] = 0x40, b[7] = 0; /* DF is fine */
	CHECK_EQ_I64(us_udp_check(b, US_HDR_COPY, n, &u), US_PKT_OK);
	be16(b + 24, 7);
	CHECK_EQ_I64(us_udp_check(b, US_HDR_COPY, n, &u), US_PKT_UDPLEN);
	be16(b + 24, 109);
	CHECK_EQ_I64(us_udp_check(b, US_HDR_COPY, n, &u), US_PKT_UDPLEN);
	be16(b + 24, 100);
	CHECK_EQ_I64(us_udp_check(b, US_HDR_COPY, n, &u), US_PKT_UDPLEN);
	be16(b + 2, 27); /* IP length below header + UDP header */
	CHECK_EQ_I64(us_udp_check(b, US_HDR_COPY, n, &u), US_PKT_SHORT);
}

/* ICMP port unreachable from 10.0.2.2 about our datagram 10.0.2.15:40000 -> 10.0.2.2:9. */
static size_t make_icmp(uint8_t *b, uint8_t type, uint8_t code, uint8_t inner_proto)
{
	memset(b, 0, 64);
	b[0] = 0x45, b[9] = 1;
	be16(b + 2, 56);
	b[20] = type, b[21] = code;
	uint8_t *in = b + 28;
	in[0] = 0x45, in[9] = inner_proto;
	in[12] = 10, in[13] = 0, in[14] = 2, in[15] = 15;
	in[16] = 10, in[17] = 0, in[18] = 2, in[19] = 2;
	be16(in + 20, 40000);
	be16(in + 22, 9);
	return 56;
}

static void icmp_errors(void)
{
	uint8_t b[64];
	struct us_icmperr e;
	size_t n = make_icmp(b, 3, 3, 17);
	REQUIRE(us_icmp_parse(b, n, &e) == 0);
	CHECK_EQ_U64(e.err, 111); /* ECONNREFUSED */
	CHECK_EQ_U64(us_ntohs(e.lport), 40000);
	CHECK_EQ_U64(us_ntohs(e.rport), 9);
	CHECK_EQ_U64(us_ntohl(e.lsrc), 0x0a00020f);
	CHECK_EQ_U64(us_ntohl(e.rdst), 0x0a000202);
	make_icmp(b, 3, 4, 17);
	REQUIRE(us_icmp_parse(b, n, &e) == 0);
	CHECK_EQ_U64(e.err, 90); /* EMSGSIZE */
	make_icmp(b, 11, 0, 17);
	REQUIRE(us_icmp_parse(b, n, &e) == 0);
	CHECK_EQ_U64(e.err, 113);
	make_icmp(b, 0, 0, 17); /* an echo reply is no error */
	CHECK_EQ_I64(us_icmp_parse(b, n, &e), -1);
	make_icmp(b, 3, 3, 6); /* about TCP */
	CHECK_EQ_I64(us_icmp_parse(b, n, &e), -1);
	make_icmp(b, 3, 3, 17);
	CHECK_EQ_I64(us_icmp_parse(b, n - 1, &e), -1); /* the UDP ports cut off */
	b[9] = 17;
	CHECK_EQ_I64(us_icmp_parse(b, n, &e), -1); /* not ICMP */
}

static void tx_descriptors(void)
{
	uint8_t a[16] = { 10, 0, 2, 2 }, zero[16] = { 0 };
	uint32_t da = 0;
	uint16_t dp = 0, p9 = us_ntohs(9);
	uint32_t peer = 0x0302000a;
	CHECK_EQ_I64(us_txd_check(2, a, p9, 100, false, 0, 0, &da, &dp), US_TXD_OK);
	CHECK_EQ_U64(us_ntohl(da), 0x0a000202);
	CHECK_EQ_U64(dp, p9);
	CHECK_EQ_I64(us_txd_check(2, a, p9, US_UDP_MAX, false, 0, 0, &da, &dp), US_TXD_OK);
	CHECK_EQ_I64(us_txd_check(2, a, p9, US_UDP_MAX + 1, false, 0, 0, &da, &dp), US_TXD_SIZE);
	CHECK_EQ_I64(us_txd_check(2, a, p9, 0xffffffffu, true, peer, p9, &da, &dp), US_TXD_SIZE);
	CHECK_EQ_I64(us_txd_check(0, zero, 0, 10, false, 0, 0, &da, &dp), US_TXD_NODEST);
	CHECK_EQ_I64(us_txd_check(0, zero, 0, 10, true, peer, p9, &da, &dp), US_TXD_OK);
	CHECK_EQ_U64(da, peer);
	CHECK_EQ_I64(us_txd_check(10, a, p9, 10, true, peer, p9, &da, &dp), US_TXD_FAMILY);
	CHECK_EQ_I64(us_txd_check(2, a, 0, 10, false, 0, 0, &da, &dp), US_TXD_PORT);
	CHECK_EQ_I64(us_txd_check(2, zero, p9, 10, false, 0, 0, &da, &dp), US_TXD_ADDR);
	CHECK_EQ_I64(us_txd_errno(US_TXD_NODEST), 89);
	CHECK_EQ_I64(us_txd_errno(US_TXD_SIZE), 90);
	CHECK_EQ_I64(us_txd_errno(US_TXD_FAMILY), 97);
	CHECK_EQ_I64(us_txd_errno(US_TXD_PORT), 22);
}

static void socket_line(void)
{
	char buf[56];
	struct us_sockview v = { .slot = 3, .sock = 17, .laddr = 0, .lport = us_ntohs(7), .attached = true };
	us_fmt_sock(buf, sizeof(buf), &v);
	CHECK_STR(buf, "3 17 0.0.0.0:7 *:* up");
	v = (struct us_sockview){ .slot = 47, .sock = 4000000000u, .laddr = 0xff02000a, .lport = us_ntohs(65535),
				  .raddr = 0xffffffff, .rport = us_ntohs(65535), .corrupt = true, .broadcast = true };
	us_fmt_sock(buf, sizeof(buf), &v);
	CHECK(strlen(buf) < sizeof(buf));
	CHECK(!strncmp(buf, "47 4000000000 10.0.2.255:65535 255.255.255.255:65535", 52));
}

/* Random and mutated headers: never a read outside the bytes given (ASan), and anything
 * accepted is self-consistent. */
static void fuzz(void)
{
	uint64_t seed = 0x5eed;
	uint8_t base[200];
	size_t n0 = make_udp(base, 60, 0);
	for (int i = 0; i < 200000; i++) {
		size_t len = unit_rand(&seed) % 100;
		uint8_t *b = malloc(len ? len : 1);
		if (i & 1) {
			memcpy(b, base, len < n0 ? len : n0);
			for (int k = 0; k < 3; k++)
				if (len)
					b[unit_rand(&seed) % len] = (uint8_t)unit_rand(&seed);
		} else {
			for (size_t k = 0; k < len; k++)
				b[k] = (uint8_t)unit_rand(&seed);
		}
		size_t plen = len + unit_rand(&seed) % 3 * (unit_rand(&seed) % 100);
		struct us_udpinfo u;
		if (us_udp_check(b, len < US_HDR_COPY ? len : US_HDR_COPY, plen, &u) == US_PKT_OK) {
			CHECK(u.tot_len <= plen && u.hlen >= 20 && u.ulen >= 8 && u.hlen + u.ulen == u.tot_len);
			CHECK((size_t)u.hlen + 8 <= len);
		}
		struct us_icmperr e;
		us_icmp_parse(b, len, &e);
		free(b);
	}
}

int main(void)
{
	unit_begin(__FILE__);
	RUN(good_packets);
	RUN(malformed_packets);
	RUN(icmp_errors);
	RUN(tx_descriptors);
	RUN(socket_line);
	RUN(fuzz);
	return unit_end();
}
