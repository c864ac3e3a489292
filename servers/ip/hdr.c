/* IPv4 header checks and checksums (hdr.h). */
#include "hdr.h"

const char *const iph_verdict_name[IP4_NVERDICT] = {
	"ok", "short", "version", "hlen", "totlen", "csum", "frag", "src", "proto", "dst", "options",
};

static uint32_t get16(const uint8_t *b) { return (uint32_t)b[0] << 8 | b[1]; }

uint32_t iph_sum(uint32_t sum, const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t s = sum;
	for (; n >= 2; b += 2, n -= 2)
		s += get16(b);
	if (n)
		s += (uint32_t)b[0] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint32_t)s;
}

static enum iph_verdict common(const uint8_t *b, size_t avail, size_t len)
{
	if (avail < 20)
		return IP4_SHORT;
	if (b[0] >> 4 != 4)
		return IP4_VERSION;
	size_t hlen = (size_t)(b[0] & 15) * 4;
	if (hlen < 20)
		return IP4_HLEN;
	if (avail < hlen)
		return IP4_SHORT;
	size_t tot = get16(b + 2);
	if (tot < hlen || tot > len)
		return IP4_TOTLEN;
	if (iph_fold(iph_sum(0, b, hlen)) != 0xffff)
		return IP4_CSUM;
	/* Fragment offset in 8-byte units: the fragment must end inside 65535 bytes. */
	size_t off = (get16(b + 6) & 0x1fff) * 8u;
	if (off + (tot - hlen) > 65535)
		return IP4_FRAG;
	return IP4_OK;
}

enum iph_verdict iph_rx_check(const uint8_t *b, size_t avail, size_t frame_len)
{
	return common(b, avail, frame_len);
}

enum iph_verdict iph_tx_check(const uint8_t *hdr, size_t avail, size_t pkt_len, uint8_t proto,
			      const uint32_t *ours, size_t nours)
{
	if (avail >= 1 && (hdr[0] & 15) != 5 && hdr[0] >> 4 == 4 && (hdr[0] & 15) > 5)
		return IP4_OPTIONS;
	enum iph_verdict v = common(hdr, avail, pkt_len);
	if (v != IP4_OK)
		return v;
	if (get16(hdr + 2) != pkt_len)
		return IP4_TOTLEN;
	if (get16(hdr + 6) & 0x3fff)
		return IP4_FRAG; /* ip fragments, transports do not */
	if (hdr[9] != proto)
		return IP4_PROTO;
	uint32_t src, dst;
	__builtin_memcpy(&src, hdr + 12, 4);
	__builtin_memcpy(&dst, hdr + 16, 4);
	if (dst == 0)
		return IP4_DST;
	for (size_t i = 0; i < nours; i++)
		if (ours[i] && ours[i] == src)
			return IP4_OK;
	return IP4_SRC;
}

int iph_parse(const char *s, uint32_t *addr, const char **end)
{
	uint8_t a[4];
	for (int i = 0; i < 4; i++) {
		if (i && *s++ != '.')
			return -1;
		if (*s < '0' || *s > '9')
			return -1;
		unsigned v = 0;
		for (int d = 0; *s >= '0' && *s <= '9'; d++, s++) {
			v = v * 10 + (unsigned)(*s - '0');
			if (d >= 3 || v > 255)
				return -1;
		}
		a[i] = (uint8_t)v;
	}
	__builtin_memcpy(addr, a, 4);
	if (end)
		*end = s;
	return 0;
}

int iph_mask(int plen, uint32_t *mask)
{
	if (plen < 0 || plen > 32)
		return -1;
	uint32_t h = plen ? 0xffffffffu << (32 - plen) : 0;
	uint8_t b[4] = { (uint8_t)(h >> 24), (uint8_t)(h >> 16), (uint8_t)(h >> 8), (uint8_t)h };
	__builtin_memcpy(mask, b, 4);
	return 0;
}

int iph_plen(uint32_t mask)
{
	uint8_t b[4];
	__builtin_memcpy(b, &mask, 4);
	uint32_t h = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
	int n = 0;
	while (n < 32 && (h & (0x80000000u >> n)))
		n++;
	return (n == 32 || !(h << n)) ? n : -1;
}

char *iph_str(uint32_t addr, char *buf)
{
	uint8_t a[4];
	__builtin_memcpy(a, &addr, 4);
	char *p = buf;
	for (int i = 0; i < 4; i++) {
		unsigned v = a[i];
		if (i)
			*p++ = '.';
		if (v >= 100)
			*p++ = (char)('0' + v / 100);
		if (v >= 10)
			*p++ = (char)('0' + v / 10 % 10);
		*p++ = (char)('0' + v % 10);
	}
	*p = 0;
	return buf;
}
