/* ip <-> network driver (drivers/e1000, drivers/virtio-net; lib/netdrv is the drivers' side): the messages on the two
 * channels ip owns per driver, and the rules both sides follow (docs/network.md).
 *
 * Names in ds: ip exports, for the driver service DRV (its service name from ip's `if=`):
 *   ip/DRV.down  spsc, 64-byte slots, ip -> driver (ip produces)
 *   ip/DRV.up    spsc, 64-byte slots, driver -> ip (driver produces)
 *   ip/rx.DRV    ip's RX pool (MOF_DMA), importable by DRV, read-only
 *   ip/DRV.dQ, ip/DRV.uQ  the same pair for queue Q = 1..NETDEV_MAXQ-1 (below)
 * Other pools the driver transmits from (ip's heap, udp's and tcp's send pools) are
 * announced by ND_POOL with the ds label and key to import them by; all are MOF_DMA, so the
 * driver turns a rich pointer into a bus address as KC_MO_PHYS(handle, 0) + header + offset.
 * Buffers never move: the driver gives the device bus addresses of pool memory (no copy).
 *
 * Start and restart. A driver that (re)starts resets its device (so no DMA of a previous
 * instance is in flight), imports both channels and sends ND_RESET with its MAC and link.
 * On ND_RESET ip takes back every RX buffer and every unacknowledged TX it had given the
 * driver (any instance), sends ND_POOL for every pool, then RX buffers, then resubmits the
 * unacknowledged TX. When ip restarts it exports new channels; the driver, which subscribes
 * to ip's names in ds, resets the device, drops what it held (none of it is the new ip's)
 * and imports them again, then sends ND_RESET as above.
 *
 * A full channel is never waited on: ip keeps what did not fit and retries; the driver keeps
 * completions it could not push and pushes them first next time.
 *
 * Several queues. A device with several queue pairs (RSS: the device spreads received flows
 * over its RX queues by a hash of their addresses and ports) runs as many as ip offers,
 * up to its own: ip exports the pairs DRV.dQ/DRV.uQ for Q = 1.. (its `queues=N`), the
 * driver imports them in order until one is missing and says in ND_RESET's `queues` how
 * many it runs. Queue 0 (DRV.down/DRV.up) carries everything; queue Q carries RX buffers
 * for and frames from the device's RX queue Q, and frames for its TX queue Q with their
 * ND_TX_DONE. ND_POOL, ND_CONF, ND_RESET, ND_LINK and ND_POOL_ERR go on queue 0 only;
 * ip sends a pool's ND_POOL before any frame that points into it, and a driver that meets
 * an unknown pool on queue Q while queue 0 still holds messages serves queue 0 first.
 * Each side validates every message (types, segment counts, pool ids, bounds) and drops and
 * counts bad ones; a corrupt channel (CHAN_ECORRUPT) is detached and re-imported. */
#pragma once
#include <stdint.h>
#include "pool.h"

#define NETDEV_SLOT 64
#define NETDEV_SLOTS 512
#define NETDEV_MAXQ 8   /* queue pairs between ip and one driver */
#define NETDEV_MAXSEG 3 /* segments of one TX frame: headers in ip's heap, payload elsewhere */
#define NETDEV_MTU 1500
#define NETDEV_FRAME_MAX 1518 /* without FCS: 14 + 1500 + 4 (VLAN) */
#define NETDEV_RXBUF 2048     /* RX pool buffers: one frame each */

enum netdev_type {
	/* ip -> driver */
	ND_TX = 1,      /* id, nseg segments forming one Ethernet frame (no FCS); flags NDF_TX_* */
	ND_RXBUF = 2,   /* seg[0]: an empty RX buffer (len = its size, >= NETDEV_RXBUF) */
	ND_POOL = 3,    /* struct netdev_pool: a pool TX segments may point into */
	ND_CONF = 4,    /* arg = NDC_* bits: polling mode, interrupt moderation (usecs in id) */
	/* driver -> ip */
	ND_RESET = 16,  /* the driver (re)started, device reset: mac in id (low 48 bits), arg =
	                   NDL_* link bits, flags = the NDF_TX_CSUM_* it accepts (what its
	                   device offloads); ip takes everything back and resends */
	ND_RX = 17,     /* seg[0]: a buffer ip gave, len = frame length; flags NDF_RX_* */
	ND_TX_DONE = 18,/* id of an ND_TX; arg = 0 sent, or a negative error (dropped) */
	ND_LINK = 19,   /* arg = NDL_* link bits */
	ND_POOL_ERR = 20/* arg = pool id the driver could not import or use; its TXs fail */
};

/* ND_TX flags: checksums the device should fill in (what the driver cannot offload it
 * computes in software only if NDF_TX_SWCSUM_OK is set; otherwise ip did them). */
#define NDF_TX_CSUM_IP4 1  /* IPv4 header checksum; IP header at offset 14 */
#define NDF_TX_CSUM_L4 2   /* TCP/UDP checksum: start = arg & 0xffff (from the frame start),
                              the checksum field at (arg >> 16) & 0xffff; the field holds the
                              pseudo-header sum already (Linux's CHECKSUM_PARTIAL) */
/* ND_RX flags: what the device verified. */
#define NDF_RX_IP4_OK 1    /* IPv4 header checksum good */
#define NDF_RX_L4_OK 2     /* TCP/UDP checksum good */
#define NDF_RX_CSUM_BAD 4  /* the device found a bad checksum */
#define NDF_RX_HASH 8      /* hash holds the device's RSS hash */
/* Link bits. */
#define NDL_UP 1
/* ND_CONF bits. */
#define NDC_POLL 1         /* poll the device, no interrupts (a dedicated core) */

struct netdev_msg {
	uint16_t type;
	uint16_t nseg;
	uint32_t flags;
	uint64_t id;
	struct chan_ptr seg[NETDEV_MAXSEG];
	uint32_t arg;
	uint32_t queues;    /* ND_RESET: queue pairs the driver runs (0 or 1: one) */
	uint32_t hash;      /* ND_RX with NDF_RX_HASH: the device's RSS hash of the frame */
};
_Static_assert(sizeof(struct netdev_msg) <= NETDEV_SLOT, "one slot");

struct netdev_pool {
	uint16_t type;      /* ND_POOL */
	uint16_t pad;
	uint32_t pool_id;
	char label[16];     /* ds label of the owner, NUL-padded */
	char key[16];       /* its export key for this driver */
	uint64_t reserved[2];
};
_Static_assert(sizeof(struct netdev_pool) <= NETDEV_SLOT, "one slot");

/* Pool ids: the owner kind in the top byte, the owner's incarnation below, so a pool of a
 * previous incarnation never matches a new one. */
#define POOLID_IP_RX 0x01000000u
#define POOLID_IP_HEAP 0x02000000u
#define POOLID_UDP 0x03000000u
#define POOLID_TCP 0x04000000u
#define POOLID(kind, incarnation) ((kind) | ((incarnation) & 0xffffffu))
