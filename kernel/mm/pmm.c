/* Physical frame allocator: a bitmap over all frames up to the highest usable address,
 * placed in the first usable region that fits; free = usable per the memory map, minus
 * low memory, the kernel image, the boot information, modules and the bitmap itself. */
#include "mm/pmm.h"
#include "mm/frame_bitmap.h"
#include "mm/vmm.h"
#include "boot/bootinfo.h"
#include "lib/spinlock.h"
#include "lib/string.h"
#include "core/panic.h"

extern char _kernel_phys_start[], _kernel_phys_end[];

static struct frame_bitmap bm;
static spinlock_t lock = SPINLOCK_INIT;
static uint64_t usable_bytes, max_phys;
static struct phys_range reserved[8 + MAX_MODULES];
static size_t nreserved;

/* The boot page tables only reach the first 1 GiB, so the bitmap must live below it. */
#define EARLY_LIMIT GiB(1)

static void reserve(uint64_t start, uint64_t end, const char *what)
{
	start = ALIGN_DOWN(start, PAGE_SIZE);
	end = ALIGN_UP(end, PAGE_SIZE);
	if (nreserved < ARRAY_SIZE(reserved))
		reserved[nreserved++] = (struct phys_range){ start, end, what };
}

static bool overlaps_reserved(uint64_t start, uint64_t end)
{
	for (size_t i = 0; i < nreserved; i++)
		if (start < reserved[i].end && reserved[i].start < end)
			return true;
	return false;
}

void pmm_init(const struct boot_info *bi)
{
	reserve(0, MiB(1), "low memory");
	reserve((uint64_t)_kernel_phys_start, (uint64_t)_kernel_phys_end, "kernel");
	reserve(bi->mbi_phys, bi->mbi_phys + bi->mbi_size, "boot info");
	for (uint32_t i = 0; i < bi->nmods; i++)
		reserve(bi->mods[i].start, bi->mods[i].end, "module");

	for (uint32_t i = 0; i < bi->nmem; i++) {
		const struct mem_region *r = &bi->mem[i];
		if (r->type != MEM_USABLE)
			continue;
		usable_bytes += r->len;
		max_phys = MAX(max_phys, r->base + r->len);
	}
	if (!max_phys)
		panic("no usable memory in the boot memory map");

	uint64_t nframes = max_phys / PAGE_SIZE;
	uint64_t bytes = ALIGN_UP((nframes + 63) / 64 * 8, PAGE_SIZE);
	uint64_t where = 0;
	for (uint32_t i = 0; i < bi->nmem && !where; i++) {
		const struct mem_region *r = &bi->mem[i];
		if (r->type != MEM_USABLE)
			continue;
		uint64_t s = ALIGN_UP(r->base, PAGE_SIZE), e = ALIGN_DOWN(r->base + r->len, PAGE_SIZE);
		for (uint64_t a = s; a + bytes <= e && a + bytes <= EARLY_LIMIT; a += PAGE_SIZE) {
			if (!overlaps_reserved(a, a + bytes)) {
				where = a;
				break;
			}
		}
	}
	if (!where)
		panic("no room below 1 GiB for the frame bitmap (%llu KiB)", (unsigned long long)bytes / 1024);
	reserve(where, where + bytes, "frame bitmap");

	fbm_init(&bm, phys_to_virt(where), nframes);
	for (uint32_t i = 0; i < bi->nmem; i++) {
		const struct mem_region *r = &bi->mem[i];
		if (r->type == MEM_USABLE)
			fbm_set_free(&bm, ALIGN_UP(r->base, PAGE_SIZE) / PAGE_SIZE,
				     ALIGN_DOWN(r->base + r->len, PAGE_SIZE) / PAGE_SIZE);
	}
	/* Usable regions may overlap each other or unusable ones in buggy maps: the stricter wins. */
	for (uint32_t i = 0; i < bi->nmem; i++) {
		const struct mem_region *r = &bi->mem[i];
		if (r->type != MEM_USABLE)
			fbm_set_used(&bm, r->base / PAGE_SIZE, ALIGN_UP(r->base + r->len, PAGE_SIZE) / PAGE_SIZE);
	}
	for (size_t i = 0; i < nreserved; i++)
		fbm_set_used(&bm, reserved[i].start / PAGE_SIZE, reserved[i].end / PAGE_SIZE);
}

uint64_t pmm_alloc(void)
{
	uint64_t f = spin_lock_irqsave(&lock);
	uint64_t frame = fbm_alloc(&bm);
	spin_unlock_irqrestore(&lock, f);
	return frame == UINT64_MAX ? 0 : frame * PAGE_SIZE;
}

uint64_t pmm_alloc_zeroed(void)
{
	uint64_t p = pmm_alloc();
	if (p)
		memset(phys_to_virt(p), 0, PAGE_SIZE);
	return p;
}

#define PMM_SMALL_RUN 64 /* frames (256 KiB) */

uint64_t pmm_alloc_contig(uint64_t n, uint64_t align, uint64_t limit_phys)
{
	uint64_t f = spin_lock_irqsave(&lock);
	/* Small runs (kernel heap blocks, stacks) from the top like single frames; large ones
	 * (DMA pools a restarted server needs again) from the bottom, which stays unbroken. */
	uint64_t frame = !limit_phys && n < PMM_SMALL_RUN ? fbm_alloc_contig_top(&bm, n, MAX(align / PAGE_SIZE, 1))
			 : fbm_alloc_contig(&bm, n, MAX(align / PAGE_SIZE, 1),
					    limit_phys ? limit_phys / PAGE_SIZE : UINT64_MAX);
	spin_unlock_irqrestore(&lock, f);
	return frame == UINT64_MAX ? 0 : frame * PAGE_SIZE;
}

void pmm_free(uint64_t phys)
{
	uint64_t f = spin_lock_irqsave(&lock);
	int r = fbm_free(&bm, phys / PAGE_SIZE);
	spin_unlock_irqrestore(&lock, f);
	if (r || (phys & (PAGE_SIZE - 1)))
		panic("pmm_free: bad or double free of frame %#llx", (unsigned long long)phys);
}

void pmm_free_contig(uint64_t phys, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		pmm_free(phys + i * PAGE_SIZE);
}

uint64_t pmm_free_frames(void) { return READ_ONCE(bm.nfree); }

uint64_t pmm_longest_free_run(void)
{
	uint64_t f = spin_lock_irqsave(&lock);
	uint64_t n = fbm_longest_free_run(&bm);
	spin_unlock_irqrestore(&lock, f);
	return n;
}
uint64_t pmm_total_usable(void) { return usable_bytes; }
uint64_t pmm_max_phys(void) { return max_phys; }

size_t pmm_reserved_ranges(const struct phys_range **out)
{
	*out = reserved;
	return nreserved;
}
