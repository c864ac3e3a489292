/* ip: the IPv4 server (README.md). State shared by its files. */
#pragma once
#include <axrt.h>
#include "service.h"
#include "chan_axolotl.h"
#include "chan_name.h"
#include "pool.h"
#include "reqdb.h"
#include "netdev_proto.h"
#include "ipx_proto.h"
#include "pf_proto.h"
#include "route.h"
#include "hdr.h"
#include "rss.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"

#define IP_MAX_IF 3           /* one per driver system.conf names (e1000, virtio-net, ixgbe); one is there */
#define IP_MAX_T 2            /* udp, tcp */
#define IP_WAKE_BIT (1ull << 40) /* "a channel of yours has messages" (any bit wakes a loop) */
#define RX_NBUFS (RX_PER_IF * IP_MAX_IF) /* RX pool: NETDEV_RXBUF-byte buffers */
#define RX_PER_IF 256         /* RX buffers posted to each driver */
#define TX_MAX 512            /* frames in flight to a driver (given or waiting for room) */
#define IP_MAX_Q 8            /* queue pairs ip offers a driver (queues=N, default IP_DEF_Q) */
#define IP_DEF_Q 4
#define HEAP_BYTES (MEM_SIZE + 4096)

/* Counters (NQ_COUNTERS, NQ_IFACES) beyond lwIP's own statistics. */
struct ip_counters {
	uint64_t rx_frames, rx_bytes, tx_frames, tx_bytes;
	uint64_t rx_bad_msg, rx_bad_hdr[IP4_NVERDICT], rx_runt;
	uint64_t tx_drop_full, tx_err, tx_copied;
	uint64_t rx_flow_moved;   /* a flow's frames arrived on a second queue (rss.h) */
};

struct tx_slot {              /* a frame given (or to be given) to a driver */
	struct pbuf *p;           /* our reference; NULL: free */
	uint32_t gen;
	bool queued;              /* waits for room in the down channel */
	uint8_t q;                /* the queue pair it goes on */
	uint32_t nd_flags;        /* NDF_TX_*: checksums the NIC fills in */
	uint64_t nd_arg;          /* their offsets (netdev_proto.h) */
};
/* A pbuf flag lwIP leaves alone: the frame's TCP checksum is for the NIC to finish (the
 * field holds the pseudo-header sum; IPv4 header of 20 bytes). */
#define IP_PBUF_L4_PARTIAL 0x80U

/* One queue pair with a driver (netdev_proto.h): 0 is DRV.down/.up, Q DRV.dQ/.uQ. */
struct ip_q {
	struct chan_export down_e, up_e;
	struct spsc down, up;
	struct chan_watch down_w; /* the driver reads down (lib/chan/watch.h) */
	uint32_t rx_posted;       /* RX buffers the driver holds for this queue */
	uint64_t rx_frames, tx_frames;
};

struct ip_if {
	char name[16];
	uint8_t index;
	bool used, ready;         /* ready: the driver sent ND_RESET */
	struct netif netif;
	struct chan_export rx_e, heap_e;
	struct ip_q q[IP_MAX_Q];
	uint8_t nq_offer;         /* queue pairs exported (queues=N) */
	uint8_t nq;               /* running: what the driver said in ND_RESET */
	uint8_t kick;             /* queues given frames or buffers this pass: ring the driver */
	struct rss_table flows;   /* flows over the queues (nq > 1) */
	struct chan_axolotl_peer drv;
	struct chan_platform plat;
	/* The driver refuses every frame (link up): since when, how many, when rs was told
	 * (drv.c: a driver alive and reading, but broken, as the fault campaign found). */
	uint64_t refused_since_ns;
	uint32_t refused_n;
	/* Frames the driver holds (given, not answered) and since when none was answered: a
	 * driver that takes frames and never answers (deaf, its ring holding all TCP had in
	 * flight, so nothing new waits in the channel) is told to rs like a refusing one. */
	uint32_t tx_given;
	uint64_t tx_waiting_ns, tx_said_ns;
	uint8_t mac[6];
	uint32_t link;
	uint32_t caps;            /* NDF_TX_CSUM_* the driver's device finishes (its ND_RESET) */
	bool pools_sent;
	bool down_other;  /* this poll pushed the driver something besides RX buffers and frames */
	uint32_t refused_pool;     /* ND_POOL_ERR: a transport pool the driver cannot use */
	uint32_t tx_gen;
	struct tx_slot tx[TX_MAX];
	uint32_t txq[TX_MAX], txq_head, txq_n; /* slots waiting for room, in order */
	/* configuration */
	bool dhcp, dhcp_started, bound, lease_pending;
	uint32_t cfg_addr, cfg_mask, cfg_gw;
	struct ip_counters c;
};

/* One RX buffer: its pbuf wrapper while lwIP or a transport holds it. */
enum { RXB_FREE, RXB_DRIVER, RXB_STACK };
struct rx_buf {
	struct pbuf_custom pc;
	uint8_t state, ifindex, q;
	uint8_t nd_flags; /* NDF_RX_*: what the NIC verified of the frame in it */
};

struct ip_transport {
	const char *name;         /* "udp", "tcp" */
	uint8_t proto;
	struct chan_export in_e, rx_e, heap_e;
	struct spsc in;           /* ip -> T */
	bool in_attached;
	struct chan_axolotl_peer peer;
	struct chan_platform plat;
	struct chan_watch in_w;   /* T reads in (lib/chan/watch.h) */
	struct chan_import out_mem, pool_mem;
	struct spsc out;          /* T -> ip */
	struct pool_view pool;
	bool attached;            /* out and pool imported */
	uint64_t retry_ns;        /* not attached: try again then */
	uint32_t incarnation;
	struct reqdb rx_db;       /* IPX_RX in flight */
	struct reqdb_entry rx_ent[IPX_SLOTS];
	struct pbuf *rx_p[IPX_SLOTS];
	struct ipx_msg pend[64];  /* messages to T waiting for room */
	uint32_t pend_n;
	uint64_t c_rx, c_tx, c_tx_bad, c_tx_noroute, c_bad_msg, c_unreach;
	uint64_t c_rx_full;       /* packets dropped: T held T_RX_HELD of ours already (ipx.c) */
	uint64_t c_stale_msg;     /* in T/out before T's hello to us: for our predecessor */
	uint64_t out_queued;      /* messages waiting in T/out when netstat last asked */
	uint64_t c_rx_csum_hw;    /* delivered with IPXF_L4_CSUM_OK (the NIC checked it) */
	uint64_t c_tx_csum_hw;    /* sent with the L4 checksum left to the NIC */
};

struct ip_state {
	struct ip_if ifs[IP_MAX_IF];
	int nifs;
	struct rtable rt;
	/* memory */
	int64_t heap_h, rx_h;
	unsigned char *heap_mem, *rx_mem;
	struct pool_owner heap_pool, rx_pool;
	struct rx_buf rxb[RX_NBUFS];
	uint32_t rx_pool_id, heap_pool_id;
	/* pf */
	bool pf_on;
	struct ip_transport t[IP_MAX_T];
	uint64_t c_pf_pass, c_pf_block, c_pf_drop, c_pf_resubmit, c_pf_bad;
	uint64_t c_pf_fast, c_pf_tables; /* passed by pf's flow table; times a pf took the table */
	uint64_t c_pf_synack;            /* of pf_fast: SYN-ACKs pf judged with their SYN (pf_flow.h) */
	uint64_t c_pf_noted;             /* FIN/RST passed by the table, pf told by a note */
	bool retry;               /* something waits for room: poll again soon */
	bool deaf;                /* injected fault: the transports' channels are not read */
};
extern struct ip_state ip;

/* heap.c: the DMA heap (lwIP's) and the RX pool */
int ip_mem_init(void);
bool ip_in_heap(const void *p, uint32_t len, uint32_t *off);
struct pbuf *ip_rx_wrap(uint32_t idx, uint32_t len, uint32_t nd_flags);
bool ip_rx_index(struct chan_ptr p, uint32_t *idx);
bool ip_rx_offset(const void *p, uint32_t len, uint32_t *off);
/* drv.c: interfaces and their drivers */
int ip_if_add(const char *name, unsigned queues); /* queue pairs offered to its driver */
bool ip_drv_poll(void);
err_t ip_if_output_now(struct netif *n, struct pbuf *p, const ip4_addr_t *dst);
struct ip_if *ip_if_of(struct netif *n);
/* Whether a frame to dst leaving by n can have its TCP checksum done by the NIC now: n is
 * a NIC of ours and dst's next hop is in the ARP table (a frame lwIP queues for ARP is
 * copied without our pbuf flag). */
bool ip_if_l4_offload(struct netif *n, const ip4_addr_t *dst);
void ip_if_configured(struct ip_if *f);
/* pf.c: the T junction */
int ip_pf_init(bool on);
bool ip_pf_poll(void);
err_t ip_pf_output(struct netif *n, struct pbuf *p, const ip4_addr_t *dst);
/* ipx.c: transports */
int ip_ipx_init(void);
bool ip_ipx_poll(void);
/* Reads what the gauges of netstat's counters show (messages waiting in each T/out). */
void ip_ipx_gauges(void);
void ip_ipx_ds_changed(const char *label);
void ip_ipx_iface_all(void);
/* An ICMP error (IP header first) about a packet of protocol proto: to its transport
 * (IPX_ICMP_ERR), taking p; false if no transport of that protocol is attached. */
bool ip_ipx_icmp_err(uint8_t proto, struct pbuf *p);
/* netq.c: console questions and ping */
void ip_netq(struct kmsg *m);
int ip_ping_init(void);
/* state.c: configuration in ds */
void ip_state_save(struct ip_if *f);
bool ip_state_load(struct ip_if *f);
/* the routing table follows the interfaces */
void ip_routes_update(void);
