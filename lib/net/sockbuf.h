/* A socket's buffers (thesis §5.4): one memory object per socket, shared by the
 * application (mapped into it at socket creation), the `syscall` server (which serves the
 * slow path: it copies for the application that makes system calls) and the socket engine
 * (udp, tcp). Two sides, each a descriptor queue (a lib/chan spsc with 64-byte slots) plus
 * a data area used as a byte ring:
 *   TX: the application side produces, the engine consumes;
 *   RX: the engine produces, the application side consumes.
 * A descriptor names its bytes by offset and length in its side's data area; the consumer
 * frees data in order by publishing `released`, the running count of bytes it is done with
 * (the producer's private `produced` minus `released` is what is in use). A message never
 * wraps: when it does not fit before the end of the area the producer skips to offset 0
 * (the skipped bytes count as used until released). So a message may be at most half the
 * area: that much always fits once the consumer has caught up.
 *
 * Layout (offsets from the object's start, all 64-byte aligned; geometry in the header):
 *   0           struct sockbuf_hdr (written once by the creator)
 *   hdr.rx_q    RX descriptor queue (spsc)       hdr.rx_rel  RX `released` (own line)
 *   hdr.tx_q    TX descriptor queue (spsc)       hdr.tx_rel  TX `released` (own line)
 *   hdr.rx_data RX data area                     hdr.tx_data TX data area
 * Trust: every side keeps its indices and the geometry privately (copied at attach) and
 * checks everything it reads from shared memory: offsets and lengths inside the area, a
 * descriptor's end never behind the previous one, `released` moving forward and never past
 * what was produced. A peer that lies gets SOCKBUF_ECORRUPT on that socket only. */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "spsc.h"

#define SOCKBUF_MAGIC 0x4b434f53u /* "SOCK" */
#define SOCKBUF_VERSION 1
#define SOCKBUF_SLOT 64
#define SOCKBUF_ECORRUPT CHAN_ECORRUPT

struct sockbuf_hdr {
	uint32_t magic, version;
	uint64_t bytes;                  /* the whole object */
	uint64_t rx_q, rx_rel, rx_data;  /* offsets */
	uint64_t tx_q, tx_rel, tx_data;
	uint32_t rx_slots, tx_slots;     /* descriptor queue sizes (powers of two) */
	uint32_t rx_size, tx_size;       /* data area bytes */
};

/* One message (a datagram, or a piece of a stream). */
struct sockbuf_desc {
	uint64_t end;       /* producer's running byte count after this message (skip included) */
	uint32_t off, len;  /* where its bytes are in the side's data area */
	uint32_t flags;     /* SBD_* */
	uint16_t family;    /* peer address: AF_INET or 0 (none: the connected peer) */
	uint16_t port;      /* network byte order */
	uint8_t addr[16];   /* IPv4 in the first 4 bytes */
	uint64_t reserved[3];
};
_Static_assert(sizeof(struct sockbuf_desc) == SOCKBUF_SLOT, "one slot");
#define SBD_TRUNC 1 /* RX: the datagram was longer than len (the rest was dropped) */
/* Streams (tcp): a descriptor is a piece of the byte stream; pieces may be consumed in part
 * by the consumer (it keeps its own offset in the oldest one). A zero-length descriptor
 * with SBD_FIN ends the stream: TX: the application shut down writing (the engine sends FIN
 * after everything before it); RX: the peer's FIN arrived after all the data before it
 * (every later read returns 0). */
#define SBD_FIN 2
/* TX of a stream not yet connected, first and zero-length: connect to the descriptor's
 * address (the socket library's non-blocking connect: sock_proto.h EV_CONN answers it). */
#define SBD_CONNECT 4

/* A side as one party sees it. */
struct sockbuf_side {
	struct spsc q;
	unsigned char *data;
	uint32_t size;
	_Atomic uint64_t *released; /* shared */
	_Atomic uint64_t *notify_at; /* shared, beside `released`: the producer's mark (below) */
	uint64_t produced;          /* producer: bytes handed out (private) */
	uint64_t consumed;          /* consumer: bytes it is done with (private) */
	bool producer;
};
struct sockbuf {
	struct sockbuf_side rx, tx;
};
enum { SB_APP = 0, SB_ENGINE = 1 }; /* roles: APP produces TX and consumes RX */

/* Bytes needed for queues of the given slots and data areas of the given sizes. */
size_t sockbuf_size(uint32_t rx_slots, uint32_t rx_size, uint32_t tx_slots, uint32_t tx_size);
/* Creator: formats mem (page aligned, len >= sockbuf_size), zeroing everything but the byte
 * rings, whose old contents are never read (the caller gives it zeroed or its own memory).
 * 0 or CHAN_EINVAL. */
int sockbuf_init(void *mem, size_t len, uint32_t rx_slots, uint32_t rx_size, uint32_t tx_slots,
		 uint32_t tx_size);
/* Either party: validates the header against len, copies the geometry. 0 or CHAN_EINVAL. */
int sockbuf_attach(struct sockbuf *sb, void *mem, size_t len, int role);

/* Producer: room for len contiguous bytes; returns a pointer to write them at (then
 * sockbuf_commit), or NULL with *err = CHAN_EAGAIN (no room now) / CHAN_EINVAL (len is over
 * half the area: it may never fit) / SOCKBUF_ECORRUPT (the consumer's `released` is impossible). */
void *sockbuf_alloc(struct sockbuf_side *s, uint32_t len, int *err);
/* Producer: publishes the message whose bytes were just written at the last alloc's
 * pointer; d's end/off/len are filled in here. 0 or CHAN_EAGAIN (queue full: nothing
 * published, alloc again later). */
int sockbuf_commit(struct sockbuf_side *s, uint32_t len, const struct sockbuf_desc *d);
/* Producer: the largest len sockbuf_alloc accepts now (a stream producer cuts its bytes to
 * it): 0 when the area or the descriptor queue is full. */
uint32_t sockbuf_room(struct sockbuf_side *s);
/* Producer: bytes and descriptors free now (for poll's POLLOUT). */
uint32_t sockbuf_space(struct sockbuf_side *s);

/* Consumer: the oldest message, copied and validated into *d; returns a pointer to its
 * bytes, or NULL with *err = CHAN_EAGAIN (empty) / SOCKBUF_ECORRUPT. */
const void *sockbuf_peek(struct sockbuf_side *s, struct sockbuf_desc *d, int *err);
/* Consumer: done with the message last peeked (frees its queue slot and bytes). */
void sockbuf_consume(struct sockbuf_side *s, const struct sockbuf_desc *d);
/* Consumer: whether a message is waiting (for poll's POLLIN). */
bool sockbuf_ready(struct sockbuf_side *s);

/* When the consumer should wake a sleeping producer after releasing space (tcp sets it on
 * its RX side; lib/sock reads it): once `released` reaches `at`. Below the mark a release
 * only marks the socket for the producer's next look, as when the producer has nothing to
 * gain from the space yet (tcp: lwIP announces a larger window only after four segments'
 * worth). 0, the value a new buffer starts with: after every release. It sits in
 * `released`'s line. A hint either way: a consumer that ignores it wakes the producer more
 * often; a producer that writes nonsense loses only its own wake-ups. */
void sockbuf_notify_at(struct sockbuf_side *s, uint64_t at);
/* Consumer: whether what it has released reaches the producer's mark. */
bool sockbuf_notify_due(struct sockbuf_side *s);

/* Consumer: the producer's published count of messages so far (a hint, e.g. for EPOLLET's
 * "new data arrived"; never used to read anything). */
uint64_t sockbuf_produced_count(struct sockbuf_side *s);

/* Stream consumer (syscall, lib/sock), keeping its offset `off` into the oldest piece: the
 * next bytes of that piece, at most want: a pointer to them and *n, into *d the piece; or
 * NULL with *err = CHAN_EAGAIN (empty), SOCKBUF_ECORRUPT (an impossible piece, or off past
 * it) or SOCKBUF_EFIN (the oldest piece is the peer's FIN: nothing after it). */
#define SOCKBUF_EFIN (-8)
const unsigned char *sockbuf_stream_peek(struct sockbuf_side *s, uint32_t off, uint64_t want,
					 struct sockbuf_desc *d, uint64_t *n, int *err);
/* Stream consumer: whether the peer's FIN is in the ring, behind whatever data (it is
 * always the last piece): POLLRDHUP before the data is read. */
bool sockbuf_stream_fin_queued(struct sockbuf_side *s);
/* Stream consumer: n bytes of piece d were read at *off: *off moves on, and a piece read to
 * its end (the FIN piece at once) is consumed: then true (RX space came free). */
bool sockbuf_stream_advance(struct sockbuf_side *s, const struct sockbuf_desc *d, uint32_t *off, uint64_t n);

/* A stream receive's reading, the one both lib/sock (in the application) and syscall (for
 * the calls that reach it) make: bytes from the ring at *off into the caller's buffer
 * through copy (to the call's byte `at`; 0 or a negative errno), until r->got reaches len,
 * the ring is empty, or the peer's FIN. SOCKBUF_READ_PEEK takes one piece and consumes
 * nothing; SOCKBUF_READ_TRUNC consumes without copying (a stream's MSG_TRUNC). In r: got
 * (in: what the call took before, out: now), fin (the FIN was reached; consumed unless
 * peeking), freed (RX space came free: the engine should hear of it), err (0, a corrupt
 * ring SOCKBUF_ECORRUPT, or the copy's error: reading stops there). */
#define SOCKBUF_READ_PEEK 1
#define SOCKBUF_READ_TRUNC 2
struct sockbuf_read {
	uint64_t got;
	bool fin, freed;
	int err;
};
typedef int (*sockbuf_copy_fn)(void *ctx, uint64_t at, const unsigned char *p, uint64_t n);
void sockbuf_stream_read(struct sockbuf_side *s, uint32_t *off, uint64_t len, int how, sockbuf_copy_fn copy,
			 void *ctx, struct sockbuf_read *r);
/* A datagram receive's reading, the same for lib/sock and syscall: the oldest message, at
 * most len bytes of it, into the caller's buffer through copy (at 0), consumed unless
 * SOCKBUF_READ_PEEK; its descriptor (the sender's address) in *d, *cut set if it did not fit
 * or the producer cut it (msg_flags' MSG_TRUNC). Returns what the call answers: the bytes
 * copied, or with SOCKBUF_READ_TRUNC the datagram's whole length; or CHAN_EAGAIN (none) or
 * SOCKBUF_ECORRUPT. *copy_err: 0, or the copy's error (the message is consumed all the
 * same, as Linux drops a datagram it could not copy). */
int64_t sockbuf_dgram_read(struct sockbuf_side *s, uint64_t len, int how, sockbuf_copy_fn copy, void *ctx,
			   struct sockbuf_desc *d, bool *cut, int *copy_err);

/* The sends' writing, the same for lib/sock and syscall. fill puts n bytes of the call's
 * data, from the call's byte `at`, at p: 0 or a negative errno. */
typedef int (*sockbuf_fill_fn)(void *ctx, uint64_t at, unsigned char *p, uint64_t n);
/* A stream send: the call's bytes from *done up to len into TX, in pieces of at most `piece`
 * bytes (0: as large as the ring allows), while there is room; *done moves on by what was
 * committed. Returns 0 (all written, or the ring is full: *done says which), or the fill's
 * error (that piece is not committed). */
int sockbuf_stream_write(struct sockbuf_side *s, uint64_t *done, uint64_t len, uint32_t piece, sockbuf_fill_fn fill,
			 void *ctx);
/* A datagram send: the whole message of len bytes through fill (at 0), committed with the
 * destination in *d. Returns 0, CHAN_EAGAIN (no room, or the descriptor queue is full),
 * CHAN_EINVAL (larger than half the ring), SOCKBUF_ECORRUPT, or the fill's error (nothing
 * committed). */
int sockbuf_dgram_write(struct sockbuf_side *s, uint64_t len, const struct sockbuf_desc *d, sockbuf_fill_fn fill,
			void *ctx);
