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
