/* Single-producer/single-consumer queue in shared memory (NewtOS channels, README.md).
 * Fixed-size slots; indices run freely and are masked on use. Lock-free, and no atomic
 * read-modify-write: each side only stores its own index (release) and loads the other's
 * (acquire). The peer may be malicious: nothing it writes can make us touch memory outside
 * the region we attached, an impossible index is reported as CHAN_ECORRUPT. */
#pragma once
#include <stdatomic.h>
#include "chan.h"

#define SPSC_MAGIC 0x4e414843u /* "CHAN" */
#define SPSC_VERSION 1
#define SPSC_MIN_SLOT 8
#define SPSC_MAX_SLOT 4096
#define SPSC_MAX_SLOTS (1u << 24)

enum spsc_role { SPSC_PRODUCER = 1, SPSC_CONSUMER = 2 };

/* The shared header: one cache line each for the constants, the producer's index, the
 * consumer's index and the doorbell, so neither side writes a line the other writes. */
struct spsc_shared {
	_Alignas(CHAN_CACHE_LINE) uint32_t magic; /* _Alignas binds to one declarator only */
	uint32_t version, slot_size, nslots;
	_Alignas(CHAN_CACHE_LINE) _Atomic uint64_t head; /* written by the producer only */
	_Alignas(CHAN_CACHE_LINE) _Atomic uint64_t tail; /* written by the consumer only */
	/* Doorbell line (doorbell.h): sleeping written by the consumer, bell by the producer. */
	_Alignas(CHAN_CACHE_LINE) _Atomic uint32_t sleeping;
	_Atomic uint64_t bell;
	/* the slot array follows */
};
#define SPSC_HDR_SIZE sizeof(struct spsc_shared)

/* One side's private handle. Geometry is copied at attach and never re-read from shared
 * memory; our own index lives here too, so the peer cannot move it. */
struct spsc {
	struct spsc_shared *sh;
	unsigned char *slots;
	uint32_t slot_size, nslots;
	uint64_t mine;   /* our index: head for the producer, tail for the consumer */
	uint64_t theirs; /* last value of the peer's index we read */
	int role;
};

/* Bytes a channel of this geometry needs (0 if the geometry is invalid). */
size_t spsc_size(uint32_t slot_size, uint32_t nslots);
/* Formats a channel in mem (64-byte aligned); returns bytes used or CHAN_EINVAL. */
long spsc_init(void *mem, size_t len, uint32_t slot_size, uint32_t nslots);
/* Validates the header and binds a handle for one side; 0 or CHAN_EINVAL/CHAN_ECORRUPT. */
int spsc_attach(struct spsc *q, void *mem, size_t len, int role);

/* Producer: copies slot_size bytes (push) or len <= slot_size bytes, zero-filling the rest
 * (push_part). 0, CHAN_EAGAIN when full (never waits), CHAN_ECORRUPT. */
int spsc_push(struct spsc *q, const void *msg);
int spsc_push_part(struct spsc *q, const void *msg, size_t len);
/* Consumer: copies slot_size bytes (pop) or the first len bytes (pop_part); peek copies
 * without consuming. 0, CHAN_EAGAIN when empty, CHAN_ECORRUPT. */
int spsc_pop(struct spsc *q, void *out);
int spsc_pop_part(struct spsc *q, void *out, size_t len);
int spsc_peek(struct spsc *q, void *out);
/* Either side: messages queued as far as this side knows, or CHAN_ECORRUPT. Reads the
 * peer's index afresh. */
long spsc_count(struct spsc *q);
/* Consumer: a copy of the newest published message, nothing consumed (0, CHAN_EAGAIN when
 * empty, CHAN_ECORRUPT); the producer does not reuse its slot before we consume it. */
int spsc_peek_newest(struct spsc *q, void *out);
