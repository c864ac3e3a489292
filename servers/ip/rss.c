/* Flows over a driver's queues (rss.h). */
#include "rss.h"
#include <string.h>

static uint16_t be16(const uint8_t *b) { return (uint16_t)(b[0] << 8 | b[1]); }

bool rss_flow_of(const uint8_t *f, uint32_t len, bool rx, struct rss_key *k)
{
	if (len < 14 + 20 || be16(f + 12) != 0x0800)
		return false;
	const uint8_t *h = f + 14;
	uint32_t ihl = (uint32_t)(h[0] & 0xf) * 4;
	uint8_t proto = h[9];
	if ((h[0] >> 4) != 4 || ihl < 20 || (proto != 6 && proto != 17) || (be16(h + 6) & 0x1fff) ||
	    14 + ihl + 4 > len)
		return false; /* (a later fragment has no ports) */
	uint32_t src, dst;
	memcpy(&src, h + 12, 4);
	memcpy(&dst, h + 16, 4);
	uint16_t sport, dport;
	memcpy(&sport, h + ihl, 2);
	memcpy(&dport, h + ihl + 2, 2);
	memset(k, 0, sizeof(*k));
	k->proto = proto;
	k->raddr = rx ? src : dst, k->rport = rx ? sport : dport;
	k->laddr = rx ? dst : src, k->lport = rx ? dport : sport;
	return true;
}

static uint32_t hash(const struct rss_key *k)
{
	/* FNV-1a over the fields: cheap, and spreads ports that differ in one bit */
	uint32_t h = 2166136261u;
	uint32_t w[4] = { k->raddr, k->laddr, (uint32_t)k->rport << 16 | k->lport, k->proto };
	for (int i = 0; i < 4; i++)
		for (int b = 0; b < 32; b += 8)
			h = (h ^ ((w[i] >> b) & 0xff)) * 16777619u;
	return h;
}

static bool same(const struct rss_key *a, const struct rss_key *b)
{
	return a->raddr == b->raddr && a->laddr == b->laddr && a->rport == b->rport && a->lport == b->lport &&
	       a->proto == b->proto;
}

bool rss_note_rx(struct rss_table *t, const struct rss_key *k, unsigned q)
{
	if (q >= RSS_MAXQ)
		return false;
	uint32_t i = hash(k) % RSS_FLOWS;
	if (t->e[i].used && same(&t->e[i].k, k)) {
		bool moved = t->e[i].q != q;
		t->e[i].q = (uint8_t)q;
		return moved;
	}
	t->e[i].k = *k;
	t->e[i].q = (uint8_t)q;
	t->e[i].used = true;
	t->flows[q]++;
	return false;
}

unsigned rss_tx_queue(const struct rss_table *t, const struct rss_key *k, unsigned nq)
{
	uint32_t h = hash(k), i = h % RSS_FLOWS;
	if (t->e[i].used && same(&t->e[i].k, k) && t->e[i].q < nq)
		return t->e[i].q;
	return (h >> 8) % nq;
}
