/* The advanced descriptors both chips share, as pure functions (host-tested by
 * tests/unit/test_ixgbe_model.c): an RX descriptor in read format, a write-back parsed into
 * what ip hears (length, NDF_RX_* checksum flags) and what the driver records (RSS hash and
 * type, packet type), TX data descriptors and the checksum context descriptor. The chip
 * decides only the write-back error bits and the olinfo extra (chip.h). */
#pragma once
#include "chip.h"
#include "netdev_proto.h"

static inline void ix_rx_read(volatile union ix_rx_desc *d, uint64_t bus)
{
	d->read.pkt_addr = bus;
	d->read.hdr_addr = 0; /* (DD of the write-back) */
}

enum ix_rx_verdict { IXRX_NOT_DONE, IXRX_OK, IXRX_BAD };

struct ix_rx_info {
	uint32_t len;
	uint32_t flags;     /* NDF_RX_* */
	uint32_t rss_hash, rss_type, pkt_type;
	const char *why;    /* IXRX_BAD: what was wrong */
};

/* A write-back (copied out of the ring after DD was seen). A frame ip can take: one
 * descriptor (EOP; the buffers hold 2 KiB, frames are at most 1518 bytes), 14..bufsize
 * bytes, no receive error. */
static inline enum ix_rx_verdict ix_rx_parse(const struct ix_chip *c, const union ix_rx_desc *wb, uint32_t bufsize,
					     struct ix_rx_info *o)
{
	uint32_t st = wb->wb.staterr;
	*o = (struct ix_rx_info){ 0 };
	if (!(st & IX_RXS_DD))
		return IXRX_NOT_DONE;
	o->len = wb->wb.length;
	o->rss_type = IX_RX_RSSTYPE(wb->wb.info);
	o->pkt_type = IX_RX_PKTTYPE(wb->wb.info);
	o->rss_hash = o->rss_type ? wb->wb.rss : 0;
	if (!(st & IX_RXS_EOP))
		o->why = "a frame over more than one descriptor";
	else if (st & c->rx_err_rxe)
		o->why = "a receive error";
	else if (o->len < 14 || o->len > bufsize)
		o->why = "an impossible length";
	if (o->why)
		return IXRX_BAD;
	if (st & IX_RXS_IPCS)
		o->flags |= (st & c->rx_err_ipe) ? NDF_RX_CSUM_BAD : NDF_RX_IP4_OK;
	if (st & (IX_RXS_L4CS | IX_RXS_UDPCS))
		o->flags |= (st & c->rx_err_l4e) ? NDF_RX_CSUM_BAD : NDF_RX_L4_OK;
	return IXRX_OK;
}

/* The checksum context of a frame: IPv4 header at 14 (ihl bytes), the TCP or UDP header
 * right after it (l4_start) with its checksum field at l4_field. false: offsets the context
 * cannot say (options between the headers, not TCP or UDP). */
struct ix_ctx {
	uint32_t vlan_macip_lens, type_tucmd_mlhl, mss_l4len_idx;
};

static inline bool ix_ctx_encode(uint32_t csum, uint32_t ihl, uint32_t l4_start, uint32_t l4_field, struct ix_ctx *o)
{
	if (ihl < 20 || ihl > 60)
		return false;
	uint32_t l4t = IX_TXCTX_TUCMD_L4T_UDP;
	if (csum & NDF_TX_CSUM_L4) {
		if (l4_start != 14 + ihl)
			return false;
		if (l4_field == l4_start + 16)
			l4t = IX_TXCTX_TUCMD_L4T_TCP;
		else if (l4_field != l4_start + 6)
			return false;
	}
	o->vlan_macip_lens = ihl | 14u << IX_TXCTX_MACLEN_SHIFT;
	o->type_tucmd_mlhl = IX_TXD_DEXT | IX_TXD_DTYP_CTXT | IX_TXCTX_TUCMD_IPV4 | l4t;
	o->mss_l4len_idx = 0; /* context slot 0 */
	return true;
}

static inline void ix_tx_ctx_write(volatile union ix_tx_desc *d, const struct ix_ctx *c)
{
	d->ctx.vlan_macip_lens = c->vlan_macip_lens;
	d->ctx.seqnum_seed = 0;
	d->ctx.type_tucmd_mlhl = c->type_tucmd_mlhl;
	d->ctx.mss_l4len_idx = c->mss_l4len_idx;
}

/* olinfo of a frame's data descriptors: the whole frame's length, the checksums asked. */
static inline uint32_t ix_tx_olinfo(const struct ix_chip *c, uint32_t total, uint32_t csum)
{
	uint32_t o = total << IX_TXD_PAYLEN_SHIFT;
	if (csum & NDF_TX_CSUM_IP4)
		o |= IX_TXD_POPTS_IXSM;
	if (csum & NDF_TX_CSUM_L4)
		o |= IX_TXD_POPTS_TXSM;
	if (csum)
		o |= c->tx_olinfo_csum;
	return o;
}

static inline void ix_tx_data(volatile union ix_tx_desc *d, uint64_t bus, uint32_t len, bool last, uint32_t olinfo)
{
	d->data.addr = bus;
	d->data.cmd_type_len = (len & 0xffff) | IX_TXD_DTYP_DATA | IX_TXD_DEXT | IX_TXD_IFCS |
			       (last ? IX_TXD_EOP | IX_TXD_RS : 0);
	d->data.olinfo = olinfo;
}

static inline bool ix_tx_done(const volatile union ix_tx_desc *d) { return (d->data.olinfo & IX_TXD_STA_DD) != 0; }
