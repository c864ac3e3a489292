/* The e1000 driver's hardware state, shared by its parts: e1000.c (lib/netdrv's hooks, the
 * TX checksum context, counters), hw.c (the device: reset, MAC, link, statistics registers)
 * and rings.c (RX and TX descriptor rings). The protocol with ip, the loop and the state
 * every driver has are lib/netdrv's (nd). README.md. */
#pragma once
#include "netdrv.h"
#include "e1000_regs.h"
#include "e1k_stat.h"

#define RX_RING 256 /* descriptors; 16 bytes each, one page per ring */
#define TX_RING 256

struct e1k_txinfo {
	uint64_t id;    /* ND_TX id, on the frame's last descriptor */
	bool last;      /* the frame's last descriptor (RS set): its DD completes the frame */
};

struct e1k_ctx { /* the checksum context last given to the device */
	bool valid;
	uint64_t addr;
	uint32_t lower;
};

enum { E1K_ST_CRC, E1K_ST_RXERR, E1K_ST_MPC, E1K_ST_GPRC, E1K_ST_GPTC, E1K_ST_RNBC, E1K_ST_N };

struct e1k_counters {
	/* from the device's statistics registers (their new events summed here: e1k_stat.h) */
	uint64_t rx_packets, rx_bytes, tx_packets, tx_bytes, rx_missed, rx_no_buf, crc_errors, rx_errors;
};

struct e1k {
	uint16_t devid;
	volatile uint8_t *regs;
	uint32_t itr_us;   /* interrupt moderation interval */
	/* rings: one MOF_DMA object, RX ring in page 0, TX ring in page 1 */
	int64_t ring_h;
	uint64_t ring_bus;
	volatile struct e1k_rx_desc *rx;
	volatile struct e1k_tx_desc *tx;
	struct chan_ptr rx_buf[RX_RING];
	uint32_t rx_head, rx_tail; /* free-running: harvested up to head, posted up to tail */
	struct e1k_txinfo txi[TX_RING];
	uint32_t tx_head, tx_tail;
	struct e1k_ctx ctx;
	struct e1k_counters c;
	struct e1k_stat st[E1K_ST_N]; /* how each statistics register behaves (e1k_stat.h) */
};
extern struct e1k e1k;

static inline uint32_t rd32(uint32_t reg) { return *(volatile uint32_t *)(e1k.regs + reg); }
static inline void wr32(uint32_t reg, uint32_t v) { *(volatile uint32_t *)(e1k.regs + reg) = v; }

/* hw.c */
int64_t hw_init(int argc, char **argv); /* PCI function nd.bdf, BAR 0, IRQ, ring memory; once */
void hw_reset(void);                    /* reset; rings empty; interrupts per nd.poll_mode */
void hw_set_poll(bool poll);
void hw_set_itr(uint32_t usecs);
bool hw_link(void);
void hw_stats(void);                    /* sums the statistics registers into e1k.c */
uint32_t hw_irq_ack(bool *link_event);  /* reads (and so clears) ICR */

/* rings.c */
void rings_reset(void); /* forgets every buffer and frame (after hw_reset) */
/* Room for one more RX buffer; an RX buffer of ip's into the ring. */
bool rx_room(unsigned q);
void rx_post(unsigned q, struct chan_ptr p, uint64_t bus);
/* Harvests received frames into ND_RX on the up channel; returns how many. */
int rx_harvest(void);
/* Tells the device the tails moved since the last call (one register write per ring). */
void rings_publish(void);
/* Free TX descriptors. */
uint32_t tx_space(void);
/* Queues one validated frame: nseg segments at bus addresses; ctx (if csum) first. */
void tx_queue(uint64_t id, uint32_t nseg, const uint64_t *bus, const uint32_t *len, const struct e1k_ctx *csum,
	      uint32_t popts);
/* Harvests sent frames into ND_TX_DONE; returns how many. */
int tx_harvest(void);

