/* The descriptor rings of one queue pair (struct ixq; every function takes its queue, so
 * serving N queues is N calls). RX: advanced one-buffer descriptors, each holding one of
 * ip's RX buffers (2 KiB, SRRCTL.BSIZEPKT); a received frame goes back to ip as ND_RX naming
 * that same buffer, with the checksum status as NDF_RX_* and the RSS hash counted. TX: a
 * frame is up to NETDEV_MAXSEG advanced data descriptors pointing straight into the senders'
 * pools, after an advanced context descriptor when its checksum context differs from the
 * last one given. Tails move once per pass of the loop (ixq_publish). A write-back the
 * device could not honestly have written (no EOP for a 2 KiB buffer, an impossible length)
 * is dropped and counted; its buffer goes back into the ring. */
#include "ixgbe.h"

void ixq_reset(struct ixq *q)
{
	q->rx_head = q->rx_tail = 0;
	q->tx_head = q->tx_tail = 0;
	q->ctx_valid = q->rx_moved = q->tx_moved = false;
	memset(q->txi, 0, sizeof(q->txi));
}

bool ixq_rx_room(const struct ixq *q) { return q->rx_tail - q->rx_head < IX_RING - 1; }

void ixq_rx_post(struct ixq *q, struct chan_ptr p, uint64_t bus)
{
	uint32_t i = q->rx_tail & IX_RING_MASK;
	q->rx_buf[i] = p;
	q->rx_bus[i] = bus;
	ix_rx_read(&q->rx[i], bus);
	q->rx_tail++;
	q->rx_moved = true;
}

void ixq_publish(struct ixq *q)
{
	if (!q->rx_moved && !q->tx_moved)
		return;
	__atomic_thread_fence(__ATOMIC_RELEASE); /* descriptors before the tails */
	if (q->rx_moved)
		ix_wr(&ix.dev, q->rdt, q->rx_tail & IX_RING_MASK);
	if (q->tx_moved)
		ix_wr(&ix.dev, q->tdt, q->tx_tail & IX_RING_MASK);
	q->rx_moved = q->tx_moved = false;
}

int ixq_rx_harvest(struct ixq *q)
{
	int n = 0;
	while (q->rx_head != q->rx_tail) {
		uint32_t i = q->rx_head & IX_RING_MASK;
		if (!(q->rx[i].wb.staterr & IX_RXS_DD))
			break;
		__atomic_thread_fence(__ATOMIC_ACQUIRE); /* the rest of the descriptor after DD */
		union ix_rx_desc wb;
		memcpy(&wb, (const void *)&q->rx[i], sizeof(wb)); /* one look at what the device wrote */
		struct ix_rx_info ri;
		struct chan_ptr p = q->rx_buf[i];
		if (ix_rx_parse(ix.dev.chip, &wb, NETDEV_RXBUF, &ri) != IXRX_OK) {
			q->c.rx_bad_desc++;
			nd.c.rx_dropped++;
			q->rx_head++;
			ixq_rx_post(q, p, q->rx_bus[i]);
			continue;
		}
		struct netdev_msg m = { .type = ND_RX, .nseg = 1, .flags = ri.flags };
		m.seg[0] = (struct chan_ptr){ p.pool_id, p.offset, ri.len };
		if (ri.rss_type) {
			m.flags |= NDF_RX_HASH;
			m.hash = ri.rss_hash;
		}
		if (!netdrv_up_push(q->idx, &m))
			break; /* ip is behind: the frame waits in the ring */
		q->rx_head++;
		nd.c.rx_frames++;
		q->c.rx_frames++;
		q->c.rx_csum_ok += (ri.flags & (NDF_RX_IP4_OK | NDF_RX_L4_OK)) != 0;
		q->c.rx_csum_bad += (ri.flags & NDF_RX_CSUM_BAD) != 0;
		if (ri.rss_type) {
			q->c.rx_rss_hashed++;
			q->c.last_rss_hash = ri.rss_hash;
		}
		q->c.rx_ipv4 += (ri.pkt_type & IX_PKT_IPV4) != 0;
		q->c.rx_tcp += (ri.pkt_type & IX_PKT_TCP) != 0;
		q->c.rx_udp += (ri.pkt_type & IX_PKT_UDP) != 0;
		n++;
	}
	return n;
}

uint32_t ixq_tx_space(const struct ixq *q) { return IX_RING - 1 - (q->tx_tail - q->tx_head); }

void ixq_tx_queue(struct ixq *q, const struct netdrv_frame *f, const struct ix_ctx *ctx)
{
	if (ctx && (!q->ctx_valid || memcmp(&q->ctx, ctx, sizeof(*ctx)))) {
		uint32_t i = q->tx_tail++ & IX_RING_MASK;
		ix_tx_ctx_write(&q->tx[i], ctx);
		q->txi[i] = (struct ix_txinfo){ 0, false };
		q->ctx = *ctx;
		q->ctx_valid = true;
		q->c.tx_contexts++;
	}
	uint32_t olinfo = ix_tx_olinfo(ix.dev.chip, f->total, ctx ? f->csum : 0);
	for (uint32_t s = 0; s < f->nseg; s++) {
		uint32_t i = q->tx_tail++ & IX_RING_MASK;
		bool last = s + 1 == f->nseg;
		ix_tx_data(&q->tx[i], f->bus[s], f->len[s], last, olinfo);
		q->txi[i] = (struct ix_txinfo){ last ? f->id : 0, last };
	}
	q->c.tx_frames++;
	q->c.tx_csum += ctx != NULL;
	q->tx_moved = true;
}

int ixq_tx_harvest(struct ixq *q)
{
	int n = 0;
	/* Walk to the next frame end; its DD means every descriptor up to it is done. */
	while (q->tx_head != q->tx_tail) {
		uint32_t end = q->tx_head;
		while (end != q->tx_tail && !q->txi[end & IX_RING_MASK].last)
			end++;
		if (end == q->tx_tail) {
			netdrv_reattach("a TX ring with no frame end"); /* cannot happen: our own bookkeeping */
			return n;
		}
		uint32_t i = end & IX_RING_MASK;
		if (!ix_tx_done(&q->tx[i]))
			break;
		struct netdev_msg m = { .type = ND_TX_DONE, .id = q->txi[i].id, .arg = 0 };
		if (!netdrv_up_push(q->idx, &m))
			break;
		q->txi[i].last = false;
		q->tx_head = end + 1;
		n++;
	}
	return n;
}
