/* drivers/ixgbe: the chip-variant table (chip.c) and the advanced descriptors (desc.h) run
 * on the host against a register model of each chip: a fake BAR 0 (uint32 registers at the
 * datasheets' offsets, a few reset values), with the behaviour the driver relies on
 * (CTRL.RST self-clearing and resetting the file, interrupt causes cleared on read, the
 * mask set/clear pair, EERD answering, queue enables showing). The same setup functions run
 * for the 82576 (the one QEMU emulates: `-device igb`) and the 82599 (no emulator: this
 * model is where its offsets, RSS and queue setup, link and interrupt registers are
 * checked). Register values from the Intel 82576EB and 82599 datasheets, ch. 8. */
#include "unit.h"
#include "chip.h"
#include "desc.h"
#include "msix_map.h"

#define BAR_WORDS (0x20000 / 4)

struct model {
	const struct ix_chip *chip;
	uint32_t r[BAR_WORDS];
	uint16_t eeprom[64];
	bool link;
	/* the 82599's port: its media (the link comes up only in the mode that suits it), the
	 * speed LINKS reports, how often AUTOC restarted the link */
	enum { MEDIA_SFI, MEDIA_KX4 } media;
	uint32_t links_speed, an_restarts;
	uint32_t resets, order_errors;
	uint32_t writes;
};

static uint32_t reg_ims(const struct model *m) { return m->chip == &ix_chip_82576 ? IGB_IMS : IXGBE_EIMS; }

/* Reset values (the datasheets' "initial value" of the registers the driver reads back). */
static void model_reset(struct model *m)
{
	memset(m->r, 0, sizeof(m->r));
	if (m->chip == &ix_chip_82576) {
		m->r[IGB_RXQ(0) / 4 + IX_Q_DCTL / 4] = IX_DCTL_ENABLE; /* queue 0 enabled at reset */
		for (uint32_t q = 0; q < IGB_NQUEUES; q++)
			m->r[IGB_SRRCTL(q) / 4] = 0x00000002; /* 2 KiB, legacy descriptors */
	} else {
		m->r[IXGBE_HLREG0 / 4] = 0x00002fff;
		m->r[IXGBE_RDRXCTL / 4] = 0x00000880 | IXGBE_RDRXCTL_DMAIDONE; /* (its DMA init done at once) */
		m->r[IXGBE_EEC / 4] = IXGBE_EEC_ARD;                             /* (the auto-read too) */
		/* an EEPROM's default: KX4/KX/KR autonegotiation (not what an SFP+ needs), KX4 and KX
		 * advertised, symmetric and asymmetric pause */
		m->r[IXGBE_AUTOC / 4] = IXGBE_AUTOC_KX4_SUPP | IXGBE_AUTOC_KX_SUPP | 3u << 28 | IXGBE_AUTOC_LMS_KX4_KX_KR;
		for (uint32_t q = 0; q < 16; q++)
			m->r[IXGBE_SRRCTL(q) / 4] = 0x00000402;
	}
	m->resets++;
}

static uint32_t m_rd(void *ctx, uint32_t reg)
{
	struct model *m = ctx;
	if (reg >= sizeof(m->r) || reg % 4)
		return 0xdeadbeef;
	uint32_t v = m->r[reg / 4];
	if (m->chip == &ix_chip_82576) {
		if (reg == IGB_ICR || reg == IGB_EICR)
			m->r[reg / 4] = 0; /* clear on read */
		if (reg == IGB_STATUS)
			v = m->link ? IGB_STATUS_LU | 2u << 6 : 0; /* 1000 Mb/s */
	} else {
		if (reg == IXGBE_EICR)
			m->r[reg / 4] = 0;
		if (reg == IXGBE_LINKS)
			v = m->link ? IXGBE_LINKS_UP | m->links_speed | (m->media == MEDIA_KX4 ? IXGBE_LINKS_KX_AN_COMP : 0) : 0;
	}
	return v;
}

static void m_wr(void *ctx, uint32_t reg, uint32_t v)
{
	struct model *m = ctx;
	if (reg >= sizeof(m->r) || reg % 4)
		return;
	m->writes++;
	const struct ix_chip *c = m->chip;
	bool igb = c == &ix_chip_82576;
	if (reg == (igb ? IGB_CTRL : IXGBE_CTRL) && (v & (igb ? IGB_CTRL_RST : IXGBE_CTRL_RST))) {
		model_reset(m); /* self-clearing, registers back to their reset values */
		return;
	}
	if (reg == (igb ? IGB_IMS : IXGBE_EIMS)) {
		m->r[reg / 4] |= v;
		return;
	}
	if (igb && reg == IGB_EIMS) { /* the 82576's extended (MSI-X vector) mask pair */
		m->r[reg / 4] |= v;
		return;
	}
	if (igb && reg == IGB_EIMC) {
		m->r[IGB_EIMS / 4] &= ~v;
		return;
	}
	if (!igb && reg == IXGBE_EICR) { /* write 1 to clear */
		m->r[reg / 4] &= ~v;
		return;
	}
	if (reg == (igb ? IGB_IMC : IXGBE_EIMC)) {
		m->r[reg_ims(m) / 4] &= ~v;
		return;
	}
	if (!igb && reg == IXGBE_AUTOC) {
		/* Restart_AN self-clears; the link comes up only in the mode the media needs: SFI
		 * (10G serial, AUTOC2's serial PMA/PMD SFI) or KX4 (backplane AN, KX4 PMA/PMD and
		 * advertised); any other mode leaves it down */
		m->r[reg / 4] = v & ~IXGBE_AUTOC_AN_RESTART;
		if (v & IXGBE_AUTOC_AN_RESTART) {
			m->an_restarts++;
			uint32_t lms = v & IXGBE_AUTOC_LMS_MASK;
			if (m->media == MEDIA_SFI)
				m->link = lms == IXGBE_AUTOC_LMS_10G_SERIAL &&
					  (m->r[IXGBE_AUTOC2 / 4] & IXGBE_AUTOC2_10G_SERIAL_MASK) == IXGBE_AUTOC2_10G_SFI;
			else
				m->link = lms == IXGBE_AUTOC_LMS_KX4_KX_KR &&
					  (v & IXGBE_AUTOC_10G_PMA_PMD_MASK) == IXGBE_AUTOC_10G_KX4 && (v & IXGBE_AUTOC_KX4_SUPP);
		}
		return;
	}
	if (igb && reg == IGB_MDIC) {
		if (((v >> 21) & 31) == 1 && (v & IGB_MDIC_WRITE) && ((v >> 16) & 31) == IGB_PHY_BMCR &&
		    (v & 0x1200) == 0x1200)
			m->link = true; /* autonegotiation restarted: (after a while) the link is up */
		m->r[reg / 4] = v | IGB_MDIC_READY;
		return;
	}
	if (reg == c->eerd) {
		uint32_t a = (v >> c->eerd_addr_shift) & 0x3fff;
		m->r[reg / 4] = (v & 1) && a < 64 ? c->eerd_done | (uint32_t)m->eeprom[a] << 16 : 0;
		return;
	}
	/* the 82599's order: TX DMA on (DMATXCTL.TE) before a TX queue is enabled, RX queues
	 * enabled before RXCTRL.RXEN */
	if (!igb && reg >= IXGBE_TXQ(0) && reg < IXGBE_TXQ(64) && (reg - IXGBE_TXQ(0)) % 0x40 == IX_Q_DCTL &&
	    (v & IX_DCTL_ENABLE) && !(m->r[IXGBE_DMATXCTL / 4] & IXGBE_DMATXCTL_TE))
		m->order_errors++;
	if (!igb && reg >= IXGBE_RXQ(0) && reg < IXGBE_RXQ(64) && (reg - IXGBE_RXQ(0)) % 0x40 == IX_Q_DCTL &&
	    (v & IX_DCTL_ENABLE) && (m->r[IXGBE_RXCTRL / 4] & IXGBE_RXCTRL_RXEN))
		m->order_errors++;
	m->r[reg / 4] = v;
}

static void m_delay(void *ctx, uint32_t us) { (void)ctx, (void)us; }

static struct model M;
static struct ix_io io = { m_rd, m_wr, m_delay, &M };

static const uint8_t key[IX_RSSRK_BYTES] = { 0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67,
	0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
	0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa };

static struct ix_dev dev_for(const struct ix_chip *c, uint32_t nq, uint32_t rss_nq)
{
	memset(&M, 0, sizeof(M));
	M.chip = c;
	M.link = true;
	M.links_speed = IXGBE_LINKS_SPEED_10G;
	model_reset(&M);
	M.resets = 0;
	struct ix_dev d = { .chip = c, .io = &io, .nq = nq, .rss_nq = rss_nq };
	memcpy(d.rss_key, key, sizeof(key));
	return d;
}

#define R(off) (M.r[(off) / 4])
static const uint64_t RXB[IX_MAXQ] = { 0x101000000ull, 0x101002000ull, 0x101004000ull, 0x101006000ull };
static const uint64_t TXB[IX_MAXQ] = { 0x101001000ull, 0x101003000ull, 0x101005000ull, 0x101007000ull };

static void bring_up(struct ix_dev *d)
{
	d->chip->reset(d);
	ix_bringup(d, RXB, TXB, 256);
}

static void the_chip_table_knows_the_ids(void)
{
	CHECK(ix_chip_of(0x10c9) == &ix_chip_82576);
	CHECK(ix_chip_of(0x10fb) == &ix_chip_82599);
	CHECK(ix_chip_of(0x1557) == &ix_chip_82599);
	CHECK(ix_chip_of(0x100e) == NULL);
	CHECK_STR(ix_chip_82576.name, "82576");
	CHECK_STR(ix_chip_82599.name, "82599");
}

/* EICR with vector (queue cause) 0 and LSC: irq_cause returns both and says the link. */
static void the_82599_sees_vector_0_and_lsc(struct ix_dev *d)
{
	R(0x00800) = 1u << 20 | 1u;
	bool link = false;
	CHECK_EQ_U64(d->chip->irq_cause(d, &link), 1u << 20 | 1u);
	CHECK(link);
}

static void the_82599_queues_rss_and_interrupts(void)
{
	struct ix_dev d = dev_for(&ix_chip_82599, 2, 2);
	bring_up(&d);
	CHECK_EQ_U64(M.resets, 1);
	CHECK_EQ_U64(M.order_errors, 0);
	/* queue 0 and 1: RX at 0x01000 + 0x40 n, TX at 0x06000 + 0x40 n, SRRCTL at 0x02100 + 4 n */
	CHECK_EQ_U64(R(0x01000), 0x01000000u);
	CHECK_EQ_U64(R(0x01004), 0x1u);
	CHECK_EQ_U64(R(0x01008), 4096);
	CHECK_EQ_U64(R(0x01010), 0);
	CHECK_EQ_U64(R(0x01018), 0);
	CHECK(R(0x01028) & (1u << 25));
	CHECK_EQ_U64(R(0x01040), 0x01002000u);
	CHECK(R(0x01068) & (1u << 25));
	CHECK_EQ_U64(R(0x02100), 2u | 1u << 25 | 1u << 28); /* 2 KiB, advanced one buffer, drop */
	CHECK_EQ_U64(R(0x02104), 2u | 1u << 25 | 1u << 28);
	CHECK_EQ_U64(R(0x06000), 0x01001000u);
	CHECK_EQ_U64(R(0x06008), 4096);
	CHECK(R(0x06028) & (1u << 25));
	CHECK_EQ_U64(R(0x06040), 0x01003000u);
	CHECK_EQ_U64(ix_rdt(&d, 1), 0x01058);
	CHECK_EQ_U64(ix_tdt(&d, 1), 0x06058);
	CHECK_EQ_U64(ix_chip_82599.srrctl(20), 0x01000 + 0x40 * 20 + 0x14);
	/* RSS: key in RSSRK (byte 0 in bits 7:0), RETA at 0x0EB00 four entries a register over 2
	 * queues, MRQC at 0x0EC80 RSS with TCP/IPv4 and IPv4 */
	CHECK_EQ_U64(R(0x0eb80), 0xda565a6du);
	CHECK_EQ_U64(R(0x0eb80 + 36), 0xfa01acbeu);
	CHECK_EQ_U64(R(0x0eb00), 0x01000100u);
	CHECK_EQ_U64(R(0x0eb00 + 31 * 4), 0x01000100u);
	for (uint32_t i = 0; i < IX_RETA_ENTRIES; i++)
		CHECK_EQ_U64(ix_reta_entry(&d, i), i % 2);
	CHECK_EQ_U64(R(0x0ec80), 1u | 1u << 16 | 1u << 17);
	CHECK_EQ_U64(R(0x05000), 1u << 13); /* PCSD: the hash in the write-back */
	/* MAC: CRC stripped (HLREG0 and RDRXCTL agree), TX DMA on, receive on, broadcast */
	CHECK(R(0x04240) & (1u << 1) && R(0x04240) & 1u);
	CHECK(R(0x02f00) & (1u << 1));
	CHECK(R(0x04a80) & 1u);
	CHECK(R(0x03000) & 1u);
	CHECK(R(0x05080) & (1u << 10));
	CHECK_EQ_U64(R(0x00898), 0); /* GPIE: not MSI-X */
	/* IVAR(0): RX 0 -> vector 0, TX 0 -> 1, RX 1 -> 2, TX 1 -> 3, each valid */
	CHECK_EQ_U64(R(0x00900), 0x83828180u);
	/* interrupts: EIMS the four queue vectors and LSC; EICR cleared by reading */
	d.chip->irq_mask(&d, true);
	CHECK_EQ_U64(R(0x00880), 0xfu | 1u << 20);
	bool link = false;
	the_82599_sees_vector_0_and_lsc(&d);
	CHECK_EQ_U64(d.chip->irq_cause(&d, &link), 0);
	CHECK(!link);
	d.chip->irq_mask(&d, false);
	CHECK_EQ_U64(R(0x00880), 0);
	/* link from LINKS (0x042A4) bit 30 */
	CHECK(d.chip->link(&d));
	M.link = false;
	CHECK(!d.chip->link(&d));
}

static void the_82576_queues_rss_and_interrupts(void)
{
	struct ix_dev d = dev_for(&ix_chip_82576, 2, 2);
	M.link = false; /* QEMU's model: down after CTRL.RST until autonegotiation is restarted */
	bring_up(&d);
	CHECK(M.link);
	CHECK(!(R(0x00000) & (1u << 3))); /* not held in link reset */
	CHECK_EQ_U64(M.resets, 1);
	/* queue n: RX at 0x0C000 + 0x40 n (SRRCTL at +0x0C), TX at 0x0E000 + 0x40 n */
	CHECK_EQ_U64(R(0x0c000), 0x01000000u);
	CHECK_EQ_U64(R(0x0c004), 1);
	CHECK_EQ_U64(R(0x0c008), 4096);
	CHECK_EQ_U64(R(0x0c00c), 2u | 1u << 25 | 1u << 31);
	CHECK(R(0x0c028) & (1u << 25));
	CHECK_EQ_U64(R(0x0c040), 0x01002000u);
	CHECK_EQ_U64(R(0x0c04c), 2u | 1u << 25 | 1u << 31);
	CHECK_EQ_U64(R(0x0e000), 0x01001000u);
	CHECK(R(0x0e028) & (1u << 25));
	CHECK_EQ_U64(ix_rdt(&d, 0), 0x0c018);
	CHECK_EQ_U64(ix_tdt(&d, 0), 0x0e018);
	/* RSS: RETA at 0x5C00, RSSRK at 0x5C80, MRQC at 0x5818; RXCSUM offloads and PCSD */
	CHECK_EQ_U64(R(0x05c00), 0x01000100u);
	CHECK_EQ_U64(R(0x05c80), 0xda565a6du);
	CHECK_EQ_U64(R(0x05818), 2u | 1u << 16 | 1u << 17);
	CHECK_EQ_U64(R(0x05000), 1u << 8 | 1u << 9 | 1u << 13);
	/* receive (broadcast, CRC stripped) and transmit on */
	CHECK_EQ_U64(R(0x00100), 1u << 1 | 1u << 15 | 1u << 26);
	CHECK(R(0x00400) & (1u << 1));
	CHECK(R(0x00000) & (1u << 6)); /* SLU */
	/* IVAR0 + 4 q: RX q in byte 0, TX q in byte 1 (QEMU's model raises TXDW only then) */
	CHECK_EQ_U64(R(0x01700), 0x8180u);
	CHECK_EQ_U64(R(0x01704), 0x8382u);
	CHECK_EQ_U64(R(0x01514), 0); /* GPIE: not MSI-X: causes go to ICR and INTx */
	d.chip->irq_mask(&d, true);
	CHECK_EQ_U64(R(0x000d0), 1u | 1u << 2 | 1u << 4 | 1u << 6 | 1u << 7);
	R(0x000c0) = 1u << 7 | 1u << 2;
	bool link = false;
	CHECK_EQ_U64(d.chip->irq_cause(&d, &link), 1u << 7 | 1u << 2);
	CHECK(link);
	CHECK_EQ_U64(d.chip->irq_cause(&d, &link), 0);
	d.chip->irq_mask(&d, false);
	CHECK_EQ_U64(R(0x000d0), 0);
	CHECK(d.chip->link(&d));
	M.link = false;
	CHECK(!d.chip->link(&d));
}

/* MSI-X mode with one vector (what the driver runs on QEMU's igb): GPIE in MSI-X mode,
 * every queue's RX and TX cause and the other causes (the link) on vector 0, which clears
 * (EIAC) and masks (EIAM) itself at each message; EIMS vector 0, IMS only the link; the
 * vector held and released (lib/netdrv's irq_hold) through EIMC/EIMS; the cause from EICR
 * and ICR. Then two vectors: the queues on vector 0, the other causes on vector 1. */
static void the_82576_in_msix_mode(void)
{
	struct ix_dev d = dev_for(&ix_chip_82576, 4, 4);
	d.msix_nvec = 1;
	bring_up(&d);
	CHECK_EQ_U64(R(0x01514), 1u | 1u << 4 | 1u << 30 | 1u << 31); /* NSICR, MSI-X, EIAME, PBA */
	for (uint32_t q = 0; q < 4; q++)
		CHECK_EQ_U64(R(0x01700 + 4 * q), 0x8080u); /* RX q and TX q: vector 0, valid */
	CHECK_EQ_U64(R(0x01740), 0x8000u);  /* IVAR_MISC: other causes -> vector 0 */
	CHECK_EQ_U64(R(0x0152c), 1);        /* EIAC */
	CHECK_EQ_U64(R(0x01530), 1);        /* EIAM */
	d.chip->irq_mask(&d, true);
	CHECK_EQ_U64(R(0x01524), 1);        /* EIMS: vector 0 */
	CHECK_EQ_U64(R(0x000d0), 1u << 2);  /* IMS: only LSC, the queues are EICR's */
	d.chip->msix_hold(&d, true);
	CHECK_EQ_U64(R(0x01524), 0);
	d.chip->msix_hold(&d, false);
	CHECK_EQ_U64(R(0x01524), 1);
	R(0x01580) = 1;                     /* vector 0 fired for a queue */
	bool link = true;
	CHECK_EQ_U64(d.chip->irq_cause(&d, &link), 1);
	CHECK(!link);
	R(0x01580) = 1, R(0x000c0) = 1u << 2; /* and for the link (ICR.LSC) */
	CHECK_EQ_U64(d.chip->irq_cause(&d, &link), 1u | 1u << 2);
	CHECK(link);
	CHECK_EQ_U64(R(0x01580), 0); CHECK_EQ_U64(R(0x000c0), 0); /* both read, so cleared */
	CHECK_EQ_U64(d.chip->irq_cause(&d, &link), 0);
	d.chip->irq_mask(&d, false);
	CHECK_EQ_U64(R(0x01524), 0); CHECK_EQ_U64(R(0x000d0), 0);

	d = dev_for(&ix_chip_82576, 2, 2);
	d.msix_nvec = 2;
	bring_up(&d);
	CHECK_EQ_U64(R(0x01700), 0x8080u); CHECK_EQ_U64(R(0x01704), 0x8080u); /* one queue vector: 0 */
	CHECK_EQ_U64(R(0x01740), 0x8100u);  /* the link on vector 1 */
	CHECK_EQ_U64(R(0x0152c), 3);
	d.chip->irq_mask(&d, true);
	CHECK_EQ_U64(R(0x01524), 3);
	/* back to legacy after a reset: GPIE 0, the IVARs as before */
	d.msix_nvec = 0;
	bring_up(&d);
	CHECK_EQ_U64(R(0x01514), 0);
	CHECK_EQ_U64(R(0x01700), 0x8180u);
}

/* The 82599 in MSI-X mode (datasheet 7.3: GPIE.Multiple_MSIX, IVAR(q/2) alloc to vectors,
 * IVAR_MISC for the other causes, EIAC/EIAM), model only: one vector, then three (queues
 * 0 and 2 on vector 0, 1 and 3 on vector 1, the link on vector 2). */
static void the_82599_in_msix_mode(void)
{
	struct ix_dev d = dev_for(&ix_chip_82599, 4, 4);
	d.msix_nvec = 1;
	bring_up(&d);
	CHECK_EQ_U64(M.order_errors, 0);
	CHECK_EQ_U64(R(0x00898), 1u << 4 | 1u << 5 | 1u << 30 | 1u << 31); /* MSI-X, OCD, EIAME, PBA */
	CHECK_EQ_U64(R(0x00900), 0x80808080u); /* RX/TX 0 and 1: vector 0 */
	CHECK_EQ_U64(R(0x00904), 0x80808080u);
	CHECK_EQ_U64(R(0x00a00), 0x8000u);
	CHECK_EQ_U64(R(0x00810), 1); /* EIAC */
	CHECK_EQ_U64(R(0x00890), 1); /* EIAM */
	d.chip->irq_mask(&d, true);
	CHECK_EQ_U64(R(0x00880), 1u | 1u << 20);
	d.chip->msix_hold(&d, true);
	CHECK_EQ_U64(R(0x00880), 0);
	d.chip->msix_hold(&d, false);
	CHECK_EQ_U64(R(0x00880), 1u | 1u << 20);
	the_82599_sees_vector_0_and_lsc(&d);
	CHECK_EQ_U64(R(0x00800), 0); /* written back: cleared */

	d = dev_for(&ix_chip_82599, 4, 4);
	d.msix_nvec = 3;
	bring_up(&d);
	CHECK_EQ_U64(R(0x00900), 0x81818080u); /* queue 0 -> 0, queue 1 -> 1 */
	CHECK_EQ_U64(R(0x00904), 0x81818080u); /* queue 2 -> 0, queue 3 -> 1 */
	CHECK_EQ_U64(R(0x00a00), 0x8200u);     /* the link on vector 2 */
	CHECK_EQ_U64(R(0x00810), 7);
	CHECK_EQ_U64(ix_msix_qvec(&d, 3), 1); CHECK_EQ_U64(ix_msix_other(&d), 2); CHECK_EQ_U64(ix_msix_mask(&d), 7);
}

/* What the driver asks for (NETDRV_MSIX_WANT: a vector per queue pair and one for the
 * link), with 4 queue pairs: 5 vectors. The 82599's IVAR(q/2) holds two queues, RX q even in
 * byte 0 and TX in byte 1, odd q in bytes 2 and 3, each to its own vector; IVAR_MISC byte 1
 * the link's vector 4; EIAC/EIAM/EIMS bits 0..4 (EIMS with LSC, bit 20, which reaches the
 * link vector through IVAR_MISC). The 82576's IVAR0+4q: RX and TX q both to vector q. Then
 * the driver's loop: one vector held masks them all, a queue vector's EICR bit is read (and
 * written back) as the cause. Model only for the 82599; the 82576's ran on QEMU too. */
static void per_queue_vectors_both_chips(void)
{
	struct ix_dev d = dev_for(&ix_chip_82599, 4, 4);
	d.msix_nvec = NETDRV_MSIX_WANT(4);
	CHECK_EQ_U64(d.msix_nvec, 5);
	bring_up(&d);
	CHECK_EQ_U64(M.order_errors, 0);
	CHECK_EQ_U64(R(0x00900), 0x81818080u); /* RX0 -> 0, TX0 -> 0, RX1 -> 1, TX1 -> 1 */
	CHECK_EQ_U64(R(0x00904), 0x83838282u); /* RX2 -> 2, TX2 -> 2, RX3 -> 3, TX3 -> 3 */
	CHECK_EQ_U64(R(0x00908), 0);           /* queues 4 and 5 not set up: untouched */
	CHECK_EQ_U64(R(0x00a00), 0x8400u);     /* other causes (LSC) -> vector 4 */
	CHECK_EQ_U64(R(0x00810), 0x1f);        /* EIAC */
	CHECK_EQ_U64(R(0x00890), 0x1f);        /* EIAM */
	d.chip->irq_mask(&d, true);
	CHECK_EQ_U64(R(0x00880), 0x1fu | 1u << 20);
	d.chip->msix_hold(&d, true);
	CHECK_EQ_U64(R(0x00880), 0);
	d.chip->msix_hold(&d, false);
	CHECK_EQ_U64(R(0x00880), 0x1fu | 1u << 20);
	R(0x00800) = 1u << 2; /* queue 2's vector fired */
	bool link = true;
	CHECK_EQ_U64(d.chip->irq_cause(&d, &link), 1u << 2);
	CHECK(!link);
	R(0x00800) = 1u << 20; /* the link */
	CHECK_EQ_U64(d.chip->irq_cause(&d, &link), 1u << 20);
	CHECK(link);
	for (uint32_t q = 0; q < 4; q++)
		CHECK_EQ_U64(ix_msix_qvec(&d, q), q);
	CHECK_EQ_U64(ix_msix_other(&d), 4);
	/* 8 queue pairs but the kernel's 8 vectors at most: 7 for the queues (q % 7), the link on 7 */
	d = dev_for(&ix_chip_82599, 8, 8);
	d.msix_nvec = 8;
	bring_up(&d);
	CHECK_EQ_U64(R(0x0090c), 0x80808686u); /* RX6/TX6 -> 6, RX7/TX7 -> 0 */
	CHECK_EQ_U64(R(0x00a00), 0x8700u);

	d = dev_for(&ix_chip_82576, 4, 4);
	d.msix_nvec = NETDRV_MSIX_WANT(4);
	bring_up(&d);
	for (uint32_t q = 0; q < 4; q++)
		CHECK_EQ_U64(R(0x01700 + 4 * q), (0x80u | q) << 8 | 0x80u | q);
	CHECK_EQ_U64(R(0x01740), 0x8400u);
	CHECK_EQ_U64(R(0x0152c), 0x1f);
	d.chip->irq_mask(&d, true);
	CHECK_EQ_U64(R(0x01524), 0x1f);
	CHECK_EQ_U64(R(0x000d0), 1u << 2);
}

/* The 82599's link set-up (datasheet 4.6.4), model only: after the reset (EEPROM auto-read
 * and RX DMA init waited for) an SFP+ port (10FB) gets AUTOC link mode 10G serial with
 * AUTOC2's SFI and a restart, a KX4 backplane port (10F7) KX4/KX/KR autonegotiation with the
 * KX4 PMA/PMD and KX4/KX advertised; the rest of AUTOC (pause bits, from the EEPROM) kept.
 * The link comes up at 10 Gb/s in LINKS; the SFP+ mode on a KX4 port leaves it down. The
 * speed field decoded (10G, 1G, 100M). The 82576's from STATUS (QEMU's igb: 1000). */
static void the_82599_link_set_up_per_media(void)
{
	struct ix_dev d = dev_for(&ix_chip_82599, 1, 1);
	d.devid = IX_DEV_82599_SFP;
	M.link = false;
	bring_up(&d);
	CHECK_EQ_U64(M.an_restarts, 1);
	CHECK_EQ_U64(R(0x042a0) & (7u << 13), 3u << 13);         /* LMS: 10G serial */
	CHECK_EQ_U64(R(0x042a0) & (3u << 7), 0);                 /* parallel PMA/PMD: not KX4 */
	CHECK_EQ_U64(R(0x042a8) & (3u << 16), 2u << 16);         /* AUTOC2: SFI */
	CHECK_EQ_U64(R(0x042a0) & (1u << 12), 0);                /* restart self-cleared */
	CHECK_EQ_U64(R(0x042a0) & (3u << 28), 3u << 28);         /* the EEPROM's pause bits kept */
	CHECK(M.link && d.chip->link(&d));
	CHECK_EQ_U64(d.chip->link_mbps(&d), 10000);
	M.links_speed = IXGBE_LINKS_SPEED_1G;
	CHECK_EQ_U64(d.chip->link_mbps(&d), 1000);
	M.links_speed = IXGBE_LINKS_SPEED_100M;
	CHECK_EQ_U64(d.chip->link_mbps(&d), 100);
	M.links_speed = 0;
	CHECK_EQ_U64(d.chip->link_mbps(&d), 0);
	M.link = false;
	CHECK(!d.chip->link(&d));
	CHECK_EQ_U64(d.chip->link_mbps(&d), 0);

	d = dev_for(&ix_chip_82599, 1, 1);
	d.devid = IX_DEV_82599_KX4;
	M.media = MEDIA_KX4;
	M.link = false;
	bring_up(&d);
	CHECK_EQ_U64(M.an_restarts, 1);
	CHECK_EQ_U64(R(0x042a0) & (7u << 13), 4u << 13);         /* LMS: KX4/KX/KR AN */
	CHECK_EQ_U64(R(0x042a0) & (3u << 7), 1u << 7);           /* KX4 */
	CHECK_EQ_U64(R(0x042a0) & (3u << 30), 3u << 30);         /* KX4 and KX advertised */
	CHECK(M.link);
	CHECK_EQ_U64(d.chip->link_mbps(&d), 10000);
	CHECK(ix_rd(&d, IXGBE_LINKS) & IXGBE_LINKS_KX_AN_COMP);

	/* an SFP+ id on a backplane port: the SFI mode does not bring that link up */
	d = dev_for(&ix_chip_82599, 1, 1);
	d.devid = IX_DEV_82599EN_SFP;
	M.media = MEDIA_KX4;
	M.link = false;
	bring_up(&d);
	CHECK(!M.link && !d.chip->link(&d));
	CHECK_EQ_U64(d.chip->link_mbps(&d), 0);

	d = dev_for(&ix_chip_82576, 1, 1);
	bring_up(&d);
	CHECK_EQ_U64(d.chip->link_mbps(&d), 1000);
	M.link = false;
	CHECK_EQ_U64(d.chip->link_mbps(&d), 0);
}

static void one_queue_sends_every_hash_to_queue_0(void)
{
	const struct ix_chip *chips[] = { &ix_chip_82576, &ix_chip_82599 };
	for (int k = 0; k < 2; k++) {
		struct ix_dev d = dev_for(chips[k], 1, 1);
		bring_up(&d);
		for (uint32_t r = 0; r < IX_RETA_REGS; r++)
			CHECK_EQ_U64(R(chips[k]->reta + 4 * r), 0);
		CHECK_EQ_U64(R(chips[k]->mrqc) & 7u, chips[k]->mrqc_rss);
		d.rss_nq = 4;
		ix_rss_setup(&d);
		for (uint32_t i = 0; i < IX_RETA_ENTRIES; i++)
			CHECK_EQ_U64(ix_reta_entry(&d, i), i % 4);
	}
}

static void the_mac_comes_from_ral0_or_the_eeprom(void)
{
	const struct ix_chip *chips[] = { &ix_chip_82576, &ix_chip_82599 };
	for (int k = 0; k < 2; k++) {
		struct ix_dev d = dev_for(chips[k], 1, 1);
		uint8_t mac[6], want[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
		CHECK(!ix_mac_read(&d, mac)); /* nothing valid after reset */
		M.eeprom[0] = 0x5452, M.eeprom[1] = 0x1200, M.eeprom[2] = 0x5634;
		for (uint32_t w = 0; w < 3; w++) {
			uint16_t v = ix_eeprom_word(&d, w);
			mac[2 * w] = (uint8_t)v, mac[2 * w + 1] = (uint8_t)(v >> 8);
		}
		CHECK(!memcmp(mac, want, 6));
		ix_mac_write(&d, want);
		CHECK_EQ_U64(R(chips[k]->ral0), 0x12005452u);
		CHECK_EQ_U64(R(chips[k]->rah0), 0x80005634u);
		memset(mac, 0, 6);
		CHECK(ix_mac_read(&d, mac));
		CHECK(!memcmp(mac, want, 6));
	}
	CHECK_EQ_U64(ix_chip_82599.ral0, 0x0a200);
	CHECK_EQ_U64(ix_chip_82576.ral0, 0x05400);
}

static void tx_data_and_context_descriptors(void)
{
	union ix_tx_desc t[2];
	memset(t, 0xff, sizeof(t));
	ix_tx_data(&t[0], 0x123456789ull, 60, true, ix_tx_olinfo(&ix_chip_82599, 60, NDF_TX_CSUM_IP4 | NDF_TX_CSUM_L4));
	CHECK_EQ_U64(t[0].data.addr, 0x123456789ull);
	/* DTALEN 60, DTYP 0011 (data), DCMD: EOP, IFCS, RS, DEXT */
	CHECK_EQ_U64(t[0].data.cmd_type_len, 60u | 3u << 20 | 1u << 24 | 1u << 25 | 1u << 27 | 1u << 29);
	/* PAYLEN 60, POPTS IXSM and TXSM; the 82599 also checks the context (CC) */
	CHECK_EQ_U64(t[0].data.olinfo, 60u << 14 | 1u << 8 | 1u << 9 | 1u << 7);
	CHECK_EQ_U64(ix_tx_olinfo(&ix_chip_82576, 60, NDF_TX_CSUM_L4), 60u << 14 | 1u << 9);
	CHECK_EQ_U64(ix_tx_olinfo(&ix_chip_82576, 1514, 0), 1514u << 14);
	ix_tx_data(&t[1], 0x1000, 100, false, 0);
	CHECK_EQ_U64(t[1].data.cmd_type_len, 100u | 3u << 20 | 1u << 25 | 1u << 29);
	CHECK(!ix_tx_done(&t[1]));
	t[1].data.olinfo |= IX_TXD_STA_DD; /* the device's write-back */
	CHECK(ix_tx_done(&t[1]));
	/* IPv4 (20 bytes) + TCP: MACLEN 14, IPLEN 20, TUCMD IPV4 and L4T TCP, DTYP 0010 */
	struct ix_ctx c;
	REQUIRE(ix_ctx_encode(NDF_TX_CSUM_IP4 | NDF_TX_CSUM_L4, 20, 34, 50, &c));
	CHECK_EQ_U64(c.vlan_macip_lens, 20u | 14u << 9);
	CHECK_EQ_U64(c.type_tucmd_mlhl, 1u << 29 | 2u << 20 | 1u << 10 | 1u << 11);
	CHECK_EQ_U64(c.mss_l4len_idx, 0);
	ix_tx_ctx_write(&t[0], &c);
	CHECK_EQ_U64(t[0].ctx.vlan_macip_lens, 0x1c14u);
	CHECK_EQ_U64(t[0].ctx.type_tucmd_mlhl, 0x20200c00u);
	CHECK_EQ_U64(t[0].ctx.seqnum_seed, 0);
	/* UDP after a 24-byte header; the IP checksum alone */
	REQUIRE(ix_ctx_encode(NDF_TX_CSUM_L4, 24, 38, 44, &c));
	CHECK_EQ_U64(c.vlan_macip_lens, 24u | 14u << 9);
	CHECK_EQ_U64(c.type_tucmd_mlhl, 0x20200400u);
	REQUIRE(ix_ctx_encode(NDF_TX_CSUM_IP4, 20, 0, 0, &c));
	CHECK_EQ_U64(c.type_tucmd_mlhl, 0x20200400u);
	/* what a context cannot say */
	CHECK(!ix_ctx_encode(NDF_TX_CSUM_L4, 20, 38, 54, &c)); /* L4 not right after the IP header */
	CHECK(!ix_ctx_encode(NDF_TX_CSUM_L4, 20, 34, 44, &c)); /* neither TCP's nor UDP's field */
	CHECK(!ix_ctx_encode(NDF_TX_CSUM_IP4, 64, 0, 0, &c));
}

static union ix_rx_desc wb(uint32_t staterr, uint16_t len, uint32_t info, uint32_t rss)
{
	union ix_rx_desc d;
	memset(&d, 0, sizeof(d));
	d.wb.staterr = staterr, d.wb.length = len, d.wb.info = info, d.wb.rss = rss;
	return d;
}

static void rx_write_backs_both_chips(void)
{
	union ix_rx_desc r;
	ix_rx_read(&r, 0xabc000);
	CHECK_EQ_U64(r.read.pkt_addr, 0xabc000);
	CHECK_EQ_U64(r.read.hdr_addr, 0);
	CHECK(!(r.wb.staterr & IX_RXS_DD));
	const struct ix_chip *chips[] = { &ix_chip_82576, &ix_chip_82599 };
	for (int k = 0; k < 2; k++) {
		const struct ix_chip *c = chips[k];
		struct ix_rx_info o;
		/* TCP/IPv4, RSS type TCPv4 and its hash, both checksums good */
		union ix_rx_desc d = wb(IX_RXS_DD | IX_RXS_EOP | IX_RXS_IPCS | IX_RXS_L4CS, 1514,
					IX_RSSTYPE_TCPV4 | (IX_PKT_IPV4 | IX_PKT_TCP) << 4, 0x9b1c2d3eu);
		REQUIRE(ix_rx_parse(c, &d, 2048, &o) == IXRX_OK);
		CHECK_EQ_U64(o.len, 1514);
		CHECK_EQ_U64(o.flags, NDF_RX_IP4_OK | NDF_RX_L4_OK);
		CHECK_EQ_U64(o.rss_hash, 0x9b1c2d3eu);
		CHECK_EQ_U64(o.rss_type, IX_RSSTYPE_TCPV4);
		CHECK_EQ_U64(o.pkt_type, IX_PKT_IPV4 | IX_PKT_TCP);
		/* UDP: UDPCS; the L4 error bit of this chip */
		d = wb(IX_RXS_DD | IX_RXS_EOP | IX_RXS_IPCS | IX_RXS_UDPCS | c->rx_err_l4e, 60, (IX_PKT_IPV4 | IX_PKT_UDP) << 4, 7);
		REQUIRE(ix_rx_parse(c, &d, 2048, &o) == IXRX_OK);
		CHECK_EQ_U64(o.flags, NDF_RX_IP4_OK | NDF_RX_CSUM_BAD);
		CHECK_EQ_U64(o.rss_hash, 0); /* no RSS type: the dword is no hash */
		/* not written yet; no EOP; lengths a 2 KiB buffer cannot hold; a receive error */
		d = wb(0, 60, 0, 0);
		CHECK(ix_rx_parse(c, &d, 2048, &o) == IXRX_NOT_DONE);
		d = wb(IX_RXS_DD, 60, 0, 0);
		CHECK(ix_rx_parse(c, &d, 2048, &o) == IXRX_BAD);
		d = wb(IX_RXS_DD | IX_RXS_EOP, 13, 0, 0);
		CHECK(ix_rx_parse(c, &d, 2048, &o) == IXRX_BAD);
		d = wb(IX_RXS_DD | IX_RXS_EOP, 2049, 0, 0);
		CHECK(ix_rx_parse(c, &d, 2048, &o) == IXRX_BAD);
		d = wb(IX_RXS_DD | IX_RXS_EOP, 0xffff, 0, 0);
		CHECK(ix_rx_parse(c, &d, 2048, &o) == IXRX_BAD && o.why);
		d = wb(IX_RXS_DD | IX_RXS_EOP | c->rx_err_rxe, 60, 0, 0);
		CHECK(ix_rx_parse(c, &d, 2048, &o) == IXRX_BAD);
	}
	/* the error bits differ: bit 31 is the 82599's IPE but the 82576's RXE */
	struct ix_rx_info o;
	union ix_rx_desc d = wb(IX_RXS_DD | IX_RXS_EOP | IX_RXS_IPCS | 1u << 31, 60, IX_PKT_IPV4 << 4, 0);
	CHECK(ix_rx_parse(&ix_chip_82599, &d, 2048, &o) == IXRX_OK && o.flags == NDF_RX_CSUM_BAD);
	CHECK(ix_rx_parse(&ix_chip_82576, &d, 2048, &o) == IXRX_BAD);
	d = wb(IX_RXS_DD | IX_RXS_EOP | IX_RXS_IPCS | 1u << 30, 60, IX_PKT_IPV4 << 4, 0);
	CHECK(ix_rx_parse(&ix_chip_82576, &d, 2048, &o) == IXRX_OK && o.flags == NDF_RX_CSUM_BAD); /* IPE */
	d = wb(IX_RXS_DD | IX_RXS_EOP | IX_RXS_L4CS | 1u << 30, 60, IX_PKT_IPV4 << 4, 0);
	CHECK(ix_rx_parse(&ix_chip_82599, &d, 2048, &o) == IXRX_OK && o.flags == NDF_RX_CSUM_BAD); /* TCPE */
}

static void a_reset_masks_everything_and_a_queue_can_be_disabled(void)
{
	const struct ix_chip *chips[] = { &ix_chip_82576, &ix_chip_82599 };
	for (int k = 0; k < 2; k++) {
		struct ix_dev d = dev_for(chips[k], 1, 1);
		bring_up(&d);
		d.chip->irq_mask(&d, true);
		CHECK(R(reg_ims(&M)) != 0);
		d.chip->reset(&d);
		CHECK_EQ_U64(M.resets, 2);
		CHECK_EQ_U64(R(reg_ims(&M)), 0);
		CHECK_EQ_U64(R(chips[k]->rxq(0)), 0); /* the rings forgotten */
		bring_up(&d);
		ix_rxq_disable(&d, 0);
		ix_txq_disable(&d, 0);
		CHECK(!(R(chips[k]->rxq(0) + IX_Q_DCTL) & IX_DCTL_ENABLE));
		CHECK(!(R(chips[k]->txq(0) + IX_Q_DCTL) & IX_DCTL_ENABLE));
	}
}

int main(void)
{
	unit_begin(__FILE__);
	RUN(the_chip_table_knows_the_ids);
	RUN(the_82599_queues_rss_and_interrupts);
	RUN(the_82576_queues_rss_and_interrupts);
	RUN(the_82576_in_msix_mode);
	RUN(the_82599_in_msix_mode);
	RUN(per_queue_vectors_both_chips);
	RUN(the_82599_link_set_up_per_media);
	RUN(one_queue_sends_every_hash_to_queue_0);
	RUN(the_mac_comes_from_ral0_or_the_eeprom);
	RUN(tx_data_and_context_descriptors);
	RUN(rx_write_backs_both_chips);
	RUN(a_reset_masks_everything_and_a_queue_can_be_disabled);
	return unit_end();
}
