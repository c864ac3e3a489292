#include "mm/heap.h"
#include "mm/pmm.h"
#include "mm/vmm.h"
#include "lib/spinlock.h"
#include "lib/string.h"
#include "core/panic.h"

/* Every heap page (slab or the first page of a large block) starts with this header. */
struct page_hdr {
	uint32_t magic;
	uint32_t size;   /* object size (slab) or number of frames (large) */
	uint32_t inuse;  /* objects handed out from this slab page */
	uint32_t pad;
	void *free;      /* slab free list */
	struct page_hdr *next; /* next slab page of the same class with free objects */
	uint64_t pad2[4];
};
_Static_assert(sizeof(struct page_hdr) == 64, "heap header is one cache line");

#define SLAB_MAGIC 0x51ab51abu
#define LARGE_MAGIC 0x1a59e000u
#define NCLASSES 8 /* 16, 32, ..., 2048 */

static struct page_hdr *partial[NCLASSES];
static spinlock_t lock = SPINLOCK_INIT;

static int class_of(size_t size)
{
	int c = 0;
	size_t s = 16;
	while (s < size) {
		s <<= 1;
		c++;
	}
	return c;
}

static struct page_hdr *new_slab(uint32_t objsize)
{
	uint64_t pa = pmm_alloc();
	if (!pa)
		return NULL;
	struct page_hdr *h = phys_to_virt(pa);
	memset(h, 0, sizeof(*h));
	h->magic = SLAB_MAGIC;
	h->size = objsize;
	uintptr_t first = (uintptr_t)h + sizeof(*h); /* objects are 16-byte aligned at least */
	void **link = &h->free;
	for (uintptr_t o = first; o + objsize <= (uintptr_t)h + PAGE_SIZE; o += objsize) {
		*link = (void *)o;
		link = (void **)o;
	}
	*link = NULL;
	return h;
}

void *kmalloc(size_t size)
{
	if (size == 0)
		size = 1;
	if (size > 2048) {
		uint64_t frames = ALIGN_UP(size + sizeof(struct page_hdr), PAGE_SIZE) / PAGE_SIZE;
		uint64_t pa = pmm_alloc_contig(frames, PAGE_SIZE, 0);
		if (!pa)
			return NULL;
		struct page_hdr *h = phys_to_virt(pa);
		memset(h, 0, frames * PAGE_SIZE);
		h->magic = LARGE_MAGIC;
		h->size = (uint32_t)frames;
		return h + 1;
	}
	int c = class_of(size);
	uint64_t f = spin_lock_irqsave(&lock);
	struct page_hdr *h = partial[c];
	if (!h) {
		h = new_slab(16u << c);
		if (!h) {
			spin_unlock_irqrestore(&lock, f);
			return NULL;
		}
		partial[c] = h;
	}
	void *obj = h->free;
	h->free = *(void **)obj;
	h->inuse++;
	if (!h->free)
		partial[c] = h->next; /* full: drop from the partial list */
	spin_unlock_irqrestore(&lock, f);
	memset(obj, 0, 16u << c);
	return obj;
}

void *kzalloc(size_t size) { return kmalloc(size); }

void kfree(void *p)
{
	if (!p)
		return;
	struct page_hdr *h = (struct page_hdr *)ALIGN_DOWN((uintptr_t)p, PAGE_SIZE);
	if (h->magic == LARGE_MAGIC && p == (void *)(h + 1)) {
		uint32_t frames = h->size;
		h->magic = 0;
		pmm_free_contig(virt_to_phys(h), frames);
		return;
	}
	if (h->magic != SLAB_MAGIC)
		panic("kfree: %p is not a heap object", p);
	int c = class_of(h->size);
	uint64_t f = spin_lock_irqsave(&lock);
	bool was_full = h->free == NULL;
	*(void **)p = h->free;
	h->free = p;
	h->inuse--;
	if (was_full) {
		h->next = partial[c];
		partial[c] = h;
	}
	/* An empty page goes back to the frame allocator unless it is the class's last one. */
	bool release = h->inuse == 0 && !(partial[c] == h && !h->next);
	if (release) {
		struct page_hdr **pp = &partial[c];
		while (*pp != h)
			pp = &(*pp)->next;
		*pp = h->next;
		h->magic = 0;
	}
	spin_unlock_irqrestore(&lock, f);
	if (release)
		pmm_free(virt_to_phys(h));
}
