/* IPv4 header checks and checksums, pure C (host unit tests: tests/unit/test_ip_hdr.c).
 * Addresses are in network byte order, as on the wire and in lwIP. */
#pragma once
#include <stddef.h>
#include <stdint.h>

enum iph_verdict {
	IP4_OK = 0,
	IP4_SHORT,     /* fewer bytes than a header, or than the header length says */
	IP4_VERSION,   /* not version 4 */
	IP4_HLEN,      /* header length below 20 */
	IP4_TOTLEN,    /* total length below the header, or beyond what arrived */
	IP4_CSUM,      /* bad header checksum */
	IP4_FRAG,      /* a fragment reaching past 65535 bytes */
	IP4_SRC,       /* (transmit) not one of our addresses */
	IP4_PROTO,     /* (transmit) not the sender's protocol */
	IP4_DST,       /* (transmit) no destination */
	IP4_OPTIONS,   /* (transmit) options: transports send plain 20-byte headers */
	IP4_NVERDICT
};
extern const char *const iph_verdict_name[IP4_NVERDICT];

/* The 16-bit ones' complement sum of n bytes (not inverted), folded, added to sum. */
uint32_t iph_sum(uint32_t sum, const void *b, size_t n);
static inline uint16_t iph_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}
/* The Internet checksum of n bytes (what goes into a checksum field). */
static inline uint16_t iph_csum(const void *b, size_t n) { return (uint16_t)~iph_fold(iph_sum(0, b, n)); }

/* A received packet: avail bytes of it are at b (at least the header must be), frame_len
 * is the length of what arrived from the IP header on. */
enum iph_verdict iph_rx_check(const uint8_t *b, size_t avail, size_t frame_len);
/* A packet a transport asks to send, after ip copied its header to hdr (avail bytes):
 * pkt_len is the length of the whole packet the transport named, proto the transport's
 * protocol, ours[0..nours) our interface addresses. */
enum iph_verdict iph_tx_check(const uint8_t *hdr, size_t avail, size_t pkt_len, uint8_t proto,
			      const uint32_t *ours, size_t nours);

/* "A.B.C.D" -> network order; 0 or -1. end (if given) gets the first byte after it. */
int iph_parse(const char *s, uint32_t *addr, const char **end);
/* Prefix length -> mask in network order (0..32; -1 for more). */
int iph_mask(int plen, uint32_t *mask);
/* Mask (network order) -> prefix length, -1 if not contiguous. */
int iph_plen(uint32_t mask);
/* Writes "A.B.C.D" (at least 16 bytes). */
char *iph_str(uint32_t addr, char *buf);
