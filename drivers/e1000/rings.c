/* The descriptor rings. RX: each descriptor holds one of ip's RX buffers (2048 bytes of its
 * RX pool); a received frame goes back to ip as ND_RX naming that same buffer. TX: a frame
 * is up to NETDEV_MAXSEG data descriptors pointing straight into the senders' pools, after
 * a context descriptor when its checksum offsets differ from the last one given. Indices
 * run freely and are masked on use. The device's descriptors are written only by us before
 * the tail moves and read back only for their status. The tails move once per pass of the
 * driver's loop (rings_publish), not per buffer or frame: each tail write is a register
 * access, an exit to the hypervisor on a virtual machine, and QEMU's model sends every frame
 * up to the new tail at once. */
#include "e1000.h"

#define RX_MASK (RX_RING - 1)
#define TX_MASK (TX_RING - 1)

static bool rx_moved, tx_moved; /* tails the device has not been told yet */

void rings_reset(void)
{
	e1k.rx_head = e1k.rx_tail = 0;
	e1k.tx_head = e1k.tx_tail = 0;
	e1k.ctx.valid = false;
	rx_moved = tx_moved = false;
	memset(e1k.txi, 0, sizeof(e1k.txi));
}

void rx_post(unsigned q, struct chan_ptr p, uint64_t bus)
{
	(void)q; /* one queue pair */
	uint32_t i = e1k.rx_tail & RX_MASK;
	e1k.rx_buf[i] = p;
	e1k.rx[i].addr = bus;
	e1k.rx[i].status = 0;
	e1k.rx[i].errors = 0;
	e1k.rx[i].length = 0;
	e1k.rx_tail++;
	rx_moved = true;
}

void rings_publish(void)
{
	if (!rx_moved && !tx_moved)
		return;
	__atomic_thread_fence(__ATOMIC_RELEASE); /* descriptors before the tails */
	if (rx_moved)
		wr32(E1K_RDT, e1k.rx_tail & RX_MASK);
	if (tx_moved)
		wr32(E1K_TDT, e1k.tx_tail & TX_MASK);
	rx_moved = tx_moved = false;
}

/* The ring holds at most RX_RING - 1 buffers (head == tail means empty to the device). */
bool rx_room(unsigned q) { (void)q; return e1k.rx_tail - e1k.rx_head < RX_RING - 1; }

int rx_harvest(void)
{
	int n = 0;
	while (e1k.rx_head != e1k.rx_tail) {
		uint32_t i = e1k.rx_head & RX_MASK;
		uint8_t st = e1k.rx[i].status;
		if (!(st & RXS_DD))
			break;
		__atomic_thread_fence(__ATOMIC_ACQUIRE); /* the rest of the descriptor after DD */
		uint8_t err = e1k.rx[i].errors;
		uint32_t len = e1k.rx[i].length;
		struct chan_ptr p = e1k.rx_buf[i];
		if (!(st & RXS_EOP) || (err & RXE_FRAME) || len < 14 || len > NETDEV_RXBUF) {
			/* A bad or partial frame: the buffer goes straight back into the ring. */
			nd.c.rx_dropped++;
			e1k.rx_head++;
			rx_post(0, p, e1k.rx[i].addr);
			continue;
		}
		struct netdev_msg m = { .type = ND_RX, .nseg = 1 };
		m.seg[0] = (struct chan_ptr){ p.pool_id, p.offset, len };
		if (!(st & RXS_IXSM)) {
			if (st & RXS_IPCS)
				m.flags |= (err & RXE_IPE) ? NDF_RX_CSUM_BAD : NDF_RX_IP4_OK;
			if (st & RXS_TCPCS)
				m.flags |= (err & RXE_TCPE) ? NDF_RX_CSUM_BAD : NDF_RX_L4_OK;
		}
		if (!netdrv_up_push(0, &m))
			break; /* ip is behind: the frame waits in the ring */
		e1k.rx_head++;
		nd.c.rx_frames++;
		n++;
	}
	return n;
}

uint32_t tx_space(void) { return TX_RING - 1 - (e1k.tx_tail - e1k.tx_head); }

void tx_queue(uint64_t id, uint32_t nseg, const uint64_t *bus, const uint32_t *len, const struct e1k_ctx *csum,
	      uint32_t popts)
{
	if (csum && (!e1k.ctx.valid || e1k.ctx.addr != csum->addr || e1k.ctx.lower != csum->lower)) {
		uint32_t i = e1k.tx_tail++ & TX_MASK;
		e1k.tx[i].addr = csum->addr;
		e1k.tx[i].lower = csum->lower;
		e1k.tx[i].upper = 0;
		e1k.txi[i] = (struct e1k_txinfo){ 0, false };
		e1k.ctx = *csum;
		e1k.ctx.valid = true;
	}
	for (uint32_t s = 0; s < nseg; s++) {
		uint32_t i = e1k.tx_tail++ & TX_MASK;
		bool last = s + 1 == nseg;
		e1k.tx[i].addr = bus[s];
		e1k.tx[i].lower = len[s] | TXD_DTYP_D | TXD_CMD_DEXT | TXD_CMD_IFCS |
				  (last ? TXD_CMD_EOP | TXD_CMD_RS : 0);
		e1k.tx[i].upper = popts;
		e1k.txi[i] = (struct e1k_txinfo){ last ? id : 0, last };
	}
	tx_moved = true;
}

int tx_harvest(void)
{
	int n = 0;
	/* Walk to the next frame end; its DD means every descriptor up to it is done. */
	while (e1k.tx_head != e1k.tx_tail) {
		uint32_t end = e1k.tx_head;
		while (end != e1k.tx_tail && !e1k.txi[end & TX_MASK].last)
			end++;
		if (end == e1k.tx_tail)
			break; /* cannot happen: every queued frame ends with a last descriptor */
		uint32_t i = end & TX_MASK;
		if (!(e1k.tx[i].upper & TXD_STAT_DD))
			break;
		struct netdev_msg m = { .type = ND_TX_DONE, .id = e1k.txi[i].id, .arg = 0 };
		if (!netdrv_up_push(0, &m))
			break;
		e1k.txi[i].last = false;
		e1k.tx_head = end + 1;
		n++;
	}
	return n;
}
