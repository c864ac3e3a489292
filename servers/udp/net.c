/* udp's lwIP instance and its ip side (README.md): netifs mirroring ip's interfaces, packets
 * from ip fed to ip4_input where they lie (ip's pools, read-only), datagrams lwIP built in
 * our send pool shipped to ip as IPX_TX and freed at IPX_TX_DONE. */
#include "udp.h"
#include "lwip/init.h"
#include "lwip/ip4.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/stats.h"
#include "lwip/udp.h"
#include "ds_client.h"

/* An interface as saved in ds ("if.N"): after a restart the packets waiting in ip's channel
 * are ahead of ip's IPX_IFACE, and lwIP needs the address to accept them. */
struct us_ifrec {
	uint32_t addr, mask, gw, mtu;
	uint8_t up, ifindex, pad[6];
};
_Static_assert(sizeof(struct us_ifrec) <= 24, "one ds value");

void *us_lwip_heap;
static struct netif nif[US_MAX_IF];
static bool nif_added[US_MAX_IF];
static bool delivered; /* set by the recv callback during one ip4_input */

uint32_t us_out_space(void)
{
	long n = spsc_count(&us.out);
	return n < 0 ? 0 : us.out.nslots - (uint32_t)n;
}

static bool in_heap(const void *p, size_t len)
{
	const unsigned char *b = us.pool.v.bufs, *q = p;
	return q >= b && (uint64_t)(q - b) + len <= us.pool.v.buf_size;
}

static void tx_abort(void *ctx, uint64_t id)
{
	(void)id;
	pbuf_free(ctx);
}

/* lwIP's IP layer finished a packet: hand it to ip, keep the pbuf until IPX_TX_DONE. */
static err_t nif_output(struct netif *n, struct pbuf *p, const ip4_addr_t *dst)
{
	(void)n, (void)dst;
	if (!us.ip_ok || us_out_space() == 0)
		return ERR_MEM;
	struct pbuf *q = p;
	if (p->next || !in_heap(p->payload, p->len)) /* never so with our allocations; be sure */
		if (!(q = pbuf_clone(PBUF_RAW, PBUF_RAM, p)))
			return ERR_MEM;
	if (q == p)
		pbuf_ref(p);
	uint64_t id = reqdb_add(&us.txdb, 1, tx_abort, q);
	if (id == REQDB_NONE) {
		pbuf_free(q);
		return ERR_MEM;
	}
	struct ipx_msg m = { .type = IPX_TX, .id = id };
	m.pkt = (struct chan_ptr){ us.pool.v.pool_id, (uint32_t)((unsigned char *)q->payload - us.pool.v.bufs), q->len };
	spsc_push_part(&us.out, &m, sizeof(m)); /* room was checked */
	us.out_pushed = true;
	return ERR_OK;
}

static err_t nif_init(struct netif *n)
{
	n->output = nif_output;
	n->name[0] = 'i', n->name[1] = 'p';
	n->flags = NETIF_FLAG_BROADCAST;
	return ERR_OK;
}

void us_net_init(void *heap)
{
	us_lwip_heap = heap;
	lwip_init();
	reqdb_init(&us.txdb, us.txdb_e, US_TX_INFLIGHT);
}

/* IPX_IFACE: mirror the interface (address, mask, gateway, MTU, up). */
void us_iface(const struct ipx_iface *f)
{
	if (f->ifindex >= US_MAX_IF)
		return;
	struct netif *n = &nif[f->ifindex];
	ip4_addr_t a, m, g;
	a.addr = f->addr, m.addr = f->mask, g.addr = f->gw;
	if (!nif_added[f->ifindex]) {
		if (!netif_add(n, &a, &m, &g, NULL, nif_init, ip4_input))
			return;
		nif_added[f->ifindex] = true;
	} else {
		netif_set_addr(n, &a, &m, &g);
	}
	n->mtu = (u16_t)(f->mtu > 65535 ? 65535 : f->mtu);
	if (f->up && f->addr) {
		netif_set_up(n);
		netif_set_link_up(n);
	} else {
		netif_set_down(n);
	}
	struct us_ifrec r = { f->addr, f->mask, f->gw, f->mtu, f->up, f->ifindex, { 0 } };
	char key[16];
	ksnprintf(key, sizeof(key), "if.%u", f->ifindex);
	dsc_put(key, &r, sizeof(r));
	/* the default: the first interface that is up */
	struct netif *def = NULL;
	for (int i = 0; i < US_MAX_IF && !def; i++)
		if (nif_added[i] && netif_is_up(&nif[i]))
			def = &nif[i];
	netif_set_default(def);
	char ip[16], drv[17];
	memcpy(drv, f->name, 16);
	drv[16] = 0;
	us_export_pool_for(drv);
	us_fmt_ip4(ip, f->addr);
	ax_printf("udp: interface %u (%s) %s mtu %u %s\n", f->ifindex, drv, ip, f->mtu, f->up ? "up" : "down");
}

/* After a restart: the interfaces as the previous incarnation last heard of them. */
void us_iface_restore(void)
{
	for (uint8_t i = 0; i < US_MAX_IF; i++) {
		union { struct us_ifrec r; uint8_t raw[DS_VAL_LEN]; } u;
		uint32_t len = 0;
		char key[16];
		ksnprintf(key, sizeof(key), "if.%u", i);
		if (dsc_get("udp", key, &u, &len) != 0 || len != sizeof(u.r) || u.r.ifindex != i)
			continue;
		struct ipx_iface f = { .type = IPX_IFACE, .ifindex = i, .up = u.r.up, .addr = u.r.addr,
				       .mask = u.r.mask, .gw = u.r.gw, .mtu = u.r.mtu };
		us_iface(&f);
	}
}

/* The interface a packet to dst came in on, as lwIP needs one: the one with that address,
 * else the default. */
static struct netif *input_netif(uint32_t dst)
{
	for (int i = 0; i < US_MAX_IF; i++)
		if (nif_added[i] && netif_is_up(&nif[i]) && nif[i].ip_addr.addr == dst)
			return &nif[i];
	return netif_default;
}

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
			s->corrupt = true, s->ev |= EV_ERR, s->err = -UE_INVAL;
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

static void rx_done(uint64_t id, int32_t arg)
{
	struct ipx_msg m = { .type = IPX_RX_DONE, .arg = arg, .id = id };
	spsc_push_part(&us.out, &m, sizeof(m));
	us.out_pushed = true;
}

static const unsigned char *resolve(struct chan_ptr p)
{
	const unsigned char *b = pool_resolve(&us.ip_rx, p);
	return b ? b : pool_resolve(&us.ip_heap, p);
}

/* IPX_RX: check the headers on a copy, then let lwIP (ip4_input, udp_input) find the pcb,
 * check the checksum and call sock_recv. Answered at once: nothing of ip's is kept. */
static void rx_packet(const struct ipx_msg *m)
{
	const unsigned char *b = resolve(m->pkt);
	if (!b) {
		us.c.bad_ptr++;
		rx_done(m->id, 0);
		return;
	}
	uint8_t hdr[US_HDR_COPY];
	size_t have = m->pkt.len < sizeof(hdr) ? m->pkt.len : sizeof(hdr);
	memcpy(hdr, b, have);
	struct us_udpinfo u;
	struct netif *n = NULL;
	struct pbuf *p = NULL;
	if (us_udp_check(hdr, have, m->pkt.len, &u) != US_PKT_OK || m->pkt.len > 65535) {
		us.c.malformed++;
	} else if (!(n = input_netif(u.dst)) || !(p = pbuf_alloc(PBUF_RAW, (u16_t)m->pkt.len, PBUF_REF))) {
		us.c.not_ours++;
	}
	if (!p) {
		rx_done(m->id, 0);
		return;
	}
	p->payload = (void *)(uintptr_t)b; /* lwIP only reads received packets */
	NETIF_SET_CHECKSUM_CTRL(n, (m->flags & IPXF_L4_CSUM_OK) ? (NETIF_CHECKSUM_ENABLE_ALL & ~NETIF_CHECKSUM_CHECK_UDP)
							 : NETIF_CHECKSUM_ENABLE_ALL);
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
	rx_done(m->id, answer);
}

static void icmp_err(const struct ipx_msg *m)
{
	const unsigned char *b = resolve(m->pkt);
	uint8_t copy[60 + 8 + 60 + 8];
	size_t have = b ? (m->pkt.len < sizeof(copy) ? m->pkt.len : sizeof(copy)) : 0;
	struct us_icmperr e;
	if (b) {
		memcpy(copy, b, have);
		if (us_icmp_parse(copy, have, &e) == 0) {
			us.c.icmp_err++;
			us_sock_icmp_err(&e);
		} else {
			us.c.malformed++;
		}
	} else {
		us.c.bad_ptr++;
	}
	rx_done(m->id, 0);
}

/* Every TX of ours is done (ip restarted: its drivers were reset, nothing reads them). */
void us_ip_forget_tx(void)
{
	uint32_t n = reqdb_abort_peer(&us.txdb, 1);
	if (n)
		ax_printf("udp: %u datagrams in flight to the previous ip forgotten\n", n);
}

/* Datagrams sent to ourselves (127.0.0.0/8, our addresses), queued by lwIP's loopback. */
void us_loop_poll(void)
{
	netif_poll_all();
}

/* Messages from ip, while there is room to answer them. */
void us_ip_poll(bool *work)
{
	if (!us.ip_ok)
		return;
	/* After our restart, packets for the restored sockets would be dropped until syscall
	 * reattaches their buffers: they wait in ip's channel for a short while instead. */
	if (us.awaiting_reattach) {
		if (us.hello_at && ax_time_ns() - us.hello_at < US_HOLD_RX_NS) {
			us.retry = true;
			return;
		}
		us.awaiting_reattach = false;
	}
	for (int i = 0; i < 64; i++) {
		if (us_out_space() < 1) {
			us.retry = true;
			return;
		}
		union { struct ipx_msg m; struct ipx_iface f; uint8_t raw[IPX_SLOT]; } u;
		int e = spsc_pop(&us.in, &u);
		if (e == CHAN_EAGAIN)
			return;
		if (e < 0) {
			ax_printf("udp: ip/udp.in is corrupt (%d): detached, importing again\n", e);
			us.ip_ok = false;
			return;
		}
		*work = true;
		switch (u.m.type) {
		case IPX_RX:
			rx_packet(&u.m);
			break;
		case IPX_ICMP_ERR:
			icmp_err(&u.m);
			break;
		case IPX_TX_DONE: {
			const struct reqdb_entry *t = reqdb_take(&us.txdb, u.m.id);
			if (t)
				pbuf_free(t->ctx);
			else
				us.c.stale_tx_done++;
			break;
		}
		case IPX_IFACE:
			us_iface(&u.f);
			break;
		case IPX_HELLO:
			if (us.ip_incarnation >= 0 && us.ip_incarnation != u.m.arg)
				us_ip_forget_tx();
			us.ip_incarnation = u.m.arg;
			break;
		default:
			us.c.bad_msgs++;
		}
	}
}
