/* The e1000 driver's state, shared by its parts: e1000.c (the event loop, ip's channels and
 * pools, the protocol of lib/net/netdev_proto.h, counters), hw.c (the device: reset, MAC,
 * link, statistics registers) and rings.c (RX and TX descriptor rings). README.md. */
#pragma once
#include "axrt.h"
#include "spsc.h"
#include "pool.h"
#include "doorbell.h"
#include "chan_axolotl.h"
#include "chan_name.h"
#include "evloop.h"
#include "ds_client.h"
#include "netdev_proto.h"
#include "e1000_regs.h"
#include "e1k_stat.h"

#define RX_RING 256 /* descriptors; 16 bytes each, one page per ring */
#define TX_RING 256
#define RX_SPARE 1024 /* RX buffers ip gave beyond what the ring holds */
#define MAX_POOLS 16
#define IRQ_BIT (1ull << 0)       /* our notification bit for the device's interrupt */
#define NETDEV_WAKE_BIT (1ull << 40) /* what we notify ip with: "your up channel has data" */

struct e1k_pool {
	bool used;
	uint32_t id;
	char label[16], key[16];
	struct chan_import imp;
	struct pool_view v;
	uint64_t bus; /* bus address of the buffer area: KC_MO_PHYS(handle, 0) + header */
};

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
	/* the driver's own */
	uint64_t rx_frames, rx_dropped, tx_frames, tx_failed, bad_msgs, pool_errors, irqs, resets, link_changes;
};

struct e1k {
	char ifname[24];   /* our service name: ds keys ip/NAME.down, ip/NAME.up, ip/rx.NAME */
	uint16_t bdf, devid;
	uint8_t irq;       /* ISA line, 0: none */
	volatile uint8_t *regs;
	uint8_t mac[6];
	bool link;
	bool poll_mode;    /* no interrupts: a dedicated core, or ND_CONF NDC_POLL */
	bool dedicated;
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
	struct chan_ptr spare[RX_SPARE];
	uint32_t nspare;
	/* ip */
	bool attached;
	uint8_t ip_seen[DS_VAL_LEN]; /* ds value of ip/NAME.down when we imported it */
	uint32_t ip_seen_len;
	struct chan_import down_mem, up_mem;
	struct spsc down, up;
	struct chan_watch up_w; /* ip reads up (lib/chan/watch.h) */
	bool deaf;              /* `service inject e1000 deaf`: nothing is served (tests) */
	bool refuse;            /* `service inject e1000 refuse`: every TX is answered bad (tests) */
	struct chan_axolotl_peer ipwake;
	struct chan_platform plat;
	bool kick_ip;
	struct e1k_pool pools[MAX_POOLS];
	int rx_pool; /* index in pools of ip's RX pool */
	uint64_t next_tick_ns, next_attach_ns;
	struct e1k_counters c;
	struct e1k_stat st[E1K_ST_N]; /* how each statistics register behaves (e1k_stat.h) */
};
extern struct e1k e1k;

static inline uint32_t rd32(uint32_t reg) { return *(volatile uint32_t *)(e1k.regs + reg); }
static inline void wr32(uint32_t reg, uint32_t v) { *(volatile uint32_t *)(e1k.regs + reg) = v; }

/* hw.c */
int64_t hw_init(int argc, char **argv); /* PCI function, BAR 0, IRQ, ring memory; once */
void hw_reset(void);                    /* reset; rings empty; interrupts per poll_mode */
void hw_set_poll(bool poll);
void hw_set_itr(uint32_t usecs);
bool hw_link(void);
void hw_stats(void);                    /* sums the statistics registers into e1k.c */
uint32_t hw_irq_ack(void);              /* reads (and so clears) ICR */

/* rings.c */
void rings_reset(void); /* forgets every buffer and frame (after hw_reset) */
/* An RX buffer from ip: into the ring, or kept spare. false if there is no room at all. */
bool rx_give(struct chan_ptr p, uint64_t bus);
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

/* e1000.c */
bool up_push(const struct netdev_msg *m); /* false when the up channel is full */
uint64_t pool_bus(int idx, struct chan_ptr p);
