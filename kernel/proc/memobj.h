/* Memory objects: page-granular memory that processes map, share and give away.
 * Anonymous process memory (ELF segments, stacks) is a memory object too, so one
 * reference count decides when frames go back to the allocator. */
#pragma once
#include "lib/types.h"

struct memobj {
	uint64_t npages;
	uint64_t *frames;   /* physical address of each page */
	uint32_t refs;      /* handles + mappings */
	uint32_t flags;
};
#define MO_CONTIG 1 /* physically contiguous (DMA) */

struct memobj *memobj_create(uint64_t npages, uint32_t flags);
void memobj_get(struct memobj *mo);
void memobj_put(struct memobj *mo);
extern uint64_t memobj_live; /* objects alive, for leak checks */
