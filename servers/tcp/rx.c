/* tcp's packets from ip (README.md "Where the bytes go"): headers checked on a private copy,
 * then fed to ip4_input where they lie in ip's pool (read-only), wrapped in a custom PBUF_REF
 * (lib/lwip/xport.c resolved the pointer and answers IPX_RX_DONE after us). The receive
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
	uint8_t hdr[TS_HDR_COPY];
	size_t have = m->pkt.len < sizeof(hdr) ? m->pkt.len : sizeof(hdr);
	memcpy(hdr, b, have);
	struct ts_seginfo si;
	struct netif *n = NULL;
	if (m->pkt.len > 65535 || ts_tcp_check(hdr, have, m->pkt.len, &si) != TS_SEG_OK) {
		ts.c.malformed++;
		return 0;
	}
	if (!(n = xport_input_netif(si.dst))) {
		ts.c.not_ours++;
		return 0;
	}
	struct rx_pbuf *r = mem_malloc(sizeof(*r));
	if (!r) {
		ts.c.rx_nomem++;
		return 0;
	}
	r->pc.custom_free_function = rx_pbuf_free;
	r->orig = b, r->len = m->pkt.len, r->copy = NULL;
	struct pbuf *p = pbuf_alloced_custom(PBUF_RAW, (u16_t)m->pkt.len, PBUF_REF, &r->pc,
					     (void *)(uintptr_t)b, (u16_t)m->pkt.len); /* lwIP only reads it */
	NETIF_SET_CHECKSUM_CTRL(n, (m->flags & IPXF_L4_CSUM_OK) ? (NETIF_CHECKSUM_ENABLE_ALL & ~NETIF_CHECKSUM_CHECK_TCP)
							 : NETIF_CHECKSUM_ENABLE_ALL);
	STAT_COUNTER chk = lwip_stats.tcp.chkerr;
	pbuf_ref(p); /* ours: tells us afterwards whether lwIP kept it */
	ip4_input(p, n);
	if (lwip_stats.tcp.chkerr != chk)
		ts.c.csum_err++;
	if (p->ref > 1) {
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
	pbuf_free(p);
	return 0;
}

/* lwIP's TCP takes no action on ICMP errors (soft errors); counted. */
void ts_icmp(const unsigned char *pkt, uint32_t len)
{
	(void)pkt, (void)len;
	ts.c.icmp_err++;
}
