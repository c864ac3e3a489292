/* Kernel page tables (see docs/memory.md). */
#pragma once
#include "lib/types.h"
#include "boot/layout.h"

#define PTE_P (1ull << 0)
#define PTE_W (1ull << 1)
#define PTE_U (1ull << 2)
#define PTE_PWT (1ull << 3)
#define PTE_PCD (1ull << 4)
#define PTE_A (1ull << 5)
#define PTE_D (1ull << 6)
#define PTE_PS (1ull << 7)
#define PTE_G (1ull << 8)
#define PTE_NX (1ull << 63)
#define PTE_ADDR 0x000ffffffffff000ull

static inline void *phys_to_virt(uint64_t p) { return (void *)(p + DIRECT_MAP_BASE); }
static inline uint64_t virt_to_phys(const void *v)
{
	uint64_t a = (uint64_t)v;
	return a >= KERNEL_VMA ? a - KERNEL_VMA : a - DIRECT_MAP_BASE;
}

extern uint64_t pte_nx; /* PTE_NX if the CPU has NX, else 0 */

/* Entry for va at level (1 = 4 KiB PTE, 2 = 2 MiB PDE) in the tables rooted at root,
 * creating missing tables with table_flags when asked; NULL if a large page is in the way. */
uint64_t *pt_walk(uint64_t root, uint64_t va, int level, bool create, uint64_t table_flags);
/* Builds the kernel page tables and switches to them. */
void vmm_init(void);
uint64_t vmm_kernel_cr3(void);
/* Maps one 4 KiB page (or a 2 MiB page when flags has PTE_PS) in the kernel address space. */
int vmm_map(uint64_t va, uint64_t pa, uint64_t flags);
/* Unmaps one page and shoots it down on every CPU; returns the old PTE (0 if none). */
uint64_t vmm_unmap(uint64_t va);
/* Changes the mapping of an existing page and shoots the old one down everywhere. */
int vmm_remap(uint64_t va, uint64_t pa, uint64_t flags);
/* Walks the tables; returns the PTE mapping va (or 0) and its level page size. */
uint64_t vmm_lookup(uint64_t va, uint64_t *page_size);
/* Maps device memory uncached; returns a virtual address or NULL. */
void *vmm_map_mmio(uint64_t pa, uint64_t size);
/* A kernel stack of `pages` pages with an unmapped guard page below; returns its top. */
uint64_t vmm_alloc_stack(uint64_t pages);
