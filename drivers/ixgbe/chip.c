/* The chip-variant table (chip.h): the 82576 (QEMU's igb) and the 82599, and the setup
 * both share through it: queue rings, RSS key / redirection table / MRQC, the receive
 * address, the EEPROM word. Registers only through struct ix_io. */
#include "chip.h"
#include "msix_map.h"

/* ---- shared ---- */

static void wait_bit(struct ix_dev *d, uint32_t reg, uint32_t bit, bool set)
{
	for (int i = 0; i < 1000 && ((ix_rd(d, reg) & bit) != 0) != set; i++)
		ix_delay(d, 10);
}

/* (lib/netdrv/msix_map.h: the rule virtio-net follows too) */
uint32_t ix_msix_qvec(const struct ix_dev *d, uint32_t q) { return netdrv_msix_qvec(d->msix_nvec, q); }
uint32_t ix_msix_other(const struct ix_dev *d) { return netdrv_msix_other(d->msix_nvec); }
uint32_t ix_msix_mask(const struct ix_dev *d) { return d->msix_nvec ? (1u << d->msix_nvec) - 1 : 0; }

uint32_t ix_rdt(const struct ix_dev *d, uint32_t q) { return d->chip->rxq(q) + IX_Q_TAIL; }
uint32_t ix_tdt(const struct ix_dev *d, uint32_t q) { return d->chip->txq(q) + IX_Q_TAIL; }

void ix_rxq_disable(struct ix_dev *d, uint32_t q)
{
	uint32_t b = d->chip->rxq(q);
	ix_wr(d, b + IX_Q_DCTL, ix_rd(d, b + IX_Q_DCTL) & ~IX_DCTL_ENABLE);
	wait_bit(d, b + IX_Q_DCTL, IX_DCTL_ENABLE, false);
}

void ix_txq_disable(struct ix_dev *d, uint32_t q)
{
	uint32_t b = d->chip->txq(q);
	ix_wr(d, b + IX_Q_DCTL, ix_rd(d, b + IX_Q_DCTL) & ~IX_DCTL_ENABLE);
	wait_bit(d, b + IX_Q_DCTL, IX_DCTL_ENABLE, false);
}

/* A ring's base and length at register block b, head and tail 0 (it is disabled). */
static void ring_program(struct ix_dev *d, uint32_t b, uint64_t bus, uint32_t bytes)
{
	ix_wr(d, b + IX_Q_BAL, (uint32_t)bus);
	ix_wr(d, b + IX_Q_BAH, (uint32_t)(bus >> 32));
	ix_wr(d, b + IX_Q_LEN, bytes);
	ix_wr(d, b + IX_Q_HEAD, 0);
	ix_wr(d, b + IX_Q_TAIL, 0);
}

static void ring_enable(struct ix_dev *d, uint32_t b)
{
	ix_wr(d, b + IX_Q_DCTL, ix_rd(d, b + IX_Q_DCTL) | IX_DCTL_ENABLE);
	wait_bit(d, b + IX_Q_DCTL, IX_DCTL_ENABLE, true);
}

void ix_rxq_setup(struct ix_dev *d, uint32_t q, uint64_t bus, uint32_t ndesc)
{
	uint32_t b = d->chip->rxq(q);
	ix_rxq_disable(d, q);
	ring_program(d, b, bus, ndesc * (uint32_t)sizeof(union ix_rx_desc));
	ix_wr(d, d->chip->srrctl(q), d->chip->srrctl_val);
	ring_enable(d, b);
}

void ix_txq_setup(struct ix_dev *d, uint32_t q, uint64_t bus, uint32_t ndesc)
{
	uint32_t b = d->chip->txq(q);
	ix_txq_disable(d, q);
	ring_program(d, b, bus, ndesc * (uint32_t)sizeof(union ix_tx_desc));
	ring_enable(d, b);
}

void ix_rss_setup(struct ix_dev *d)
{
	const struct ix_chip *c = d->chip;
	uint32_t n = d->rss_nq ? d->rss_nq : 1;
	for (uint32_t i = 0; i < IX_RSSRK_BYTES / 4; i++) {
		const uint8_t *k = d->rss_key + 4 * i; /* byte 0 of the key in bits 7:0 of RSSRK0 */
		ix_wr(d, c->rssrk + 4 * i, (uint32_t)k[0] | (uint32_t)k[1] << 8 | (uint32_t)k[2] << 16 | (uint32_t)k[3] << 24);
	}
	for (uint32_t r = 0; r < IX_RETA_REGS; r++) {
		uint32_t v = 0;
		for (uint32_t e = 0; e < 4; e++)
			v |= ((4 * r + e) % n) << (8 * e);
		ix_wr(d, c->reta + 4 * r, v);
	}
	ix_wr(d, c->mrqc, c->mrqc_rss | IX_MRQC_TCPIPV4 | IX_MRQC_IPV4);
	ix_wr(d, c->rxcsum, c->rxcsum_val);
}

uint32_t ix_reta_entry(const struct ix_dev *d, uint32_t i)
{
	return (ix_rd(d, d->chip->reta + 4 * (i / 4)) >> (8 * (i % 4))) & 0xf;
}

bool ix_mac_read(struct ix_dev *d, uint8_t mac[6])
{
	uint32_t lo = ix_rd(d, d->chip->ral0), hi = ix_rd(d, d->chip->rah0);
	if (!(hi & (1u << 31)) || (!lo && !(hi & 0xffff)))
		return false;
	for (int i = 0; i < 4; i++)
		mac[i] = (uint8_t)(lo >> (8 * i));
	mac[4] = (uint8_t)hi;
	mac[5] = (uint8_t)(hi >> 8);
	return true;
}

void ix_mac_write(struct ix_dev *d, const uint8_t mac[6])
{
	ix_wr(d, d->chip->ral0, (uint32_t)mac[0] | (uint32_t)mac[1] << 8 | (uint32_t)mac[2] << 16 | (uint32_t)mac[3] << 24);
	ix_wr(d, d->chip->rah0, (uint32_t)mac[4] | (uint32_t)mac[5] << 8 | 1u << 31);
}

uint16_t ix_eeprom_word(struct ix_dev *d, uint32_t addr)
{
	const struct ix_chip *c = d->chip;
	ix_wr(d, c->eerd, 1u | addr << c->eerd_addr_shift);
	for (int i = 0; i < 10000; i++) {
		uint32_t v = ix_rd(d, c->eerd);
		if (v & c->eerd_done)
			return (uint16_t)(v >> 16);
		ix_delay(d, 1);
	}
	return 0xffff;
}

void ix_bringup(struct ix_dev *d, const uint64_t *rx_bus, const uint64_t *tx_bus, uint32_t ndesc)
{
	const struct ix_chip *c = d->chip;
	for (uint32_t i = 0; i < 128; i++)
		ix_wr(d, c->mta + 4 * i, 0);
	c->mac_setup(d);
	for (uint32_t q = 0; q < d->nq; q++) {
		ix_rxq_setup(d, q, rx_bus[q], ndesc);
		ix_txq_setup(d, q, tx_bus[q], ndesc);
		c->irq_route(d, q);
	}
	ix_rss_setup(d);
	c->start(d);
}

/* ---- 82576 ---- */

static uint32_t igb_rxq(uint32_t q) { return IGB_RXQ(q); }
static uint32_t igb_txq(uint32_t q) { return IGB_TXQ(q); }
static uint32_t igb_srrctl(uint32_t q) { return IGB_SRRCTL(q); }

static void igb_reset(struct ix_dev *d)
{
	ix_wr(d, IGB_IMC, 0xffffffffu);
	ix_wr(d, IGB_RCTL, 0);
	ix_wr(d, IGB_TCTL, IGB_TCTL_PSP);
	ix_delay(d, 100); /* let DMA in flight finish */
	ix_wr(d, IGB_CTRL, ix_rd(d, IGB_CTRL) | IGB_CTRL_RST);
	ix_delay(d, 10);
	wait_bit(d, IGB_CTRL, IGB_CTRL_RST, false);
	ix_wr(d, IGB_IMC, 0xffffffffu);
	ix_wr(d, IGB_EIMC, 0xffffffffu);
	(void)ix_rd(d, IGB_ICR);
}

static void igb_mac_setup(struct ix_dev *d)
{
	ix_wr(d, IGB_CTRL, (ix_rd(d, IGB_CTRL) | IGB_CTRL_SLU) & ~(IGB_CTRL_PHY_RST | IGB_CTRL_LRST));
	/* Autonegotiation (re)started in the PHY (MII BMCR through MDIC): the link comes up
	 * when it completes (STATUS.LU, an LSC interrupt); QEMU's model leaves the link down
	 * after CTRL.RST until this is written. */
	ix_wr(d, IGB_MDIC, IGB_BMCR_AUTONEG | IGB_PHY_BMCR << 16 | IGB_MDIC_PHY1 | IGB_MDIC_WRITE);
	wait_bit(d, IGB_MDIC, IGB_MDIC_READY, true);
	ix_wr(d, IGB_IAM, 0);  /* reading ICR masks nothing */
	if (!d->msix_nvec) {
		ix_wr(d, IGB_GPIE, 0); /* not MSI-X mode: causes go to ICR and the INTx line */
		return;
	}
	/* MSI-X mode: queue causes reach EICR bits (= vectors) through the IVARs, the other
	 * causes enabled in IMS (the link) through IVAR_MISC; reading ICR clears it (NSICR).
	 * A vector's message clears its EICR bit (EIAC) and masks it (EIAM: on the chip; QEMU's
	 * model has no auto-mask, lib/netdrv masks through msix_hold anyway). GPIE first: QEMU's
	 * model takes EIAC only in MSI-X mode. */
	ix_wr(d, IGB_GPIE, IGB_GPIE_NSICR | IGB_GPIE_MSIX | IGB_GPIE_EIAME | IGB_GPIE_PBA);
	ix_wr(d, IGB_IVAR_MISC, (IX_IVAR_VALID | ix_msix_other(d)) << 8);
	ix_wr(d, IGB_EIAC, ix_msix_mask(d));
	ix_wr(d, IGB_EIAM, ix_msix_mask(d));
}

static void igb_start(struct ix_dev *d)
{
	ix_wr(d, IGB_RCTL, IGB_RCTL_EN | IGB_RCTL_BAM | IGB_RCTL_SECRC);
	ix_wr(d, IGB_TCTL, IGB_TCTL_EN | IGB_TCTL_PSP | IGB_TCTL_CT(0x0f) | IGB_TCTL_COLD(0x40));
}

/* IVAR: queue q (< 8) RX in byte 0 of IVAR0+4q, TX in byte 1. Legacy: vector = 2q (RX),
 * 2q+1 (TX): the 82576 raises ICR.RXDW/TXDW whatever the IVAR says, but QEMU's model raises
 * TXDW only for a TX queue whose IVAR entry is valid, so it is filled in either way. MSI-X:
 * both to the queue's vector (ix_msix_qvec). */
static void igb_irq_route(struct ix_dev *d, uint32_t q)
{
	uint32_t reg = IGB_IVAR0 + 4 * (q % 8), sh = q < 8 ? 0 : 16;
	uint32_t rx = d->msix_nvec ? ix_msix_qvec(d, q) : 2 * q, tx = d->msix_nvec ? rx : 2 * q + 1;
	uint32_t v = ix_rd(d, reg) & ~(0xffffu << sh);
	v |= (IX_IVAR_VALID | rx) << sh | (IX_IVAR_VALID | tx) << (sh + 8);
	ix_wr(d, reg, v);
}

#define IGB_CAUSES (IGB_ICR_RXDW | IGB_ICR_TXDW | IGB_ICR_LSC | IGB_ICR_RXO | IGB_ICR_RXDMT0)

static void igb_irq_mask(struct ix_dev *d, bool on)
{
	ix_wr(d, IGB_IMC, 0xffffffffu);
	if (d->msix_nvec) {
		ix_wr(d, IGB_EIMC, 0xffffffffu);
		if (on) {
			ix_wr(d, IGB_IMS, IGB_ICR_LSC); /* the "other" cause; the queues are EICR's */
			ix_wr(d, IGB_EIMS, ix_msix_mask(d));
		}
	} else if (on) {
		ix_wr(d, IGB_IMS, IGB_CAUSES);
	}
}

/* Legacy: ICR. MSI-X: EICR (the vectors that fired, clear on read) and ICR (the other
 * causes: the link), both read. */
static uint32_t igb_irq_cause(struct ix_dev *d, bool *link)
{
	uint32_t eicr = d->msix_nvec ? ix_rd(d, IGB_EICR) : 0, icr = ix_rd(d, IGB_ICR);
	*link = (icr & IGB_ICR_LSC) != 0;
	return eicr | icr;
}

/* Masked while lib/netdrv polls; unmasking sends at once what came meanwhile. */
static void igb_msix_hold(struct ix_dev *d, bool hold) { ix_wr(d, hold ? IGB_EIMC : IGB_EIMS, ix_msix_mask(d)); }

static bool igb_link(struct ix_dev *d) { return (ix_rd(d, IGB_STATUS) & IGB_STATUS_LU) != 0; }

static uint32_t igb_link_mbps(struct ix_dev *d)
{
	uint32_t st = ix_rd(d, IGB_STATUS);
	static const uint32_t mbps[4] = { 10, 100, 1000, 1000 };
	return (st & IGB_STATUS_LU) ? mbps[IGB_STATUS_SPEED(st)] : 0;
}

const struct ix_chip ix_chip_82576 = {
	.name = "82576", .devid = IX_DEV_82576, .max_queues = IGB_NQUEUES,
	.rxq = igb_rxq, .txq = igb_txq, .srrctl = igb_srrctl,
	.ral0 = IGB_RAL0, .rah0 = IGB_RAH0, .mta = IGB_MTA, .reta = IGB_RETA, .rssrk = IGB_RSSRK, .mrqc = IGB_MRQC,
	.rxcsum = IGB_RXCSUM, .eerd = IGB_EERD, .eerd_done = IGB_EERD_DONE, .eerd_addr_shift = IGB_EERD_ADDR_SHIFT,
	.eitr0 = IGB_EITR0, .eitr_us = 1,
	.st = { IGB_CRCERRS, IGB_RXERRC, IGB_MPC, IGB_GPRC, IGB_GPTC, IGB_GORCL, IGB_GOTCL, IGB_RNBC },
	.srrctl_val = IGB_SRRCTL_BSIZEPKT(2) | IGB_SRRCTL_DESCTYPE_ADV1 | IGB_SRRCTL_DROP_EN,
	.rx_err_ipe = IGB_RXE_IPE, .rx_err_l4e = IGB_RXE_TCPE, .rx_err_rxe = IGB_RXE_RXE,
	.tx_olinfo_csum = 0, .mrqc_rss = IGB_MRQC_RSS, .rxcsum_val = IGB_RXCSUM_IPOFL | IGB_RXCSUM_TUOFL | IGB_RXCSUM_PCSD,
	.reset = igb_reset, .mac_setup = igb_mac_setup, .start = igb_start, .irq_route = igb_irq_route,
	.irq_mask = igb_irq_mask, .irq_cause = igb_irq_cause, .msix_hold = igb_msix_hold, .link = igb_link,
	.link_mbps = igb_link_mbps,
};

/* ---- 82599 ---- */

static uint32_t ixgbe_rxq(uint32_t q) { return IXGBE_RXQ(q); }
static uint32_t ixgbe_txq(uint32_t q) { return IXGBE_TXQ(q); }
static uint32_t ixgbe_srrctl(uint32_t q) { return q < 16 ? IXGBE_SRRCTL(q) : IXGBE_RXQ(q) + 0x14; }

static void ixgbe_reset(struct ix_dev *d)
{
	ix_wr(d, IXGBE_EIMC, 0x7fffffffu);
	ix_wr(d, IXGBE_RXCTRL, 0);
	for (uint32_t q = 0; q < IX_MAXQ; q++)
		ix_wr(d, IXGBE_TXQ(q) + IX_Q_DCTL, 0);
	ix_delay(d, 100);
	ix_wr(d, IXGBE_CTRL, ix_rd(d, IXGBE_CTRL) | IXGBE_CTRL_RST | IXGBE_CTRL_LRST);
	ix_delay(d, 10);
	wait_bit(d, IXGBE_CTRL, IXGBE_CTRL_RST, false);
	ix_delay(d, 10000); /* the datasheet's 10 ms after a global reset */
	ix_wr(d, IXGBE_EIMC, 0x7fffffffu);
	(void)ix_rd(d, IXGBE_EICR);
	/* 4.6.3: the EEPROM's auto-read (MAC address, AUTOC's defaults) and the RX DMA's init
	 * must be done before the set-up goes on */
	wait_bit(d, IXGBE_EEC, IXGBE_EEC_ARD, true);
	wait_bit(d, IXGBE_RDRXCTL, IXGBE_RDRXCTL_DMAIDONE, true);
}

/* Link set-up (datasheet 4.6.4): the link mode for the port's media, then autonegotiation
 * (re)started; LINKS then says whether the link is up and at which speed. SFP+ ports (10FB,
 * 1507, 1557): 10 Gb/s serial without autonegotiation, SFI as the serial PMA/PMD (AUTOC2).
 * The KX4 backplane port (10F7): KX4/KX/KR autonegotiation with the KX4 parallel PMA/PMD,
 * KX4 and KX advertised. The rest of AUTOC (from the EEPROM) is kept. Not done: the SFP+
 * module's identification over I2C and its EEPROM init sequence, multispeed (1 Gb/s) fiber,
 * the SW/FW semaphore a board whose firmware manages the link (LESM) needs around AUTOC. */
static void ixgbe_link_setup(struct ix_dev *d)
{
	uint32_t autoc = ix_rd(d, IXGBE_AUTOC) & ~(IXGBE_AUTOC_LMS_MASK | IXGBE_AUTOC_10G_PMA_PMD_MASK);
	if (d->devid == IX_DEV_82599_KX4) {
		autoc |= IXGBE_AUTOC_LMS_KX4_KX_KR | IXGBE_AUTOC_10G_KX4 | IXGBE_AUTOC_KX4_SUPP | IXGBE_AUTOC_KX_SUPP;
	} else {
		ix_wr(d, IXGBE_AUTOC2, (ix_rd(d, IXGBE_AUTOC2) & ~IXGBE_AUTOC2_10G_SERIAL_MASK) | IXGBE_AUTOC2_10G_SFI);
		autoc |= IXGBE_AUTOC_LMS_10G_SERIAL;
	}
	ix_wr(d, IXGBE_AUTOC, autoc);
	ix_wr(d, IXGBE_AUTOC, autoc | IXGBE_AUTOC_AN_RESTART);
}

static void ixgbe_mac_setup(struct ix_dev *d)
{
	ixgbe_link_setup(d);
	if (d->msix_nvec) {
		/* MSI-X mode: queue causes to vectors through the IVARs, the other causes (LSC)
		 * through IVAR_MISC; a message clears its queue bits (EIAC; OCD: never the other
		 * causes, which irq_cause reads and clears) and masks its vector (EIAM). */
		ix_wr(d, IXGBE_GPIE, IXGBE_GPIE_MSIX | IXGBE_GPIE_OCD | IXGBE_GPIE_EIAME | IXGBE_GPIE_PBA);
		ix_wr(d, IXGBE_IVAR_MISC, (IX_IVAR_VALID | ix_msix_other(d)) << 8);
		ix_wr(d, IXGBE_EIAC, ix_msix_mask(d));
		ix_wr(d, IXGBE_EIAM, ix_msix_mask(d));
	} else {
		ix_wr(d, IXGBE_GPIE, 0);
	}
	ix_wr(d, IXGBE_HLREG0, ix_rd(d, IXGBE_HLREG0) | IXGBE_HLREG0_TXCRCEN | IXGBE_HLREG0_RXCRCSTRP |
				       IXGBE_HLREG0_TXPADEN);
	ix_wr(d, IXGBE_RDRXCTL, ix_rd(d, IXGBE_RDRXCTL) | IXGBE_RDRXCTL_CRCSTRIP);
	ix_wr(d, IXGBE_FCTRL, ix_rd(d, IXGBE_FCTRL) | IXGBE_FCTRL_BAM);
	ix_wr(d, IXGBE_DMATXCTL, ix_rd(d, IXGBE_DMATXCTL) | IXGBE_DMATXCTL_TE); /* before TXDCTL.ENABLE */
}

static void ixgbe_start(struct ix_dev *d) { ix_wr(d, IXGBE_RXCTRL, ix_rd(d, IXGBE_RXCTRL) | IXGBE_RXCTRL_RXEN); }

/* IVAR(q/2): RX queue q in byte 0 (even q) or 2, TX in byte 1 or 3; legacy interrupts map
 * vector v to EICR bit v: RX q -> 2q, TX q -> 2q+1 (only 16 cause bits: q < 8). MSI-X: both
 * to the queue's vector. */
static void ixgbe_irq_route(struct ix_dev *d, uint32_t q)
{
	uint32_t reg = IXGBE_IVAR(q / 2), sh = 16 * (q % 2);
	uint32_t rx = d->msix_nvec ? ix_msix_qvec(d, q) : 2 * q, tx = d->msix_nvec ? rx : 2 * q + 1;
	uint32_t v = ix_rd(d, reg) & ~(0xffffu << sh);
	v |= (IX_IVAR_VALID | rx) << sh | (IX_IVAR_VALID | tx) << (sh + 8);
	ix_wr(d, reg, v);
}

static uint32_t ixgbe_causes(const struct ix_dev *d)
{
	if (d->msix_nvec)
		return ix_msix_mask(d) | IXGBE_EICR_LSC;
	return (d->nq >= 8 ? 0xffffu : (1u << (2 * d->nq)) - 1) | IXGBE_EICR_LSC;
}

static void ixgbe_irq_mask(struct ix_dev *d, bool on)
{
	ix_wr(d, IXGBE_EIMC, 0x7fffffffu);
	if (on)
		ix_wr(d, IXGBE_EIMS, ixgbe_causes(d));
}

static uint32_t ixgbe_irq_cause(struct ix_dev *d, bool *link)
{
	uint32_t eicr = ix_rd(d, IXGBE_EICR);
	if (d->msix_nvec && eicr)
		ix_wr(d, IXGBE_EICR, eicr); /* write 1 to clear: the other causes (OCD) */
	*link = (eicr & IXGBE_EICR_LSC) != 0;
	return eicr;
}

static void ixgbe_msix_hold(struct ix_dev *d, bool hold) { ix_wr(d, hold ? IXGBE_EIMC : IXGBE_EIMS, ixgbe_causes(d)); }

static bool ixgbe_link(struct ix_dev *d) { return (ix_rd(d, IXGBE_LINKS) & IXGBE_LINKS_UP) != 0; }

static uint32_t ixgbe_link_mbps(struct ix_dev *d)
{
	uint32_t l = ix_rd(d, IXGBE_LINKS);
	if (!(l & IXGBE_LINKS_UP))
		return 0;
	switch (l & IXGBE_LINKS_SPEED_MASK) {
	case IXGBE_LINKS_SPEED_10G:
		return 10000;
	case IXGBE_LINKS_SPEED_1G:
		return 1000;
	case IXGBE_LINKS_SPEED_100M:
		return 100;
	default:
		return 0; /* (reserved: not a speed we can name) */
	}
}

const struct ix_chip ix_chip_82599 = {
	.name = "82599", .devid = IX_DEV_82599_SFP, .max_queues = IXGBE_NQUEUES,
	.rxq = ixgbe_rxq, .txq = ixgbe_txq, .srrctl = ixgbe_srrctl,
	.ral0 = IXGBE_RAL0, .rah0 = IXGBE_RAH0, .mta = IXGBE_MTA, .reta = IXGBE_RETA, .rssrk = IXGBE_RSSRK,
	.mrqc = IXGBE_MRQC, .rxcsum = IXGBE_RXCSUM, .eerd = IXGBE_EERD, .eerd_done = IXGBE_EERD_DONE,
	.eerd_addr_shift = IXGBE_EERD_ADDR_SHIFT, .eitr0 = IXGBE_EITR0, .eitr_us = 2,
	.st = { IXGBE_CRCERRS, IXGBE_ILLERRC, IXGBE_MPC0, IXGBE_GPRC, IXGBE_GPTC, IXGBE_GORCL, IXGBE_GOTCL, IXGBE_RNBC0 },
	.srrctl_val = IXGBE_SRRCTL_BSIZEPKT(2) | IXGBE_SRRCTL_DESCTYPE_ADV1 | IXGBE_SRRCTL_DROP_EN,
	.rx_err_ipe = IXGBE_RXE_IPE, .rx_err_l4e = IXGBE_RXE_TCPE, .rx_err_rxe = IXGBE_RXE_RXE,
	.tx_olinfo_csum = IXGBE_TXD_CC, .mrqc_rss = IXGBE_MRQC_RSS, .rxcsum_val = IXGBE_RXCSUM_PCSD,
	.reset = ixgbe_reset, .mac_setup = ixgbe_mac_setup, .start = ixgbe_start, .irq_route = ixgbe_irq_route,
	.irq_mask = ixgbe_irq_mask, .irq_cause = ixgbe_irq_cause, .msix_hold = ixgbe_msix_hold, .link = ixgbe_link,
	.link_mbps = ixgbe_link_mbps,
};

const struct ix_chip *ix_chip_of(uint16_t devid)
{
	switch (devid) {
	case IX_DEV_82576:
		return &ix_chip_82576;
	case IX_DEV_82599_SFP:
	case IX_DEV_82599_KX4:
	case IX_DEV_82599_SFP_EM:
	case IX_DEV_82599EN_SFP:
		return &ix_chip_82599;
	default:
		return NULL;
	}
}
