/* A split virtqueue (virtio 1.0, §2.4), the driver's side: descriptor table, available
 * ring, used ring, in memory the caller gives (the device's bus addresses are the caller's
 * business). Portable C, no kernel calls: the same code runs in the driver and in the host
 * unit test (tests/unit/test_virtq.c).
 *
 * Nothing the device writes is trusted: a used element naming a descriptor that is not the
 * head of a chain in flight, a used index that runs ahead of what was made available, or a
 * length longer than the chain's writable buffers is an error (VQ_EBAD*), never an index
 * into our arrays. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#define VQ_MAX 256 /* entries; the device's queue size is clamped to this */

#define VQ_DESC_F_NEXT 1
#define VQ_DESC_F_WRITE 2
#define VQ_USED_F_NO_NOTIFY 1

struct virtq_desc {
	uint64_t addr;
	uint32_t len;
	uint16_t flags;
	uint16_t next;
};
struct virtq_avail {
	uint16_t flags;
	uint16_t idx;
	uint16_t ring[];
};
struct virtq_used_elem {
	uint32_t id;
	uint32_t len;
};
struct virtq_used {
	uint16_t flags;
	uint16_t idx;
	struct virtq_used_elem ring[];
};

/* Bytes of each part for a queue of size n (the used ring 4-aligned, the others 16/2). */
#define VQ_DESC_BYTES(n) (16u * (n))
#define VQ_AVAIL_BYTES(n) (6u + 2u * (n))
#define VQ_USED_BYTES(n) (6u + 8u * (n))

struct virtq_buf {
	uint64_t addr;
	uint32_t len;
	bool write; /* the device writes it (RX) */
};

struct virtq {
	uint16_t size; /* a power of two, 1..VQ_MAX */
	volatile struct virtq_desc *desc;
	volatile struct virtq_avail *avail;
	volatile struct virtq_used *used;
	uint16_t free_head, nfree;
	uint16_t avail_idx;  /* next available slot (what avail->idx becomes at publish) */
	uint16_t used_seen;  /* used entries consumed */
	uint16_t told;       /* avail->idx the device was last notified of */
	uint16_t inflight;   /* chains made available and not yet used */
	uint16_t peeked;     /* the head virtq_peek found */
	uint16_t next[VQ_MAX];       /* our links (free list and chains): the table's are the device's to read only */
	uint8_t chain_n[VQ_MAX];     /* descriptors in the chain headed here, 0: not a head in flight */
	uint32_t chain_wlen[VQ_MAX]; /* its writable bytes: the most the device may say it wrote */
	uint64_t token[VQ_MAX];      /* the caller's word for the chain */
};

enum { VQ_OK = 0, VQ_EFULL = -1, VQ_EBADIDX = -2, VQ_EBADID = -3, VQ_EBADLEN = -4, VQ_EINVAL = -5 };

/* Formats the queue over the three parts (zeroed here); size must be a power of two <= VQ_MAX.
 * Again after every reset of the device: what was in flight is forgotten. */
int virtq_init(struct virtq *q, uint16_t size, void *desc, void *avail, void *used);
/* Free descriptors. */
uint16_t virtq_space(const struct virtq *q);
/* Chains n (1..255) buffers (read-only ones first, as the device reads them in order) and makes the
 * chain available; the device sees it at the next virtq_publish. Its head descriptor's
 * index (q->free_head before the call: a driver keeps per-chain data by it), or VQ_EFULL
 * without room, VQ_EINVAL for n out of range. */
int virtq_add(struct virtq *q, const struct virtq_buf *b, unsigned n, uint64_t token);
/* Makes what virtq_add queued visible (avail->idx); true if the device should be notified
 * (something new, and the device did not ask to be left alone). */
bool virtq_publish(struct virtq *q);
/* The next used chain: 1 with its token and the length the device wrote, 0 if none, or a
 * negative VQ_EBAD*: VQ_EBADLEN still returns the token and frees the chain (drop its
 * data); VQ_EBADIDX and VQ_EBADID mean the queue can no longer be trusted (reset it). */
int virtq_get(struct virtq *q, uint64_t *token, uint32_t *len);
/* virtq_get in two steps, for a caller that may have nowhere to put the result yet:
 * virtq_peek answers the same without consuming; virtq_pop consumes what it found (after
 * 1 or VQ_EBADLEN). */
int virtq_peek(struct virtq *q, uint64_t *token, uint32_t *len);
void virtq_pop(struct virtq *q);
