/* ip's memory shared with its neighbours (README.md, "Memory"): lwIP's whole heap in a
 * MOF_DMA object formatted as a one-buffer pool (drivers map it read-only and transmit
 * headers lwIP built in it without a copy; transports read reassembled packets there), and
 * the RX pool of NETDEV_RXBUF-byte buffers the drivers receive into. */
#include "ip.h"

struct ip_state ip;
void *lwip_heap_base;

static uint32_t heap_priv[2];
static uint8_t rx_priv[POOL_PRIV_SIZE(RX_NBUFS)] __attribute__((aligned(8)));

static int64_t dma_object(uint64_t bytes, unsigned char **va)
{
	uint64_t pages = (bytes + 4095) / 4096;
	int64_t h = ax_mo_create(pages, MOF_DMA);
	if (h < 0)
		return h;
	int64_t a = ax_mo_map(h, 0, 0, pages, KP_R | KP_W);
	if (a < 0) {
		ax_mo_destroy(h);
		return a;
	}
	*va = (unsigned char *)a;
	return h;
}

int ip_mem_init(void)
{
	uint64_t heap_bytes = POOL_HDR_SIZE + HEAP_BYTES;
	ip.heap_h = dma_object(heap_bytes, &ip.heap_mem);
	if (ip.heap_h < 0)
		return (int)ip.heap_h;
	ip.rx_h = dma_object(POOL_HDR_SIZE + (uint64_t)RX_NBUFS * NETDEV_RXBUF, &ip.rx_mem);
	if (ip.rx_h < 0)
		return (int)ip.rx_h;
	uint32_t inc = ax_svc.restarts;
	ip.heap_pool_id = POOLID(POOLID_IP_HEAP, inc);
	ip.rx_pool_id = POOLID(POOLID_IP_RX, inc);
	if (pool_init(&ip.heap_pool, ip.heap_pool_id, ip.heap_mem, heap_bytes, HEAP_BYTES, 1, heap_priv,
		      sizeof(heap_priv)) != 1)
		return -KE_INVAL;
	if (pool_init(&ip.rx_pool, ip.rx_pool_id, ip.rx_mem, POOL_HDR_SIZE + (uint64_t)RX_NBUFS * NETDEV_RXBUF,
		      NETDEV_RXBUF, RX_NBUFS, rx_priv, sizeof(rx_priv)) != RX_NBUFS)
		return -KE_INVAL;
	lwip_heap_base = ip.heap_pool.v.bufs;
	return 0;
}

bool ip_in_heap(const void *p, uint32_t len, uint32_t *off)
{
	const unsigned char *b = p, *base = ip.heap_pool.v.bufs;
	if (b < base || b + len > base + HEAP_BYTES)
		return false;
	*off = (uint32_t)(b - base);
	return true;
}

bool ip_rx_offset(const void *p, uint32_t len, uint32_t *off)
{
	const unsigned char *b = p, *base = ip.rx_pool.v.bufs;
	if (b < base || b + len > base + (uint64_t)RX_NBUFS * NETDEV_RXBUF)
		return false;
	uint32_t o = (uint32_t)(b - base);
	if (o / NETDEV_RXBUF != (o + (len ? len - 1 : 0)) / NETDEV_RXBUF)
		return false;
	*off = o;
	return true;
}

bool ip_rx_index(struct chan_ptr p, uint32_t *idx)
{
	if (p.pool_id != ip.rx_pool_id || p.offset % NETDEV_RXBUF || p.offset / NETDEV_RXBUF >= RX_NBUFS)
		return false;
	*idx = p.offset / NETDEV_RXBUF;
	return true;
}

/* lwIP (or a transport, through ipx.c) let go of a received frame: the buffer is free and
 * the next poll gives it to a driver again. */
static void rx_free(struct pbuf *p)
{
	struct rx_buf *b = (struct rx_buf *)p;
	uint32_t idx = (uint32_t)(b - ip.rxb);
	b->state = RXB_FREE;
	pool_free(&ip.rx_pool, (struct chan_ptr){ ip.rx_pool_id, idx * NETDEV_RXBUF, 0 });
}

struct pbuf *ip_rx_wrap(uint32_t idx, uint32_t len, uint32_t nd_flags)
{
	struct rx_buf *b = &ip.rxb[idx];
	b->nd_flags = (uint8_t)nd_flags;
	b->pc.custom_free_function = rx_free;
	b->state = RXB_STACK;
	return pbuf_alloced_custom(PBUF_RAW, (u16_t)len, PBUF_REF, &b->pc,
				   ip.rx_pool.v.bufs + (size_t)idx * NETDEV_RXBUF, NETDEV_RXBUF);
}
