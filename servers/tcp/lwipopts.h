/* tcp's lwIP instance (README.md): TCP only, NO_SYS with lwIP's timers (the loop in
 * lib/lwip/xport.c calls sys_check_timeouts and sleeps no longer than the next timeout),
 * IPv4 without ARP, Ethernet, ICMP, fragmentation or reassembly (ip does those). lwIP's heap
 * — where every segment is built and kept until acknowledged — lives in tcp's DMA send pool,
 * so ip and the drivers read the packets lwIP wrote where they are. */
#pragma once

#define NO_SYS 1
#define LWIP_TIMERS 1
#define SYS_LIGHTWEIGHT_PROT 0
#define LWIP_NETCONN 0
#define LWIP_SOCKET 0
#define LWIP_IPV4 1
#define LWIP_IPV6 0
#define LWIP_UDP 0
#define LWIP_TCP 1
#define LWIP_RAW 0
#define LWIP_ICMP 0 /* ip answers pings */
#define LWIP_ARP 0
#define LWIP_ETHERNET 0
#define LWIP_IGMP 0
#define LWIP_DHCP 0
#define LWIP_AUTOIP 0
#define LWIP_DNS 0
#define IP_FORWARD 0
#define IP_REASSEMBLY 0
#define IP_FRAG 0 /* ip fragments; TCP segments fit the MTU anyway */
#define IP_OPTIONS_ALLOWED 1
#define SO_REUSE 1
/* Connections to 127.0.0.0/8 and to our own addresses never leave tcp: lwIP's loopback
 * netif queues their segments and the loop delivers them (netif_poll_all). */
#define LWIP_NETIF_LOOPBACK 1
#define LWIP_HAVE_LOOPIF 1
#define LWIP_NETIF_LOOPBACK_MULTITHREADING 0
#define LWIP_LOOPBACK_MAX_PBUFS 0 /* no limit: bounded by the windows */
#define LWIP_SINGLE_NETIF 0
#define LWIP_CHECKSUM_CTRL_PER_NETIF 1 /* skip the TCP check the NIC already did */
#define CHECKSUM_GEN_IP 1
#define CHECKSUM_GEN_TCP 1
#define CHECKSUM_CHECK_IP 1
#define LWIP_CHKSUM_ALGORITHM 3 /* lwIP's 8-bytes-a-turn sum (its default, 2, goes 2 bytes a turn):
                                  the receive check of a full segment was a tenth of tcp's time */
#define CHECKSUM_CHECK_TCP 1
#define LWIP_RANDOMIZE_INITIAL_LOCAL_PORTS 1
#define PBUF_LINK_HLEN 0
#define PBUF_LINK_ENCAPSULATION_HLEN 0

#define LWIP_HOOK_FILENAME "tcp_hooks.h"

/* TCP */
#define TCP_MSS 1460
#define LWIP_WND_SCALE 1
#define TCP_RCV_SCALE 2
#define TCP_WND (128 * 1024)   /* at most half of syscall's 256 KiB RX ring: always fits */
#define TCP_SND_BUF (128 * 1024)
#define TCP_SND_QUEUELEN 512   /* segments per connection (TCP_SND_BUF / small writes) */
#define TCP_SNDLOWAT (16 * 1024)
#define TCP_SNDQUEUELOWAT 256
#define TCP_QUEUE_OOSEQ 1      /* rx.c copies a retained segment out of ip's pool */
#define TCP_OOSEQ_MAX_BYTES (128 * 1024)
#define TCP_OOSEQ_MAX_PBUFS 256
#define LWIP_TCP_SACK_OUT 1
#define LWIP_TCP_MAX_SACK_NUM 4
#define LWIP_TCP_KEEPALIVE 1   /* keep_idle/intvl/cnt per pcb (SKO_TCP_KEEP*) */
#define TCP_LISTEN_BACKLOG 1
#define TCP_DEFAULT_LISTEN_BACKLOG 128
#define LWIP_TCP_TIMESTAMPS 0
#define TCP_OVERSIZE TCP_MSS
#define LWIP_TCP_PCB_NUM_EXT_ARGS 0
#define LWIP_CALLBACK_API 1
/* 1024 live connections (TS_SLOTS) and 1000 in TIME_WAIT (when out, lwIP takes the oldest TIME_WAIT
 * pcb for a new one). */
#define MEMP_NUM_TCP_PCB 2024
#define MEMP_NUM_TCP_PCB_LISTEN 48
#define MEMP_NUM_TCP_SEG 32768

/* Memory: the heap in the send pool (lib/lwip/xport.c sets xp_lwip_heap before
 * lwip_init). 8 MiB: a DMA pool is physically contiguous, and 24 MiB could not be found in
 * a 512 MiB guest running the whole stack; connections that find it full wait
 * (ERR_MEM: retried as acknowledgements free it). */
#define MEM_ALIGNMENT 8
#define MEM_SIZE (8 * 1024 * 1024)
#define LWIP_RAM_HEAP_POINTER xp_lwip_heap
extern void *xp_lwip_heap;
#define MEMP_MEM_MALLOC 0
#define MEMP_NUM_PBUF 64
#define LWIP_SUPPORT_CUSTOM_PBUF 1 /* rx.c wraps ip's packets */
#define PBUF_POOL_SIZE 4
/* The pbuf pool is unused (received packets are ip's, wrapped): its size says nothing of TCP_WND. */
#define LWIP_DISABLE_TCP_SANITY_CHECKS 1
#define MEMP_NUM_SYS_TIMEOUT 8

/* Statistics: the counters NETQ shows (segments, retransmits, drops, heap in use). */
#define LWIP_STATS 1
#define LWIP_STATS_DISPLAY 0
#define TCP_STATS 1
#define IP_STATS 1
#define LINK_STATS 0
#define ICMP_STATS 0
#define MEM_STATS 1
#define MEMP_STATS 1
#define SYS_STATS 0
#define MIB2_STATS 1 /* retransmits, resets sent */
