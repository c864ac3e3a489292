/* tcp's packets from ip (README.md "Where the bytes go"): headers checked on a private copy,
 * copied into our heap (lwIP's tcp_input rewrites them), the payload fed to ip4_input where it
 * lies in ip's pool (read-only), chained as custom PBUF_REFs (lib/lwip/xport.c resolved the
 * pointers and answers IPX_RX_DONE after us). The receive callback (stream.c) copies the data
 * out at once; what lwIP keeps beyond the call (an out-of-order segment) is copied into our
 * heap before the answer, so nothing of ip's is referenced after IPX_RX_DONE.
 *
 * Receive offload (as Linux's GRO): the data segments of one connection that follow each
 * other in one batch of ip's messages are held (XP_RX_HELD) and go to lwIP as one segment
 * when the batch ends or something else comes (ts_rx_flush): one tcp_input, one copy call and
 * one ACK for the lot instead of one per segment and one per two. Each packet's checksums are
 * checked here before it joins (seg.c ts_csum_ok), so lwIP need not check the merged one. */
#include "tcp.h"
#include "lwip/ip4.h"
#include "lwip/mem.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/stats.h"
#include "lwip/tcp.h"
#include "lwip/priv/tcp_priv.h"

/* A received packet's payload: ip's bytes, or our copy of them once lwIP kept the pbuf. */
struct rx_pbuf {
	struct pbuf_custom pc;
	const unsigned char *orig;
	uint32_t len;
	uint32_t slot; /* in live[] while the packet is being delivered (in what was padding:
			* a kept image's detached rx_pbufs keep their layout) */
	void *copy;
};

/* The payloads of the packet being delivered that lwIP has not freed yet (deliver). */
static struct rx_pbuf *live[TS_GRO_SEGS];

static void rx_pbuf_free(struct pbuf *p)
{
	struct rx_pbuf *r = (struct rx_pbuf *)p;
	if (r->copy)
		mem_free(r->copy);
	else if (r->slot < TS_GRO_SEGS && live[r->slot] == r)
		live[r->slot] = NULL;
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
	/* A merged segment (more than one of the peer's full ones): acknowledged at once, as
	 * RFC 5681 asks for every second full-sized segment (lwIP's delayed ACK turns into an
	 * immediate one when it is pending already). */
	if (p->tot_len > pcb->mss)
		tcp_set_flags(pcb, TF_ACK_DELAY);
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

/* lwIP still holds r after ip4_input (queued out of order, or refused): its bytes move into
 * our heap, the payload pointer keeping its offset. */
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

/* After ip4_input: whatever lwIP still holds of ip's memory is copied into our heap. */
static void detach_live(uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		if (!live[i])
			continue;
		ts.c.rx_detached++;
		if (!detach(live[i])) {
			/* No heap for the copy: drop every out-of-order queue (the peers send again). */
			ts.c.rx_nomem++;
			for (struct tcp_pcb *q = tcp_active_pcbs; q; q = q->next)
				tcp_free_ooseq(q);
			if (live[i]) {
				ax_printf("tcp: a received packet is still held after freeing the queues\n");
				ax_exit(70); /* never reference ip's memory after RX_DONE: restart instead */
			}
		}
		live[i] = NULL;
	}
}

/* One segment to lwIP: the headers (hdrs bytes) copied into a pbuf of our heap (lwIP's
 * tcp_input rewrites them), then the payloads where they lie in ip's pool, chained by
 * reference (lwIP only reads them). checked: the TCP checksum is known good. */
static void deliver(const uint8_t *hdr, const struct ts_seginfo *si, const unsigned char *const *pay,
		    const uint32_t *len, uint32_t n, bool checked, struct netif *nif)
{
	uint32_t hdrs = (uint32_t)si->hlen + si->thlen;
	struct pbuf *h = pbuf_alloc(PBUF_RAW, (u16_t)hdrs, PBUF_RAM), *rest = NULL;
	if (!h) {
		ts.c.rx_nomem++;
		return;
	}
	memcpy(h->payload, hdr, hdrs);
	for (uint32_t i = n; i-- > 0;) { /* from the end: each pbuf_cat walks one pbuf */
		struct rx_pbuf *r = mem_malloc(sizeof(*r));
		if (!r) {
			ts.c.rx_nomem++;
			pbuf_free(h);
			if (rest)
				pbuf_free(rest);
			memset(live, 0, sizeof(live));
			return;
		}
		r->pc.custom_free_function = rx_pbuf_free;
		r->orig = pay[i], r->len = len[i], r->copy = NULL, r->slot = i;
		struct pbuf *p = pbuf_alloced_custom(PBUF_RAW, (u16_t)len[i], PBUF_REF, &r->pc,
						     (void *)(uintptr_t)pay[i], (u16_t)len[i]);
		live[i] = r;
		if (rest)
			pbuf_cat(p, rest);
		rest = p;
	}
	if (rest)
		pbuf_cat(h, rest);
	syn_ends_time_wait(h->payload, si);
	xport_rx_csum(nif, checked, NETIF_CHECKSUM_CHECK_TCP);
	STAT_COUNTER chk = lwip_stats.tcp.chkerr;
	ip4_input(h, nif);
	if (lwip_stats.tcp.chkerr != chk)
		ts.c.csum_err++;
	detach_live(n);
}

/* The merged segment being built from this batch of ip's packets, and the packets in it. */
static struct ts_gro gro;
static uint64_t gro_id[TS_GRO_SEGS];
static const unsigned char *gro_pay[TS_GRO_SEGS];
static uint32_t gro_len[TS_GRO_SEGS];
static struct netif *gro_nif;

void ts_rx_flush(void)
{
	if (!gro.n)
		return;
	uint32_t n = gro.n;
	if (n > 1) {
		ts_gro_finish(&gro);
		ts.c.rx_merged += n;
		ts.c.rx_merges++;
	}
	deliver(gro.hdr, &gro.si, gro_pay, gro_len, n, true, gro_nif);
	gro.n = 0;
	for (uint32_t i = 0; i < n; i++)
		xport_rx_done(gro_id[i], 0);
}

int32_t ts_rx(const struct ipx_msg *m, const unsigned char *b)
{
	/* the headers, checked on a private copy */
	uint8_t hdr[TS_HDR_COPY];
	uint32_t copy = m->pkt.len < sizeof(hdr) ? m->pkt.len : sizeof(hdr);
	memcpy(hdr, b, copy);
	struct ts_seginfo si;
	struct netif *n = NULL;
	if (m->pkt.len > TS_GRO_BYTES || ts_tcp_check(hdr, copy, m->pkt.len, &si) != TS_SEG_OK ||
	    (uint32_t)si.hlen + si.thlen > copy) {
		ts.c.malformed++;
		return 0;
	}
	if (!(n = xport_input_netif(si.dst))) {
		ts.c.not_ours++;
		return 0;
	}
	uint32_t hdrs = (uint32_t)si.hlen + si.thlen, rest = si.tot_len - hdrs;
	const unsigned char *pay = b + hdrs;
	bool nic_ok = m->flags & IPXF_L4_CSUM_OK;
	/* A data segment whose checksums are good joins the merged one or starts the next. */
	if (ts_gro_candidate(hdr, &si) && (nic_ok || ts_csum_ok(b, &si))) {
		if (!gro.n || n != gro_nif || !ts_gro_append(&gro, hdr, &si, rest)) {
			ts_rx_flush();
			ts_gro_start(&gro, hdr, &si, rest);
			gro_nif = n;
		}
		uint32_t i = gro.n - 1;
		gro_id[i] = m->id, gro_pay[i] = pay, gro_len[i] = rest;
		return XP_RX_HELD;
	}
	ts_rx_flush(); /* in order */
	deliver(hdr, &si, &pay, &rest, rest ? 1 : 0, nic_ok, n);
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
