/* Questions to the network servers (ip, pf, udp, tcp, the drivers) over kernel IPC, used by
 * the console's network commands: one format for every server. Requests are plain calls
 * answered at once (a server never waits to answer).
 *
 * NETQ_SHOW: w[0] = topic (NQ_*), w[1] = line number from 0. The reply's type is NETQ_LINE
 * with up to 56 bytes of text in w[0..6] (NUL-padded, no newline), NETQ_END after the last
 * line, or a negative errno (-ENOENT: topic not served here). The server formats its own
 * lines, so the console needs no knowledge of their structures. A table that changes
 * between two questions may show a line twice or miss one, never garbage.
 *
 * NETQ_PING (ip only): w[0] = IPv4 address (network order in the low 32 bits), w[1] =
 * count (1..100), w[2] = payload bytes (0..65000), w[3] = interval in ms (10..10000).
 * Reply type NETQ_OK, w[0] = session id, or a negative errno. NETQ_PING_STATUS: w[0] =
 * session id, w[1] = sequence number (from 1, as icmp_seq on the wire) -> NETQ_OK with w[0] = state (NQP_WAIT, NQP_REPLY,
 * NQP_LOST), w[1] = round trip in microseconds, w[2] = reply payload bytes, w[3] = TTL, w[4] =
 * number of sequence numbers sent so far; -ENOENT for an unknown session. ip forgets a
 * session 30 s after its last echo.
 *
 * NETQ_PF (pf only): w[0] = NQF_* operation; the rule text for NQF_ADD comes as up to 48 bytes
 * in w[1..6] (NUL-padded) — longer rules come from the configuration file. */
#pragma once
#include <stdint.h>

#define NETQ_SHOW 0x6e01
#define NETQ_PING 0x6e02
#define NETQ_PING_STATUS 0x6e03
#define NETQ_PF 0x6e04
#define NETQ_LINE 0x6e10
#define NETQ_END 0x6e11
#define NETQ_OK 0x6e12

enum netq_topic {
	NQ_IFACES = 1,   /* ip: interfaces, addresses, MAC, MTU, link, packet counters */
	NQ_ROUTES = 2,   /* ip: the routing table */
	NQ_ARP = 3,      /* ip: the ARP cache */
	NQ_COUNTERS = 4, /* every server: "name value" lines of its counters */
	NQ_PF_RULES = 5, /* pf: numbered rules with their match counters */
	NQ_PF_STATES = 6,/* pf: the connection table */
	NQ_SOCKETS = 7,  /* udp, tcp: the socket table */
	NQ_SOCKLIB = 8   /* syscall: the socket library's calls per process, user space vs system calls */
};
enum { NQP_WAIT = 0, NQP_REPLY = 1, NQP_LOST = 2 };
enum { NQF_ADD = 1, NQF_DEL = 2, NQF_FLUSH = 3, NQF_RELOAD = 4 }; /* DEL: w[1] = rule number */
#define NETQ_TEXT 56
