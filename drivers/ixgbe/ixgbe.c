/* ixgbe: the driver of Intel's advanced-descriptor NICs, the 82576 (QEMU's `-device igb`,
 * 8086:10c9) and the 82599 (8086:10fb), a native server run by rs with `pci=`. lib/netdrv
 * serves ip (lib/net/netdev_proto.h) and runs the loop; this file gives it the device:
 * lib/netdrv's hooks (a queue pair of the device per queue pair with ip), the TX checksum
 * context, counters and banner. README.md has the queues, the interrupts, the
 * state and the recovery story.
 *   ixgbe pci=BB:DD.F [queues=N] [msix=0] [dedicated=1] [poll=1] [itr=USECS] [name=IF] [restarted=N] [hb=H] */
#include "ixgbe.h"
#include "pci.h"
#include "service.h"

struct ix ix;

/* lib/netdrv's hooks for queue q (< nd.nq: the queues ip runs with us) */
static enum netdrv_tx tx(unsigned q, const struct netdrv_frame *f)
{
	struct ix_ctx ctx;
	if (f->csum && !ix_ctx_encode(f->csum, f->ihl, f->l4_start, f->l4_field, &ctx))
		return NDTX_REFUSED;
	if (ixq_tx_space(&ix.q[q]) < f->nseg + 1u)
		return NDTX_FULL;
	ixq_tx_queue(&ix.q[q], f, f->csum ? &ctx : NULL);
	return NDTX_QUEUED;
}

static bool rx_room(unsigned q) { return ixq_rx_room(&ix.q[q]); }
static void rx_post(unsigned q, struct chan_ptr p, uint64_t bus) { ixq_rx_post(&ix.q[q], p, bus); }

static int harvest(void)
{
	int n = 0;
	for (unsigned q = 0; q < nd.nq; q++)
		n += ixq_rx_harvest(&ix.q[q]) + ixq_tx_harvest(&ix.q[q]);
	return n;
}

static void publish(void)
{
	for (unsigned q = 0; q < nd.nq; q++)
		ixq_publish(&ix.q[q]);
}

/* ip runs n queue pairs with us: the redirection table spreads received flows over them
 * (the rings beyond n stay empty, and no flow is steered there). */
static unsigned set_queues(unsigned n)
{
	ix.dev.rss_nq = n;
	ix_rss_setup(&ix.dev);
	return n;
}

static bool counter(uint64_t i, char *out, size_t cap)
{
	const struct ix_counters *c = &ix.c;
	struct ixq_counters s = { 0 }; /* the queues' sums */
	for (uint32_t q = 0; q < ix.dev.nq; q++) {
		const struct ixq_counters *k = &ix.q[q].c;
		s.rx_bad_desc += k->rx_bad_desc, s.rx_csum_ok += k->rx_csum_ok, s.rx_csum_bad += k->rx_csum_bad;
		s.rx_rss_hashed += k->rx_rss_hashed, s.rx_ipv4 += k->rx_ipv4, s.rx_tcp += k->rx_tcp;
		s.rx_udp += k->rx_udp, s.tx_csum += k->tx_csum, s.tx_contexts += k->tx_contexts;
	}
	static const char *const names[] = { "rx_packets", "rx_bytes", "tx_packets", "tx_bytes", "rx_drops",
		"rx_no_buffer", "crc_errors", "rx_errors", "rx_bad_desc", "rx_csum_ok", "rx_csum_bad", "rx_rss_hashed",
		"rx_last_rss_hash", "rx_ipv4", "rx_tcp", "rx_udp", "tx_csum_offloaded", "tx_contexts", "queues", "link_mbps" };
	const uint64_t vals[] = { c->rx_packets, c->rx_bytes, c->tx_packets, c->tx_bytes, c->rx_missed + nd.c.rx_dropped,
		c->rx_no_buf, c->crc_errors, c->rx_errors, s.rx_bad_desc, s.rx_csum_ok, s.rx_csum_bad, s.rx_rss_hashed,
		ix.q[0].c.last_rss_hash, s.rx_ipv4, s.rx_tcp, s.rx_udp, s.tx_csum, s.tx_contexts, ix.dev.nq,
		ix.dev.chip->link_mbps(&ix.dev) };
	return netdrv_counter(i, names, vals, sizeof(vals) / sizeof(vals[0]), out, cap);
}

static void banner(void)
{
	uint16_t bdf = (uint16_t)nd.bdf;
	char how[48];
	netdrv_irq_mode(how, sizeof(how));
	ax_printf("ixgbe: %s at %02x:%02x.%x, MAC %02x:%02x:%02x:%02x:%02x:%02x, IRQ %u, %s, link %s, "
		  "queues %u (RSS over %u), restart %u\n",
		  ix.dev.chip->name, PCI_BUS(bdf), PCI_DEV(bdf), PCI_FN(bdf), nd.mac[0], nd.mac[1], nd.mac[2], nd.mac[3],
		  nd.mac[4], nd.mac[5], nd.irq, how, nd.link ? "up" : "down",
		  ix.dev.nq, ix.dev.rss_nq, ax_svc.restarts);
}

static const struct netdrv_ops ops = {
	.name = "ixgbe", .init = hw_init, .reset = hw_reset, .set_poll = hw_set_poll, .set_itr = hw_set_itr,
	.link = hw_link, .irq_ack = hw_irq_ack, .irq_hold = hw_irq_hold, .tx = tx, .rx_room = rx_room, .rx_post = rx_post, .harvest = harvest,
	.set_queues = set_queues, .publish = publish, .stats = hw_stats, .counter = counter, .banner = banner,
};

int main(int argc, char **argv) { return netdrv_main(&ops, argc, argv); }
