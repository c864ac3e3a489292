/* tcp's pure code (seg.h). */
#include "seg.h"

int ksnprintf(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

int ts_tcp_check(const uint8_t *h, size_t have, size_t len, struct ts_seginfo *i)
{
	if (have < 20 || len < 20)
		return TS_SEG_SHORT;
	if ((h[0] >> 4) != 4 || (h[0] & 15) < 5)
		return TS_SEG_VERSION;
	uint16_t hlen = (uint16_t)((h[0] & 15) * 4);
	uint32_t tot = (uint32_t)(h[2] << 8 | h[3]);
	if (tot < hlen || tot > len)
		return TS_SEG_SHORT;
	if (h[9] != TS_IPPROTO_TCP)
		return TS_SEG_PROTO;
	if ((h[6] & 0x20) || ((h[6] & 0x1f) | h[7]))
		return TS_SEG_FRAGMENT;
	if (tot < (uint32_t)hlen + 20 || have < (size_t)hlen + 20)
		return TS_SEG_SHORT;
	const uint8_t *t = h + hlen;
	uint16_t thlen = (uint16_t)((t[12] >> 4) * 4);
	if (thlen < 20 || (uint32_t)hlen + thlen > tot)
		return TS_SEG_DOFF;
	__builtin_memcpy(&i->src, h + 12, 4);
	__builtin_memcpy(&i->dst, h + 16, 4);
	__builtin_memcpy(&i->sport, t, 2);
	__builtin_memcpy(&i->dport, t + 2, 2);
	i->hlen = hlen, i->thlen = thlen, i->tot_len = tot;
	return TS_SEG_OK;
}

uint64_t ts_ring_consumed(struct ts_ring *r, uint64_t released)
{
	if (released > r->produced)
		released = r->produced;
	uint64_t skipped = 0;
	uint32_t k = 0;
	for (uint32_t j = 0; j < r->n; j++) {
		if (r->end[j] <= released)
			continue; /* passed: no longer held */
		skipped += r->skip[j];
		r->end[k] = r->end[j], r->skip[k] = r->skip[j], k++;
	}
	r->n = k;
	uint64_t held = r->produced - released; /* ring bytes, skips included */
	held = held > skipped ? held - skipped : 0;
	return held > r->data ? 0 : r->data - held;
}

bool ts_ring_commit(struct ts_ring *r, uint64_t before, uint64_t after, uint32_t len)
{
	r->produced = after;
	r->data += len;
	uint64_t skip = after - before >= len ? after - before - len : 0;
	if (!skip)
		return true;
	if (r->n == 8) {
		r->data += skip; /* counted as stream bytes: consumed as soon as they are released */
		return false;
	}
	r->end[r->n] = after, r->skip[r->n] = (uint32_t)skip, r->n++;
	return true;
}

bool ts_oow_dup_ack(const struct ts_oow *o)
{
	enum { PSH = 0x08, ACK = 0x10 };
	if ((o->flags & ~PSH) != ACK || o->datalen) /* SYN, FIN, RST, URG or data: lwIP's */
		return false;
	/* lwIP's test, in serial-number arithmetic: inside when seqno - rcv_nxt < rcv_wnd */
	if (o->seqno - o->rcv_nxt < o->rcv_wnd)
		return false;
	return o->ackno == o->lastack && o->wnd == o->snd_wnd;
}

void ts_fmt_ip4(char *buf, uint32_t a)
{
	const uint8_t *b = (const uint8_t *)&a;
	ksnprintf(buf, 16, "%u.%u.%u.%u", b[0], b[1], b[2], b[3]);
}

void ts_fmt_conn(char *buf, size_t n, const struct ts_connview *v)
{
	char la[16], ra[16], slot[12], sock[12];
	ts_fmt_ip4(la, v->laddr);
	ts_fmt_ip4(ra, v->raddr);
	if (v->slot < 0)
		ksnprintf(slot, sizeof(slot), "-");
	else
		ksnprintf(slot, sizeof(slot), "%d", v->slot);
	if (v->sock)
		ksnprintf(sock, sizeof(sock), "%u", v->sock);
	else
		ksnprintf(sock, sizeof(sock), "-");
	ksnprintf(buf, n, "%s %s %s %s:%u %s:%u %u %u", slot, sock, v->state, la, v->lport, ra, v->rport,
		  v->rxq, v->txq);
}

const char *ts_state_name(int st)
{
	static const char *const names[] = { "closed", "listen", "syn_sent", "syn_rcvd", "estab",
					     "fin_wait1", "fin_wait2", "close_wait", "closing", "last_ack",
					     "time_wait" };
	return st >= 0 && st < (int)(sizeof(names) / sizeof(names[0])) ? names[st] : "?";
}

uint32_t ts_sum16(const uint8_t *b, size_t n, uint32_t sum)
{
	uint64_t acc = sum;
#if defined(__x86_64__)
	/* 32 bytes a turn in a chain of 64-bit adds with carry (the end-around carry of a ones'
	 * complement sum): a quarter of the instructions of the portable loop below, which this
	 * receive path felt (tcp checks every packet: QEMU's e1000 does not). */
	size_t blocks = n / 32;
	if (blocks) {
		__asm__("clc\n"
			"1:\n\t"
			"adcq (%[p]), %[a]\n\t"
			"adcq 8(%[p]), %[a]\n\t"
			"adcq 16(%[p]), %[a]\n\t"
			"adcq 24(%[p]), %[a]\n\t"
			"lea 32(%[p]), %[p]\n\t" /* lea and dec keep the carry */
			"dec %[n]\n\t"
			"jnz 1b\n\t"
			"adcq $0, %[a]"
			: [a] "+r"(acc), [p] "+r"(b), [n] "+r"(blocks)
			:
			: "cc", "memory");
		n %= 32;
		acc = (acc & 0xffffffffu) + (acc >> 32);
		acc = (acc & 0xffffffffu) + (acc >> 32);
	}
#endif
	for (; n >= 8; b += 8, n -= 8) {
		uint64_t w;
		__builtin_memcpy(&w, b, 8);
		acc += (uint32_t)w;
		acc += w >> 32;
	}
	for (; n >= 2; b += 2, n -= 2) {
		uint16_t w;
		__builtin_memcpy(&w, b, 2);
		acc += w;
	}
	if (n) {
		uint16_t w = 0;
		__builtin_memcpy(&w, b, 1); /* the odd byte, padded with a zero after it */
		acc += w;
	}
	while (acc >> 16)
		acc = (acc & 0xffff) + (acc >> 16);
	return (uint32_t)acc;
}

static uint32_t be32(const uint8_t *b) { return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3]; }

bool ts_csum_ok(const uint8_t *b, const struct ts_seginfo *i)
{
	if (ts_sum16(b, i->hlen, 0) != 0xffff)
		return false;
	uint32_t tcplen = i->tot_len - i->hlen;
	uint8_t pseudo[12];
	__builtin_memcpy(pseudo, b + 12, 8);
	pseudo[8] = 0, pseudo[9] = TS_IPPROTO_TCP;
	pseudo[10] = (uint8_t)(tcplen >> 8), pseudo[11] = (uint8_t)tcplen;
	return ts_sum16(b + i->hlen, tcplen, ts_sum16(pseudo, sizeof(pseudo), 0)) == 0xffff;
}

enum { TH_FIN = 0x01, TH_SYN = 0x02, TH_RST = 0x04, TH_PSH = 0x08, TH_ACK = 0x10 };

bool ts_gro_candidate(const uint8_t *h, const struct ts_seginfo *i)
{
	return i->hlen == 20 && (h[20 + 13] & ~TH_PSH) == TH_ACK && i->tot_len > (uint32_t)i->hlen + i->thlen;
}

void ts_gro_start(struct ts_gro *g, const uint8_t *h, const struct ts_seginfo *i, uint32_t len)
{
	__builtin_memcpy(g->hdr, h, (size_t)i->hlen + i->thlen);
	g->si = *i;
	g->n = 1;
	g->payload = len;
	g->next_seq = be32(h + 20 + 4) + len;
	g->last_flags = h[20 + 13];
	g->last_wnd[0] = h[20 + 14], g->last_wnd[1] = h[20 + 15];
}

bool ts_gro_append(struct ts_gro *g, const uint8_t *h, const struct ts_seginfo *i, uint32_t len)
{
	const uint8_t *t = h + 20, *ft = g->hdr + 20;
	if (!g->n || g->n >= TS_GRO_SEGS || (g->last_flags & TH_PSH) || i->src != g->si.src ||
	    i->dst != g->si.dst || i->sport != g->si.sport || i->dport != g->si.dport || i->thlen != g->si.thlen)
		return false;
	if ((uint32_t)g->si.hlen + g->si.thlen + g->payload + len > TS_GRO_BYTES)
		return false;
	if (be32(t + 4) != g->next_seq || h[1] != g->hdr[1] /* TOS, ECN marks */ ||
	    __builtin_memcmp(t + 8, ft + 8, 4) /* the same ACK */ ||
	    __builtin_memcmp(t + 20, ft + 20, (size_t)i->thlen - 20) /* the same options */)
		return false;
	g->n++;
	g->payload += len;
	g->next_seq += len;
	g->last_flags = t[13];
	g->last_wnd[0] = t[14], g->last_wnd[1] = t[15];
	return true;
}

void ts_gro_finish(struct ts_gro *g)
{
	uint8_t *h = g->hdr, *t = h + 20;
	uint32_t tot = (uint32_t)g->si.hlen + g->si.thlen + g->payload;
	h[2] = (uint8_t)(tot >> 8), h[3] = (uint8_t)tot;
	h[10] = h[11] = 0;
	uint16_t c = (uint16_t)~ts_sum16(h, g->si.hlen, 0);
	__builtin_memcpy(h + 10, &c, 2); /* memory order, as summed */
	t[13] |= g->last_flags & TH_PSH;
	t[14] = g->last_wnd[0], t[15] = g->last_wnd[1];
	g->si.tot_len = tot;
}
