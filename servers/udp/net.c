/* udp's packets from ip (README.md): headers checked on a private copy, then fed to
 * ip4_input where they lie (ip's pools, read-only; lib/lwip/xport.c resolved the pointer and
 * answers IPX_RX_DONE); ICMP errors; the sockets' receive callback that copies each datagram
 * once into the socket's RX ring. */
#include "udp.h"
#include "lwip/ip4.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/stats.h"
#include "lwip/udp.h"

static bool delivered; /* set by the recv callback during one ip4_input */

/* The recv callback of every socket's pcb: the datagram goes once into the socket's RX. */
static void sock_recv(void *arg, struct udp_pcb *pcb, struct pbuf *p, const ip_addr_t *addr, u16_t port)
{
	(void)pcb;
	struct us_sock *s = arg;
	delivered = true;
	uint32_t len = p->tot_len;
	if (!s->attached || s->corrupt || s->shut_rd) {
		us.c.rx_unattached++;
		pbuf_free(p);
		return;
	}
	int err = 0;
	void *dst = sockbuf_alloc(&s->sb.rx, len, &err);
	if (!dst) {
		if (err == SOCKBUF_ECORRUPT) {
			s->corrupt = true, s->ev |= EV_ERR, s->err = -LX_EINVAL;
			us.c.corrupt_bufs++;
		}
		us.c.rx_full++;
		pbuf_free(p);
		return;
	}
	pbuf_copy_partial(p, dst, (u16_t)len, 0);
	pbuf_free(p);
	struct sockbuf_desc d = { .family = US_AF_INET, .port = lwip_htons(port) };
	uint32_t a = ip4_addr_get_u32(addr);
	memcpy(d.addr, &a, 4);
	if (sockbuf_commit(&s->sb.rx, len, &d) != 0) {
		us.c.rx_full++;
		return;
	}
	us.c.rx_dgrams++;
	us.c.rx_bytes += len;
	s->ev |= EV_RX;
}

void us_sock_pcb_setup(struct us_sock *s);
void us_sock_pcb_setup(struct us_sock *s) { udp_recv(s->pcb, sock_recv, s); }

/* IPX_RX: check the headers on a copy, then let lwIP (ip4_input, udp_input) find the pcb,
 * check the checksum and call sock_recv. Returns IPX_RX_DONE's arg: nothing of ip's is kept. */
int32_t us_rx(const struct ipx_msg *m, const unsigned char *b)
{
	uint8_t hdr[US_HDR_COPY];
	size_t have = m->pkt.len < sizeof(hdr) ? m->pkt.len : sizeof(hdr);
	memcpy(hdr, b, have);
	struct us_udpinfo u;
	struct netif *n = NULL;
	struct pbuf *p = NULL;
	if (us_udp_check(hdr, have, m->pkt.len, &u) != US_PKT_OK || m->pkt.len > 65535) {
		us.c.malformed++;
	} else if (!(n = xport_input_netif(u.dst)) || !(p = pbuf_alloc(PBUF_RAW, (u16_t)m->pkt.len, PBUF_REF))) {
		us.c.not_ours++;
	}
	if (!p)
		return 0;
	p->payload = (void *)(uintptr_t)b; /* lwIP only reads received packets */
	xport_rx_csum(n, m->flags & IPXF_L4_CSUM_OK, NETIF_CHECKSUM_CHECK_UDP);
	STAT_COUNTER chk = lwip_stats.udp.chkerr, noport = lwip_stats.udp.proterr;
	delivered = false;
	ip4_input(p, n); /* frees p */
	int32_t answer = 0;
	if (delivered)
		;
	else if (lwip_stats.udp.chkerr != chk)
		us.c.csum_err++;
	else if (lwip_stats.udp.proterr != noport)
		us.c.no_port++, answer = IPX_UNREACH_PORT;
	else
		us.c.not_ours++;
	return answer;
}

void us_icmp(const unsigned char *b, uint32_t len)
{
	uint8_t copy[60 + 8 + 60 + 8];
	size_t have = len < sizeof(copy) ? len : sizeof(copy);
	struct us_icmperr e;
	memcpy(copy, b, have);
	if (us_icmp_parse(copy, have, &e) == 0) {
		us.c.icmp_err++;
		us_sock_icmp_err(&e);
	} else {
		us.c.malformed++;
	}
}

