/* The transports (ipx_proto.h, README.md "Transports"): udp and tcp get every packet of
 * their protocol addressed to us (a raw pcb per protocol, after reassembly) as a rich
 * pointer into ip's RX pool or heap; they send whole IP packets from their own pools, whose
 * header ip copies into its heap, checks, and chains with a reference to the payload (no
 * copy), then routes, fragments and sends. */
#include "ip.h"
#include "ds_client.h"
#include "lwip/raw.h"
#include "lwip/icmp.h"
#include "lwip/ip4.h"
#include "lwip/ip4_frag.h"
#include "lwip/prot/ip4.h"

#define TX_REFS IPX_SLOTS
#define PEND_MAX 1024

struct tx_ref {                /* a transport's payload lwIP and the drivers still use */
	struct pbuf_custom pc;
	uint64_t id;
	uint32_t epoch;
	uint8_t t;
	bool used;
};

static struct {
	struct tx_ref ref[IP_MAX_T][TX_REFS];
	struct ipx_msg pend[IP_MAX_T][PEND_MAX];
	uint32_t pend_head[IP_MAX_T], pend_n[IP_MAX_T];
	uint32_t epoch[IP_MAX_T];
	struct raw_pcb *pcb[IP_MAX_T];
	/* Until T's IPX_HELLO that names us, what T/out holds was for our predecessor: dropped
	 * unread (T frees those TXs on our hello; its RX_DONEs name our predecessor's ids). */
	bool await_hello[IP_MAX_T];
	endpoint_t self;
} x;

static const char *const names[IP_MAX_T] = { "udp", "tcp" };
static const uint8_t protos[IP_MAX_T] = { IP_PROTO_UDP, IP_PROTO_TCP };

static int t_index(const struct ip_transport *t) { return (int)(t - ip.t); }

/* Queues a message to T: into the channel, or behind what already waits; false if T does
 * not read its channel and the message is lost (counted). */
static bool send_t(struct ip_transport *t, const struct ipx_msg *m)
{
	int i = t_index(t);
	if (!x.pend_n[i] && t->in_attached && spsc_push(&t->in, m) == 0) {
		if (t->peer.ep)
			chan_kick(&t->in, &t->plat);
		return true;
	}
	if (x.pend_n[i] == PEND_MAX) {
		t->c_bad_msg++; /* T does not read its channel: it loses messages */
		return false;
	}
	x.pend[i][(x.pend_head[i] + x.pend_n[i]++) % PEND_MAX] = *m;
	ip.retry = true;
	return true;
}

static bool flush_t(struct ip_transport *t)
{
	int i = t_index(t);
	bool moved = false;
	while (x.pend_n[i] && t->in_attached && spsc_push(&t->in, &x.pend[i][x.pend_head[i]]) == 0) {
		x.pend_head[i] = (x.pend_head[i] + 1) % PEND_MAX;
		x.pend_n[i]--;
		moved = true;
	}
	if (x.pend_n[i])
		ip.retry = true;
	if (moved && t->peer.ep)
		chan_kick(&t->in, &t->plat);
	return moved;
}

static void send_iface(struct ip_transport *t, const struct ip_if *f)
{
	struct ipx_iface m = { .type = IPX_IFACE, .ifindex = f->index, .mtu = NETDEV_MTU };
	m.up = f->cfg_addr && (f->link & NDL_UP);
	m.addr = f->cfg_addr, m.mask = f->cfg_mask, m.gw = f->cfg_gw;
	memcpy(m.mac, f->mac, 6);
	memcpy(m.name, f->name, sizeof(m.name));
	struct ipx_msg msg;
	_Static_assert(sizeof(m) <= sizeof(msg), "fits");
	memset(&msg, 0, sizeof(msg));
	memcpy(&msg, &m, sizeof(m));
	send_t(t, &msg);
}

void ip_ipx_iface_all(void)
{
	for (int i = 0; i < IP_MAX_T; i++)
		if (ip.t[i].in_attached)
			for (int k = 0; k < ip.nifs; k++)
				send_iface(&ip.t[i], &ip.ifs[k]);
}

/* T imported ip/T.in: say hello (T forgets what it had with an earlier ip) and describe
 * the interfaces. */
static void on_attach(struct chan_export *e, endpoint_t importer)
{
	struct ip_transport *t = e->ctx;
	if (e != &t->in_e)
		return;
	t->peer.ep = importer;
	t->in_attached = true;
	chan_watch_reset(&t->in_w);
	struct ipx_msg m = { .type = IPX_HELLO, .arg = (int32_t)ax_svc.restarts };
	send_t(t, &m);
	for (int k = 0; k < ip.nifs; k++)
		send_iface(t, &ip.ifs[k]);
}

static int64_t export_obj(struct chan_export *e, const char *key, int64_t h, uint64_t bytes, uint64_t rights,
			  struct ip_transport *t)
{
	ax_strpad(e->key, sizeof(e->key), key);
	e->handle = h, e->bytes = bytes, e->rights = rights;
	e->peer = t->name;
	e->on_attach = on_attach;
	e->ctx = t;
	return chan_export(e);
}

/* --- receive: the raw pcb of T's protocol --- */

/* A transport that stops reading (slow, or alive but broken) must not take the RX pool from
 * the others and the drivers: it holds this many packets at most, and past that its packets
 * are dropped, as Linux drops past a socket's receive buffer (TCP sends them again). */
#define T_RX_HELD (RX_NBUFS / 4)

/* Gives T the packet p (IP header first): one rich pointer into the RX pool, or into a
 * contiguous heap copy; held until T's IPX_RX_DONE. Takes p. */
static void deliver(struct ip_transport *t, struct pbuf *p, uint16_t type)
{
	struct chan_ptr ptr;
	uint32_t off;
	uint16_t flags = 0;
	if (t->rx_db.nused >= T_RX_HELD) {
		pbuf_free(p);
		t->c_rx_full++;
		return;
	}
	if (!p->next && ip_rx_offset(p->payload, p->len, &off)) {
		ptr = (struct chan_ptr){ ip.rx_pool_id, off, p->len };
		/* One whole frame as the NIC received it: its verdict on the TCP/UDP checksum holds
		 * (a reassembled datagram takes the other branch: the NIC saw only fragments). */
		uint8_t nd = ip.rxb[off / NETDEV_RXBUF].nd_flags;
		if (type == IPX_RX && (nd & NDF_RX_L4_OK) && !(nd & NDF_RX_CSUM_BAD))
			flags = IPXF_L4_CSUM_OK;
	} else {
		/* Reassembled (a chain) or not in the RX pool: one contiguous copy in the heap. */
		struct pbuf *c = pbuf_clone(PBUF_RAW, PBUF_RAM, p);
		pbuf_free(p);
		if (!c || !ip_in_heap(c->payload, c->len, &off)) {
			if (c)
				pbuf_free(c);
			t->c_bad_msg++;
			return;
		}
		p = c;
		ptr = (struct chan_ptr){ ip.heap_pool_id, off, p->len };
	}
	uint64_t id = reqdb_add(&t->rx_db, 1, NULL, NULL);
	if (id == REQDB_NONE) {
		pbuf_free(p);
		t->c_bad_msg++;
		return;
	}
	t->rx_p[(uint32_t)id] = p;
	struct ipx_msg m = { .type = type, .flags = flags, .id = id, .pkt = ptr };
	if (!send_t(t, &m)) { /* never reaches T: its buffer is ours again */
		reqdb_take(&t->rx_db, id);
		t->rx_p[(uint32_t)id] = NULL;
		pbuf_free(p);
		return;
	}
	t->c_rx++;
	t->c_rx_csum_hw += flags != 0;
}

static u8_t raw_rx(void *arg, struct raw_pcb *pcb, struct pbuf *p, const ip_addr_t *addr)
{
	(void)pcb, (void)addr;
	struct ip_transport *t = arg;
	if (!t->in_attached || !t->attached)
		return 0; /* lwIP answers: port or protocol unreachable */
	const struct ip_hdr *h = p->payload;
	u16_t hl = IPH_HL_BYTES(h);
	if (t->proto == IP_PROTO_UDP) {
		uint8_t ports[4];
		if (pbuf_copy_partial(p, ports, 4, hl) == 4 && ports[2] == 0 && ports[3] == 68)
			return 0; /* DHCP replies are lwIP's own (dhcp.c) */
	}
	deliver(t, p, IPX_RX);
	return 1;
}

bool ip_ipx_icmp_err(uint8_t proto, struct pbuf *p)
{
	for (int i = 0; i < IP_MAX_T; i++) {
		struct ip_transport *t = &ip.t[i];
		if (t->proto == proto && t->in_attached && t->attached) {
			deliver(t, p, IPX_ICMP_ERR);
			return true;
		}
	}
	return false;
}

static void rx_done(struct ip_transport *t, const struct ipx_msg *m)
{
	if (!reqdb_take(&t->rx_db, m->id)) {
		t->c_bad_msg++;
		return;
	}
	struct pbuf *p = t->rx_p[(uint32_t)m->id];
	t->rx_p[(uint32_t)m->id] = NULL;
	if (m->arg == IPX_UNREACH_PORT && IPH_PROTO((struct ip_hdr *)p->payload) == t->proto) {
		/* (never an ICMP error about an ICMP error) */
		t->c_unreach++;
		icmp_dest_unreach(p, ICMP_DUR_PORT);
	}
	pbuf_free(p);
}

/* --- transmit --- */

static void tx_ref_free(struct pbuf *p)
{
	struct tx_ref *r = (struct tx_ref *)p;
	struct ip_transport *t = &ip.t[r->t];
	r->used = false;
	if (r->epoch != x.epoch[r->t])
		return; /* sent for a previous incarnation of T */
	struct ipx_msg m = { .type = IPX_TX_DONE, .id = r->id };
	send_t(t, &m);
}

static void tx_done(struct ip_transport *t, uint64_t id, int32_t err)
{
	struct ipx_msg m = { .type = IPX_TX_DONE, .id = id, .arg = err };
	send_t(t, &m);
}

/* Completes a CHECKSUM_PARTIAL L4 checksum: the field holds the pseudo-header sum. */
static void l4_csum(uint8_t *l4, uint32_t l4hdr, const uint8_t *rest, uint32_t restlen, uint32_t field)
{
	uint32_t s = iph_sum(0, l4, l4hdr);
	s = iph_sum(s, rest, restlen);
	uint16_t c = (uint16_t)~iph_fold(s);
	if (c == 0 && field == 6)
		c = 0xffff; /* UDP: 0 means "no checksum" */
	l4[field] = (uint8_t)(c >> 8), l4[field + 1] = (uint8_t)c;
}

static void tx(struct ip_transport *t, const struct ipx_msg *m)
{
	int ti = t_index(t);
	const uint8_t *pkt = pool_resolve(&t->pool, m->pkt);
	uint8_t h[20 + 60];
	uint32_t ours[IP_MAX_IF], len = m->pkt.len;
	for (int i = 0; i < ip.nifs; i++)
		ours[i] = ip.ifs[i].cfg_addr;
	if (!pkt || len < 20 || len > 65535) {
		t->c_tx_bad++;
		tx_done(t, m->id, -22);
		return;
	}
	memcpy(h, pkt, 20); /* our copy: T may change its pool under us */
	enum iph_verdict v = iph_tx_check(h, 20, len, t->proto, ours, (size_t)ip.nifs);
	if (v != IP4_OK) {
		if (t->c_tx_bad++ < 5)
			ax_printf("ip: %s sent a bad packet (%s): dropped\n", t->name, iph_verdict_name[v]);
		tx_done(t, m->id, -22);
		return;
	}
	ip4_addr_t dst;
	memcpy(&dst.addr, h + 16, 4);
	struct netif *n = ip4_route(&dst);
	if (!n) {
		t->c_tx_noroute++;
		tx_done(t, m->id, -113); /* EHOSTUNREACH */
		return;
	}
	uint32_t hl = 20;
	bool nic_csum = false;
	if (m->flags & IPXF_CSUM_PARTIAL) {
		uint32_t l4 = t->proto == IP_PROTO_UDP ? 8 : 20, field = t->proto == IP_PROTO_UDP ? 6 : 16;
		if (len >= 20 + 20 && t->proto == IP_PROTO_TCP)
			l4 = (uint32_t)(pkt[20 + 12] >> 4) * 4;
		if (l4 < (t->proto == IP_PROTO_UDP ? 8u : 20u) || 20 + l4 > len) {
			t->c_tx_bad++;
			tx_done(t, m->id, -22);
			return;
		}
		/* The NIC finishes a TCP segment that leaves whole; we finish the rest (fragments,
		 * UDP, a next hop not yet resolved). */
		nic_csum = t->proto == IP_PROTO_TCP && len <= n->mtu && ip_if_l4_offload(n, &dst);
		if (!nic_csum) {
			memcpy(h + 20, pkt + 20, l4);
			l4_csum(h + 20, l4, pkt + 20 + l4, len - 20 - l4, field);
			hl += l4;
		}
	}
	struct pbuf *p = pbuf_alloc(PBUF_LINK, (u16_t)hl, PBUF_RAM);
	if (!p) {
		tx_done(t, m->id, -105); /* ENOBUFS */
		return;
	}
	memcpy(p->payload, h, hl);
	if (nic_csum) {
		p->flags |= IP_PBUF_L4_PARTIAL;
		t->c_tx_csum_hw++;
	}
	if (len > hl) {
		struct tx_ref *r = NULL;
		for (int i = 0; i < TX_REFS && !r; i++)
			if (!x.ref[ti][i].used)
				r = &x.ref[ti][i];
		if (!r) {
			pbuf_free(p);
			tx_done(t, m->id, -105);
			return;
		}
		*r = (struct tx_ref){ .id = m->id, .epoch = x.epoch[ti], .t = (uint8_t)ti, .used = true };
		r->pc.custom_free_function = tx_ref_free;
		struct pbuf *q = pbuf_alloced_custom(PBUF_RAW, (u16_t)(len - hl), PBUF_REF, &r->pc,
						     (void *)(pkt + hl), (u16_t)(len - hl));
		pbuf_cat(p, q);
	}
	t->c_tx++;
	if (p->tot_len > n->mtu)
		ip4_frag(p, n, &dst);
	else
		n->output(n, p, &dst);
	pbuf_free(p); /* the payload's free (tx_ref_free) reports the TX done */
	if (len == hl)
		tx_done(t, m->id, 0);
}

/* --- attaching to T's channel and pool --- */

static void forget_rx(struct ip_transport *t)
{
	for (uint32_t i = 0; i < IPX_SLOTS; i++)
		if (t->rx_p[i]) {
			pbuf_free(t->rx_p[i]);
			t->rx_p[i] = NULL;
		}
	reqdb_init(&t->rx_db, t->rx_ent, IPX_SLOTS);
}

static void detach(struct ip_transport *t)
{
	int ti = t_index(t);
	bool in_use = false;
	for (int i = 0; i < TX_REFS && !in_use; i++)
		in_use = x.ref[ti][i].used;
	chan_unimport(&t->out_mem);
	/* Payloads still on their way to a driver point into the pool: keep that mapping (one
	 * leaked per such restart) rather than pull it from under them. */
	if (!in_use)
		chan_unimport(&t->pool_mem);
	else
		t->pool_mem.va = NULL;
	t->attached = false;
	memset(&t->pool, 0, sizeof(t->pool));
}

static void attach(struct ip_transport *t)
{
	detach(t);
	/* Retried from the loop until it works: T may not run yet, or may be importing from us
	 * at this very moment (two calls at each other: the kernel fails one). */
	t->retry_ns = ax_time_ns() + 500000000ull;
	if (chan_import(t->name, "out", &t->out_mem) < 0)
		return;
	if (chan_import(t->name, "pool.ip", &t->pool_mem) < 0 ||
	    spsc_attach(&t->out, t->out_mem.va, t->out_mem.bytes, SPSC_CONSUMER) < 0 ||
	    t->out.slot_size != IPX_SLOT || pool_attach(&t->pool, t->pool_mem.va, t->pool_mem.bytes) < 0) {
		detach(t);
		return;
	}
	atomic_store_explicit(&t->out.sh->sleeping, 1, memory_order_relaxed);
	t->attached = true;
	ax_printf("ip: attached to %s (pool %#x)\n", t->name, t->pool.pool_id);
	/* The drivers may transmit from T's pool: announce it (at their next reset they get it too). */
	for (int k = 0; k < ip.nifs; k++)
		ip.ifs[k].pools_sent = false;
	ip.retry = true;
}

void ip_ipx_ds_changed(const char *label)
{
	for (int i = 0; i < IP_MAX_T; i++) {
		struct ip_transport *t = &ip.t[i];
		if (strcmp(label, t->name))
			continue;
		/* Only a new owner (T restarted) is a reason to let go of what we mapped. */
		struct { uint32_t magic, owner; uint64_t bytes; uint32_t rights, pad; } v;
		uint32_t len = 0;
		if (t->attached && dsc_get(t->name, "out", &v, &len) == 0 && len == sizeof(v) &&
		    v.owner == t->out_mem.owner && dsc_get(t->name, "pool.ip", &v, &len) == 0 &&
		    len == sizeof(v) && v.owner == t->out_mem.owner)
			continue;
		attach(t);
	}
}

static bool t_poll(struct ip_transport *t)
{
	bool work = flush_t(t);
	if (t->in_attached && t->peer.ep)
		chan_ax_watch(&t->in_w, &t->in, &t->plat); /* (ip looks at least every 100 ms) */
	if (!t->attached && ax_time_ns() >= t->retry_ns)
		attach(t);
	if (!t->attached)
		return work;
	if (ip.deaf)
		return work;
	atomic_store_explicit(&t->out.sh->sleeping, 1, memory_order_relaxed);
	for (int n = 0; n < 256; n++) {
		struct ipx_msg m;
		int e = spsc_pop(&t->out, &m);
		if (e == CHAN_EAGAIN)
			break;
		if (e < 0) {
			ax_printf("ip: %s/out is corrupt: detached until %s exports it again\n", t->name, t->name);
			detach(t);
			break;
		}
		work = true;
		if (x.await_hello[t_index(t)]) {
			if (m.type != IPX_HELLO || m.id != x.self) {
				t->c_stale_msg++;
				continue;
			}
			x.await_hello[t_index(t)] = false;
			if (t->c_stale_msg)
				ax_printf("ip: %s/out: %lu messages for the previous ip dropped\n", t->name,
					  (unsigned long)t->c_stale_msg);
		}
		switch (m.type) {
		case IPX_HELLO:
			/* A new T: what the old one had from us is forgotten, its TXs not reported. */
			x.epoch[t_index(t)]++;
			forget_rx(t);
			t->incarnation = (uint32_t)m.arg;
			for (int k = 0; k < ip.nifs; k++)
				send_iface(t, &ip.ifs[k]);
			break;
		case IPX_RX_DONE: rx_done(t, &m); break;
		case IPX_TX: tx(t, &m); break;
		default: t->c_bad_msg++; break;
		}
	}
	return work;
}

void ip_ipx_gauges(void)
{
	for (int i = 0; i < IP_MAX_T; i++) {
		struct ip_transport *t = &ip.t[i];
		long queued = t->attached ? spsc_count(&t->out) : 0;
		t->out_queued = queued > 0 ? (uint64_t)queued : 0;
	}
}

bool ip_ipx_poll(void)
{
	bool work = false;
	for (int i = 0; i < IP_MAX_T; i++)
		work |= t_poll(&ip.t[i]);
	return work;
}

int ip_ipx_init(void)
{
	uint64_t rx_bytes = (POOL_HDR_SIZE + (uint64_t)RX_NBUFS * NETDEV_RXBUF + 4095) & ~4095ull;
	uint64_t heap_bytes = (POOL_HDR_SIZE + (uint64_t)HEAP_BYTES + 4095) & ~4095ull;
	x.self = ax_self(); /* the owner our exports name (chan_export) */
	for (int i = 0; i < IP_MAX_T; i++) {
		struct ip_transport *t = &ip.t[i];
		char key[16];
		x.await_hello[i] = true;
		t->name = names[i];
		t->proto = protos[i];
		reqdb_init(&t->rx_db, t->rx_ent, IPX_SLOTS);
		t->peer.bits = IP_WAKE_BIT;
		chan_axolotl_platform(&t->plat, &t->peer);
		ksnprintf(t->in_w.name, sizeof(t->in_w.name), "ip/%s.in", t->name);
		int64_t r = chan_create(&t->in_e, IPX_SLOT, IPX_SLOTS, SPSC_PRODUCER, &t->in);
		ksnprintf(key, sizeof(key), "%s.in", t->name);
		if (r == 0)
			r = export_obj(&t->in_e, key, t->in_e.handle, t->in_e.bytes, KP_R | KP_W, t);
		ksnprintf(key, sizeof(key), "rx.%s", t->name);
		if (r == 0)
			r = export_obj(&t->rx_e, key, ip.rx_h, rx_bytes, KP_R, t);
		ksnprintf(key, sizeof(key), "heap.%s", t->name);
		if (r == 0)
			r = export_obj(&t->heap_e, key, ip.heap_h, heap_bytes, KP_R, t);
		if (r < 0)
			return (int)r;
		x.pcb[i] = raw_new(t->proto);
		if (!x.pcb[i])
			return -KE_NOMEM;
		raw_recv(x.pcb[i], raw_rx, t);
		dsc_subscribe(t->name, "out");
		dsc_subscribe(t->name, "pool.ip");
		attach(t); /* if T runs already */
	}
	return 0;
}
