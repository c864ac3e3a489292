/* tcp's pure code (no lwIP, no kernel calls; host-tested in tests/unit/test_tcp_seg.c): the
 * headers of a packet ip hands up, the RX ring accounting that opens the receive window as
 * the application consumes, and the text lines of NETQ_SHOW. Everything works on private
 * copies: callers copy shared memory out first. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TS_AF_INET 2
#define TS_IPPROTO_TCP 6
#define TS_HDR_COPY 120 /* the longest IPv4 and TCP headers, options included */

/* What a received IPv4/TCP packet says about itself (addresses, ports in network order). */
struct ts_seginfo {
	uint32_t src, dst;
	uint16_t sport, dport;
	uint16_t hlen;     /* IP header bytes */
	uint16_t thlen;    /* TCP header bytes (data offset) */
	uint32_t tot_len;  /* IP total length */
};
enum ts_seg_err {
	TS_SEG_OK = 0,
	TS_SEG_SHORT = -1,    /* fewer bytes than the headers or the IP length need */
	TS_SEG_VERSION = -2,  /* not IPv4, or an IP header length below 20 */
	TS_SEG_PROTO = -3,    /* not TCP */
	TS_SEG_FRAGMENT = -4, /* a fragment (ip reassembles before handing up) */
	TS_SEG_DOFF = -5      /* TCP data offset below 5 or past the IP payload */
};
/* Checks the first `have` bytes (a private copy, at most TS_HDR_COPY) of a packet of `len`
 * bytes. TS_SEG_OK and *info filled, or an error. */
int ts_tcp_check(const uint8_t *hdr, size_t have, size_t len, struct ts_seginfo *info);

/* The RX ring in stream bytes. The ring counts `produced` and `released` in its own bytes,
 * which include the skips (a message that does not fit before the area's end starts at 0;
 * sockbuf.h). Skips not yet released are recorded (the end of the message after each, its
 * length); given the consumer's `released`, returns the stream bytes the consumer is done
 * with (data = stream bytes ever placed) and drops the records it passed. */
struct ts_ring {
	uint64_t produced, data;
	uint32_t n;
	uint64_t end[8];
	uint32_t skip[8];
};
uint64_t ts_ring_consumed(struct ts_ring *r, uint64_t released);
/* A message of len stream bytes was committed and the ring's produced moved from `before` to
 * `after`: records its skip (false if the record table is full: the caller then counts the
 * skip as consumed at once, so the window opens a little early, never late). */
bool ts_ring_commit(struct ts_ring *r, uint64_t before, uint64_t after, uint32_t len);

/* An ACK war's ACK (rx.c's inpacket hook). lwIP answers every segment without data whose
 * sequence number lies outside its receive window with an ACK — and with a zero window every
 * sequence number does. When both ends of a connection have zero windows and one has sent a
 * window probe (its next sequence number now one past the other's window), each answers the
 * other's ACK with its own, forever: over loopback, with both applications slow to read, tcp
 * spent its whole CPU on that. Such a segment is recognised here: flags ACK (PSH allowed)
 * only, no data, its sequence number outside [rcv_nxt, rcv_nxt + rcv_wnd), and nothing new
 * in it (its ACK and window are what we know already); the caller lets one through per
 * TS_OOW_ACK_NS, as Linux rate-limits its answers to out-of-window segments. */
#define TS_OOW_ACK_NS 500000000ull /* Linux's tcp_invalid_ratelimit default */
struct ts_oow {
	uint8_t flags;         /* the TCP header's flags byte */
	uint32_t datalen;      /* payload bytes */
	uint32_t seqno, ackno; /* host order */
	uint32_t wnd;          /* the advertised window, scaled */
	uint32_t rcv_nxt, rcv_wnd, lastack, snd_wnd; /* the connection's */
};
bool ts_oow_dup_ack(const struct ts_oow *o);

/* Dotted quad of a network-order address (buf >= 16 bytes). */
void ts_fmt_ip4(char *buf, uint32_t addr);
/* One line of NETQ_SHOW NQ_SOCKETS, at most NETQ_TEXT (56) bytes:
 * "slot sock state local remote rxq txq" (sock "-" for a pending or closed connection). */
struct ts_connview {
	int slot;              /* -1: a connection no socket has any more */
	uint32_t sock;
	const char *state;
	uint32_t laddr, raddr; /* network order */
	uint16_t lport, rport; /* host order */
	uint32_t rxq, txq;
};
void ts_fmt_conn(char *buf, size_t n, const struct ts_connview *v);
/* lwIP's tcp_state number as a short name. */
const char *ts_state_name(int state);

/* Receive offload (rx.c, as Linux's GRO): consecutive in-order data segments of one
 * connection that arrive in one batch from ip become one segment for lwIP. */
#define TS_GRO_SEGS 32      /* segments merged into one at most */
#define TS_GRO_BYTES 65535  /* lwIP's pbuf lengths are 16-bit: headers and payload */
/* The ones' complement sum of a packet's bytes, 16-bit words in memory order (folded,
 * not complemented), added to `sum`. */
uint32_t ts_sum16(const uint8_t *b, size_t n, uint32_t sum);
/* The packet's IP header and TCP checksums are right (b: the whole packet, tot_len bytes of
 * IP as *i says). */
bool ts_csum_ok(const uint8_t *b, const struct ts_seginfo *i);
/* May the packet (headers h, a private copy) be merged at all: no IP options, flags ACK and
 * maybe PSH only, some payload. */
bool ts_gro_candidate(const uint8_t *h, const struct ts_seginfo *i);
/* The merged segment so far: its first packet's headers (patched by ts_gro_finish), what it
 * holds. */
struct ts_gro {
	uint8_t hdr[TS_HDR_COPY];
	struct ts_seginfo si;
	uint32_t n;        /* segments */
	uint32_t payload;  /* their bytes */
	uint32_t next_seq; /* host order: the sequence number that continues it */
	uint8_t last_flags, last_wnd[2];
};
/* Starts a merged segment with candidate h (its payload: len bytes). */
void ts_gro_start(struct ts_gro *g, const uint8_t *h, const struct ts_seginfo *i, uint32_t len);
/* Candidate h (len bytes of payload) continues g: then it is counted in g, true. */
bool ts_gro_append(struct ts_gro *g, const uint8_t *h, const struct ts_seginfo *i, uint32_t len);
/* g's headers for lwIP: the IP length of the whole, the IP checksum again, the last
 * segment's window and PSH. */
void ts_gro_finish(struct ts_gro *g);
