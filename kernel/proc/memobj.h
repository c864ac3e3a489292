/* Memory objects: page-granular memory that processes map, share and give away.
 * Anonymous process memory (ELF segments, stacks) is a memory object too, so one
 * reference count decides when frames go back to the allocator. */
#pragma once
#include "lib/types.h"

struct memobj {
	uint64_t npages;
	uint64_t *frames;   /* physical address of each page; 0: not yet made (MO_LAZY) */
	uint32_t refs;      /* handles + mappings */
	uint32_t granted;   /* handles made by grants (memcall.c): its creator's destroy looks
	                       for them in every process only while there are some */
	uint32_t flags;
};
#define MO_CONTIG 1 /* physically contiguous (DMA) */
#define MO_LAZY 2   /* pages are made (zeroed) by memobj_fill, not at creation: for reserved
                     * Linux memory (PROT_NONE), which glibc maps by the 128 MiB, and
                     * MOF_LAZY objects, whose pages a first touch makes (proc/demand.c) */

struct memobj *memobj_create(uint64_t npages, uint32_t flags);
/* Makes the missing pages of [first, first + n) (zeroed); 0 or -KE_NOMEM (those made stay). */
int memobj_fill(struct memobj *mo, uint64_t first, uint64_t n);
void memobj_get(struct memobj *mo);
void memobj_put(struct memobj *mo);
extern uint64_t memobj_live; /* objects alive, for leak checks */
