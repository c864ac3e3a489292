/* lwIP options of ip's instance (README.md): IPv4, ARP, ICMP, fragmentation and reassembly,
 * raw pcbs for demultiplexing to the transports and for ping, UDP only for the DHCP client.
 * No TCP, no sockets, no threads (NO_SYS). The whole heap is the memory object ip shares
 * read-only with the drivers (lwip_heap_base, heap.c), so headers built in it go to the
 * device without a copy. */
#pragma once

#define NO_SYS 1
#define SYS_LIGHTWEIGHT_PROT 0
#define LWIP_SOCKET 0
#define LWIP_NETCONN 0
#define LWIP_IPV4 1
#define LWIP_IPV6 0
#define LWIP_ARP 1
#define LWIP_ETHERNET 1
#define LWIP_ICMP 1
#define LWIP_RAW 1
#define LWIP_UDP 1
#define LWIP_TCP 0
#define LWIP_DHCP 1
#define LWIP_DHCP_DOES_ACD_CHECK 0
#define DHCP_DOES_ARP_CHECK 0
#define LWIP_DNS 0
#define LWIP_IGMP 0
#define LWIP_AUTOIP 0
#define IP_FORWARD 0
#define IP_REASSEMBLY 1
#define IP_FRAG 1
#define IP_REASS_MAX_PBUFS 96        /* a 65535-byte ping in 1480-byte fragments is 45 */
#define MEMP_NUM_REASSDATA 16
#define IP_DEFAULT_TTL 64
#define ARP_TABLE_SIZE 32
#define ARP_QUEUEING 1
#define MEMP_NUM_ARP_QUEUE 128
#define ARP_QUEUE_LEN 64             /* a datagram's fragments wait for one ARP answer */
#define ETHARP_SUPPORT_STATIC_ENTRIES 0
#define LWIP_NETIF_STATUS_CALLBACK 1
#define LWIP_NETIF_LINK_CALLBACK 1
#define LWIP_NETIF_HOSTNAME 0
#define LWIP_SINGLE_NETIF 0
#define LWIP_BROADCAST_PING 0
#define LWIP_MULTICAST_PING 0

/* Memory: lwIP's heap is ip's DMA pool (heap.c); pools come from the heap too. */
#define MEM_LIBC_MALLOC 0
#define MEMP_MEM_MALLOC 1
#define MEM_ALIGNMENT 8
#define MEM_SIZE (6 * 1024 * 1024)
extern void *lwip_heap_base;
#define LWIP_RAM_HEAP_POINTER lwip_heap_base
#define PBUF_POOL_SIZE 64
#define PBUF_POOL_BUFSIZE 1536
#define MEMP_NUM_PBUF 1024
#define MEMP_NUM_RAW_PCB 8
#define MEMP_NUM_UDP_PCB 4
#define MEMP_NUM_SYS_TIMEOUT 16
#define LWIP_SUPPORT_CUSTOM_PBUF 1

/* Counters (NQ_COUNTERS): lwIP's per-protocol statistics. */
#define LWIP_STATS 1
#define LWIP_STATS_DISPLAY 0
#define LINK_STATS 1
#define ETHARP_STATS 1
#define IP_STATS 1
#define IPFRAG_STATS 1
#define ICMP_STATS 1
#define UDP_STATS 1
#define MEM_STATS 1
#define MEMP_STATS 0
#define SYS_STATS 0

/* Every IPv4 packet goes to pf before lwIP looks at it (pf.c). */
#define LWIP_HOOK_FILENAME "ip_hooks.h"
#define LWIP_HOOK_IP4_INPUT(p, inp) ip_hook_ip4_input((p), (inp))
#define LWIP_HOOK_IP4_ROUTE(dest) ip_hook_route(dest)
#define LWIP_HOOK_ETHARP_GET_GW(netif, dest) ip_hook_gw((netif), (dest))
#define LWIP_STATS_LARGE 1

#define LWIP_DEBUG 0
#define LWIP_NOASSERT 0
#define LWIP_CHKSUM_ALGORITHM 3
