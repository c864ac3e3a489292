#include "proc/memobj.h"
#include "axolotl/kcall.h"
#include "mm/heap.h"
#include "mm/pmm.h"
#include "mm/vmm.h"
#include "lib/string.h"

uint64_t memobj_live;

struct memobj *memobj_create(uint64_t npages, uint32_t flags)
{
	if (!npages || npages > (1ull << 20)) /* 4 GiB cap on one object */
		return NULL;
	struct memobj *mo = kzalloc(sizeof(*mo));
	if (!mo)
		return NULL;
	mo->frames = kzalloc(npages * sizeof(uint64_t));
	if (!mo->frames)
		goto fail;
	mo->npages = npages;
	mo->flags = flags;
	if (flags & MO_CONTIG) {
		uint64_t pa = pmm_alloc_contig(npages, PAGE_SIZE, 0);
		if (!pa)
			goto fail;
		for (uint64_t i = 0; i < npages; i++)
			mo->frames[i] = pa + i * PAGE_SIZE;
		memset(phys_to_virt(pa), 0, npages * PAGE_SIZE);
	} else if (!(flags & MO_LAZY)) {
		for (uint64_t i = 0; i < npages; i++) {
			mo->frames[i] = pmm_alloc_zeroed();
			if (!mo->frames[i]) {
				for (uint64_t j = 0; j < i; j++)
					pmm_free(mo->frames[j]);
				goto fail;
			}
		}
	}
	mo->refs = 1;
	memobj_live++;
	return mo;
fail:
	kfree(mo->frames);
	kfree(mo);
	return NULL;
}

int memobj_fill(struct memobj *mo, uint64_t first, uint64_t n)
{
	for (uint64_t i = first; i < first + n && i < mo->npages; i++)
		if (!mo->frames[i] && !(mo->frames[i] = pmm_alloc_zeroed()))
			return -KE_NOMEM;
	return 0;
}

void memobj_get(struct memobj *mo) { mo->refs++; }

void memobj_put(struct memobj *mo)
{
	if (!mo || --mo->refs)
		return;
	for (uint64_t i = 0; i < mo->npages; i++)
		if (mo->frames[i])
			pmm_free(mo->frames[i]);
	kfree(mo->frames);
	kfree(mo);
	memobj_live--;
}
