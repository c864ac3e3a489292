/* ip's interfaces: one lwIP netif per driver, the two channels to it (netdev_proto.h), RX
 * buffers posted to it, frames given to it and not yet acknowledged (README.md). */
#include "ip.h"
#include "lwip/etharp.h"
#include "lwip/dhcp.h"
#include "netif/ethernet.h"

static struct ip_if *if_of_export(struct chan_export *e) { return e->ctx; }

struct ip_if *ip_if_of(struct netif *n) { return n->state; }

bool ip_if_l4_offload(struct netif *n, const ip4_addr_t *dst)
{
	bool ours = false;
	for (int i = 0; i < ip.nifs && !ours; i++)
		ours = &ip.ifs[i].netif == n;
	if (!ours || !(ip_if_of(n)->caps & NDF_TX_CSUM_L4))
		return false; /* (the driver said at ND_RESET it cannot finish TCP checksums) */
	const ip4_addr_t *hop = dst;
	if (!ip4_addr_netcmp(dst, netif_ip4_addr(n), netif_ip4_netmask(n)))
		hop = netif_ip4_gw(n);
	struct eth_addr *mac;
	const ip4_addr_t *ipa;
	return etharp_find_addr(n, hop, &mac, &ipa) >= 0;
}

static void on_attach(struct chan_export *e, endpoint_t importer)
{
	struct ip_if *f = if_of_export(e);
	f->drv.ep = importer;
	for (int q = 0; q < f->nq_offer; q++)
		chan_watch_reset(&f->q[q].down_w);
	f->refused_n = 0;
}

/* Rings the driver for every queue this pass pushed to. */
static void kick_queues(struct ip_if *f)
{
	for (int q = 0; f->kick && q < f->nq_offer; q++)
		if (f->kick & (1u << q) && f->drv.ep)
			chan_kick(&f->q[q].down, &f->plat);
	f->kick = 0;
}

static int64_t export_obj(struct chan_export *e, const char *key, int64_t h, uint64_t bytes,
			  uint64_t rights, struct ip_if *f)
{
	if (ax_strpad(e->key, sizeof(e->key), key) < 0)
		return -KE_INVAL;
	e->handle = h, e->bytes = bytes, e->rights = rights;
	e->peer = f->name;
	e->on_attach = on_attach;
	e->ctx = f;
	return chan_export(e);
}

static uint64_t pages_of(uint64_t b) { return (b + 4095) & ~4095ull; }

/* --- transmit --- */

static bool seg_of(const struct ip_if *f, const void *p, uint32_t len, struct chan_ptr *out)
{
	uint32_t off;
	if (ip_in_heap(p, len, &off)) {
		*out = (struct chan_ptr){ ip.heap_pool_id, off, len };
		return true;
	}
	if (ip_rx_offset(p, len, &off)) {
		*out = (struct chan_ptr){ ip.rx_pool_id, off, len };
		return true;
	}
	for (int i = 0; i < IP_MAX_T; i++) {
		const struct pool_view *v = &ip.t[i].pool;
		if (!ip.t[i].attached || !v->bufs || v->pool_id == f->refused_pool)
			continue; /* (a pool the driver cannot use: the frame is copied) */
		const unsigned char *b = p;
		if (b >= v->bufs && b + len <= v->bufs + (uint64_t)v->buf_size * v->nbufs) {
			*out = (struct chan_ptr){ v->pool_id, (uint32_t)(b - v->bufs), len };
			return true;
		}
	}
	return false;
}

/* The frame's pieces as rich pointers, adjacent ones merged; false if they are too many or
 * one is in memory the driver cannot see. */
static bool segments(const struct ip_if *f, struct pbuf *p, struct netdev_msg *m)
{
	m->nseg = 0;
	for (struct pbuf *q = p; q; q = q->next) {
		if (!q->len)
			continue;
		struct chan_ptr s;
		if (!seg_of(f, q->payload, q->len, &s))
			return false;
		struct chan_ptr *last = m->nseg ? &m->seg[m->nseg - 1] : NULL;
		if (last && last->pool_id == s.pool_id && last->offset + last->len == s.offset) {
			last->len += s.len;
			continue;
		}
		if (m->nseg == NETDEV_MAXSEG)
			return false;
		m->seg[m->nseg++] = s;
	}
	return m->nseg > 0;
}

static int tx_push(struct ip_if *f, uint32_t slot)
{
	struct tx_slot *t = &f->tx[slot];
	struct netdev_msg m = { .type = ND_TX, .flags = t->nd_flags, .id = (uint64_t)t->gen << 32 | slot,
				.arg = t->nd_arg };
	if (!segments(f, t->p, &m)) {
		/* Gather the frame into one heap buffer the driver can see. */
		struct pbuf *c = pbuf_clone(PBUF_RAW, PBUF_RAM, t->p);
		if (!c || !segments(f, c, &m)) {
			if (c)
				pbuf_free(c);
			return -1;
		}
		pbuf_free(t->p);
		t->p = c;
		f->c.tx_copied++;
	}
	if (spsc_push(&f->q[t->q].down, &m) != 0)
		return 1;
	f->kick |= (uint8_t)(1u << t->q);
	f->q[t->q].tx_frames++;
	return 0;
}

static void tx_release(struct ip_if *f, uint32_t slot)
{
	if (!f->tx[slot].queued && f->tx_given) { /* the driver answered one it held */
		f->tx_given--;
		f->tx_waiting_ns = ax_time_ns();
	}
	pbuf_free(f->tx[slot].p);
	f->tx[slot].p = NULL;
	f->tx[slot].queued = false;
}

/* Pushes what waits for room, in order; true if anything moved. */
static bool tx_flush(struct ip_if *f)
{
	bool moved = false;
	while (f->ready && f->txq_n) {
		uint32_t slot = f->txq[f->txq_head];
		int r = f->tx[slot].queued ? tx_push(f, slot) : 0;
		if (r > 0) {
			ip.retry = true;
			break;
		}
		if (r < 0) {
			f->c.tx_err++;
			tx_release(f, slot);
		} else if (f->tx[slot].queued) {
			f->tx[slot].queued = false;
			if (!f->tx_given++)
				f->tx_waiting_ns = ax_time_ns();
			f->c.tx_frames++;
			f->c.tx_bytes += f->tx[slot].p->tot_len;
		}
		f->txq_head = (f->txq_head + 1) % TX_MAX;
		f->txq_n--;
		moved = true;
	}
	return moved;
}

static err_t linkoutput(struct netif *n, struct pbuf *p)
{
	struct ip_if *f = ip_if_of(n);
	static uint32_t cursor;
	if (f->txq_n == TX_MAX) {
		f->c.tx_drop_full++;
		return ERR_OK; /* dropped: like a full device ring */
	}
	uint32_t slot = TX_MAX;
	for (uint32_t i = 0; i < TX_MAX; i++) {
		uint32_t s = (cursor + i) % TX_MAX;
		if (!f->tx[s].p) {
			slot = s;
			break;
		}
	}
	if (slot == TX_MAX) {
		f->c.tx_drop_full++;
		return ERR_OK;
	}
	cursor = slot + 1;
	pbuf_ref(p);
	f->tx[slot] = (struct tx_slot){ p, ++f->tx_gen, true, 0, 0, 0 };
	if (f->nq > 1) { /* (the headers may span pbufs: the Ethernet header is one of its own) */
		uint8_t h[14 + 60 + 4];
		struct rss_key k;
		if (rss_flow_of(h, pbuf_copy_partial(p, h, sizeof(h), 0), false, &k))
			f->tx[slot].q = (uint8_t)rss_tx_queue(&f->flows, &k, f->nq);
	}
	if (p->flags & IP_PBUF_L4_PARTIAL) { /* TCP after a 20-byte IPv4 header (ipx.c) */
		f->tx[slot].nd_flags = NDF_TX_CSUM_L4;
		f->tx[slot].nd_arg = (14 + 20) | (uint64_t)(14 + 20 + 16) << 16;
	}
	f->txq[(f->txq_head + f->txq_n) % TX_MAX] = slot;
	f->txq_n++;
	tx_flush(f);
	kick_queues(f);
	return ERR_OK;
}

err_t ip_if_output_now(struct netif *n, struct pbuf *p, const ip4_addr_t *dst)
{
	return etharp_output(n, p, dst);
}

/* --- receive --- */

/* Each queue's share of the interface's RX buffers, up to it; true if any was given. Adds
 * the queues given any to *to, and sets *low if one of them had less than half its share. */
static bool post_rx(struct ip_if *f, uint8_t *to, bool *low)
{
	bool moved = false;
	uint32_t share = RX_PER_IF / f->nq;
	for (uint8_t q = 0; f->ready && q < f->nq; q++) {
		struct ip_q *iq = &f->q[q];
		bool was_low = iq->rx_posted < share / 2;
		while (iq->rx_posted < share) {
			struct chan_ptr b;
			if (pool_alloc(&ip.rx_pool, NETDEV_RXBUF, &b) < 0)
				return moved;
			struct netdev_msg m = { .type = ND_RXBUF, .nseg = 1, .seg = { b } };
			if (spsc_push(&iq->down, &m) != 0) {
				pool_free(&ip.rx_pool, b);
				ip.retry = true;
				break;
			}
			uint32_t idx = b.offset / NETDEV_RXBUF;
			ip.rxb[idx].state = RXB_DRIVER;
			ip.rxb[idx].ifindex = f->index;
			ip.rxb[idx].q = q;
			iq->rx_posted++;
			*to |= (uint8_t)(1u << q);
			*low |= was_low;
			moved = true;
		}
	}
	return moved;
}

static bool send_pool(struct ip_if *f, uint32_t id, const char *label, const char *key)
{
	struct netdev_pool m = { .type = ND_POOL, .pool_id = id };
	ax_strpad(m.label, sizeof(m.label), label);
	ax_strpad(m.key, sizeof(m.key), key);
	bool ok = spsc_push_part(&f->q[0].down, &m, sizeof(m)) == 0;
	f->down_other |= ok;
	return ok;
}

/* Every pool the driver may see in a TX or RX message: ours, then the transports'. */
static bool send_pools(struct ip_if *f)
{
	/* The RX pool needs no announcement: the driver imports ip/rx.DRV when it attaches. */
	char key[16];
	ksnprintf(key, sizeof(key), "heap.%s", f->name);
	bool ok = send_pool(f, ip.heap_pool_id, "ip", key);
	ksnprintf(key, sizeof(key), "pool.%s", f->name);
	for (int i = 0; ok && i < IP_MAX_T; i++)
		if (ip.t[i].attached)
			ok = send_pool(f, ip.t[i].pool.pool_id, ip.t[i].name, key);
	return ok;
}

static void driver_reset(struct ip_if *f, const struct netdev_msg *m)
{
	/* Everything the driver held is ours again: its device was reset. */
	for (uint32_t i = 0; i < RX_NBUFS; i++)
		if (ip.rxb[i].state == RXB_DRIVER && ip.rxb[i].ifindex == f->index) {
			ip.rxb[i].state = RXB_FREE;
			pool_free(&ip.rx_pool, (struct chan_ptr){ ip.rx_pool_id, i * NETDEV_RXBUF, 0 });
		}
	/* The queue pairs it runs; what waits on the others was its predecessor's (it answers
	 * only buffers and frames given after this ND_RESET): dropped unread. */
	f->nq = (uint8_t)(m->queues < 1 ? 1 : m->queues > f->nq_offer ? f->nq_offer : m->queues);
	memset(&f->flows.e, 0, sizeof(f->flows.e));
	for (int q = 0; q < f->nq_offer; q++) {
		struct netdev_msg stale;
		f->q[q].rx_posted = 0;
		while (q && spsc_pop(&f->q[q].up, &stale) == 0)
			;
	}
	/* Unacknowledged frames are sent again, in slot order after what already waits. */
	f->txq_n = 0, f->txq_head = 0;
	f->tx_given = 0;
	for (uint32_t s = 0; s < TX_MAX; s++)
		if (f->tx[s].p) {
			f->tx[s].queued = true;
			f->tx[s].q %= f->nq;
			f->txq[f->txq_n++] = s;
		}
	memcpy(f->mac, &m->id, 6); /* the MAC's bytes in order in the id's low 48 bits */
	bool first = !f->ready;
	f->ready = true;
	f->link = m->arg;
	f->caps = m->flags;
	memcpy(f->netif.hwaddr, f->mac, 6);
	f->netif.hwaddr_len = 6;
	f->pools_sent = send_pools(f);
	if (!f->pools_sent)
		ip.retry = true;
	ax_printf("ip: %s: driver %s, mac %02x:%02x:%02x:%02x:%02x:%02x, link %s, %u queue pair%s, %u frames to resend\n",
		  f->name, first ? "attached" : "reset", f->mac[0], f->mac[1], f->mac[2], f->mac[3], f->mac[4],
		  f->mac[5], (m->arg & NDL_UP) ? "up" : "down", f->nq, f->nq == 1 ? "" : "s", f->txq_n);
	if (m->arg & NDL_UP)
		netif_set_link_up(&f->netif);
	else
		netif_set_link_down(&f->netif);
	if (first) {
		/* The first interface whose driver is there is the default (if=e1000,virtio-net:
		 * whichever NIC the machine has; the other driver is absent and never attaches). */
		if (!netif_default || !netif_is_up(netif_default))
			netif_set_default(&f->netif);
		netif_set_up(&f->netif);
		if (f->dhcp && !f->dhcp_started) {
			/* After a restart too: the restored lease stays in use while lwIP asks again. */
			f->dhcp_started = true;
			dhcp_start(&f->netif);
		}
	}
}

static void rx_frame(struct ip_if *f, uint8_t q, const struct netdev_msg *m)
{
	uint32_t idx;
	if (m->nseg != 1 || !ip_rx_index(m->seg[0], &idx) || ip.rxb[idx].state != RXB_DRIVER ||
	    ip.rxb[idx].ifindex != f->index || ip.rxb[idx].q != q) {
		f->c.rx_bad_msg++;
		return;
	}
	f->q[q].rx_posted--;
	uint32_t len = m->seg[0].len;
	if (len < 14 || len > NETDEV_FRAME_MAX) {
		f->c.rx_runt++;
		ip.rxb[idx].state = RXB_FREE;
		pool_free(&ip.rx_pool, (struct chan_ptr){ ip.rx_pool_id, idx * NETDEV_RXBUF, 0 });
		return;
	}
	f->c.rx_frames++;
	f->c.rx_bytes += len;
	f->q[q].rx_frames++;
	struct rss_key k;
	if (f->nq > 1 && rss_flow_of(ip.rx_pool.v.bufs + (size_t)idx * NETDEV_RXBUF, len, true, &k) &&
	    rss_note_rx(&f->flows, &k, q))
		f->c.rx_flow_moved++;
	struct pbuf *p = ip_rx_wrap(idx, len, m->flags);
	if (!p)
		return;
	if (f->netif.input(p, &f->netif) != ERR_OK)
		pbuf_free(p);
}

static void tx_done(struct ip_if *f, uint8_t q, const struct netdev_msg *m)
{
	uint32_t slot = (uint32_t)m->id;
	if (slot >= TX_MAX || !f->tx[slot].p || f->tx[slot].gen != (uint32_t)(m->id >> 32) || f->tx[slot].queued ||
	    f->tx[slot].q != q) {
		f->c.rx_bad_msg++; /* unknown, late or forged */
		return;
	}
	if ((int32_t)m->arg < 0) {
		f->c.tx_err++;
		if ((int32_t)m->arg != -KE_AGAIN && !f->refused_n++) /* (-KE_AGAIN: no link) */
			f->refused_since_ns = ax_time_ns();
	} else {
		f->refused_n = 0;
	}
	tx_release(f, slot);
}

/* A driver that reads its channel but refuses every frame for CHAN_STALL_SAY_NS, while its
 * link is up, is as broken as one that stops reading (in the fault campaign a branch fault
 * in e1000's segment check refused them all); so is one that holds frames and answers none
 * for as long (deaf, with everything TCP had in flight in its ring: TCP retransmits nothing
 * the driver still holds, so nothing new waits in the channel for its watch). rs hears of
 * either as of a channel that stands. */
static void tx_stall_check(struct ip_if *f)
{
	if (!f->drv.ep || !(f->link & NDL_UP))
		return;
	uint64_t now = ax_time_ns(), since;
	const char *why;
	if (f->refused_n >= 32)
		since = f->refused_since_ns, why = "refused";
	else if (f->tx_given)
		since = f->tx_waiting_ns, why = "answered none of";
	else
		return;
	if (now - since < CHAN_STALL_SAY_NS || now - f->tx_said_ns < CHAN_STALL_AGAIN_NS)
		return;
	f->tx_said_ns = now;
	char what[RS_COMPLAIN_WHAT];
	ksnprintf(what, sizeof(what), "ip/%s.tx", f->name);
	ax_printf("ip: %s %s the last %u frames\n", f->name, why, f->refused_n >= 32 ? f->refused_n : f->tx_given);
	ax_svc_complain(f->drv.ep, what, (now - since) / 1000000);
}

static void lease_check(struct ip_if *f);

/* Queue q's messages from the driver (up to a batch); true if any. */
static bool up_poll(struct ip_if *f, uint8_t q)
{
	struct ip_q *iq = &f->q[q];
	bool work = false;
	atomic_store_explicit(&iq->up.sh->sleeping, 1, memory_order_relaxed);
	for (int n = 0; n < 256; n++) {
		struct netdev_msg m;
		int e = spsc_pop(&iq->up, &m);
		if (e == CHAN_EAGAIN)
			break;
		if (e < 0) {
			/* A corrupt channel: start it afresh; the driver re-imports it. */
			ax_printf("ip: %s: %s.up (queue %u) is corrupt, made a new one\n", f->name, f->name, q);
			spsc_init(iq->up.sh, iq->up_e.bytes, NETDEV_SLOT, NETDEV_SLOTS);
			spsc_attach(&iq->up, iq->up.sh, iq->up_e.bytes, SPSC_CONSUMER);
			break;
		}
		work = true;
		if (q && m.type != ND_RX && m.type != ND_TX_DONE) {
			f->c.rx_bad_msg++; /* (queue 0 carries the others) */
			continue;
		}
		switch (m.type) {
		case ND_RESET: driver_reset(f, &m); break;
		case ND_RX: if (f->ready) rx_frame(f, q, &m); break;
		case ND_TX_DONE: tx_done(f, q, &m); break;
		case ND_LINK:
			f->link = m.arg;
			if (m.arg & NDL_UP)
				netif_set_link_up(&f->netif);
			else
				netif_set_link_down(&f->netif);
			break;
		case ND_POOL_ERR:
			/* Frames from that pool are copied into the heap from now on. */
			ax_printf("ip: %s: the driver cannot use pool %#x: copying its frames\n", f->name, m.arg);
			f->refused_pool = m.arg;
			break;
		default: f->c.rx_bad_msg++; break;
		}
	}
	return work;
}

static bool if_poll(struct ip_if *f)
{
	bool work = false;
	if (!f->used)
		return false;
	if (f->lease_pending)
		lease_check(f);
	for (int q = 0; f->drv.ep && q < f->nq; q++)
		chan_ax_watch(&f->q[q].down_w, &f->q[q].down, &f->plat);
	tx_stall_check(f);
	for (uint8_t q = 0; q < f->nq; q++) /* (an ND_RESET on queue 0 may change nq) */
		work |= up_poll(f, q);
	if (f->ready && !f->pools_sent && (f->pools_sent = send_pools(f)))
		work = true;
	uint8_t kick = f->down_other ? 1 : 0;
	f->down_other = false;
	if (f->ready && f->pools_sent) {
		/* Buffers alone wake the driver only when it runs low: with half its share or more
		 * it takes them at its next run anyway (an interrupt or a frame to send), and the
		 * run a wake costs is most of what a received batch costs (docs/benchmarks.md). */
		bool low = false;
		uint8_t posted_to = 0;
		bool posted = post_rx(f, &posted_to, &low);
		bool sent = tx_flush(f); /* (f->kick: the queues it gave frames) */
		work |= posted || sent;
		if (low)
			kick |= posted_to;
	}
	f->kick |= kick;
	kick_queues(f);
	return work;
}

bool ip_drv_poll(void)
{
	bool work = false;
	for (int i = 0; i < ip.nifs; i++)
		work |= if_poll(&ip.ifs[i]);
	return work;
}

/* lwIP calls this when the address changes, before it sets the gateway: the lease is taken
 * from the loop (lease_check). */
static void status_cb(struct netif *n)
{
	ip_if_of(n)->lease_pending = true;
}

static void lease_check(struct ip_if *f)
{
	struct netif *n = &f->netif;
	uint32_t a = ip4_addr_get_u32(netif_ip4_addr(n));
	f->lease_pending = false;
	if (a && f->dhcp && dhcp_supplied_address(n)) {
		char s1[16], s2[16];
		f->bound = true;
		f->cfg_addr = a;
		f->cfg_mask = ip4_addr_get_u32(netif_ip4_netmask(n));
		f->cfg_gw = ip4_addr_get_u32(netif_ip4_gw(n));
		ax_printf("ip: %s: dhcp lease %s/%d gw %s\n", f->name, iph_str(a, s1), iph_plen(f->cfg_mask),
			  iph_str(f->cfg_gw, s2));
		ip_if_configured(f);
	}
}

static err_t netif_init_cb(struct netif *n)
{
	struct ip_if *f = ip_if_of(n);
	n->name[0] = 'e';
	n->name[1] = (char)('0' + f->index);
	n->output = ip_pf_output;
	n->linkoutput = linkoutput;
	n->mtu = NETDEV_MTU;
	n->hwaddr_len = 6;
	n->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET;
	return ERR_OK;
}

/* Queue q's channel pair, exported as ip/NAME.down and .up (q 0) or .dQ and .uQ. */
static int64_t queue_add(struct ip_if *f, uint8_t q)
{
	struct ip_q *iq = &f->q[q];
	char kd[16], ku[16];
	ksnprintf(kd, sizeof(kd), q ? "%s.d%u" : "%s.down", f->name, q);
	ksnprintf(ku, sizeof(ku), q ? "%s.u%u" : "%s.up", f->name, q);
	ksnprintf(iq->down_w.name, sizeof(iq->down_w.name), "ip/%s", kd);
	int64_t e = chan_create(&iq->down_e, NETDEV_SLOT, NETDEV_SLOTS, SPSC_PRODUCER, &iq->down);
	if (e == 0)
		e = export_obj(&iq->down_e, kd, iq->down_e.handle, iq->down_e.bytes, KP_R | KP_W, f);
	if (e == 0)
		e = chan_create(&iq->up_e, NETDEV_SLOT, NETDEV_SLOTS, SPSC_CONSUMER, &iq->up);
	if (e == 0)
		e = export_obj(&iq->up_e, ku, iq->up_e.handle, iq->up_e.bytes, KP_R | KP_W, f);
	if (e == 0)
		atomic_store_explicit(&iq->up.sh->sleeping, 1, memory_order_relaxed);
	return e;
}

int ip_if_add(const char *name, unsigned queues)
{
	if (ip.nifs == IP_MAX_IF || strlen(name) > 10 || !*name || queues < 1 || queues > IP_MAX_Q)
		return -KE_INVAL;
	struct ip_if *f = &ip.ifs[ip.nifs];
	memset(f, 0, sizeof(*f));
	memcpy(f->name, name, strlen(name) + 1);
	f->index = (uint8_t)ip.nifs;
	f->nq = 1;
	f->nq_offer = (uint8_t)queues;
	int64_t e = 0;
	for (uint8_t q = 0; q < queues && e == 0; q++)
		e = queue_add(f, q);
	char key[16];
	ksnprintf(key, sizeof(key), "rx.%s", name);
	if (e == 0)
		e = export_obj(&f->rx_e, key, ip.rx_h, pages_of(POOL_HDR_SIZE + (uint64_t)RX_NBUFS * NETDEV_RXBUF), KP_R, f);
	ksnprintf(key, sizeof(key), "heap.%s", name);
	if (e == 0)
		e = export_obj(&f->heap_e, key, ip.heap_h, pages_of(POOL_HDR_SIZE + HEAP_BYTES), KP_R, f);
	if (e < 0)
		return (int)e;
	f->drv.bits = IP_WAKE_BIT;
	chan_axolotl_platform(&f->plat, &f->drv);
	if (!netif_add(&f->netif, IP4_ADDR_ANY4, IP4_ADDR_ANY4, IP4_ADDR_ANY4, f, netif_init_cb, ethernet_input))
		return -KE_INVAL;
	netif_set_status_callback(&f->netif, status_cb);
	if (ip.nifs == 0)
		netif_set_default(&f->netif);
	f->used = true;
	ip.nifs++;
	return 0;
}
