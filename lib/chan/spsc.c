/* Single-producer/single-consumer queue (spsc.h). */
#include "spsc.h"

size_t spsc_size(uint32_t slot_size, uint32_t nslots)
{
	if (!chan_is_pow2(slot_size) || slot_size < SPSC_MIN_SLOT || slot_size > SPSC_MAX_SLOT ||
	    !chan_is_pow2(nslots) || nslots > SPSC_MAX_SLOTS)
		return 0;
	return SPSC_HDR_SIZE + (size_t)slot_size * nslots; /* at most 2^36: no overflow */
}

long spsc_init(void *mem, size_t len, uint32_t slot_size, uint32_t nslots)
{
	size_t need = spsc_size(slot_size, nslots);
	if (!mem || ((uintptr_t)mem & (CHAN_CACHE_LINE - 1)) || !need || need > len)
		return CHAN_EINVAL;
	struct spsc_shared *sh = mem;
	memset(sh, 0, SPSC_HDR_SIZE);
	sh->slot_size = slot_size;
	sh->nslots = nslots;
	sh->version = SPSC_VERSION;
	atomic_store_explicit(&sh->head, 0, memory_order_relaxed);
	atomic_store_explicit(&sh->tail, 0, memory_order_relaxed);
	atomic_store_explicit(&sh->sleeping, 0, memory_order_relaxed);
	atomic_store_explicit(&sh->bell, 0, memory_order_relaxed);
	/* The magic last: a peer polling for it sees a complete header. */
	atomic_thread_fence(memory_order_release);
	*(volatile uint32_t *)&sh->magic = SPSC_MAGIC;
	return (long)need;
}

/* The distance head - tail of a sane channel is at most nslots; unsigned arithmetic makes
 * any index moved backwards or too far forwards look huge. */
static bool spsc_sane(const struct spsc *q, uint64_t head, uint64_t tail)
{
	return head - tail <= q->nslots;
}

int spsc_attach(struct spsc *q, void *mem, size_t len, int role)
{
	if (!q || !mem || ((uintptr_t)mem & (CHAN_CACHE_LINE - 1)) || len < SPSC_HDR_SIZE ||
	    (role != SPSC_PRODUCER && role != SPSC_CONSUMER))
		return CHAN_EINVAL;
	struct spsc_shared *sh = mem;
	/* Read each field once: the peer may change them while we look. */
	uint32_t magic = *(volatile uint32_t *)&sh->magic;
	atomic_thread_fence(memory_order_acquire);
	uint32_t version = *(volatile uint32_t *)&sh->version;
	uint32_t slot_size = *(volatile uint32_t *)&sh->slot_size;
	uint32_t nslots = *(volatile uint32_t *)&sh->nslots;
	size_t need = spsc_size(slot_size, nslots);
	if (magic != SPSC_MAGIC || version != SPSC_VERSION || !need || need > len)
		return CHAN_EINVAL;
	q->sh = sh;
	q->slots = (unsigned char *)mem + SPSC_HDR_SIZE;
	q->slot_size = slot_size;
	q->nslots = nslots;
	q->role = role;
	uint64_t head = atomic_load_explicit(&sh->head, memory_order_acquire);
	uint64_t tail = atomic_load_explicit(&sh->tail, memory_order_acquire);
	if (!spsc_sane(q, head, tail))
		return CHAN_ECORRUPT;
	q->mine = role == SPSC_PRODUCER ? head : tail;
	q->theirs = role == SPSC_PRODUCER ? tail : head;
	return 0;
}

static inline unsigned char *slot(const struct spsc *q, uint64_t idx)
{
	return q->slots + (size_t)(idx & (q->nslots - 1)) * q->slot_size;
}

/* Producer: is there room at q->mine? Reads the consumer's index only when the cached one
 * says full. The consumer's tail may only move forwards, up to our head. */
static int spsc_room(struct spsc *q)
{
	uint64_t head = q->mine;
	if (head - q->theirs < q->nslots)
		return 0;
	uint64_t tail = atomic_load_explicit(&q->sh->tail, memory_order_acquire);
	if (tail - q->theirs > head - q->theirs)
		return CHAN_ECORRUPT;
	q->theirs = tail;
	return head - tail < q->nslots ? 0 : CHAN_EAGAIN;
}

int spsc_push_part(struct spsc *q, const void *msg, size_t len)
{
	if (q->role != SPSC_PRODUCER || len > q->slot_size)
		return CHAN_EINVAL;
	int r = spsc_room(q);
	if (r)
		return r;
	unsigned char *s = slot(q, q->mine);
	memcpy(s, msg, len);
	if (len < q->slot_size)
		memset(s + len, 0, q->slot_size - len);
	/* Release: the slot's contents are visible before the new head. */
	atomic_store_explicit(&q->sh->head, ++q->mine, memory_order_release);
	return 0;
}

int spsc_push(struct spsc *q, const void *msg)
{
	return spsc_push_part(q, msg, q->slot_size);
}

/* Consumer: is there a message at q->mine? Reads the producer's index only when the cached
 * one says empty. The head may only move forwards, at most nslots past our tail. */
static int spsc_avail(struct spsc *q)
{
	uint64_t tail = q->mine;
	if (q->theirs != tail)
		return 0;
	uint64_t head = atomic_load_explicit(&q->sh->head, memory_order_acquire);
	if (!spsc_sane(q, head, tail))
		return CHAN_ECORRUPT;
	q->theirs = head;
	return head != tail ? 0 : CHAN_EAGAIN;
}

static int spsc_take(struct spsc *q, void *out, size_t len, bool consume)
{
	if (q->role != SPSC_CONSUMER || len > q->slot_size)
		return CHAN_EINVAL;
	int r = spsc_avail(q);
	if (r)
		return r;
	memcpy(out, slot(q, q->mine), len);
	/* Release: we are done reading the slot before the producer may reuse it. */
	if (consume)
		atomic_store_explicit(&q->sh->tail, ++q->mine, memory_order_release);
	return 0;
}

int spsc_pop_part(struct spsc *q, void *out, size_t len) { return spsc_take(q, out, len, true); }
int spsc_pop(struct spsc *q, void *out) { return spsc_take(q, out, q->slot_size, true); }
int spsc_peek(struct spsc *q, void *out) { return spsc_take(q, out, q->slot_size, false); }

int spsc_peek_newest(struct spsc *q, void *out)
{
	if (q->role != SPSC_CONSUMER)
		return CHAN_EINVAL;
	long n = spsc_count(q); /* validates the producer's head */
	if (n <= 0)
		return n < 0 ? (int)n : CHAN_EAGAIN;
	memcpy(out, slot(q, q->mine + (uint64_t)n - 1), q->slot_size);
	return 0;
}

long spsc_count(struct spsc *q)
{
	if (q->role == SPSC_PRODUCER) {
		uint64_t tail = atomic_load_explicit(&q->sh->tail, memory_order_acquire);
		if (tail - q->theirs > q->mine - q->theirs)
			return CHAN_ECORRUPT;
		q->theirs = tail;
		return (long)(q->mine - tail);
	}
	uint64_t head = atomic_load_explicit(&q->sh->head, memory_order_acquire);
	if (!spsc_sane(q, head, q->mine) || head - q->theirs > q->nslots + (q->mine - q->theirs))
		return CHAN_ECORRUPT;
	q->theirs = head;
	return (long)(head - q->mine);
}
