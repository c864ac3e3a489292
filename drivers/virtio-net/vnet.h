/* The virtio-net driver's device state, shared by vnet.c (the device: set-up, reset, link,
 * interrupts, counters) and rxtx.c (the receive and transmit queues). The protocol with ip,
 * the loop and the state every driver has are lib/netdrv's (nd). README.md. */
#pragma once
#include "netdrv.h"
#include "virtq.h"
#include "virtio_pci.h"

/* Network device features (virtio spec §5.1.3). */
#define VNET_F_CSUM 0        /* the device finishes TCP/UDP checksums we leave partial */
#define VNET_F_GUEST_CSUM 1  /* the device tells which received checksums it checked */
#define VNET_F_MAC 5
#define VNET_F_STATUS 16
/* Device configuration: mac[6], then le16 status. */
#define VNET_CFG_MAC 0
#define VNET_CFG_STATUS 6
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

#define RXQ 0
#define TXQ 1
#define VNET_PAGES 8 /* DMA memory: per queue desc, avail, used (3 pages); RX, TX headers */

struct vnet_counters {
	uint64_t rx_packets, rx_bytes, tx_packets, tx_bytes, rx_bad_len, rx_csum_ok, device_errors;
};

struct vnet {
	struct virtio_pci pci;
	uint64_t offered, features;
	int64_t mem_h;
	uint64_t mem_bus;
	uint8_t *mem;
	struct virtq q[2];
	volatile uint16_t *doorbell[2];
	volatile struct vnet_hdr *rx_hdr, *tx_hdr; /* one per descriptor index (the chain's head) */
	uint64_t rx_hdr_bus, tx_hdr_bus;
	uint16_t tx_len[VQ_MAX];                   /* each TX chain's frame length, by head */
	struct vnet_counters c;
};
extern struct vnet vn;

/* rxtx.c */
bool rx_room(unsigned q);
void rx_post(unsigned q, struct chan_ptr p, uint64_t bus);
int vnet_harvest(void);
enum netdrv_tx vnet_tx(unsigned q, const struct netdrv_frame *f);
void vnet_publish(void);
