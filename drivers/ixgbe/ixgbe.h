/* The ixgbe driver's state, shared by its parts: ixgbe.c (lib/netdrv's hooks for queue 0,
 * the TX checksum context, counters, banner), hw.c (PCI function, BAR 0, reset and bring-up
 * through the chip table, MAC, link, interrupt cause, statistics registers), rings.c (the
 * per-queue RX and TX rings: every function takes its queue, struct ixq). The chip
 * differences are chip.c's; the descriptor formats desc.h's. README.md. */
#pragma once
#include "netdrv.h"
#include "chip.h"
#include "desc.h"
#include "pci.h"
#include "e1k_stat.h" /* drivers/e1000: a statistics register's new events, cleared on read or not */

#define IX_RING 256 /* descriptors per ring; 16 bytes each, one page */
#define IX_RING_MASK (IX_RING - 1)
#define IX_DEF_QUEUES 4 /* queue pairs set up without queues=N (ip offers 4 by default) */

struct ix_txinfo {
	uint64_t id; /* ND_TX id, on the frame's last descriptor */
	bool last;   /* the frame's last descriptor (RS): its DD completes the frame */
};

/* What one queue pair saw (the driver's counters sum them; ip's interface table has each
 * queue's frames). */
struct ixq_counters {
	uint64_t rx_frames, rx_bad_desc, rx_csum_ok, rx_csum_bad, rx_rss_hashed, rx_ipv4, rx_tcp, rx_udp;
	uint64_t tx_frames, tx_csum, tx_contexts;
	uint32_t last_rss_hash;
};

/* One queue pair: its rings (a page each in the driver's DMA object), the buffers and frames
 * in them, its tail registers. Indices run freely and are masked on use. */
struct ixq {
	uint32_t idx;
	uint32_t rdt, tdt; /* tail register offsets */
	volatile union ix_rx_desc *rx;
	volatile union ix_tx_desc *tx;
	uint64_t rx_ring_bus, tx_ring_bus;
	struct chan_ptr rx_buf[IX_RING];
	uint64_t rx_bus[IX_RING]; /* the buffer's bus address (the write-back overwrites it) */
	uint32_t rx_head, rx_tail;
	struct ix_txinfo txi[IX_RING];
	uint32_t tx_head, tx_tail;
	struct ix_ctx ctx; /* the context last given (slot 0) */
	bool ctx_valid, rx_moved, tx_moved;
	struct ixq_counters c;
};

struct ix_counters { /* the device's statistics registers, summed */
	uint64_t rx_packets, rx_bytes, tx_packets, tx_bytes, rx_missed, rx_no_buf, crc_errors, rx_errors;
};

enum { IX_ST_CRC, IX_ST_RXERR, IX_ST_MPC, IX_ST_GPRC, IX_ST_GPTC, IX_ST_RNBC, IX_ST_N };

struct ix {
	struct ix_dev dev;        /* the chip, the register accessor, queues, RSS key, MSI-X vectors */
	struct pci_func pci;      /* our function as read at start (lib/netdrv's MSI-X set-up reads it) */
	volatile uint8_t *regs;
	uint32_t itr_us;
	int64_t ring_h;           /* one MOF_DMA object: RX ring q in page 2q, TX ring q in 2q+1 */
	uint64_t ring_bus;
	uint8_t *ring_va;
	struct ixq q[IX_MAXQ];
	struct ix_counters c;
	struct e1k_stat st[IX_ST_N];
};
extern struct ix ix;

/* hw.c */
int64_t hw_init(int argc, char **argv);
void hw_reset(void);
void hw_set_poll(bool poll);
void hw_set_itr(uint32_t usecs);
bool hw_link(void);
void hw_stats(void);
uint32_t hw_irq_ack(bool *link_event);
void hw_irq_hold(bool hold);

/* rings.c: every function takes its queue. */
void ixq_reset(struct ixq *q);  /* forgets every buffer and frame (after the device reset) */
bool ixq_rx_room(const struct ixq *q);
void ixq_rx_post(struct ixq *q, struct chan_ptr p, uint64_t bus);
int ixq_rx_harvest(struct ixq *q);  /* received frames to ip (ND_RX); how many */
uint32_t ixq_tx_space(const struct ixq *q);
/* A validated frame into queue q's ring; its checksum context first when it differs from
 * the last (ctx NULL: none asked). */
void ixq_tx_queue(struct ixq *q, const struct netdrv_frame *f, const struct ix_ctx *ctx);
int ixq_tx_harvest(struct ixq *q);  /* finished frames to ip (ND_TX_DONE); how many */
void ixq_publish(struct ixq *q);    /* the tails the device has not been told */
