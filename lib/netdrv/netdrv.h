/* lib/netdrv: what every NIC driver shares (README.md): the driver's side of the protocol
 * with ip (lib/net/netdev_proto.h: attaching, ND_RESET, ip's pools, validation of ip's
 * messages, completions, link changes, counters), interrupts NAPI-style, fault injection
 * and the event loop. A driver supplies its hardware as struct netdrv_ops and calls
 * netdrv_main; the state both sides read is the one struct netdrv `nd`. */
#pragma once
#include "axrt.h"
#include "spsc.h"
#include "pool.h"
#include "chan_axolotl.h"
#include "chan_name.h"
#include "ds_client.h"
#include "netdev_proto.h"
#include "msix_map.h"

#define NETDRV_MAX_POOLS 16
#define NETDRV_RX_SPARE 1024 /* per queue: RX buffers ip gave beyond what the ring holds */

struct netdrv_pool {
	bool used;
	uint32_t id;
	char label[16], key[16];
	struct chan_import imp;
	struct pool_view v;
	uint64_t bus; /* bus address of the buffer area: KC_MO_PHYS(handle, 0) + header */
};

/* The driver's own counters (the device's are the driver's: netdrv_ops.counter). */
struct netdrv_counters {
	uint64_t rx_frames, rx_dropped, tx_frames, tx_failed, bad_msgs, pool_errors, irqs, resets, link_changes;
	uint64_t vec_irqs[KMSI_MAX]; /* MSI-X: the notifications of each vector */
};

/* A frame from ip, validated: every segment inside one buffer of a known pool, 14..1518
 * bytes, checksum offsets (if any) inside the frame, after a whole IPv4 header. */
struct netdrv_frame {
	uint64_t id;
	uint32_t nseg, total;
	uint64_t bus[NETDEV_MAXSEG];       /* the device's addresses of the segments */
	const uint8_t *va[NETDEV_MAXSEG];  /* our read-only view of them */
	uint32_t len[NETDEV_MAXSEG];
	uint32_t csum;                     /* NDF_TX_CSUM_* asked for (within the driver's caps) */
	uint32_t ihl;                      /* IPv4 header length, when csum */
	uint32_t l4_start, l4_field;       /* NDF_TX_CSUM_L4: from the frame's start */
};

enum netdrv_tx { NDTX_QUEUED, NDTX_FULL, NDTX_REFUSED };

struct pci_func;

struct netdrv_ops {
	const char *name;  /* in log lines: "NAME: attached to ip ..." */
	/* Once: the device (nd.bdf) mapped and set up, its memory made; fills nd.irq, nd.mac.
	 * argv for the driver's own arguments. 0 or an error (logged; the driver exits). */
	int64_t (*init)(int argc, char **argv);
	/* Reset: no DMA of ours in flight after it, rings empty, interrupts per nd.poll_mode;
	 * sets nd.link and nd.caps. */
	void (*reset)(void);
	void (*set_poll)(bool poll);        /* device interrupts off (poll) or on */
	void (*set_itr)(uint32_t usecs);    /* interrupt moderation (ND_CONF id); NULL: none */
	bool (*link)(void);
	/* Reads (so acknowledges) the interrupt cause: nonzero if any; *link_event if the link
	 * may have changed. With MSI-X, nd.msix_fired says which vectors sent a message since
	 * the last call (a device without a cause register, virtio, reads nothing else). */
	uint32_t (*irq_ack)(bool *link_event);
	/* MSI-X (nd.msix_nvec > 0): the device's interrupts masked at the device (hold) while
	 * the loop polls, or unmasked. NULL: lib/netdrv sets the mask bit of each vector's
	 * MSI-X table entry (the device keeps what comes meanwhile in its pending bits). */
	void (*irq_hold)(bool hold);
	/* Queue q (0 .. nd.nq-1) is the device's RX and TX queue q and ip's queue pair q. */
	enum netdrv_tx (*tx)(unsigned q, const struct netdrv_frame *f);
	/* Room in RX ring q for one more buffer; one of ip's RX buffers (NETDEV_RXBUF bytes at
	 * bus) into it (the device hears of it at publish). Buffers ip gives while the ring is
	 * full wait in lib/netdrv's spares. */
	bool (*rx_room)(unsigned q);
	void (*rx_post)(unsigned q, struct chan_ptr p, uint64_t bus);
	/* Received frames and finished TX of every queue to ip (netdrv_up_push on the queue's
	 * channel); how many. */
	int (*harvest)(void);
	/* After a reset, before ND_RESET: run n queue pairs (1 .. nd.max_queues, what ip
	 * offers), received flows spread over them (RSS); returns how many the device took
	 * (1..n: ND_RESET tells ip). NULL: one queue. */
	unsigned (*set_queues)(unsigned n);
	void (*publish)(void);              /* tells the device what the pass queued */
	void (*stats)(void);                /* reads the device's statistics before the counters are
	                                       shown (NULL: none) */
	/* Line i of the device's counters ("name value"); false past the last. */
	bool (*counter)(uint64_t i, char *out, size_t cap);
	void (*banner)(void);               /* the start-up line: device, MAC, IRQ, mode */
	/* `service inject NAME WORD` for a fault of the driver's own (the library's: reset, deaf,
	 * refuse); true if it knows the word. NULL: none. */
	bool (*inject)(const char *word);
};

struct netdrv {
	const struct netdrv_ops *ops;
	char ifname[24];   /* our service name: ds keys ip/NAME.down, ip/NAME.up, ip/rx.NAME */
	int32_t bdf;       /* pci=BB:DD.F from rs; -1: none */
	uint8_t irq;       /* ISA line, 0: none */
	/* init: MSI-X vectors the driver can use (0: the INTx line only), NETDRV_MSIX_WANT(pairs):
	 * one per queue pair and one for the other causes, routed as msix_map.h says */
	unsigned msix_want;
	unsigned msix_nvec; /* vectors bound and programmed (0: INTx); known before the first reset */
	uint32_t msix_fired; /* vectors (bit i: entry i) whose message came since the last irq_ack */
	bool no_msix;      /* msix=0: the INTx line even where MSI-X is possible */
	const struct pci_func *pci; /* init: the function as read (MSI-X: its capability, BARs) */
	uint8_t mac[6];
	bool link;
	uint32_t caps;     /* NDF_TX_CSUM_* the device does (said in ND_RESET) */
	unsigned max_queues; /* queue pairs the device can run (init; 0: one) */
	unsigned nq;       /* queue pairs running with ip (attach: what ip offers, up to max_queues) */
	bool poll_mode;    /* no interrupts: a dedicated core, no IRQ line, or ND_CONF NDC_POLL */
	bool dedicated;
	bool deaf;         /* `service inject NAME deaf`: nothing is served (tests) */
	bool refuse;       /* `service inject NAME refuse`: every TX is answered bad (tests) */
	/* ip */
	bool attached;
	struct netdrv_pool pools[NETDRV_MAX_POOLS];
	int rx_pool;       /* index in pools of ip's RX pool, -1: none */
	struct netdrv_counters c;
};
extern struct netdrv nd;

/* Runs the driver: arguments (pci=BB:DD.F, dedicated=1, poll=1, name=IF), ops->init, the
 * interrupt line, attaching to ip and the event loop. */
int netdrv_main(const struct netdrv_ops *ops, int argc, char **argv);

/* Line i of a driver's counters from its names and values; false past the last (n). */
bool netdrv_counter(uint64_t i, const char *const *names, const uint64_t *vals, size_t n, char *out, size_t cap);
/* How the device interrupts, for a driver's banner: "polling mode", "interrupt mode (INTx)"
 * or "interrupt mode (MSI-X, N vectors)". */
void netdrv_irq_mode(char *out, size_t cap);
/* For the driver's rings. */
bool netdrv_up_push(unsigned q, const struct netdev_msg *m); /* false when queue q's up channel is full */
uint64_t netdrv_pool_bus(int idx, struct chan_ptr p);
/* The device did something impossible (why): logged, reset and attached again (ip takes
 * back every buffer and resends). */
void netdrv_reattach(const char *why);
void netdrv_link_check(void);
/* The device refused the MSI-X vectors it was given (a driver reading back what it
 * programmed, e.g. virtio's VIRTIO_MSI_NO_VECTOR): logged with why, MSI-X turned off and
 * the vectors freed, the INTx line bound instead (nd.msix_nvec 0); the caller then sets its
 * device up for INTx. From the driver's reset. */
void netdrv_msix_refused(const char *why);
