/* The device: finding it (the pci= argument rs gives), mapping BAR 0, the ring memory,
 * reset and bring-up through the chip table (chip.c), MAC address, link, the interrupt
 * cause, moderation and the statistics registers. */
#include "ixgbe.h"
#include "pci_axolotl.h"

/* The RSS key: fixed (the same hash every start, so a flow keeps its queue across driver
 * restarts), random-looking: the Toeplitz key of Microsoft's RSS verification suite. */
static const uint8_t rss_key[IX_RSSRK_BYTES] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
	0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
	0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

static uint32_t mmio_rd(void *ctx, uint32_t reg) { return *(volatile uint32_t *)((volatile uint8_t *)ctx + reg); }
static void mmio_wr(void *ctx, uint32_t reg, uint32_t v) { *(volatile uint32_t *)((volatile uint8_t *)ctx + reg) = v; }
static void delay_us(void *ctx, uint32_t us)
{
	(void)ctx;
	uint64_t end = ax_time_ns() + (uint64_t)us * 1000;
	while (ax_time_ns() < end)
		__asm__ volatile("pause");
}
static struct ix_io mmio = { mmio_rd, mmio_wr, delay_us, NULL };

static int64_t fail(const char *what, int64_t e)
{
	ax_printf("ixgbe: %s (%lld)\n", what, (long long)e);
	return e < 0 ? e : -KE_INVAL;
}

int64_t hw_init(int argc, char **argv)
{
	uint32_t nq = 0; /* queues=N; default IX_DEF_QUEUES, or the chip's if fewer */
	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "itr=", 4))
			ix.itr_us = (uint32_t)ax_atou(argv[i] + 4);
		else if (!strncmp(argv[i], "queues=", 7))
			nq = (uint32_t)ax_atou(argv[i] + 7);
	}
	uint16_t bdf = (uint16_t)nd.bdf;
	struct pci_func f;
	int64_t r = pci_read_func(&pci_kcall, bdf, &f);
	if (r < 0)
		return fail("cannot read its PCI function", r);
	ix.pci = f;
	nd.pci = &ix.pci;
	const struct ix_chip *chip = f.vendor == IX_VENDOR ? ix_chip_of(f.device) : NULL;
	if (!chip)
		return fail("not an 82576 or 82599", -KE_INVAL);
	if (f.bar[0].kind != PCI_BAR_MEM || f.bar[0].size < 0x20000)
		return fail("BAR 0 is not a register window of 128 KiB or more", -KE_INVAL);
	if (!nq)
		nq = IX_DEF_QUEUES < chip->max_queues ? IX_DEF_QUEUES : chip->max_queues;
	if (nq < 1 || nq > IX_MAXQ || nq > chip->max_queues)
		return fail("queues= is 1..8", -KE_INVAL);
	nd.max_queues = nq; /* ip's offer decides how many of them run (set_queues) */
	/* a vector per queue pair and one for the link (lib/netdrv binds them, or the line);
	 * the chip table routes the causes to them (msix_map.h) */
	nd.msix_want = NETDRV_MSIX_WANT(nq);
	nd.irq = f.int_pin && f.int_line >= 1 && f.int_line <= 15 ? f.int_line : 0;
	int64_t va = kcall6(KC_MMIO_MAP, f.bar[0].base & ~0xfffull, 0x20000 / 4096, 0, 0, 0, 0);
	if (va < 0)
		return fail("cannot map BAR 0", va);
	ix.regs = (volatile uint8_t *)va;
	mmio.ctx = (void *)va;
	if ((r = pci_command(&pci_kcall, bdf, PCI_CMD_MEM | PCI_CMD_MASTER, PCI_CMD_INTX_OFF)) < 0)
		return fail("cannot enable the function", r);
	uint32_t pages = 2 * nq;
	ix.ring_h = ax_mo_create(pages, MOF_DMA);
	int64_t rva = ix.ring_h > 0 ? ax_mo_map(ix.ring_h, 0, 0, pages, KP_R | KP_W) : ix.ring_h;
	int64_t p0 = rva > 0 ? kcall2(KC_MO_PHYS, (uint64_t)ix.ring_h, 0) : rva;
	int64_t pl = p0 > 0 ? kcall2(KC_MO_PHYS, (uint64_t)ix.ring_h, pages - 1) : p0;
	if (pl < 0 || pl != p0 + (int64_t)(pages - 1) * 4096)
		return fail("cannot make its descriptor rings (DMA memory)", pl < 0 ? pl : -KE_INVAL);
	ix.ring_bus = (uint64_t)p0;
	ix.ring_va = (uint8_t *)rva;
	ix.dev = (struct ix_dev){ .chip = chip, .io = &mmio, .devid = f.device, .nq = nq, .rss_nq = 1 };
	memcpy(ix.dev.rss_key, rss_key, sizeof(rss_key));
	for (uint32_t q = 0; q < nq; q++) {
		struct ixq *x = &ix.q[q];
		x->idx = q;
		x->rx = (volatile union ix_rx_desc *)(ix.ring_va + 2 * q * 4096);
		x->tx = (volatile union ix_tx_desc *)(ix.ring_va + (2 * q + 1) * 4096);
		x->rx_ring_bus = ix.ring_bus + 2 * q * 4096;
		x->tx_ring_bus = ix.ring_bus + (2 * q + 1) * 4096;
		x->rdt = ix_rdt(&ix.dev, q);
		x->tdt = ix_tdt(&ix.dev, q);
	}
	if (!ix.itr_us)
		ix.itr_us = 50;
	return 0;
}

static void read_mac(void)
{
	struct ix_dev *d = &ix.dev;
	if (!ix_mac_read(d, nd.mac)) {
		for (uint32_t w = 0; w < 3; w++) {
			uint16_t v = ix_eeprom_word(d, w);
			nd.mac[2 * w] = (uint8_t)v;
			nd.mac[2 * w + 1] = (uint8_t)(v >> 8);
		}
	}
	ix_mac_write(d, nd.mac);
}

/* Moderation: EITR's interval field (bits 14:2) counts 1 µs on the 82576 and 2 µs on the
 * 82599; for the legacy interrupt only EITR0 matters. */
void hw_set_itr(uint32_t usecs)
{
	ix.itr_us = usecs;
	const struct ix_chip *c = ix.dev.chip;
	ix_wr(&ix.dev, c->eitr0, ((usecs / c->eitr_us) << 2) & 0x7ffc);
}

void hw_set_poll(bool poll) { ix.dev.chip->irq_mask(&ix.dev, !poll); }

bool hw_link(void) { return ix.dev.chip->link(&ix.dev); }

uint32_t hw_irq_ack(bool *link_event) { return ix.dev.chip->irq_cause(&ix.dev, link_event); }

void hw_irq_hold(bool hold) { ix.dev.chip->msix_hold(&ix.dev, hold); }

static uint32_t stat_read(uint32_t reg, struct e1k_stat *s)
{
	if (!reg)
		return 0;
	uint32_t first = ix_rd(&ix.dev, reg);
	return e1k_stat_new(s, first, ix_rd(&ix.dev, reg));
}

void hw_stats(void)
{
	const struct ix_stat_regs *r = &ix.dev.chip->st;
	struct ix_counters *c = &ix.c;
	c->crc_errors += stat_read(r->crc, &ix.st[IX_ST_CRC]);
	c->rx_errors += stat_read(r->rxerr, &ix.st[IX_ST_RXERR]);
	c->rx_missed += stat_read(r->mpc, &ix.st[IX_ST_MPC]);
	c->rx_packets += stat_read(r->gprc, &ix.st[IX_ST_GPRC]);
	c->tx_packets += stat_read(r->gptc, &ix.st[IX_ST_GPTC]);
	c->rx_no_buf += stat_read(r->rnbc, &ix.st[IX_ST_RNBC]);
	uint64_t lo = ix_rd(&ix.dev, r->gorcl);
	c->rx_bytes += lo | (uint64_t)ix_rd(&ix.dev, r->gorcl + 4) << 32; /* low first: reading high clears */
	lo = ix_rd(&ix.dev, r->gotcl);
	c->tx_bytes += lo | (uint64_t)ix_rd(&ix.dev, r->gotcl + 4) << 32;
}

void hw_reset(void)
{
	struct ix_dev *d = &ix.dev;
	d->msix_nvec = nd.msix_nvec; /* lib/netdrv bound them (or not) before the first reset */
	d->chip->reset(d);
	read_mac();
	memset(ix.ring_va, 0, 2 * d->nq * 4096);
	uint64_t rxb[IX_MAXQ], txb[IX_MAXQ];
	for (uint32_t q = 0; q < d->nq; q++) {
		ixq_reset(&ix.q[q]);
		rxb[q] = ix.q[q].rx_ring_bus;
		txb[q] = ix.q[q].tx_ring_bus;
	}
	ix_bringup(d, rxb, txb, IX_RING);
	hw_set_itr(ix.itr_us);
	hw_stats(); /* start the sums from the reset */
	nd.link = hw_link();
	nd.caps = NDF_TX_CSUM_IP4 | NDF_TX_CSUM_L4;
	hw_set_poll(nd.poll_mode);
}
