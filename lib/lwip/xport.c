/* A socket engine's ip and syscall side and its event loop (xport.h). Compiled once per
 * engine, with that engine's lwipopts.h (lib/lwip/lwip.mk, lwip_xport). */
#include "xport.h"
#include "lwipopts.h"
#include "lwip/init.h"
#include "lwip/ip4.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/timeouts.h"
#include "lwip/priv/memp_priv.h"
#include "lwip/priv/tcp_priv.h"
#include "keep.h"
#include "ds_client.h"
#include "ds_proto.h"
#include "service.h"
#include "netq_proto.h"
#include "netdev_proto.h"

struct xport xp;
AX_KEPT struct xport_kept xk;
void *xp_lwip_heap;

#define ATTACH_RETRY_NS 100000000ull

/* An interface as saved in ds ("if.N"): after a restart the packets waiting in ip's channel
 * are ahead of ip's IPX_IFACE, and lwIP needs the address to accept them. */
struct xp_ifrec {
	uint32_t addr, mask, gw, mtu;
	uint8_t up, ifindex, pad[6];
};
_Static_assert(sizeof(struct xp_ifrec) <= 24, "one ds value");

static struct netif nif[XP_MAX_IF];
static bool nif_added[XP_MAX_IF];

void xport_fmt_ip4(char *buf, uint32_t a)
{
	const uint8_t *b = (const uint8_t *)&a;
	ksnprintf(buf, 16, "%u.%u.%u.%u", b[0], b[1], b[2], b[3]);
}

uint32_t xport_out_space(void)
{
	long n = spsc_count(&xp.out);
	return n < 0 ? 0 : xp.out.nslots - (uint32_t)n;
}

uint32_t xport_ev_space(void)
{
	long n = spsc_count(&xp.evq);
	return !xp.sys_ok || n < 0 ? 0 : xp.evq.nslots - (uint32_t)n;
}

void xport_push_ev_lazy(const struct sk_msg *m)
{
	spsc_push_part(&xp.evq, m, sizeof(*m));
	/* (the queue must not fill while syscall sleeps) */
	if (xport_ev_space() < xp.evq.nslots / 2)
		xp.ev_pushed = true;
}

void xport_push_ev(const struct sk_msg *m)
{
	xport_push_ev_lazy(m);
	/* syscall is woken at the end of the turn unless every event was one it may read later
	 * (the library's page says so after the push: it finds the event when it looks) */
	if (!xport_act_event(m))
		xp.ev_pushed = true;
}

/* ---- the netifs and the packets lwIP sends ---- */

static bool in_heap(const void *p, size_t len)
{
	const unsigned char *b = xp.pool.v.bufs, *q = p;
	return q >= b && (uint64_t)(q - b) + len <= xp.pool.v.buf_size;
}

/* Checksums on ip's interfaces: lwIP leaves a TCP segment's to ip or the NIC (nif_output
 * sends it IPXF_CSUM_PARTIAL) and checks everything it receives that the NIC did not. */
#define NIF_CSUM (NETIF_CHECKSUM_ENABLE_ALL & ~NETIF_CHECKSUM_GEN_TCP)

void xport_rx_csum(struct netif *n, bool nic_checked, uint16_t l4_check)
{
	NETIF_SET_CHECKSUM_CTRL(n, nic_checked ? (NIF_CSUM & ~l4_check) : NIF_CSUM);
}

/* A TCP segment lwIP left without its checksum: the pseudo-header sum goes into the field
 * (folded, not complemented, as Linux's CHECKSUM_PARTIAL); ip or the NIC adds the rest. */
static bool tcp_partial(unsigned char *b, uint32_t len)
{
	uint32_t ihl = (uint32_t)(b[0] & 15) * 4;
	if (len < 40 || b[9] != 6 || ihl < 20 || ihl + 20 > len)
		return false;
	uint32_t s = 6 + (len - ihl);
	for (int i = 12; i < 20; i += 2)
		s += (uint32_t)b[i] << 8 | b[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	b[ihl + 16] = (unsigned char)(s >> 8), b[ihl + 17] = (unsigned char)s;
	return true;
}

static void tx_abort(void *ctx, uint64_t id)
{
	(void)id;
	pbuf_free(ctx);
}

/* lwIP's IP layer finished a packet: hand it to ip, keep the pbuf until IPX_TX_DONE (lwIP's
 * TCP does not rewrite a segment whose pbuf is still referenced). */
static err_t nif_output(struct netif *n, struct pbuf *p, const ip4_addr_t *dst)
{
	(void)dst;
	if (!xp.ip_ok || xp.hello_pending || xport_out_space() <= XP_OUT_RESERVE) /* answers to ip first */
		return ERR_MEM;
	struct pbuf *q = p;
	if (p->next || !in_heap(p->payload, p->len)) /* a chain (TCP appends), or not ours */
		if (!(q = pbuf_clone(PBUF_RAW, PBUF_RAM, p)))
			return ERR_MEM;
	if (q == p)
		pbuf_ref(p);
	uint64_t id = reqdb_add(&xk.txdb, xk.tx_ip, tx_abort, q);
	if (id == REQDB_NONE) {
		pbuf_free(q);
		return ERR_MEM;
	}
	struct ipx_msg m = { .type = IPX_TX, .id = id };
	if (!(n->chksum_flags & NETIF_CHECKSUM_GEN_TCP) && tcp_partial(q->payload, q->len))
		m.flags = IPXF_CSUM_PARTIAL;
	m.pkt = (struct chan_ptr){ xp.pool.v.pool_id, (uint32_t)((unsigned char *)q->payload - xp.pool.v.bufs), q->len };
	spsc_push_part(&xp.out, &m, sizeof(m)); /* room was checked */
	xp.out_pushed = true;
	return ERR_OK;
}

static err_t nif_init(struct netif *n)
{
	n->output = nif_output;
	NETIF_SET_CHECKSUM_CTRL(n, NIF_CSUM);
	n->name[0] = 'i', n->name[1] = 'p';
	n->flags = NETIF_FLAG_BROADCAST;
	return ERR_OK;
}

/* The send pool for the driver an IPX_IFACE names (ip announces it as T/pool.DRV). */
static void export_pool_for(const char *drv)
{
	char key[16];
	if (!drv[0] || ksnprintf(key, sizeof(key), "pool.%s", drv) >= (int)sizeof(key))
		return;
	for (int i = 0; i < xp.ndrv; i++)
		if (!strcmp(xp.pool_drv_ex[i].key, key))
			return;
	if (xp.ndrv == XP_MAX_DRV)
		return;
	struct chan_export *e = &xp.pool_drv_ex[xp.ndrv++];
	*e = xp.pool_ip_ex;
	memset(e->key, 0, sizeof(e->key));
	memcpy(e->key, key, strlen(key));
	e->peer = e->key + 5; /* the driver's service name */
	e->on_attach = NULL, e->importer = 0, e->importer_handle = 0;
	chan_export(e);
}

/* IPX_IFACE: mirror the interface (address, mask, gateway, MTU, up). */
static void iface(const struct ipx_iface *f)
{
	if (f->ifindex >= XP_MAX_IF)
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
	/* Up as soon as it has an address: ip does not announce its link changes again, and it
	 * is ip that knows whether a packet can leave (it fails the IPX_TX if not). */
	if (f->addr) {
		netif_set_up(n);
		netif_set_link_up(n);
	} else {
		netif_set_down(n);
	}
	struct xp_ifrec r = { f->addr, f->mask, f->gw, f->mtu, f->up, f->ifindex, { 0 } };
	char key[16];
	ksnprintf(key, sizeof(key), "if.%u", f->ifindex);
	dsc_put(key, &r, sizeof(r));
	/* the default: the first interface that is up */
	struct netif *def = NULL;
	for (int i = 0; i < XP_MAX_IF && !def; i++)
		if (nif_added[i] && netif_is_up(&nif[i]))
			def = &nif[i];
	netif_set_default(def);
	char ip[16], drv[17];
	memcpy(drv, f->name, 16);
	drv[16] = 0;
	export_pool_for(drv);
	xport_fmt_ip4(ip, f->addr);
	ax_printf("%s: interface %u (%s) %s mtu %u %s\n", xp.ops->name, f->ifindex, drv, ip, f->mtu,
		  f->up ? "up" : "down");
}

/* After a restart: the interfaces as the previous incarnation last heard of them. */
static void iface_restore(void)
{
	for (uint8_t i = 0; i < XP_MAX_IF; i++) {
		union { struct xp_ifrec r; uint8_t raw[DS_VAL_LEN]; } u;
		uint32_t len = 0;
		char key[16];
		ksnprintf(key, sizeof(key), "if.%u", i);
		if (dsc_get(xp.ops->name, key, &u, &len) != 0 || len != sizeof(u.r) || u.r.ifindex != i)
			continue;
		struct ipx_iface f = { .type = IPX_IFACE, .ifindex = i, .up = u.r.up, .addr = u.r.addr,
				       .mask = u.r.mask, .gw = u.r.gw, .mtu = u.r.mtu };
		iface(&f);
	}
}

struct netif *xport_input_netif(uint32_t dst)
{
	for (int i = 0; i < XP_MAX_IF; i++)
		if (nif_added[i] && netif_is_up(&nif[i]) && nif[i].ip_addr.addr == dst)
			return &nif[i];
	return netif_default;
}

/* The first packet of a loopback queue (a chain ending where len == tot_len), cut off;
 * *clen its pbufs. */
static struct pbuf *take_packet(struct pbuf **q, u16_t *clen)
{
	struct pbuf *in = *q, *end = in;
	*clen = 1;
	while (end->len != end->tot_len && end->next)
		end = end->next, (*clen)++;
	*q = end->next;
	end->next = NULL;
	return in;
}

/* What we sent ourselves (127.0.0.0/8, our addresses), queued on the netifs by lwIP's
 * loopback: the packets queued now, not those their handling queues (a TCP connection to
 * ourselves would otherwise keep netif_poll busy as long as data flows). Each is delivered,
 * or with deliver false (a live update's quiesce: the netifs are not kept, and TCP sends
 * those segments again) dropped. */
static bool loop_take(bool deliver)
{
	bool any = false;
	struct netif *n;
	NETIF_FOREACH(n) {
		struct pbuf *q = n->loop_first;
		n->loop_first = n->loop_last = NULL;
		while (q) {
			u16_t clen;
			struct pbuf *in = take_packet(&q, &clen);
#if LWIP_LOOPBACK_MAX_PBUFS
			n->loop_cnt_current = (u16_t)(n->loop_cnt_current - clen); /* as netif_poll does */
#endif
			(void)clen;
			any = true;
			if (!deliver) {
				pbuf_free(in);
				continue;
			}
			in->if_idx = netif_get_index(n);
			if (n->output == nif_output) /* to our own address: lwIP left the TCP checksum out */
				xport_rx_csum(n, true, NETIF_CHECKSUM_CHECK_TCP);
			if (n->input(in, n) != ERR_OK)
				pbuf_free(in);
		}
	}
	return any;
}

/* Packets lwIP looped back after loop_take (its timers' ACKs and retransmissions) are
 * delivered in the next turn, not after the next sleep. */
static bool loop_waiting(void)
{
	struct netif *n;
	NETIF_FOREACH(n)
		if (n->loop_first)
			return true;
	return false;
}

/* ---- messages from ip ---- */

static void rx_done(uint64_t id, int32_t arg)
{
	struct ipx_msg m = { .type = IPX_RX_DONE, .arg = arg, .id = id };
	spsc_push_part(&xp.out, &m, sizeof(m)); /* room was kept (ip_batch) */
	xp.out_pushed = true;
}

void xport_rx_done(uint64_t id, int32_t arg)
{
	xp.rx_held--;
	rx_done(id, arg);
}

static void rx_flush(void)
{
	if (xp.ops->rx_flush && xp.rx_held)
		xp.ops->rx_flush();
}

static const unsigned char *resolve(struct chan_ptr p)
{
	const unsigned char *b = pool_resolve(&xp.ip_rx, p);
	return b ? b : pool_resolve(&xp.ip_heap, p);
}

/* The TXs we gave an earlier ip: it popped them and is gone, or they still wait in T/out
 * ahead of our IPX_HELLO and the new ip drops them unread (it starts at the hello that
 * names it). Either way no one reads those pbufs any more. The TXs pushed after our hello
 * are the new ip's: they stay. */
void xport_forget_tx(void)
{
	uint32_t n = reqdb_abort_other(&xk.txdb, xk.tx_ip);
	if (n)
		ax_printf("%s: %u packets in flight to the previous ip forgotten\n", xp.ops->name, n);
}

/* Messages from ip, while there is room to answer them (the held ones' answers included). */
static void ip_batch(bool *work)
{
	if (!xp.ip_ok || xp.hello_pending || xp.deaf)
		return;
	/* After our restart, packets for the restored sockets would be dropped until syscall
	 * reattaches their buffers: they wait in ip's channel for a short while instead. */
	if (xp.awaiting_reattach) {
		if (xp.hello_at && ax_time_ns() - xp.hello_at < XP_HOLD_RX_NS) {
			xp.retry = true;
			return;
		}
		xp.awaiting_reattach = false;
	}
	for (int i = 0; i < 64; i++) {
		if (xport_out_space() <= XP_OUT_RESERVE + (uint32_t)xp.rx_held) /* room for the answers */
			rx_flush();
		if (xport_out_space() <= XP_OUT_RESERVE) { /* room for the answer (nif_output leaves it) */
			xp.retry = true;
			return;
		}
		union { struct ipx_msg m; struct ipx_iface f; uint8_t raw[IPX_SLOT]; } u;
		int e = spsc_pop(&xp.in, &u);
		if (e == CHAN_EAGAIN)
			return;
		if (e < 0) {
			ax_printf("%s: ip/%s.in is corrupt (%d): detached, importing again\n", xp.ops->name,
				  xp.ops->name, e);
			xp.ip_ok = false;
			return;
		}
		*work = true;
		switch (u.m.type) {
		case IPX_RX:
		case IPX_ICMP_ERR: {
			const unsigned char *b = resolve(u.m.pkt);
			int32_t answer = 0;
			if (u.m.type != IPX_RX)
				rx_flush(); /* in order with the packets before it */
			if (!b)
				xp.c.bad_ptr++;
			else if (u.m.type == IPX_RX)
				answer = xp.ops->rx(&u.m, b);
			else
				xp.ops->icmp(b, u.m.pkt.len);
			if (answer == XP_RX_HELD)
				xp.rx_held++;
			else
				rx_done(u.m.id, answer);
			break;
		}
		case IPX_TX_DONE: {
			const struct reqdb_entry *t = reqdb_take(&xk.txdb, u.m.id);
			if (t)
				pbuf_free(t->ctx);
			else
				xp.c.stale_tx_done++;
			break;
		}
		case IPX_IFACE:
			rx_flush();
			iface(&u.f);
			break;
		case IPX_HELLO:
			rx_flush();
			xport_forget_tx();
			if (xk.ip_incarnation >= 0 && xk.ip_incarnation != u.m.arg && xp.ops->ip_restarted)
				xp.ops->ip_restarted();
			xk.ip_incarnation = u.m.arg;
			break;
		default:
			xp.c.bad_ipx++;
		}
	}
}

static void ip_poll(bool *work)
{
	ip_batch(work);
	rx_flush(); /* nothing of ip's is held past the batch */
}

/* ---- socket buffers ---- */

int64_t xport_sockbuf_map(int64_t handle, uint64_t bytes, struct sockbuf *sb, void **va)
{
	uint64_t pages = (bytes + 4095) / 4096;
	int64_t v = ax_mo_map(handle, 0, 0, pages, KP_R | KP_W);
	if (v >= 0 && sockbuf_attach(sb, (void *)v, bytes, SB_ENGINE) == 0) {
		*va = (void *)v;
		return 0;
	}
	xport_sockbuf_unmap(v >= 0 ? (void *)v : NULL, handle);
	return v < 0 ? -12 /* ENOMEM */ : -22 /* EINVAL */;
}

void xport_sockbuf_unmap(void *va, int64_t handle)
{
	if (va)
		ax_mo_unmap((uint64_t)va);
	if (handle > 0)
		ax_mo_destroy(handle); /* closes our handle: the grant is dropped */
}

/* ---- the socket table in ds ---- */

void xport_table_put(uint32_t slot, const struct sk_dsrec *r, struct sk_dsrec *saved)
{
	if (!memcmp(r, saved, sizeof(*r)))
		return;
	char key[16];
	ksnprintf(key, sizeof(key), "s.%u", slot);
	if (slot >= xp.table_slots) {
		char n[12];
		xp.table_slots = slot + 1;
		ksnprintf(n, sizeof(n), "%u", xp.table_slots);
		dsc_put("nslots", n, (uint32_t)strlen(n));
	}
	if (dsc_put(key, r, sizeof(*r)) == 0)
		*saved = *r;
}

uint32_t xport_table_slots(void)
{
	char n[DS_VAL_LEN + 1] = { 0 }; /* dsc_get fills DS_VAL_LEN bytes */
	uint32_t len = 0;
	if (dsc_get(xp.ops->name, "nslots", n, &len) != 0)
		return 0;
	n[len < DS_VAL_LEN ? len : DS_VAL_LEN] = 0;
	return xp.table_slots = (uint32_t)ax_atou(n);
}

bool xport_table_get(uint32_t slot, struct sk_dsrec *r)
{
	char key[16];
	uint32_t len = sizeof(*r);
	ksnprintf(key, sizeof(key), "s.%u", slot);
	return dsc_get(xp.ops->name, key, r, &len) == 0 && len == sizeof(*r);
}

/* ---- attaching to ip and syscall ---- */

static uint32_t export_owner(const char *label, const char *key)
{
	uint32_t v[6] = { 0 }, len = sizeof(v);
	return dsc_get(label, key, v, &len) == 0 && len >= 8 ? v[1] : 0;
}

static void ip_detach(void)
{
	chan_unimport(&xp.in_imp);
	chan_unimport(&xp.rx_imp);
	chan_unimport(&xp.heap_imp);
	xp.ip_ok = false;
	xp.ip_owner = 0;
}

static void sys_detach(void)
{
	chan_unimport(&xp.req_imp);
	chan_unimport(&xp.ev_imp);
	xp.sys_ok = false;
	xp.sys_owner = 0;
}

static void key_of(char *key, size_t n, const char *suffix)
{
	ksnprintf(key, n, "%s%s", xp.ops->name, suffix);
}

/* IPX_HELLO, naming the ip it is for (a new ip drops what T/out held before it). Until it
 * fits, nothing else is pushed: it must come before the packets for that ip. */
static void send_hello(void)
{
	struct ipx_msg h = { .type = IPX_HELLO, .arg = (int32_t)ax_svc.restarts, .id = xk.tx_ip };
	xp.hello_pending = spsc_push_part(&xp.out, &h, sizeof(h)) < 0;
	if (xp.hello_pending)
		xp.retry = true;
	else
		xp.out_pushed = true;
}

/* ip's channel and pools; then IPX_HELLO (ip answers with IPX_IFACE). */
static void ip_attach(void)
{
	ip_detach();
	char kin[16], krx[16], kheap[16];
	ksnprintf(kin, sizeof(kin), "%s.in", xp.ops->name);
	ksnprintf(krx, sizeof(krx), "rx.%s", xp.ops->name);
	ksnprintf(kheap, sizeof(kheap), "heap.%s", xp.ops->name);
	if (chan_import("ip", kin, &xp.in_imp) < 0 || chan_import("ip", krx, &xp.rx_imp) < 0 ||
	    chan_import("ip", kheap, &xp.heap_imp) < 0)
		goto fail;
	if (spsc_attach(&xp.in, xp.in_imp.va, xp.in_imp.bytes, SPSC_CONSUMER) < 0 || xp.in.slot_size != IPX_SLOT ||
	    pool_attach(&xp.ip_rx, xp.rx_imp.va, xp.rx_imp.bytes) < 0 ||
	    pool_attach(&xp.ip_heap, xp.heap_imp.va, xp.heap_imp.bytes) < 0) {
		ax_printf("%s: ip's channel or pools are malformed\n", xp.ops->name);
		goto fail;
	}
	xp.ip_ok = true;
	xp.ip_owner = xp.in_imp.owner;
	if (!xp.ip_peer.ep)
		xp.ip_peer.ep = xp.in_imp.owner;
	/* Our hello makes ip forget what it had from us (the packets we had not given back,
	 * the TX it has not answered). After an adoption nothing is forgotten: ours continue,
	 * unless ip changed during the update too. */
	bool same_ip = xk.tx_ip == (uint32_t)xp.ip_owner;
	xk.tx_ip = (uint32_t)xp.ip_owner;
	if (!xp.adopted || !same_ip)
		send_hello();
	xp.adopted = false;
	ax_printf("%s: attached to ip (endpoint %#x)\n", xp.ops->name, xp.ip_owner);
	return;
fail:
	ip_detach();
}

/* syscall's two channels; then SK_HELLO (syscall reattaches every socket it has with us). */
static void sys_attach(void)
{
	sys_detach();
	char kreq[16], kev[16];
	key_of(kreq, sizeof(kreq), ".req");
	key_of(kev, sizeof(kev), ".ev");
	if (chan_import("syscall", kreq, &xp.req_imp) < 0 || chan_import("syscall", kev, &xp.ev_imp) < 0)
		goto fail;
	if (spsc_attach(&xp.req, xp.req_imp.va, xp.req_imp.bytes, SPSC_CONSUMER) < 0 || xp.req.slot_size != SK_SLOT ||
	    spsc_attach(&xp.evq, xp.ev_imp.va, xp.ev_imp.bytes, SPSC_PRODUCER) < 0 || xp.evq.slot_size != SK_SLOT) {
		ax_printf("%s: syscall's channels are malformed\n", xp.ops->name);
		goto fail;
	}
	xp.sys_ok = true;
	xp.sys_owner = xp.req_imp.owner;
	/* After an adoption: syscall asks again (after our hello) every request it had not had
	 * an answer to; those of them still in its channel must not be done twice. Only the
	 * syscall our predecessor served does so: a new one (updated after us, as in `service
	 * update all`) hears our hello first and asks nothing again, so what waits in its fresh
	 * channel is all new (skipping it left its callers blocked for good). */
	xp.replayed_until = 0;
	if (xp.sys_adopted && xk.sys_ep == xp.sys_owner)
		xp.replayed_until = atomic_load_explicit(&xp.req.sh->head, memory_order_acquire);
	xp.sys_adopted = false;
	xk.sys_ep = xp.sys_owner;
	xp.sys_peer.ep = xp.req_imp.owner;
	chan_watch_reset(&xp.ev_w);
	struct sk_msg h = { .type = SK_HELLO, .arg = ax_svc.restarts };
	spsc_push_part(&xp.evq, &h, sizeof(h));
	xp.ev_pushed = true;
	xp.hello_at = ax_time_ns();
	ax_printf("%s: attached to syscall (endpoint %#x)\n", xp.ops->name, xp.sys_owner);
	return;
fail:
	sys_detach();
}

static void on_out_attach(struct chan_export *e, endpoint_t importer)
{
	(void)e;
	xp.ip_peer.ep = importer;
	chan_watch_reset(&xp.out_w);
}

static int64_t export_pool(void);

static int64_t make_pool(void)
{
	uint64_t pages = (POOL_HDR_SIZE + xp.ops->heap_bytes + 4096 + 4095) / 4096;
	int64_t h = ax_mo_create(pages, MOF_DMA);
	if (h == -KE_PERM) {
		ax_printf("%s: no DMA privilege: the send pool is ordinary memory (no NIC can send from it)\n",
			  xp.ops->name);
		h = ax_mo_create(pages, 0);
	}
	int64_t va = h > 0 ? ax_mo_map(h, 0, 0, pages, KP_R | KP_W) : h;
	if (va < 0)
		return va;
	xk.pool_h = h, xk.pool_va = (uint64_t)va, xk.pool_pages = pages;
	xk.pool_id = POOLID(xp.ops->poolid_kind, ax_svc.restarts);
	return export_pool();
}

/* The predecessor's pool, where it was (lwIP's heap pointers point into it). */
static int64_t adopt_pool(void)
{
	if (ax_mo_map(xk.pool_h, xk.pool_va, 0, xk.pool_pages, KP_R | KP_W) != (int64_t)xk.pool_va) {
		ax_printf("%s: cannot map the kept send pool at %#lx again\n", xp.ops->name, (unsigned long)xk.pool_va);
		return -KE_INVAL;
	}
	return export_pool();
}

static int64_t export_pool(void)
{
	uint64_t pages = xk.pool_pages;
	int64_t h = xk.pool_h, va = (int64_t)xk.pool_va;
	/* One buffer spanning the pool: lwIP's heap allocates inside it, so any packet it
	 * built is one rich pointer. (Formatting an adopted pool again changes nothing: its
	 * header is the same, lwIP's heap lies behind it.) */
	if (pool_init(&xp.pool, xk.pool_id, (void *)va, pages * 4096, (uint32_t)(pages * 4096 - POOL_HDR_SIZE), 1,
		      xp.pool_priv, sizeof(xp.pool_priv)) != 1)
		return -KE_INVAL;
	xp.pool_ip_ex = (struct chan_export){ .handle = h, .bytes = pages * 4096, .rights = KP_R, .peer = "ip" };
	ax_strpad(xp.pool_ip_ex.key, sizeof(xp.pool_ip_ex.key), "pool.ip");
	return chan_export(&xp.pool_ip_ex); /* (waits for ds to know our label: lib/ds) */
}

static void on_notify(struct ax_evloop *l, uint64_t bits)
{
	(void)l;
	if (!(bits & DS_NOTIFY_BIT))
		return;
	char label[DS_NAME_LEN], key[DS_NAME_LEN], kin[16], kreq[16];
	ksnprintf(kin, sizeof(kin), "%s.in", xp.ops->name);
	key_of(kreq, sizeof(kreq), ".req");
	while (dsc_check(label, key) == 0) {
		if (!strcmp(label, "ip") && xp.ip_ok && export_owner("ip", kin) != xp.ip_owner) {
			ax_printf("%s: ip changed (restarted): importing its channel and pools again\n", xp.ops->name);
			ip_detach();
			xp.ip_wait_from = ax_time_ns();
			xp.next_attach = 0;
		} else if (!strcmp(label, "syscall") && xp.sys_ok && export_owner("syscall", kreq) != xp.sys_owner) {
			ax_printf("%s: syscall changed: importing its channels again\n", xp.ops->name);
			sys_detach();
			xp.next_attach = 0;
		}
	}
}

/* `service inject udp|tcp deaf`: the engine runs on, heartbeats included, but no longer
 * reads what ip sends it (a fault only ip notices; the test that ip's RX pool survives a
 * transport that stops reading). */
static void inject(struct ax_evloop *l, const char *word)
{
	(void)l;
	if (!strcmp(word, "deaf")) {
		xp.deaf = true;
		ax_printf("%s: injected fault: ip's channel is no longer read\n", xp.ops->name);
	} else {
		ax_printf("%s: no injectable fault named %s\n", xp.ops->name, word);
	}
}

static void on_message(struct ax_evloop *l, struct kmsg *m)
{
	(void)l;
	if (chan_export_serve(m))
		return;
	if (m->type == NETQ_SHOW) {
		xport_netq(m);
		return;
	}
	memset(m->w, 0, sizeof(m->w));
	m->type = (uint32_t)-KE_NOSYS;
	ax_reply(m->source, m);
}

static void set_flags(uint32_t v)
{
	if (xp.ip_ok)
		atomic_store_explicit(&xp.in.sh->sleeping, v, memory_order_relaxed);
	if (xp.sys_ok)
		atomic_store_explicit(&xp.req.sh->sleeping, v, memory_order_relaxed);
	xport_act_sleeping(v);
}

static bool inputs_waiting(void)
{
	return (xp.ip_ok && spsc_count(&xp.in) > 0) || (xp.sys_ok && spsc_count(&xp.req) > 0) || xport_act_waiting();
}

/* Two input channels, one doorbell to wait on: each channel's "sleeping" flag is raised when
 * a poll found nothing (then both producers ring us by notification), lowered while there
 * is work (lib/chan/README.md, "Going to sleep"; the same fence-then-recheck). The sleep is
 * bounded by lwIP's next timeout. */
static bool poll(struct ax_evloop *l)
{
	bool work = false;
	xp.retry = false;
	set_flags(0);
	uint64_t now = ax_time_ns();
	if ((!xp.ip_ok || !xp.sys_ok) && now >= xp.next_attach) {
		if (!xp.sys_ok)
			sys_attach();
		/* ip imports T/out when it sees it in ds; we import ip/T.in after that (or after
		 * 2 s), so the two imports (each a call to the other) never cross. */
		if (!xp.ip_ok && ((xp.out_ex.importer && xp.pool_ip_ex.importer) || now - xp.ip_wait_from > 2000000000ull))
			ip_attach();
		xp.next_attach = now + ATTACH_RETRY_NS;
	}
	/* ip imports T/out when ds says it changed. If its import met ours of ip/T.in (each
	 * calling the other: the kernel fails one call), it may not try again: publish again. */
	if (xp.ip_ok && xp.out_ex.importer != xp.ip_owner && now >= xp.next_nudge) {
		if (xp.next_nudge) {
			ax_printf("%s: ip has not imported %s/out: publishing it again\n", xp.ops->name, xp.ops->name);
			chan_export(&xp.out_ex);
		}
		xp.next_nudge = now + 500000000;
		xp.retry = true;
	}
	if (xp.hello_pending && xp.ip_ok)
		send_hello();
	ip_poll(&work);
	xp.ops->sys_poll(&work);
	work |= xport_act_poll();
	xp.ops->tx_poll(&work);
	work |= loop_take(true);
#if LWIP_TIMERS
	sys_check_timeouts();
#endif
	work |= loop_waiting();
	xp.ops->flush_events();
	if (xp.out_pushed && xp.ip_ok)
		chan_kick(&xp.out, &xp.ip_plat);
	xport_act_ring(); /* the waiting libraries first: they are what a request waits for */
	if (xp.ev_pushed && xp.sys_ok)
		chan_kick(&xp.evq, &xp.sys_plat);
	xp.out_pushed = xp.ev_pushed = false;
	xp.ops->gc(now);
	/* On a dedicated MWAIT core the applications' bell (their store wakes us; ip and
	 * syscall notify, which ends the MWAIT too); else ip's channel's doorbell. */
	l->doorbell = xport_act_doorbell();
	if (!l->doorbell)
		l->doorbell = xp.ip_ok ? (const volatile uint64_t *)(const void *)&xp.in.sh->bell :
			      xp.sys_ok ? (const volatile uint64_t *)(const void *)&xp.req.sh->bell : NULL;
	l->sleeping = NULL;
	if (!work) {
		set_flags(1);
		atomic_thread_fence(memory_order_seq_cst);
		if (inputs_waiting()) {
			set_flags(0);
			work = true;
		}
	}
	uint64_t wait = xp.retry ? 1000000 : (!xp.ip_ok || !xp.sys_ok) ? ATTACH_RETRY_NS :
			xp.hello_at ? 1000000000 : 0;
#if LWIP_TIMERS
	u32_t ms = sys_timeouts_sleeptime();
	if (ms != SYS_TIMEOUTS_SLEEPTIME_INFINITE && (!wait || (uint64_t)ms * 1000000 < wait))
		wait = ms ? (uint64_t)ms * 1000000 : 1000000;
#endif
	/* A peer that stops reading what we queued for it is alive and broken: rs hears of it
	 * (lib/chan/watch.h); the watch needs a look now and then while messages wait. */
	bool queued = false;
	if (xp.ip_ok && xp.ip_peer.ep)
		queued |= chan_ax_watch(&xp.out_w, &xp.out, &xp.ip_plat);
	if (xp.sys_ok && xp.sys_peer.ep)
		queued |= chan_ax_watch(&xp.ev_w, &xp.evq, &xp.sys_plat);
	if (queued && (!wait || wait > CHAN_WATCH_LOOK_NS))
		wait = CHAN_WATCH_LOOK_NS;
	l->wait_ns = wait;
	return work;
}

bool xport_req_replayed(uint64_t at, const struct sk_msg *q)
{
	/* A close is not asked again (syscall lets go of the socket); an open or a hint carries
	 * no request id. */
	return at < xp.replayed_until && q->req && q->type != SK_OPEN && q->type != SK_CLOSE;
}

void xport_claim(void)
{
	ax_keep_claim(xk.pool_h);
	ax_keep_claim(xk.out_h);
}

/* lwIP's state was kept (the files lib/lwip/lwip.mk keeps: pcbs, pools, heap, statistics);
 * what holds code pointers is made again: the netif list with its loopback interface (ours
 * come back from ds), the timeouts (their pool's entries were the old list's). */
static void lwip_adopt(void)
{
	netif_init();
#if LWIP_TIMERS
	memp_init_pool(memp_pools[MEMP_SYS_TIMEOUT]);
	sys_timeouts_init();
#endif
#if LWIP_TCP
	tcp_timer_needed();
#endif
	/* The TX packets ip has not answered yet: their answers come to us. */
	for (uint32_t i = 0; i < xk.txdb.cap; i++)
		if (xk.txdb_e[i].gen & 1)
			xk.txdb_e[i].abort = tx_abort;
}

int64_t xport_start(int argc, char **argv, const struct xport_ops *ops, bool adopted)
{
	xp.ops = ops;
	if (!adopted)
		xk.ip_incarnation = -1;
	xp.adopted = xp.sys_adopted = adopted;
	xport_act_init(argc, argv);
	xp.ip_peer.bits = xp.sys_peer.bits = XP_WAKE_BIT;
	chan_axolotl_platform(&xp.ip_plat, &xp.ip_peer);
	chan_axolotl_platform(&xp.sys_plat, &xp.sys_peer);
	ksnprintf(xp.out_w.name, sizeof(xp.out_w.name), "%s/out", ops->name);
	ksnprintf(xp.ev_w.name, sizeof(xp.ev_w.name), "%s/ev", ops->name);
	int64_t e = adopted ? adopt_pool() : make_pool();
	if (e < 0) {
		ax_printf("%s: cannot make its send pool: %lld\n", ops->name, (long long)e);
		return e;
	}
	xp_lwip_heap = xp.pool.v.bufs;
	if (adopted) {
		lwip_adopt();
	} else {
		lwip_init();
		reqdb_init(&xk.txdb, xk.txdb_e, XP_TX_INFLIGHT);
	}
	xp.out_ex = (struct chan_export){ .rights = KP_R | KP_W, .peer = "ip", .on_attach = on_out_attach };
	ax_strpad(xp.out_ex.key, sizeof(xp.out_ex.key), "out");
	/* An adopted T/out continues from its indices: ip reads on where it was. */
	e = adopted ? chan_adopt(&xp.out_ex, xk.out_h, xk.out_bytes, SPSC_PRODUCER, &xp.out) :
		      chan_create(&xp.out_ex, IPX_SLOT, IPX_SLOTS, SPSC_PRODUCER, &xp.out);
	xk.out_h = xp.out_ex.handle, xk.out_bytes = xp.out_ex.bytes;
	if (e < 0 || (e = chan_export(&xp.out_ex)) < 0) {
		ax_printf("%s: cannot export %s/out: %lld\n", ops->name, ops->name, (long long)e);
		return e;
	}
	/* The drivers ip will announce our pool to: exported now, before ip tells them (an
	 * IPX_IFACE naming another driver exports for it too). */
	bool named = false;
	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], "drv=", 4))
			export_pool_for(argv[i] + 4), named = true;
	if (!named)
		export_pool_for("e1000");
	if (ax_svc.restarts)
		iface_restore();
	return 0;
}

static int64_t loop_quiesce(struct ax_evloop *l)
{
	(void)l;
	loop_take(false);
	return xp.ops->quiesce();
}

int xport_run(void)
{
	char kin[16], kreq[16];
	ksnprintf(kin, sizeof(kin), "%s.in", xp.ops->name);
	key_of(kreq, sizeof(kreq), ".req");
	dsc_subscribe("ip", kin);
	dsc_subscribe("syscall", kreq);
	ax_printf("%s: started (restart %u), send pool %#x of %u KiB\n", xp.ops->name, ax_svc.restarts,
		  xp.pool.v.pool_id, xp.pool.v.buf_size / 1024);
	xp.ip_wait_from = ax_time_ns();
	struct ax_evloop l = { .on_message = on_message, .on_notify = on_notify, .poll = poll, .inject = inject,
			       .restartable = xp.ops->restartable || xp.ops->quiesce,
			       .quiesce = xp.ops->quiesce ? loop_quiesce : NULL };
	return (int)ax_evloop_run(&l);
}
