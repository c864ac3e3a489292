/* ip's IPv4 header checks (servers/ip/hdr.c): what ip drops before pf and lwIP see a packet,
 * and what it refuses from a transport. */
#include "unit.h"
#include "lx_abi.h"
#include "hdr.h"
#include <arpa/inet.h>

static void mk(uint8_t *b, uint16_t tot, uint16_t frag, uint8_t proto, const char *src, const char *dst)
{
	memset(b, 0, 20);
	b[0] = 0x45, b[8] = 64, b[9] = proto;
	b[2] = (uint8_t)(tot >> 8), b[3] = (uint8_t)tot;
	b[6] = (uint8_t)(frag >> 8), b[7] = (uint8_t)frag;
	uint32_t a;
	inet_pton(LX_AF_INET, src, &a), memcpy(b + 12, &a, 4);
	inet_pton(LX_AF_INET, dst, &a), memcpy(b + 16, &a, 4);
	uint16_t c = iph_csum(b, 20);
	b[10] = (uint8_t)(c >> 8), b[11] = (uint8_t)c;
}

static void good_packet_passes(void)
{
	uint8_t b[64];
	mk(b, 60, 0, 17, "10.0.2.2", "10.0.2.15");
	CHECK_EQ_U64(iph_rx_check(b, 60, 60), IP4_OK);
	CHECK_EQ_U64(iph_rx_check(b, 60, 64), IP4_OK); /* Ethernet padding after the packet */
	CHECK_EQ_U64(iph_fold(iph_sum(0, b, 20)), 0xffff);
}

static void malformed_headers_are_named(void)
{
	uint8_t b[64];
	mk(b, 60, 0, 17, "10.0.2.2", "10.0.2.15");
	CHECK_EQ_U64(iph_rx_check(b, 19, 19), IP4_SHORT);
	CHECK_EQ_U64(iph_rx_check(b, 60, 40), IP4_TOTLEN);   /* truncated */
	b[0] = 0x65;
	CHECK_EQ_U64(iph_rx_check(b, 60, 60), IP4_VERSION);
	b[0] = 0x44;
	CHECK_EQ_U64(iph_rx_check(b, 60, 60), IP4_HLEN);
	b[0] = 0x4f; /* 60-byte header in a 24-byte buffer */
	CHECK_EQ_U64(iph_rx_check(b, 24, 60), IP4_SHORT);
	mk(b, 10, 0, 17, "10.0.2.2", "10.0.2.15");
	CHECK_EQ_U64(iph_rx_check(b, 60, 60), IP4_TOTLEN);   /* shorter than its header */
	mk(b, 60, 0, 17, "10.0.2.2", "10.0.2.15");
	b[11] ^= 1;
	CHECK_EQ_U64(iph_rx_check(b, 60, 60), IP4_CSUM);
	/* ping of death: the last fragment would end past 65535 */
	mk(b, 1500, 8100, 1, "10.0.2.2", "10.0.2.15");
	CHECK_EQ_U64(iph_rx_check(b, 20, 1500), IP4_FRAG);
	mk(b, 1500, 8000, 1, "10.0.2.2", "10.0.2.15");
	CHECK_EQ_U64(iph_rx_check(b, 20, 1500), IP4_OK);
}

static void every_byte_flip_is_caught_or_harmless(void)
{
	/* A flipped bit anywhere in the header fails the checksum, unless it is one the
	 * checks do not need (none: the checksum covers the whole header). */
	uint8_t b[64], c[64];
	mk(b, 40, 0, 6, "192.168.1.1", "10.0.2.15");
	for (int i = 0; i < 20 * 8; i++) {
		memcpy(c, b, sizeof(c));
		c[i / 8] ^= (uint8_t)(1 << (i % 8));
		CHECK(iph_rx_check(c, 40, 40) != IP4_OK);
	}
}

static void transmit_checks(void)
{
	uint8_t b[64];
	uint32_t ours[2];
	inet_pton(LX_AF_INET, "10.0.2.15", &ours[0]);
	ours[1] = 0;
	mk(b, 48, 0x4000, 17, "10.0.2.15", "10.0.2.2"); /* DF is fine */
	CHECK_EQ_U64(iph_tx_check(b, 20, 48, 17, ours, 2), IP4_OK);
	CHECK_EQ_U64(iph_tx_check(b, 20, 49, 17, ours, 2), IP4_TOTLEN);
	CHECK_EQ_U64(iph_tx_check(b, 20, 48, 6, ours, 2), IP4_PROTO);
	mk(b, 48, 0, 17, "10.0.2.16", "10.0.2.2");
	CHECK_EQ_U64(iph_tx_check(b, 20, 48, 17, ours, 2), IP4_SRC);
	mk(b, 48, 0, 17, "0.0.0.0", "10.0.2.2");
	CHECK_EQ_U64(iph_tx_check(b, 20, 48, 17, ours, 2), IP4_SRC); /* unconfigured slot 0 never matches */
	mk(b, 48, 0, 17, "10.0.2.15", "0.0.0.0");
	CHECK_EQ_U64(iph_tx_check(b, 20, 48, 17, ours, 2), IP4_DST);
	mk(b, 48, 0x2000, 17, "10.0.2.15", "10.0.2.2");
	CHECK_EQ_U64(iph_tx_check(b, 20, 48, 17, ours, 2), IP4_FRAG);
	b[0] = 0x46;
	CHECK_EQ_U64(iph_tx_check(b, 20, 48, 17, ours, 2), IP4_OPTIONS);
}

static void addresses_parse_and_print(void)
{
	uint32_t a, m;
	const char *end;
	char s[16];
	REQUIRE(iph_parse("10.0.2.15/24", &a, &end) == 0);
	CHECK_STR(end, "/24");
	CHECK_STR(iph_str(a, s), "10.0.2.15");
	CHECK(iph_parse("256.1.1.1", &a, NULL) < 0);
	CHECK(iph_parse("1.2.3", &a, NULL) < 0);
	CHECK(iph_parse("1..2.3", &a, NULL) < 0);
	CHECK(iph_parse("0001.2.3.4", &a, NULL) < 0);
	REQUIRE(iph_mask(24, &m) == 0);
	CHECK_EQ_U64(m, htonl(0xffffff00));
	CHECK_EQ_I64(iph_plen(m), 24);
	CHECK(iph_mask(33, &m) < 0);
	CHECK_EQ_I64(iph_plen(htonl(0xff00ff00)), -1);
	CHECK_EQ_I64(iph_plen(0), 0);
	CHECK_EQ_I64(iph_plen(0xffffffff), 32);
	CHECK_STR(iph_str(htonl(0xc0a80001), s), "192.168.0.1");
}

int main(void)
{
	unit_begin(__FILE__);
	RUN(good_packet_passes);
	RUN(malformed_headers_are_named);
	RUN(every_byte_flip_is_caught_or_harmless);
	RUN(transmit_checks);
	RUN(addresses_parse_and_print);
	return unit_end();
}
