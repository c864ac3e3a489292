/* The virtio-net driver's device state, shared by vnet.c (the device: set-up, reset, link,
 * interrupts, counters) and rxtx.c (the receive and transmit queues). The protocol with ip,
 * the loop and the state every driver has are lib/netdrv's (nd). README.md. */
#pragma once
#include "netdrv.h"
#include "virtq.h"
#include "virtio_pci.h"
#include "ctrlq.h"
#include "pci.h"

/* Network device features (virtio spec §5.1.3). */
#define VNET_F_CSUM 0        /* the device finishes TCP/UDP checksums we leave partial */
#define VNET_F_GUEST_CSUM 1  /* the device tells which received checksums it checked */
#define VNET_F_MAC 5
#define VNET_F_STATUS 16
#define VNET_F_CTRL_VQ 17    /* a control queue after the pairs */
#define VNET_F_MQ 22         /* several queue pairs (needs CTRL_VQ) */
/* Device configuration: mac[6], le16 status, le16 max_virtqueue_pairs (with MQ). */
#define VNET_CFG_MAC 0
#define VNET_CFG_STATUS 6
#define VNET_CFG_MAX_PAIRS 8
#define VNET_S_LINK_UP 1
/* struct virtio_net_hdr (with VERSION_1, num_buffers is always there): 12 bytes before every
 * frame, in a buffer of our own (its own descriptor): ip's buffers hold frames only. */
#define VNET_HDR 12
#define VNET_HDR_F_NEEDS_CSUM 1
#define VNET_HDR_F_DATA_VALID 2
struct vnet_hdr {
	uint8_t flags, gso_type;
	uint16_t hdr_len, gso_size, csum_start, csum_offset, num_buffers;
};
_Static_assert(sizeof(struct vnet_hdr) == VNET_HDR, "the header's layout");

/* Queue pairs: pair p is the device's receiveq(p+1) (virtqueue 2p) and transmitq(p+1)
 * (2p+1) and ip's queue pair p. Each has an 8-page MOF_DMA object of its own: the RX queue's
 * descriptor table, available and used rings (a page each), the TX queue's, then a page of
 * RX and one of TX headers (one per descriptor index). The control queue (virtqueue
 * 2 * max_virtqueue_pairs) has one page: its table, rings and the command. */
#define VNET_DEF_PAIRS 4      /* queues=N's default */
#define VNET_PAIR_PAGES 8
#define VNET_CTRL_SIZE 16     /* control queue entries (a command takes 3) */
#define VNET_CTRL_WAIT_NS 1000000000ull /* the most set_queues waits for the device's ack */

struct vnet_counters {
	uint64_t rx_packets, rx_bytes, tx_packets, tx_bytes, rx_bad_len, rx_csum_ok, rx_csum_partial, device_errors,
		ctrl_errors;
};

struct vnet_pair {
	struct virtq rx, tx;
	volatile uint16_t *rx_bell, *tx_bell;
	volatile struct vnet_hdr *rx_hdr, *tx_hdr; /* one per descriptor index (the chain's head) */
	uint64_t rx_hdr_bus, tx_hdr_bus;
	uint16_t tx_len[VQ_MAX];                   /* each TX chain's frame length, by head */
	uint8_t tx_ipq[VQ_MAX];                    /* ip's queue it came on (its ND_TX_DONE goes back there) */
	int64_t mem_h;
	uint8_t *mem;
	uint64_t mem_bus;
	uint64_t rx_frames, tx_frames;             /* this pair's share of the counters */
};

struct vnet {
	struct virtio_pci pci;
	struct pci_func func; /* as read at start (lib/netdrv's MSI-X set-up reads it) */
	char vec_refused[64]; /* at the last reset: the first MSI-X vector the device refused ("" none) */
	bool bad_vector;      /* injected: the next reset gives a vector past the table */
	uint64_t offered, features;
	uint16_t dev_pairs;   /* the device's max_virtqueue_pairs (1 without MQ) */
	unsigned npairs;      /* pairs set up at each reset: min(dev_pairs, queues=N, NETDEV_MAXQ) */
	unsigned active;      /* pairs the device spreads flows over (set_queues; 1 until it agrees) */
	struct vnet_pair p[NETDEV_MAXQ];
	/* the control queue (with MQ) */
	struct virtq ctrl;
	volatile uint16_t *ctrl_bell;
	volatile struct vnet_ctrl_cmd *cmd;
	uint64_t ctrl_bus;
	int64_t ctrl_h;
	uint8_t *ctrl_mem;
	bool ctrl_ok;         /* set up at the last reset and not found lying since */
	struct vnet_counters c;
};
extern struct vnet vn;

/* rxtx.c */
bool rx_room(unsigned q);
void rx_post(unsigned q, struct chan_ptr p, uint64_t bus);
int vnet_harvest(void);
enum netdrv_tx vnet_tx(unsigned q, const struct netdrv_frame *f);
void vnet_publish(void);
