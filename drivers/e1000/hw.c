/* The device: finding it (the pci= argument rs gives), mapping BAR 0, reset, MAC address,
 * link, interrupt moderation and the statistics registers. */
#include "e1000.h"
#include "pci_axolotl.h"

static void delay_us(uint64_t us)
{
	uint64_t end = ax_time_ns() + us * 1000;
	while (ax_time_ns() < end)
		__asm__ volatile("pause");
}

static int64_t fail(const char *what, int64_t e)
{
	ax_printf("e1000: %s (%lld)\n", what, (long long)e);
	return e < 0 ? e : -KE_INVAL;
}

int64_t hw_init(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], "itr=", 4))
			e1k.itr_us = (uint32_t)ax_atou(argv[i] + 4);
	uint16_t bdf = (uint16_t)nd.bdf;
	struct pci_func f;
	int64_t r = pci_read_func(&pci_kcall, bdf, &f);
	if (r < 0)
		return fail("cannot read its PCI function", r);
	if (f.vendor != E1K_VENDOR || (f.device != E1K_DEV_82540EM && f.device != E1K_DEV_82574))
		return fail("not an 82540EM or 82574", -KE_INVAL);
	if (f.bar[0].kind != PCI_BAR_MEM || f.bar[0].size < 0x20000)
		return fail("BAR 0 is not a 128 KiB register window", -KE_INVAL);
	e1k.devid = f.device;
	nd.irq = f.int_pin && f.int_line >= 1 && f.int_line <= 15 ? f.int_line : 0;
	int64_t va = kcall6(KC_MMIO_MAP, f.bar[0].base & ~0xfffull, 0x20000 / 4096, 0, 0, 0, 0);
	if (va < 0)
		return fail("cannot map BAR 0", va);
	e1k.regs = (volatile uint8_t *)va;
	/* Memory decode and bus mastering on, INTx allowed. */
	if ((r = pci_command(&pci_kcall, bdf, PCI_CMD_MEM | PCI_CMD_MASTER, PCI_CMD_INTX_OFF)) < 0)
		return fail("cannot enable the function", r);
	e1k.ring_h = ax_mo_create(2, MOF_DMA);
	int64_t rva = e1k.ring_h > 0 ? ax_mo_map(e1k.ring_h, 0, 0, 2, KP_R | KP_W) : e1k.ring_h;
	int64_t p0 = rva > 0 ? kcall2(KC_MO_PHYS, (uint64_t)e1k.ring_h, 0) : rva;
	int64_t p1 = p0 > 0 ? kcall2(KC_MO_PHYS, (uint64_t)e1k.ring_h, 1) : p0;
	if (p1 < 0 || p1 != p0 + 4096)
		return fail("cannot make its descriptor rings (DMA memory)", p1 < 0 ? p1 : -KE_INVAL);
	e1k.ring_bus = (uint64_t)p0;
	e1k.rx = (volatile struct e1k_rx_desc *)rva;
	e1k.tx = (volatile struct e1k_tx_desc *)(rva + 4096);
	if (!e1k.itr_us)
		e1k.itr_us = 50;
	return 0;
}

static uint16_t eeprom_word(uint32_t addr)
{
	bool e = e1k.devid == E1K_DEV_82574;
	uint32_t done = e ? 1u << 1 : 1u << 4;
	wr32(E1K_EERD, EERD_START | addr << (e ? 2 : 8));
	for (int i = 0; i < 10000; i++) {
		uint32_t v = rd32(E1K_EERD);
		if (v & done)
			return (uint16_t)(v >> 16);
		delay_us(1);
	}
	return 0xffff;
}

static void read_mac(void)
{
	uint32_t lo = rd32(E1K_RAL0), hi = rd32(E1K_RAH0);
	if (!(hi & RAH_AV) || (!lo && !(hi & 0xffff))) {
		for (uint32_t w = 0; w < 3; w++) {
			uint16_t v = eeprom_word(w);
			nd.mac[2 * w] = (uint8_t)v;
			nd.mac[2 * w + 1] = (uint8_t)(v >> 8);
		}
		lo = (uint32_t)nd.mac[0] | (uint32_t)nd.mac[1] << 8 | (uint32_t)nd.mac[2] << 16 | (uint32_t)nd.mac[3] << 24;
		hi = (uint32_t)nd.mac[4] | (uint32_t)nd.mac[5] << 8;
	}
	for (int i = 0; i < 4; i++)
		nd.mac[i] = (uint8_t)(lo >> (8 * i));
	nd.mac[4] = (uint8_t)hi;
	nd.mac[5] = (uint8_t)(hi >> 8);
	wr32(E1K_RAL0, lo);
	wr32(E1K_RAH0, (hi & 0xffff) | RAH_AV);
}

void hw_set_itr(uint32_t usecs)
{
	e1k.itr_us = usecs;
	wr32(E1K_ITR, usecs * 1000 / 256); /* in 256 ns units */
}

void hw_set_poll(bool poll)
{
	wr32(E1K_IMC, 0xffffffffu);
	if (!poll)
		wr32(E1K_IMS, E1K_INTS);
}

bool hw_link(void) { return (rd32(E1K_STATUS) & STATUS_LU) != 0; }

uint32_t hw_irq_ack(bool *link_event)
{
	uint32_t icr = rd32(E1K_ICR);
	*link_event = (icr & ICR_LSC) != 0;
	return icr;
}

/* The register's events since the last look, whether it clears on read or not (e1k_stat.h). */
static uint32_t stat_read(uint32_t reg, struct e1k_stat *s)
{
	uint32_t first = rd32(reg);
	return e1k_stat_new(s, first, rd32(reg));
}

void hw_stats(void)
{
	struct e1k_counters *c = &e1k.c;
	c->crc_errors += stat_read(E1K_CRCERRS, &e1k.st[E1K_ST_CRC]);
	c->rx_errors += stat_read(E1K_RXERRC, &e1k.st[E1K_ST_RXERR]);
	c->rx_missed += stat_read(E1K_MPC, &e1k.st[E1K_ST_MPC]);
	c->rx_packets += stat_read(E1K_GPRC, &e1k.st[E1K_ST_GPRC]);
	c->tx_packets += stat_read(E1K_GPTC, &e1k.st[E1K_ST_GPTC]);
	c->rx_no_buf += stat_read(E1K_RNBC, &e1k.st[E1K_ST_RNBC]);
	uint64_t lo = rd32(E1K_GORCL);
	c->rx_bytes += lo | (uint64_t)rd32(E1K_GORCH) << 32; /* low first: reading high clears */
	lo = rd32(E1K_GOTCL);
	c->tx_bytes += lo | (uint64_t)rd32(E1K_GOTCH) << 32;
}

void hw_reset(void)
{
	wr32(E1K_IMC, 0xffffffffu);
	wr32(E1K_RCTL, 0);
	wr32(E1K_TCTL, 0);
	delay_us(100); /* let DMA in flight finish */
	wr32(E1K_CTRL, rd32(E1K_CTRL) | CTRL_RST);
	delay_us(10);
	for (int i = 0; i < 1000 && (rd32(E1K_CTRL) & CTRL_RST); i++)
		delay_us(10);
	wr32(E1K_IMC, 0xffffffffu);
	(void)rd32(E1K_ICR);
	wr32(E1K_CTRL, (rd32(E1K_CTRL) | CTRL_SLU | CTRL_ASDE) & ~(CTRL_LRST | CTRL_PHY_RST | CTRL_VME));
	read_mac();
	for (uint32_t i = 0; i < 128; i++)
		wr32(E1K_MTA + 4 * i, 0);
	memset((void *)e1k.rx, 0, 4096);
	memset((void *)e1k.tx, 0, 4096);
	rings_reset();
	wr32(E1K_RDBAL, (uint32_t)e1k.ring_bus);
	wr32(E1K_RDBAH, (uint32_t)(e1k.ring_bus >> 32));
	wr32(E1K_RDLEN, RX_RING * sizeof(struct e1k_rx_desc));
	wr32(E1K_RDH, 0);
	wr32(E1K_RDT, 0);
	wr32(E1K_TDBAL, (uint32_t)(e1k.ring_bus + 4096));
	wr32(E1K_TDBAH, (uint32_t)((e1k.ring_bus + 4096) >> 32));
	wr32(E1K_TDLEN, TX_RING * sizeof(struct e1k_tx_desc));
	wr32(E1K_TDH, 0);
	wr32(E1K_TDT, 0);
	wr32(E1K_RDTR, 0);
	wr32(E1K_RADV, 0);
	wr32(E1K_TIDV, 0);
	wr32(E1K_TADV, 0);
	wr32(E1K_RXCSUM, RXCSUM_IPOFL | RXCSUM_TUOFL);
	wr32(E1K_TIPG, 10 | 8u << 10 | 6u << 20);
	wr32(E1K_TCTL, TCTL_EN | TCTL_PSP | TCTL_CT(0x0f) | TCTL_COLD(0x40));
	wr32(E1K_RCTL, RCTL_EN | RCTL_BAM | RCTL_SECRC);
	hw_set_itr(e1k.itr_us);
	hw_stats(); /* start the sums from the reset */
	nd.link = hw_link();
	nd.caps = NDF_TX_CSUM_IP4 | NDF_TX_CSUM_L4;
	hw_set_poll(nd.poll_mode);
}
