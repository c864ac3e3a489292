/* tcp's packets from ip (README.md "Where the bytes go"): headers checked on a private copy,
 * copied into our heap (lwIP's tcp_input rewrites them), the payload fed to ip4_input where it
 * lies in ip's pool (read-only), chained as a custom PBUF_REF (lib/lwip/xport.c resolved the
 * pointer and answers IPX_RX_DONE after us). The receive
 * callback (stream.c) copies the data out at once; what lwIP keeps beyond the call (an
 * out-of-order segment) is copied into our heap before we return, so nothing of ip's is
 * referenced after IPX_RX_DONE. */
#include "tcp.h"
#include "lwip/ip4.h"
#include "lwip/mem.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/stats.h"
#include "lwip/tcp.h"
#include "lwip/priv/tcp_priv.h"

/* A received packet: ip's bytes, or our copy of them once lwIP kept the pbuf. */
struct rx_pbuf {
	struct pbuf_custom pc;
	const unsigned char *orig;
	uint32_t len;
	void *copy;
};

static void rx_pbuf_free(struct pbuf *p)
{
	struct rx_pbuf *r = (struct rx_pbuf *)p;
	if (r->copy)
		mem_free(r->copy);
	mem_free(r);
}

int ts_rx_fns(uintptr_t *v)
{
	v[0] = (uintptr_t)rx_pbuf_free;
	return 1;
}

/* lwIP's inpacket hook (tcp_hooks.h): an ACK war's ACK passes once per TS_OOW_ACK_NS per
 * connection (lwIP answers it, so a lost window update is still recovered), the others are
 * dropped. The header is in host order here. */
err_t ts_inpacket(struct tcp_pcb *pcb, struct tcp_hdr *hdr, u16_t optlen, u16_t opt1len, u8_t *opt2, struct pbuf *p)
{
	(void)optlen, (void)opt1len, (void)opt2;
	struct ts_sock *s = pcb->callback_arg;
	if (pcb->state < ESTABLISHED || pcb->state == TIME_WAIT || !s || s < ts.s || s >= ts.s + TS_SLOTS)
		return ERR_OK;
	struct ts_oow o = { .flags = (uint8_t)TCPH_FLAGS(hdr), .datalen = p->tot_len, .seqno = hdr->seqno,
			    .ackno = hdr->ackno, .wnd = (uint32_t)hdr->wnd << pcb->snd_scale, .rcv_nxt = pcb->rcv_nxt,
			    .rcv_wnd = pcb->rcv_wnd, .lastack = pcb->lastack, .snd_wnd = pcb->snd_wnd };
	if (!ts_oow_dup_ack(&o))
		return ERR_OK;
	uint64_t now = ax_time_ns();
	if (now - s->oow_ack_at >= TS_OOW_ACK_NS) {
		s->oow_ack_at = now;
		return ERR_OK;
	}
	ts.c.oow_acks++;
	return ERR_ABRT;
}

/* A SYN for a connection still in TIME_WAIT here: the peer reused its port, and the
 * TIME_WAIT is ours because our side closed first (lighttpd after "Connection: close").
 * lwIP would answer the SYN with an ACK and keep the old connection for 2 MSL (120 s); the
 * peer's connect would stall meanwhile. (The bench's HTTP loads lost 16 connections at a
 * time that way.) Linux ends the TIME_WAIT when the SYN's sequence number is beyond what
 * the old connection received (RFC 6191), and so do we: the listener then gets the SYN. */
static void syn_ends_time_wait(const unsigned char *hdr, const struct ts_seginfo *si)
{
	const unsigned char *t = hdr + si->hlen;
	if ((t[13] & (TCP_SYN | TCP_ACK | TCP_RST | TCP_FIN)) != TCP_SYN)
		return;
	uint32_t seq;
	memcpy(&seq, t + 4, 4);
	seq = lwip_ntohl(seq);
	for (struct tcp_pcb *p = tcp_tw_pcbs; p; p = p->next)
		if (ip4_addr_get_u32(ip_2_ip4(&p->remote_ip)) == si->src &&
		    ip4_addr_get_u32(ip_2_ip4(&p->local_ip)) == si->dst && p->remote_port == lwip_ntohs(si->sport) &&
		    p->local_port == lwip_ntohs(si->dport)) {
			if (TCP_SEQ_GT(seq, p->rcv_nxt)) {
				ts.c.tw_reused++;
				tcp_abort(p); /* a TIME_WAIT pcb is only freed: no RST */
			}
			return;
		}
}

/* lwIP still holds p after ip4_input (queued out of order): its bytes move into our heap,
 * the payload pointer keeping its offset. */
static bool detach(struct rx_pbuf *r)
{
	void *c = mem_malloc((mem_size_t)r->len);
	if (!c)
		return false;
	memcpy(c, r->orig, r->len);
	struct pbuf *p = &r->pc.pbuf;
	p->payload = (unsigned char *)c + ((const unsigned char *)p->payload - r->orig);
	r->copy = c;
	return true;
}

int32_t ts_rx(const struct ipx_msg *m, const unsigned char *b)
{
	/* lwIP's tcp_input rewrites the TCP header in place (byte order): the headers are copied
	 * into our heap (and checked there), the payload stays in ip's pool, chained by reference. */
	uint32_t copy = m->pkt.len < 120 ? m->pkt.len : 120; /* the longest IP + TCP headers */
	struct pbuf *h = m->pkt.len <= 65535 ? pbuf_alloc(PBUF_RAW, (u16_t)copy, PBUF_RAM) : NULL;
	if (!h) {
		if (m->pkt.len > 65535)
			ts.c.malformed++;
		else
			ts.c.rx_nomem++;
		return 0;
	}
	memcpy(h->payload, b, copy);
	struct ts_seginfo si;
	struct netif *n = NULL;
	if (ts_tcp_check(h->payload, copy, m->pkt.len, &si) != TS_SEG_OK || (uint32_t)si.hlen + si.thlen > copy) {
		ts.c.malformed++;
		pbuf_free(h);
		return 0;
	}
	if (!(n = xport_input_netif(si.dst))) {
		ts.c.not_ours++;
		pbuf_free(h);
		return 0;
	}
	uint32_t hdrs = (uint32_t)si.hlen + si.thlen, rest = m->pkt.len - hdrs;
	pbuf_realloc(h, (u16_t)hdrs);
	struct rx_pbuf *r = NULL;
	struct pbuf *p = NULL;
	if (rest) {
		if (!(r = mem_malloc(sizeof(*r)))) {
			ts.c.rx_nomem++;
			pbuf_free(h);
			return 0;
		}
		r->pc.custom_free_function = rx_pbuf_free;
		r->orig = b + hdrs, r->len = rest, r->copy = NULL;
		p = pbuf_alloced_custom(PBUF_RAW, (u16_t)rest, PBUF_REF, &r->pc, (void *)(uintptr_t)(b + hdrs),
					(u16_t)rest); /* lwIP only reads the payload */
		pbuf_ref(p); /* ours: tells us afterwards whether lwIP kept it */
		pbuf_cat(h, p);
	}
	syn_ends_time_wait(h->payload, &si);
	xport_rx_csum(n, m->flags & IPXF_L4_CSUM_OK, NETIF_CHECKSUM_CHECK_TCP);
	STAT_COUNTER chk = lwip_stats.tcp.chkerr;
	ip4_input(h, n);
	if (lwip_stats.tcp.chkerr != chk)
		ts.c.csum_err++;
	if (p && p->ref > 1) {
		ts.c.rx_detached++;
		if (!detach(r)) {
			/* No heap for the copy: drop every out-of-order queue (the peers send again). */
			ts.c.rx_nomem++;
			for (struct tcp_pcb *q = tcp_active_pcbs; q; q = q->next)
				tcp_free_ooseq(q);
			if (p->ref > 1) {
				ax_printf("tcp: a received packet is still held after freeing the queues\n");
				ax_exit(70); /* never reference ip's memory after RX_DONE: restart instead */
			}
		}
	}
	if (p)
		pbuf_free(p);
	return 0;
}

/* lwIP's TCP takes no action on ICMP errors (soft errors); counted. */
void ts_icmp(const unsigned char *pkt, uint32_t len)
{
	(void)pkt, (void)len;
	ts.c.icmp_err++;
}

/* A new ip said hello: the segments the old one had in hand are gone. Each connection sends
 * what is unacknowledged again now, not at its retransmission timeout (a second or more: the
 * gap a restart or update of ip made in a stream, docs/recovery.md). */
void ts_ip_restarted(void)
{
	int n = 0;
	for (struct tcp_pcb *p = tcp_active_pcbs; p; p = p->next)
		if (p->unacked) {
			tcp_rexmit_rto(p);
			n++;
		}
	if (n)
		ax_printf("tcp: ip restarted: %d connection%s send their unacknowledged data again\n", n, n == 1 ? "" : "s");
}
