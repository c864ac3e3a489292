/* Pools: an owner-written shared area of fixed-size buffers, named across address spaces by
 * rich pointers (README.md, "Pools"). The owner allocates and frees; readers map the area
 * read-only and check every rich pointer against the bounds they validated at attach. A
 * reader gives a buffer back by sending its rich pointer on a return queue (an spsc); the
 * owner frees it. The free list is in owner-private memory, so no reader can corrupt it. */
#pragma once
#include "spsc.h"

#define POOL_MAGIC 0x4c4f4f50u /* "POOL" */

struct chan_ptr {
	uint32_t pool_id;
	uint32_t offset; /* from the start of the pool's buffer area */
	uint32_t len;
};

/* The shared header, written by the owner at init; buffers follow it. */
struct pool_shared {
	_Alignas(CHAN_CACHE_LINE) uint32_t magic;
	uint32_t pool_id, buf_size, nbufs;
};
#define POOL_HDR_SIZE sizeof(struct pool_shared)

/* Bounds of a pool as one side knows them, copied out of shared memory once. */
struct pool_view {
	unsigned char *bufs;
	uint32_t pool_id, buf_size, nbufs;
};

/* The owner's state; free_stack and used are private memory of POOL_PRIV_SIZE(nbufs). */
struct pool_owner {
	struct pool_view v;
	uint32_t *free_stack;
	uint8_t *used;
	uint32_t nfree;
};
#define POOL_PRIV_SIZE(nbufs) ((size_t)(nbufs) * (sizeof(uint32_t) + 1))

/* Owner: formats mem (64-byte aligned) into as many buf_size buffers as fit, at most nbufs.
 * priv is private memory of at least POOL_PRIV_SIZE(nbufs), 4-byte aligned. Returns the
 * buffer count or CHAN_EINVAL. */
long pool_init(struct pool_owner *o, uint32_t pool_id, void *mem, size_t len, uint32_t buf_size,
	       uint32_t nbufs, void *priv, size_t priv_len);
/* Owner: a free buffer for len bytes; 0, CHAN_EAGAIN (none free) or CHAN_EINVAL. */
int pool_alloc(struct pool_owner *o, uint32_t len, struct chan_ptr *out);
/* Owner: frees the buffer p names. 0, CHAN_EINVAL (not a buffer of this pool), CHAN_EDOUBLE. */
int pool_free(struct pool_owner *o, struct chan_ptr p);
/* Owner: drains a return queue (slots of at least sizeof(struct chan_ptr)), freeing each
 * pointer. Returns the number freed; *rejected (if given) counts the bad ones. */
long pool_reclaim(struct pool_owner *o, struct spsc *ret, uint32_t *rejected);

/* Reader: validates the owner's header against len; 0 or CHAN_EINVAL. */
int pool_attach(struct pool_view *v, const void *mem, size_t len);
/* Either side: the bytes p names, or NULL if p is not inside one buffer of this pool. */
void *pool_resolve(const struct pool_view *v, struct chan_ptr p);
/* Reader: gives the buffer back to the owner; the spsc_push result. */
int pool_return(struct spsc *ret, struct chan_ptr p);
