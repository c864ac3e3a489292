/* The pool of message-signalled interrupt vectors (proc/msi.c): which of VEC_MSI_COUNT
 * vectors are taken. Pure bookkeeping, tested by the msi_vectors self-test. Allocation goes
 * round from after the last vector handed out, so a vector just freed (a driver that died
 * with its device still programmed to send it) is the last to be given again. */
#pragma once
#include "lib/types.h"

struct msi_pool {
	uint64_t used; /* bit i: vector i of the pool is bound */
	uint32_t size; /* vectors in the pool (<= 64) */
	uint32_t next; /* where the next search starts */
};

static inline uint32_t msi_pool_free_count(const struct msi_pool *p)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < p->size; i++)
		n += !(p->used >> i & 1);
	return n;
}

/* A free vector's index, taken; -1 if none is left. */
static inline int msi_pool_alloc(struct msi_pool *p)
{
	for (uint32_t k = 0; k < p->size; k++) {
		uint32_t i = (p->next + k) % p->size;
		if (!(p->used >> i & 1)) {
			p->used |= 1ull << i;
			p->next = (i + 1) % p->size;
			return (int)i;
		}
	}
	return -1;
}

static inline void msi_pool_free(struct msi_pool *p, uint32_t i)
{
	if (i < p->size)
		p->used &= ~(1ull << i);
}

/* The message a vector's entry carries: physical destination apic_id (< 256), fixed
 * delivery, edge (the xAPIC-compatible format; an x2APIC takes it the same way). */
static inline uint64_t msi_address(uint32_t apic_id) { return 0xfee00000ull | (uint64_t)(apic_id & 0xff) << 12; }
static inline uint32_t msi_data(uint32_t vector) { return vector & 0xff; }
