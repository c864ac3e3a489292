/* syscall <-> the socket engines (udp now, tcp next): socket control over two channels;
 * socket data never passes here, it moves through each socket's buffers (sockbuf.h).
 * T below is the engine's service name.
 *
 * Names in ds (syscall owns both; it outlives the engines it serves):
 *   syscall/T.req  spsc, 64-byte slots, syscall -> T: requests (SK_OPEN, SK_BIND, ...)
 *   syscall/T.ev   spsc, 64-byte slots, T -> syscall: answers and socket events
 *
 * Socket ids are syscall's (never reused while the socket lives). Each socket's buffer is a
 * memory object syscall creates (sockbuf.h), maps into the application and grants read/
 * write to T; SK_OPEN carries T's handle for it.
 *
 * Requests carry a request id; T answers each with SK_ANSWER {req, result} in order of
 * completion. SK_TX and SK_RXDONE are hints ("look at this socket's TX queue", "the
 * application freed RX space") and are not answered. Events (SK_EV) say what changed on a
 * socket (EV_* bits); syscall re-examines the buffers then (the buffers are the truth).
 *
 * Restart of T: T restores its socket table from ds (udp/s.<id> entries: bound and
 * connected addresses, options), sends SK_HELLO, and syscall answers with SK_OPEN (flag
 * SKF_REATTACH, a fresh grant) for every socket it has with T; T matches them to its table
 * (a socket T has no record of gets its bind/connect replayed by syscall, which keeps them
 * too). Requests that were in flight are failed by syscall with -EINTR... or resent if
 * idempotent (bind, connect, setopt: resent). Restart of syscall: not supported in this
 * issue (its socket table is the application's fd state). */
#pragma once
#include <stdint.h>

#define SK_SLOT 64
#define SK_SLOTS 1024

enum sk_type {
	/* syscall -> T */
	SK_OPEN = 1,     /* sock, arg = handle of the buffer object granted to T, arg2 = its
	                    bytes; family/ type in flags (SKF_*) */
	SK_BIND = 2,     /* sock, addr/port (port 0: T picks an ephemeral one) */
	SK_CONNECT = 3,  /* sock, addr/port; family AF_UNSPEC (0) dissolves the association */
	SK_SETOPT = 4,   /* sock, arg = SKO_* option, arg2 = value */
	SK_TX = 5,       /* sock: new descriptors in its TX queue (hint, no answer) */
	SK_RXDONE = 6,   /* sock: RX space was freed (hint, no answer) */
	SK_CLOSE = 7,    /* sock: forget it; T drops its grant (answered) */
	SK_SHUTDOWN = 8, /* sock, arg = SHUT_RD/WR/RDWR */
	/* T -> syscall */
	SK_ANSWER = 16,  /* req, result (0 or -errno); addr/port = the local address after
	                    SK_BIND/SK_CONNECT */
	SK_EV = 17,      /* sock, arg = EV_* bits */
	SK_HELLO = 18    /* T (re)started: arg = incarnation */
};
#define SKF_DGRAM 1
#define SKF_STREAM 2
#define SKF_INET6 4
#define SKF_REATTACH 8
/* Options (Linux values where there is one). */
enum { SKO_BROADCAST = 6, SKO_RCVBUF = 8, SKO_SNDBUF = 7, SKO_REUSEADDR = 2 };
/* Events. */
#define EV_RX 1      /* new data or a new datagram in the RX queue */
#define EV_TXSPACE 2 /* TX space was freed */
#define EV_ERR 4     /* an error is pending: result holds -errno (e.g. -ECONNREFUSED) */
#define EV_HUP 8

struct sk_msg {
	uint16_t type;
	uint16_t flags;
	uint32_t sock;
	uint64_t req;
	int64_t result;
	uint64_t arg;
	uint64_t arg2;
	uint16_t family;  /* AF_INET (2) / AF_INET6 (10) / AF_UNSPEC (0) */
	uint16_t port;    /* network byte order */
	uint32_t pad;
	uint8_t addr[16]; /* IPv4 in the first 4 bytes, network order */
};
_Static_assert(sizeof(struct sk_msg) <= SK_SLOT, "one slot");

/* An engine's socket table in ds (udp now, tcp's listeners next): key "s.N" under the
 * engine's label for table slot N (dense from 0; key "nslots" holds the high-water mark as a
 * decimal string), value one struct sk_dsrec; a freed slot is rewritten with sock = 0.
 * The engine restores itself from it after a restart, and pf rebuilds its connection
 * table from it. */
struct sk_dsrec {
	uint32_t sock;        /* syscall's socket id, 0 = free slot */
	uint32_t laddr;       /* local IPv4, network order (0 = any) */
	uint16_t lport;       /* network order (0 = unbound) */
	uint16_t rport;       /* network order (0 = not connected) */
	uint32_t raddr;       /* network order */
	uint32_t flags;       /* SKF_* and SKR_* */
	uint32_t opts;        /* SKR_* option bits */
};
_Static_assert(sizeof(struct sk_dsrec) == 24, "one ds value");
#define SKR_BROADCAST 1
