/* e1000: the driver of Intel's 82540EM (QEMU's default NIC) and 82574, a native server run
 * by rs with `pci=8086:100e`. lib/netdrv serves ip (lib/net/netdev_proto.h) and runs the
 * loop; this file gives it the device: its TX checksum context, counters and banner.
 * README.md has the protocol, the state and the recovery story.
 *   e1000 pci=BB:DD.F [dedicated=1] [poll=1] [itr=USECS] [name=IF] [restarted=N] [hb=H] */
#include "e1000.h"
#include "pci.h"
#include "service.h"

struct e1k e1k;

/* A validated frame into the ring; checksum offload as a context descriptor (8-bit offsets). */
static enum netdrv_tx tx(unsigned q, const struct netdrv_frame *f)
{
	(void)q; /* one queue pair */
	struct e1k_ctx ctx = { 0 }, *csum = NULL;
	uint32_t popts = 0;
	if (f->csum) {
		uint64_t ipcss = 14, ipcso = 14 + 10, ipcse = 14 + f->ihl - 1, tucss = 0, tucso = 0;
		if (f->csum & NDF_TX_CSUM_L4) {
			tucss = f->l4_start;
			tucso = f->l4_field;
			if (tucso > 255 || tucss > 255)
				return NDTX_REFUSED;
			popts |= TXD_POPTS_TXSM;
		}
		if (f->csum & NDF_TX_CSUM_IP4)
			popts |= TXD_POPTS_IXSM;
		ctx.addr = ipcss | ipcso << 8 | ipcse << 16 | tucss << 32 | tucso << 40;
		ctx.lower = TXD_CMD_DEXT | TXD_DTYP_C | TXD_CTX_IP;
		csum = &ctx;
	}
	if (tx_space() < f->nseg + 1u)
		return NDTX_FULL;
	tx_queue(f->id, f->nseg, f->bus, f->len, csum, popts);
	return NDTX_QUEUED;
}

static int harvest(void) { return rx_harvest() + tx_harvest(); }

static bool counter(uint64_t i, char *out, size_t cap)
{
	const struct e1k_counters *c = &e1k.c;
	static const char *const names[] = { "rx_packets", "rx_bytes", "tx_packets", "tx_bytes", "rx_drops",
		"rx_no_buffer", "crc_errors", "rx_errors" };
	const uint64_t vals[] = { c->rx_packets, c->rx_bytes, c->tx_packets, c->tx_bytes, c->rx_missed + nd.c.rx_dropped,
		c->rx_no_buf, c->crc_errors, c->rx_errors };
	return netdrv_counter(i, names, vals, sizeof(vals) / sizeof(vals[0]), out, cap);
}

static void banner(void)
{
	uint16_t bdf = (uint16_t)nd.bdf;
	ax_printf("e1000: %s at %02x:%02x.%x, MAC %02x:%02x:%02x:%02x:%02x:%02x, IRQ %u, %s mode, link %s, restart %u\n",
		  e1k.devid == E1K_DEV_82574 ? "82574" : "82540EM", PCI_BUS(bdf), PCI_DEV(bdf), PCI_FN(bdf), nd.mac[0],
		  nd.mac[1], nd.mac[2], nd.mac[3], nd.mac[4], nd.mac[5], nd.irq, nd.poll_mode ? "polling" : "interrupt",
		  nd.link ? "up" : "down", ax_svc.restarts);
}

static const struct netdrv_ops ops = {
	.name = "e1000", .init = hw_init, .reset = hw_reset, .set_poll = hw_set_poll, .set_itr = hw_set_itr,
	.link = hw_link, .irq_ack = hw_irq_ack, .tx = tx, .rx_room = rx_room, .rx_post = rx_post, .harvest = harvest,
	.publish = rings_publish, .stats = hw_stats, .counter = counter, .banner = banner,
};

int main(int argc, char **argv) { return netdrv_main(&ops, argc, argv); }
