/* The chip-variant table: the ONLY place the 82576 and the 82599 differ (register offsets,
 * reset, RX/TX enabling, RSS registers, interrupt cause and mask registers, link, the
 * write-back error bits, statistics registers). Everything reaches the registers through an
 * accessor (struct ix_io), so the same functions run on the device (hw.c: MMIO) and on the
 * host against a register model (tests/unit/test_ixgbe_model.c). Host-compilable: only
 * <stdint.h>, <stdbool.h>, <stddef.h>. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ix_regs.h"

#define IX_MAXQ 8 /* queue pairs the driver sets up at most (queues=N) */
#define IX_MSIX_MAX 8 /* MSI-X vectors the driver uses at most */

/* Register access and waiting: MMIO in the driver, a model on the host. */
struct ix_io {
	uint32_t (*rd)(void *ctx, uint32_t reg);
	void (*wr)(void *ctx, uint32_t reg, uint32_t v);
	void (*delay_us)(void *ctx, uint32_t us);
	void *ctx;
};

struct ix_dev;

/* Statistics registers (0: the chip has none). */
struct ix_stat_regs {
	uint32_t crc, rxerr, mpc, gprc, gptc, gorcl, gotcl, rnbc;
};

struct ix_chip {
	const char *name;    /* "82576", "82599" */
	uint16_t devid;
	uint32_t max_queues; /* the chip's queue pairs */
	/* offsets */
	uint32_t (*rxq)(uint32_t q);    /* queue q's RX register block (RDBAL; IX_Q_* within) */
	uint32_t (*txq)(uint32_t q);
	uint32_t (*srrctl)(uint32_t q);
	uint32_t ral0, rah0, mta, reta, rssrk, mrqc, rxcsum, eerd;
	uint32_t eerd_done, eerd_addr_shift;
	uint32_t eitr0, eitr_us;  /* the legacy interrupt's moderation register, µs per interval unit */
	struct ix_stat_regs st;
	/* values whose bits differ */
	uint32_t srrctl_val;  /* advanced one-buffer, 2 KiB buffers, drop when no descriptor */
	uint32_t rx_err_ipe, rx_err_l4e, rx_err_rxe; /* write-back extended error bits */
	uint32_t tx_olinfo_csum;  /* olinfo bits a checksum-offloaded frame needs besides POPTS */
	uint32_t mrqc_rss;        /* MRQC's "RSS only" queueing mode */
	uint32_t rxcsum_val;      /* RXCSUM: checksum offloads on, PCSD (RSS hash in the write-back) */
	/* steps */
	void (*reset)(struct ix_dev *d);      /* global reset: RX/TX off, no DMA, interrupts masked */
	void (*mac_setup)(struct ix_dev *d);  /* before the queues: CRC strip, filters, TX DMA on */
	void (*start)(struct ix_dev *d);      /* after the queues: receive and transmit on */
	/* Interrupts, in legacy mode (d->msix_nvec 0: one cause register, the INTx line) or MSI-X
	 * mode (msix_nvec vectors: GPIE, the IVARs route each cause to a vector, i.e. an EICR bit
	 * and an MSI-X table entry; "other" causes such as the link through IVAR_MISC). */
	void (*irq_route)(struct ix_dev *d, uint32_t q); /* queue q's RX/TX causes to their interrupt */
	void (*irq_mask)(struct ix_dev *d, bool on);     /* causes the driver serves on (true) or all off */
	uint32_t (*irq_cause)(struct ix_dev *d, bool *link); /* reads (clears) the cause registers */
	void (*msix_hold)(struct ix_dev *d, bool hold);  /* MSI-X: the vectors masked (the driver polls) or not */
	bool (*link)(struct ix_dev *d);
	uint32_t (*link_mbps)(struct ix_dev *d);        /* the link's speed in Mb/s, 0: down */
};

struct ix_dev {
	const struct ix_chip *chip;
	const struct ix_io *io;
	uint16_t devid;   /* the PCI device id: the 82599's link mode follows its media (SFP+, KX4) */
	uint32_t nq;      /* queue pairs set up (1..IX_MAXQ) */
	uint32_t rss_nq;  /* queues the redirection table spreads over (1: all to queue 0) */
	uint32_t msix_nvec; /* MSI-X vectors (entries 0..n-1 of the table, 1..IX_MSIX_MAX); 0: legacy */
	uint8_t rss_key[IX_RSSRK_BYTES];
};

static inline uint32_t ix_rd(const struct ix_dev *d, uint32_t reg) { return d->io->rd(d->io->ctx, reg); }
static inline void ix_wr(const struct ix_dev *d, uint32_t reg, uint32_t v) { d->io->wr(d->io->ctx, reg, v); }
static inline void ix_delay(const struct ix_dev *d, uint32_t us) { d->io->delay_us(d->io->ctx, us); }

extern const struct ix_chip ix_chip_82576, ix_chip_82599;
/* The chip of a PCI device id; NULL if not one of ours. */
const struct ix_chip *ix_chip_of(uint16_t devid);

/* MSI-X: the vector of queue q's causes and of the "other" causes (the link): with one
 * vector everything is vector 0; with n > 1 the queues share vectors 0..n-2 and the other
 * causes have n-1. The mask of every vector (EIMS/EIAC bits). */
uint32_t ix_msix_qvec(const struct ix_dev *d, uint32_t q);
uint32_t ix_msix_other(const struct ix_dev *d);
uint32_t ix_msix_mask(const struct ix_dev *d);

/* Queue q's RX ring: ndesc descriptors at bus; disabled, programmed, enabled (polls up to 10
 * ms for the enable to show). Head and tail 0. */
void ix_rxq_setup(struct ix_dev *d, uint32_t q, uint64_t bus, uint32_t ndesc);
void ix_txq_setup(struct ix_dev *d, uint32_t q, uint64_t bus, uint32_t ndesc);
void ix_rxq_disable(struct ix_dev *d, uint32_t q);
void ix_txq_disable(struct ix_dev *d, uint32_t q);
/* Register offsets of queue q's tails (the rings' hot path writes them). */
uint32_t ix_rdt(const struct ix_dev *d, uint32_t q);
uint32_t ix_tdt(const struct ix_dev *d, uint32_t q);
/* RSS: d->rss_key into RSSRK, RETA entry i = i % rss_nq, MRQC RSS with the TCP/IPv4 and IPv4
 * hashes, RXCSUM with PCSD (the write-back carries the hash) and the checksum offloads. */
void ix_rss_setup(struct ix_dev *d);
/* RETA entry i's queue from the registers (tests, the banner). */
uint32_t ix_reta_entry(const struct ix_dev *d, uint32_t i);
/* Receive address 0: read (false if it holds no valid address) and written back valid. */
bool ix_mac_read(struct ix_dev *d, uint8_t mac[6]);
void ix_mac_write(struct ix_dev *d, const uint8_t mac[6]);
uint16_t ix_eeprom_word(struct ix_dev *d, uint32_t addr); /* 0xffff if it does not answer */
/* The whole bring-up after a reset, queue rings at rx_bus[q]/tx_bus[q]: mac_setup, the
 * rings, RSS, interrupt routing, start. Interrupts stay masked (irq_mask). */
void ix_bringup(struct ix_dev *d, const uint64_t *rx_bus, const uint64_t *tx_bus, uint32_t ndesc);
