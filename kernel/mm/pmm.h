/* Physical frame allocator (see docs/memory.md). */
#pragma once
#include "lib/types.h"

struct boot_info;

void pmm_init(const struct boot_info *bi);
/* One uninitialised 4 KiB frame; returns its physical address, or 0 when memory is exhausted. */
uint64_t pmm_alloc(void);
/* One frame filled with zeroes. */
uint64_t pmm_alloc_zeroed(void);
/* n contiguous frames wholly below limit_phys (0 = anywhere), aligned to align bytes. */
uint64_t pmm_alloc_contig(uint64_t n, uint64_t align, uint64_t limit_phys);
void pmm_free(uint64_t phys);
void pmm_free_contig(uint64_t phys, uint64_t n);
uint64_t pmm_free_frames(void);
/* The longest run of free frames (pmm_alloc_contig can give at most this many). */
uint64_t pmm_longest_free_run(void);
uint64_t pmm_total_usable(void); /* bytes of usable RAM in the memory map */
uint64_t pmm_max_phys(void);     /* end of the highest usable region */

/* Reserved physical ranges recorded at init (kernel, modules, MBI, bitmap, low memory),
 * for the self-tests that check the allocator never hands them out. */
struct phys_range {
	uint64_t start, end;
	const char *what;
};
size_t pmm_reserved_ranges(const struct phys_range **out);
