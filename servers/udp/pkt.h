/* udp's pure checks (no lwIP, no kernel calls; host-tested in tests/unit/test_udp_pkt.c):
 * the headers of a packet ip hands up, the ICMP errors ip reports, the TX descriptors an
 * application writes, and the text lines of NETQ_SHOW. Everything here works on private
 * copies: callers copy shared memory out first. */
#pragma once
#include <stdbool.h>
#include "lx_abi.h"
#include <stddef.h>
#include <stdint.h>

#define US_AF_INET 2
#define US_IPPROTO_UDP 17
#define US_UDP_MAX 65507u /* largest IPv4 UDP payload: 65535 - 20 - 8 */
#define US_HDR_COPY 68    /* an IPv4 header with options plus the UDP header */

static inline uint16_t us_get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t us_ntohl(uint32_t v) { return __builtin_bswap32(v); }
static inline uint16_t us_ntohs(uint16_t v) { return __builtin_bswap16(v); }

/* What a received IPv4/UDP packet says about itself. Addresses and ports in network order. */
struct us_udpinfo {
	uint32_t src, dst;
	uint16_t sport, dport;
	uint16_t hlen;    /* IP header bytes */
	uint16_t ulen;    /* UDP length field (header included) */
	uint32_t tot_len; /* IP total length */
};
enum us_pkt_err {
	US_PKT_OK = 0,
	US_PKT_SHORT = -1,    /* fewer bytes than the headers or the IP length need */
	US_PKT_VERSION = -2,  /* not IPv4, or a header length below 20 */
	US_PKT_PROTO = -3,    /* not UDP */
	US_PKT_FRAGMENT = -4, /* a fragment (ip reassembles before handing up) */
	US_PKT_UDPLEN = -5    /* UDP length field below 8 or not the IP payload length */
};
/* Checks the first `have` bytes (a private copy of the packet's start, at most
 * US_HDR_COPY) of a packet of `len` bytes. US_PKT_OK and *info filled, or an error. */
int us_udp_check(const uint8_t *hdr, size_t have, size_t len, struct us_udpinfo *info);

/* An ICMP error ip reports about a packet we sent (IPX_ICMP_ERR: IP header, ICMP header,
 * the offending IP header and the first 8 bytes of its UDP header). */
struct us_icmperr {
	uint8_t type, code;
	int err;           /* the errno it means for a connected socket (positive), 0: none */
	uint32_t lsrc, rdst;   /* the offending datagram's source (ours) and destination */
	uint16_t lport, rport; /* network order */
};
/* 0 and *e filled, or -1 if it is not an ICMP error about a UDP datagram. */
int us_icmp_parse(const uint8_t *msg, size_t len, struct us_icmperr *e);

/* A TX descriptor's destination, checked (the descriptor is a private copy). */
enum us_txd_err {
	US_TXD_OK = 0,
	US_TXD_FAMILY = -1, /* not LX_AF_INET or 0 */
	US_TXD_NODEST = -2, /* no address given and the socket is not connected */
	US_TXD_PORT = -3,   /* destination port 0 */
	US_TXD_SIZE = -4,   /* longer than a UDP datagram can be */
	US_TXD_ADDR = -5    /* destination 0.0.0.0 */
};
/* family/addr/port from the descriptor (port and addr in network order); connected: the
 * socket's peer (raddr, rport) if it has one. On US_TXD_OK, daddr and dport name the
 * destination. */
int us_txd_check(uint16_t family, const uint8_t addr[16], uint16_t port, uint32_t len,
		 bool connected, uint32_t raddr, uint16_t rport, uint32_t *daddr, uint16_t *dport);
/* The errno (positive) for a us_txd_check error. */
int us_txd_errno(int err);

/* Dotted quad of a network-order address into buf (at least 16 bytes). */
void us_fmt_ip4(char *buf, uint32_t addr);

/* One line of the socket table (NETQ_SHOW NQ_SOCKETS), at most NETQ_TEXT (56) bytes. */
struct us_sockview {
	uint32_t slot, sock;
	uint32_t laddr, raddr;  /* network order */
	uint16_t lport, rport;  /* network order; rport 0: not connected */
	bool attached, corrupt, broadcast;
};
void us_fmt_sock(char *buf, size_t n, const struct us_sockview *v);
