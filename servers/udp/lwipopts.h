/* udp's lwIP instance (README.md): UDP only, no OS (one thread, no timers), IPv4 without
 * ARP, Ethernet, ICMP, fragmentation or reassembly (ip does those). lwIP's heap — where every
 * outgoing datagram is built — lives in udp's DMA send pool, so ip and the drivers read the
 * packets lwIP wrote where they are. */
#pragma once
#include "lx_abi.h"

#define NO_SYS 1
#define LWIP_TIMERS 0
#define SYS_LIGHTWEIGHT_PROT 0
#define LWIP_NETCONN 0
#define LWIP_SOCKET 0
#define LWIP_IPV4 1
#define LWIP_IPV6 0
#define LWIP_UDP 1
#define LWIP_UDPLITE 0
#define LWIP_TCP 0
#define LWIP_RAW 0
#define LWIP_ICMP 0 /* ip answers pings and sends port unreachable (IPX_UNREACH_PORT) */
#define LWIP_ARP 0
#define LWIP_ETHERNET 0
#define LWIP_IGMP 0
#define LWIP_DHCP 0
#define LWIP_AUTOIP 0
#define LWIP_DNS 0
#define IP_FORWARD 0
#define IP_REASSEMBLY 0
#define IP_FRAG 0 /* ip fragments what is longer than the interface MTU */
#define IP_OPTIONS_ALLOWED 1
#define IP_SOF_BROADCAST 1      /* sending to a broadcast address needs LX_SO_BROADCAST */
#define IP_SOF_BROADCAST_RECV 0 /* receiving does not (Linux) */
#define SO_REUSE 1
/* Datagrams to 127.0.0.0/8 and to our own addresses never leave udp: lwIP's loopback
 * netif queues them and udp.c's loop delivers them (netif_poll_all). */
#define LWIP_NETIF_LOOPBACK 1
#define LWIP_HAVE_LOOPIF 1
#define LWIP_NETIF_LOOPBACK_MULTITHREADING 0
#define LWIP_LOOPBACK_MAX_PBUFS 256
#define LWIP_SINGLE_NETIF 0
#define LWIP_CHECKSUM_CTRL_PER_NETIF 1 /* skip the UDP check the NIC already did */
#define CHECKSUM_GEN_IP 1
#define CHECKSUM_GEN_UDP 1
#define CHECKSUM_CHECK_IP 1
#define LWIP_CHKSUM_ALGORITHM 3 /* lwIP's 8-bytes-a-turn sum (its default, 2, goes 2 bytes a turn):
                                  the receive check of a full segment was a tenth of tcp's time */
#define CHECKSUM_CHECK_UDP 1
#define LWIP_RANDOMIZE_INITIAL_LOCAL_PORTS 1
#define PBUF_LINK_HLEN 0
#define PBUF_LINK_ENCAPSULATION_HLEN 0

/* Memory: the heap in the send pool (lib/lwip/xport.c sets xp_lwip_heap before lwip_init). */
#define MEM_ALIGNMENT 8
#define MEM_SIZE (2 * 1024 * 1024)
#define LWIP_RAM_HEAP_POINTER xp_lwip_heap
extern void *xp_lwip_heap;
#define MEMP_MEM_MALLOC 0
#define MEMP_NUM_PBUF 64 /* PBUF_REF headers for received packets (one at a time) */
#define MEMP_NUM_UDP_PCB 256 /* US_MAX_SOCKS */
#define PBUF_POOL_SIZE 4
#define MEMP_NUM_SYS_TIMEOUT 0

/* Statistics: udp reads udp.chkerr and udp.proterr to tell why a packet was not delivered. */
#define LWIP_STATS 1
#define LWIP_STATS_DISPLAY 0
#define UDP_STATS 1
#define IP_STATS 1
#define LINK_STATS 0
#define ICMP_STATS 0
#define MEM_STATS 1
#define MEMP_STATS 0
#define SYS_STATS 0
#define MIB2_STATS 0

