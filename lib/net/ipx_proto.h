/* ip <-> the transport servers (udp, tcp): received packets up, packets to send down
 * (docs/network.md). T below is the transport's service name.
 *
 * Names in ds:
 *   ip/T.in     spsc, 64-byte slots, ip -> T (ip owns it; importable by T)
 *   T/out       spsc, 64-byte slots, T -> ip (T owns it; importable by ip)
 *   ip/rx.T     ip's RX pool, read-only for T        (packets ip received)
 *   ip/heap.T   ip's heap pool, read-only for T      (reassembled or copied packets)
 *   T/pool.ip   T's send pool (MOF_DMA), read-only for ip
 *   T/pool.DRV  the same pool for each driver DRV named in an IPX_IFACE (ip announces it to
 *               the driver with ND_POOL label T, key "pool.DRV")
 *
 * Packets are whole IPv4 packets, header included, named by rich pointers; nothing is
 * copied between the servers. Every IPX_RX is answered by IPX_RX_DONE (the buffer goes back
 * to ip) and every IPX_TX by IPX_TX_DONE (the buffer is T's again), in any order.
 * ip validates the IP header T wrote (version, length, our source address, protocol = T's)
 * and copies it into its own memory before it routes, fragments and adds the link header.
 *
 * Restarts. Each side sends IPX_HELLO when it (re)starts and after importing the other's
 * channel; T's names the ip it is for (id = the endpoint that exported ip/T.in). On the
 * peer's HELLO a side forgets what it had in flight with the previous incarnation: ip frees
 * RX packets T never answered and stops reporting old TXs; T counts done its TXs addressed
 * to an earlier ip (ip's restart reset the drivers, so no DMA reads them) and drops RX
 * pointers into the old ip's pools. A new ip drops unread whatever T/out holds before the
 * HELLO that names it (TXs and RX_DONEs for its predecessor, which T has forgotten or
 * will), so a packet T freed is never sent. ip answers T's HELLO with IPX_IFACE for every
 * interface. */
#pragma once
#include <stdint.h>
#include "pool.h"

#define IPX_SLOT 64
#define IPX_SLOTS 1024

enum ipx_type {
	IPX_HELLO = 1,    /* either way: arg = the sender's incarnation (restart count);
	                     T -> ip: id = the ip endpoint it is meant for */
	IPX_RX = 2,       /* ip -> T: id, pkt = the IP packet; flags IPXF_* */
	IPX_RX_DONE = 3,  /* T -> ip: id; arg = 0, or IPX_UNREACH_PORT: ip sends ICMP port
	                     unreachable for that packet */
	IPX_TX = 4,       /* T -> ip: id, pkt = the IP packet in T's pool; flags IPXF_* */
	IPX_TX_DONE = 5,  /* ip -> T: id; arg = 0 sent, or a negative errno (no route, ...) */
	IPX_IFACE = 6,    /* ip -> T: struct ipx_iface */
	IPX_ICMP_ERR = 7  /* ip -> T: an ICMP error about a packet T sent: pkt = the ICMP
	                     message (IP header first), like an IPX_RX */
};
#define IPX_UNREACH_PORT 1
/* flags */
#define IPXF_L4_CSUM_OK 1    /* IPX_RX: the NIC verified the TCP/UDP checksum */
#define IPXF_CSUM_PARTIAL 2  /* IPX_TX: the L4 checksum field holds only the pseudo-header
                                sum; ip or the NIC completes it */

struct ipx_msg {
	uint16_t type;
	uint16_t flags;
	int32_t arg;
	uint64_t id;
	struct chan_ptr pkt;
	uint32_t reserved0;
	uint64_t reserved[4];
};
_Static_assert(sizeof(struct ipx_msg) <= IPX_SLOT, "one slot");

struct ipx_iface {
	uint16_t type;      /* IPX_IFACE */
	uint8_t ifindex;
	uint8_t up;         /* 1: configured and link up */
	uint32_t addr, mask, gw; /* IPv4, network byte order; 0 until configured */
	uint32_t mtu;
	uint8_t mac[6];
	uint16_t pad;
	char name[16];      /* the driver's service name */
	uint64_t reserved[2];
};
_Static_assert(sizeof(struct ipx_iface) <= IPX_SLOT, "one slot");
