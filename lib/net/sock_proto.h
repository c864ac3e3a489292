/* syscall <-> the socket engines (udp, tcp): socket control over two channels;
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
 * issue (its socket table is the application's fd state).
 * tcp's restart: only listeners are in ds. syscall replays a listener's options, SK_BIND and
 * SK_LISTEN (tcp answers 0 for the listener it restored already); a stream socket that was
 * connected or connecting is not replayed: tcp, given SKF_REATTACH for a stream socket it
 * has no record of, sends SK_EV EV_ERR|EV_HUP with -ECONNRESET (the connection died with
 * the old tcp); an unconnected, unbound one just goes on. */
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
	SK_SHUTDOWN = 8, /* sock, arg = SHUT_RD/WR/RDWR (datagram sockets; a stream's SHUT_WR
	                    is an SBD_FIN descriptor in its TX ring, in order with its data) */
	SK_LISTEN = 9,   /* stream sock (bound, or bound here to an ephemeral port), arg =
	                    backlog: answered (addr/port = the local address) */
	SK_ACCEPT = 10,  /* sock = a new stream socket (SK_OPENed just before), arg = the
	                    listening socket: the listener's oldest pending connection becomes
	                    this socket (its data since arrival goes into the new RX ring).
	                    Answer: 0 with addr/port = the peer, arg = local IPv4 (network order),
	                    arg2 = local port (network order); -EAGAIN if none is pending. */
	SK_INFO = 11,    /* stream sock: the connection's state for TCP_INFO. Answer 0 with
	                    arg = Linux TCP state | retransmits << 8 | MSS << 16 | cwnd (bytes) << 32,
	                    arg2 = RTO (ms) | smoothed RTT (ms) << 32, addr = four uint32: send
	                    window, receive window, ssthresh (bytes), segments unacknowledged;
	                    -ENOTCONN without a connection */
	SK_ACT = 12,     /* a process's activity page (sock_ax.h): arg = handle of the page
	                    granted to T (0: forget it), arg2 = the process id (not answered) */
	SK_LIB = 13,     /* sock: the library of process arg (0: nobody, syscall moves the data
	                    again) moves its data; arg2 = its bit in that process's page (not
	                    answered; always after the socket's SK_OPEN and the page's SK_ACT) */
	SK_BELL = 14,    /* arg = handle of the bell (sock_ax.h, struct ax_bell) granted to T:
	                    on a dedicated MWAIT core T sleeps watching its line (not answered) */
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
/* Options: SOL_SOCKET ones by their Linux number, IPPROTO_TCP ones as SKO_TCP | number.
 * SKO_LINGER's value: onoff << 32 | seconds. */
enum { SKO_BROADCAST = 6, SKO_RCVBUF = 8, SKO_SNDBUF = 7, SKO_REUSEADDR = 2, SKO_KEEPALIVE = 9,
       SKO_LINGER = 13 };
#define SKO_TCP 0x100
enum { SKO_TCP_NODELAY = SKO_TCP | 1, SKO_TCP_MAXSEG = SKO_TCP | 2, SKO_TCP_CORK = SKO_TCP | 3,
       SKO_TCP_KEEPIDLE = SKO_TCP | 4, SKO_TCP_KEEPINTVL = SKO_TCP | 5, SKO_TCP_KEEPCNT = SKO_TCP | 6 };
/* Events. */
#define EV_RX 1      /* new data or a new datagram in the RX queue */
#define EV_TXSPACE 2 /* TX space was freed */
#define EV_ERR 4     /* an error is pending: result holds -errno (e.g. -ECONNREFUSED) */
#define EV_HUP 8      /* the connection is gone (reset, or closed both ways): no more data */
#define EV_ACCEPT 16  /* a listener: result = connections pending now (0: none any more) */
#define EV_LIB 64     /* a library-owned socket's bit was served: its readiness may have
                         changed (the library consumed RX or queued TX) */
#define EV_FIN 32     /* a stream: the peer's FIN is in the RX ring now, after its data (poll's
                         POLLRDHUP before the application has read up to it) */
#define EV_CONN 128   /* a stream: the connect its TX asked for (SBD_CONNECT) ended, alone in
                         its message: result 0 or -errno; on success family/port/addr = the
                         local address, arg2 = the peer's address | its port << 32 (both
                         network order) */

/* Streams (tcp), in short:
 *  - connect: SK_CONNECT is answered when the handshake ends (0) or fails (-ECONNREFUSED,
 *    -ETIMEDOUT, -ENETUNREACH, -EADDRINUSE...); a non-blocking connect is syscall's business
 *    (it answers the application EINPROGRESS and waits for the same answer). A socket
 *    library's non-blocking connect is an SBD_CONNECT descriptor at the head of TX instead,
 *    answered by EV_CONN.
 *  - data: TX descriptors are pieces of the stream (no address); the engine may take a
 *    piece in parts and frees its bytes when it has copied them into its own send buffers.
 *    RX descriptors are received pieces; the engine opens its receive window only as the
 *    consumer releases RX bytes (SK_RXDONE), so what the window allows always fits.
 *  - end: SBD_FIN descriptors (sockbuf.h) in TX (shutdown SHUT_WR) and RX (peer's FIN).
 *    A reset or a failure after the connection was up: SK_EV EV_ERR|EV_HUP, result -errno
 *    (-ECONNRESET, -ETIMEDOUT, -EPIPE).
 *  - SK_CLOSE on a stream: the application has let go. The engine sends what is left in
 *    TX, then FIN (or a reset with SKO_LINGER on and 0 seconds, or when RX held unread
 *    data, as Linux does) and answers once it no longer needs the buffer (all of TX copied
 *    into its send buffers; bounded: after 60 s it resets the connection and answers). The
 *    connection then finishes in the engine (FIN_WAIT, TIME_WAIT) with no socket.
 *  - SK_CLOSE on a listener drops (resets) its pending connections.
 *  - a connection arrives on a listener: the engine completes the handshake (backlog full:
 *    the SYN is ignored, as Linux does), keeps it pending with whatever data arrives, and
 *    sends SK_EV EV_ACCEPT with the pending count; syscall answers accept() by opening a
 *    new socket and SK_ACCEPT. */
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

/* An engine's socket table in ds (udp's sockets; tcp's listeners: flags SKF_STREAM|SKR_LISTEN,
 * the backlog in opts): key "s.N" under the
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
#define SKR_LISTEN 0x100
