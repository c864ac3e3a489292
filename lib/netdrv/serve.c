/* ip's messages on the down channel (netdev_proto.h). Each is copied out of the channel
 * before it is looked at (ip cannot change it under us) and checked: type, segment count,
 * pool ids, bounds, lengths, checksum offsets, pool names. A bad one is dropped and counted;
 * a bad ND_TX is also answered with ND_TX_DONE and an error, so ip can free it. */
#include "netdrv_int.h"

static void bad(const char *what, const struct netdev_msg *m)
{
	if (nd.c.bad_msgs++ < 5)
		ax_printf("%s: bad message from ip (%s): type %u nseg %u\n", nd.ops->name, what, m->type, m->nseg);
}

enum verdict { V_DONE, V_WAIT };

/* A frame not sent: ip hears err for it (why: a bad message, logged; NULL: none of ip's
 * doing). V_WAIT while there is no room to say so. */
static enum verdict tx_fail(unsigned q, const struct netdev_msg *m, int64_t err, const char *why)
{
	struct netdev_msg d = { .type = ND_TX_DONE, .id = m->id, .arg = (uint32_t)(int32_t)err };
	if (!netdrv_up_push(q, &d))
		return nd.attached ? V_WAIT : V_DONE;
	if (why)
		bad(why, m);
	nd.c.tx_failed++;
	return V_DONE;
}

/* Byte off of the frame (segments already validated); -1 past its end. */
static int frame_byte(const struct netdrv_frame *f, uint32_t off)
{
	for (uint32_t s = 0; s < f->nseg; s++) {
		if (off < f->len[s])
			return f->va[s][off];
		off -= f->len[s];
	}
	return -1;
}

static enum verdict on_tx(unsigned q, const struct netdev_msg *m)
{
	struct netdrv_frame f = { .id = m->id, .nseg = m->nseg };
	if (m->nseg < 1 || m->nseg > NETDEV_MAXSEG || nd.refuse)
		return tx_fail(q, m, -KE_INVAL, "segment count");
	for (uint32_t s = 0; s < m->nseg; s++) {
		int p = nd_pool_find(m->seg[s].pool_id);
		if (p < 0 && q && spsc_count(&ndl.q[0].down) > 0)
			return V_WAIT; /* its ND_POOL may still wait on queue 0 (netdev_proto.h) */
		if (p < 0)
			return tx_fail(q, m, -KE_SRCH, "unknown pool");
		f.va[s] = m->seg[s].len ? pool_resolve(&nd.pools[p].v, m->seg[s]) : NULL;
		if (!f.va[s])
			return tx_fail(q, m, -KE_INVAL, "segment out of its pool");
		f.bus[s] = netdrv_pool_bus(p, m->seg[s]);
		f.len[s] = m->seg[s].len;
		f.total += f.len[s];
	}
	if (f.total < 14 || f.total > NETDEV_FRAME_MAX)
		return tx_fail(q, m, -KE_INVAL, "frame length");
	f.csum = m->flags & (NDF_TX_CSUM_IP4 | NDF_TX_CSUM_L4);
	if (f.csum & ~nd.caps)
		return tx_fail(q, m, -KE_INVAL, "a checksum offload the device does not do");
	if (f.csum) {
		int vihl = frame_byte(&f, 14);
		f.ihl = vihl >= 0 ? (uint32_t)(vihl & 0xf) * 4 : 0;
		if (vihl < 0 || (vihl >> 4) != 4 || f.ihl < 20 || 14 + f.ihl > f.total)
			return tx_fail(q, m, -KE_INVAL, "checksum offload of a non-IPv4 frame");
		if (f.csum & NDF_TX_CSUM_L4) {
			f.l4_start = m->arg & 0xffff;
			f.l4_field = (m->arg >> 16) & 0xffff;
			if (f.l4_start < 14 + f.ihl || f.l4_field < f.l4_start || f.l4_field + 2 > f.total)
				return tx_fail(q, m, -KE_INVAL, "checksum offsets");
		}
	}
	switch (nd.ops->tx(q, &f)) {
	case NDTX_QUEUED: nd.c.tx_frames++; return V_DONE;
	case NDTX_REFUSED: return tx_fail(q, m, -KE_INVAL, "checksum offsets");
	case NDTX_FULL: break;
	}
	/* The ring is full: the message waits in the channel, unless there is no link (the
	 * device sends nothing and frees no descriptor): then it is refused, so ip's channel
	 * keeps moving (a stalled one is a broken driver). */
	return nd.link ? V_WAIT : tx_fail(q, m, -KE_AGAIN, NULL);
}

static enum verdict on_rxbuf(unsigned q, const struct netdev_msg *m)
{
	struct netdrv_qlink *l = &ndl.q[q];
	struct chan_ptr p = m->seg[0];
	struct chan_ptr whole = { p.pool_id, p.offset, NETDEV_RXBUF };
	if (m->nseg != 1 || nd.rx_pool < 0 || p.pool_id != nd.pools[nd.rx_pool].id || p.len < NETDEV_RXBUF ||
	    !pool_resolve(&nd.pools[nd.rx_pool].v, whole)) {
		bad("RX buffer", m);
		return V_DONE;
	}
	if (nd.ops->rx_room(q) && !l->nspare)
		nd.ops->rx_post(q, whole, netdrv_pool_bus(nd.rx_pool, whole));
	else if (l->nspare < NETDRV_RX_SPARE)
		l->spare[l->nspare++] = whole;
	else
		bad("more RX buffers than the driver holds", m);
	return V_DONE;
}

void nd_rx_refill(unsigned q)
{
	struct netdrv_qlink *l = &ndl.q[q];
	while (l->nspare && nd.ops->rx_room(q)) {
		struct chan_ptr p = l->spare[--l->nspare];
		nd.ops->rx_post(q, p, netdrv_pool_bus(nd.rx_pool, p));
	}
}

static enum verdict on_pool(const struct netdev_msg *m)
{
	struct netdev_pool np;
	memcpy(&np, m, sizeof(np));
	if (!np.pool_id || !np.label[0] || !np.key[0] || np.label[15] || np.key[15]) {
		bad("pool announcement", m);
		return V_DONE;
	}
	int i = nd_pool_find(np.pool_id);
	if (i >= 0 && !memcmp(nd.pools[i].label, np.label, 16) && !memcmp(nd.pools[i].key, np.key, 16))
		return V_DONE; /* known already (e.g. the RX pool) */
	if (i == 0 && nd.rx_pool == 0) {
		bad("pool id of the RX pool", m);
		return V_DONE;
	}
	for (int j = 1; i < 0 && j < NETDRV_MAX_POOLS; j++)
		if (!nd.pools[j].used)
			i = j;
	int64_t r = i < 0 ? -KE_NOMEM : nd_pool_import(i, np.pool_id, np.label, np.key);
	if (r < 0) {
		struct netdev_msg err = { .type = ND_POOL_ERR, .arg = np.pool_id };
		if (!netdrv_up_push(0, &err))
			return nd.attached ? V_WAIT : V_DONE;
		nd.c.pool_errors++;
		ax_printf("%s: cannot use pool %#x (%s/%s): %lld\n", nd.ops->name, np.pool_id, np.label, np.key,
			  (long long)r);
	}
	return V_DONE;
}

static enum verdict on_conf(const struct netdev_msg *m)
{
	bool poll = (m->arg & NDC_POLL) || nd.dedicated || (!nd.irq && !nd.msix_nvec);
	if (m->id >= 1 && m->id <= 10000 && nd.ops->set_itr)
		nd.ops->set_itr((uint32_t)m->id);
	if (poll != nd.poll_mode) {
		nd.poll_mode = poll;
		nd.ops->set_poll(poll);
		if (!poll)
			nd_bind_irq();
		nd_loop.wait_ns = nd.poll_mode ? WAIT_POLL_NS : WAIT_IRQ_NS;
		ax_printf("%s: %s mode\n", nd.ops->name, nd.poll_mode ? "polling" : "interrupt");
	}
	return V_DONE;
}

/* Queue 0 carries every type; the others RX buffers and frames (netdev_proto.h). */
int nd_serve_down(unsigned q)
{
	int n = 0;
	struct spsc *down = &ndl.q[q].down;
	for (; n < 64 && nd.attached; n++) {
		struct netdev_msg m;
		int e = spsc_peek(down, &m); /* a private copy: ip cannot change it under us */
		if (e == CHAN_EAGAIN)
			break;
		if (e < 0) {
			netdrv_reattach("ip's down channel is corrupt");
			break;
		}
		enum verdict v;
		if (q && m.type != ND_TX && m.type != ND_RXBUF) {
			bad("a type only queue 0 carries", &m);
			v = V_DONE;
		} else {
			switch (m.type) {
			case ND_TX: v = on_tx(q, &m); break;
			case ND_RXBUF: v = on_rxbuf(q, &m); break;
			case ND_POOL: v = on_pool(&m); break;
			case ND_CONF: v = on_conf(&m); break;
			default: bad("unknown type", &m); v = V_DONE; break;
			}
		}
		if (v == V_WAIT || !nd.attached)
			break;
		spsc_pop_part(down, &m, 0);
	}
	return n;
}
