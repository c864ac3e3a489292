/* The receive and transmit queues of each pair (vnet.h). RX: a chain of two descriptors
 * per buffer, our 12-byte header then one of ip's RX buffers (the device writes the header
 * and the frame across them); the frame goes back to ip as ND_RX naming that buffer, on ip's
 * queue of that pair. TX: our header (checksum offload) then up to NETDEV_MAXSEG segments
 * pointing straight into the senders' pools. The queues are published once per pass of the
 * loop (vnet_publish), as e1000 moves its tails: each notification is an exit to the
 * hypervisor. A used element the device should not have written (virtq.h) resets the device:
 * ip takes everything back and resends.
 *
 * ip's queue q is pair q: ip runs as many as the device took (set_queues' answer, in
 * ND_RESET); pair_of guards against a q beyond them all the same. */
#include "vnet.h"

static struct vnet_pair *pair_of(unsigned q) { return &vn.p[q < vn.active ? q : 0]; }

bool rx_room(unsigned q) { return q < vn.active && virtq_space(&vn.p[q].rx) >= 2; }

void rx_post(unsigned q, struct chan_ptr p, uint64_t bus)
{
	struct vnet_pair *vp = &vn.p[q]; /* (q < vn.active: rx_room said so) */
	uint16_t head = vp->rx.free_head;
	struct virtq_buf b[2] = { { vp->rx_hdr_bus + (uint64_t)head * VNET_HDR, VNET_HDR, true },
				  { bus, NETDEV_RXBUF, true } };
	virtq_add(&vp->rx, b, 2, (uint64_t)head << 32 | p.offset); /* (room checked by lib/netdrv: rx_room) */
}

/* The next used element of queue vq of pair pi (virtq_peek): 1, VQ_EBADLEN, or 0 for none,
 * and also when the device wrote an index or id it could not have: then it is reset and we
 * attach again (nd.attached is false after). */
static int used_next(unsigned pi, struct virtq *vq, uint64_t *tok, uint32_t *len)
{
	int r = nd.attached ? virtq_peek(vq, tok, len) : 0;
	if (r != VQ_EBADIDX && r != VQ_EBADID)
		return r;
	char why[112];
	vn.c.device_errors++;
	ksnprintf(why, sizeof(why), "the device wrote an impossible used %s on its %s queue %u",
		  r == VQ_EBADIDX ? "index" : "descriptor id", vq == &vn.p[pi].rx ? "receive" : "transmit", pi + 1);
	netdrv_reattach(why);
	return 0;
}

static int rx_harvest(unsigned pi)
{
	struct vnet_pair *vp = &vn.p[pi];
	struct virtq *q = &vp->rx;
	int n = 0, r;
	uint64_t tok;
	uint32_t len;
	while ((r = used_next(pi, q, &tok, &len)) != 0) {
		uint16_t head = (uint16_t)(tok >> 32);
		struct chan_ptr p = { nd.pools[nd.rx_pool].id, (uint32_t)tok, NETDEV_RXBUF };
		if (r == VQ_EBADLEN || len < VNET_HDR + 14 || len - VNET_HDR > NETDEV_FRAME_MAX) {
			/* A length the buffer cannot hold, or no frame: dropped, the buffer reused. */
			if (r == VQ_EBADLEN)
				vn.c.device_errors++;
			vn.c.rx_bad_len++;
			nd.c.rx_dropped++;
			virtq_pop(q);
			rx_post(pi, p, netdrv_pool_bus(nd.rx_pool, p));
			continue;
		}
		struct netdev_msg m = { .type = ND_RX, .nseg = 1 };
		m.seg[0] = (struct chan_ptr){ p.pool_id, p.offset, len - VNET_HDR };
		/* With GUEST_CSUM the device says DATA_VALID (it checked the checksum) or NEEDS_CSUM (a
		 * frame of the host's own with its TCP/UDP checksum left partial, as a tap with
		 * vnet_hdr passes them on: valid, virtio 1.0 §5.1.6.4.1). Both are good for ip. */
		uint8_t hf = vp->rx_hdr[head].flags;
		if ((vn.features & (1ull << VNET_F_GUEST_CSUM)) && (hf & (VNET_HDR_F_DATA_VALID | VNET_HDR_F_NEEDS_CSUM))) {
			m.flags |= NDF_RX_L4_OK;
			vn.c.rx_csum_ok++;
			vn.c.rx_csum_partial += (hf & VNET_HDR_F_NEEDS_CSUM) != 0;
		}
		if (!netdrv_up_push(pi, &m))
			break; /* ip is behind: the frame waits in the used ring */
		virtq_pop(q);
		vn.c.rx_packets++;
		vn.c.rx_bytes += len - VNET_HDR;
		vp->rx_frames++;
		nd.c.rx_frames++;
		n++;
	}
	return n;
}

static int tx_harvest(unsigned pi)
{
	struct vnet_pair *vp = &vn.p[pi];
	struct virtq *q = &vp->tx;
	int n = 0, r;
	uint64_t id;
	uint32_t len;
	while ((r = used_next(pi, q, &id, &len)) != 0) {
		if (r == VQ_EBADLEN) /* it says it wrote into buffers it may only read: noted, the frame is done */
			vn.c.device_errors++;
		struct netdev_msg m = { .type = ND_TX_DONE, .id = id, .arg = 0 };
		if (!netdrv_up_push(vp->tx_ipq[q->peeked], &m))
			break;
		vn.c.tx_packets++;
		vn.c.tx_bytes += vp->tx_len[q->peeked];
		vp->tx_frames++;
		virtq_pop(q);
		n++;
	}
	return n;
}

int vnet_harvest(void)
{
	int n = 0;
	for (unsigned pi = 0; pi < vn.npairs && nd.attached; pi++)
		n += rx_harvest(pi) + tx_harvest(pi);
	return n;
}

enum netdrv_tx vnet_tx(unsigned qi, const struct netdrv_frame *f)
{
	struct vnet_pair *vp = pair_of(qi);
	struct virtq *q = &vp->tx;
	if (virtq_space(q) < f->nseg + 1)
		return NDTX_FULL;
	uint16_t head = q->free_head;
	struct vnet_hdr h = { 0 };
	if (f->csum & NDF_TX_CSUM_L4) { /* (lib/netdrv checked the offsets; only L4 is in nd.caps) */
		h.flags = VNET_HDR_F_NEEDS_CSUM;
		h.csum_start = (uint16_t)f->l4_start;
		h.csum_offset = (uint16_t)(f->l4_field - f->l4_start);
	}
	vp->tx_hdr[head] = h;
	vp->tx_len[head] = (uint16_t)f->total;
	vp->tx_ipq[head] = (uint8_t)qi;
	struct virtq_buf b[NETDEV_MAXSEG + 1] = { { vp->tx_hdr_bus + (uint64_t)head * VNET_HDR, VNET_HDR, false } };
	for (uint32_t s = 0; s < f->nseg; s++)
		b[s + 1] = (struct virtq_buf){ f->bus[s], f->len[s], false };
	virtq_add(q, b, f->nseg + 1, f->id);
	return NDTX_QUEUED;
}

void vnet_publish(void)
{
	for (unsigned pi = 0; pi < vn.npairs; pi++) {
		struct vnet_pair *vp = &vn.p[pi];
		if (virtq_publish(&vp->rx))
			*vp->rx_bell = (uint16_t)(2 * pi);
		if (virtq_publish(&vp->tx))
			*vp->tx_bell = (uint16_t)(2 * pi + 1);
	}
}
