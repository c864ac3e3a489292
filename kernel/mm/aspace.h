/* User address spaces: the lower half of a private PML4; the upper half is the kernel's,
 * shared by copying its (never-changing) 256 PML4 entries. */
#pragma once
#include "lib/types.h"

#define USER_TOP 0x0000800000000000ull /* first non-user address */

struct aspace {
	uint64_t cr3;
	uint64_t tables; /* page-table pages owned (for accounting) */
};

struct aspace *as_create(void);
/* Frees the page tables of the lower half; leaf frames belong to memory objects. */
void as_destroy(struct aspace *as);
/* Maps one 4 KiB user page; flags are PTE_* (PTE_U is added). Fails if mapped. */
int as_map(struct aspace *as, uint64_t va, uint64_t pa, uint64_t flags);
/* Clears the entries of [va, va + n pages) without any flush (the caller flushes the range
 * once, if anything was there); returns how many were present. One walk per page table. */
uint64_t as_clear_range(struct aspace *as, uint64_t va, uint64_t npages);
uint64_t as_lookup(struct aspace *as, uint64_t va);
/* Flushes [va, va+n pages) on every CPU that has this address space loaded (the whole TLB
 * where the range is long). */
void as_flush(struct aspace *as, uint64_t va, uint64_t npages);
/* Clears [va, va + n pages) and flushes it where it was loaded, if anything was mapped. */
void as_unmap_range(struct aspace *as, uint64_t va, uint64_t npages);

/* Copies between kernel memory and the *current* address space's user memory; a fault or an
 * address outside user space ends the copy. Return 0, or -KE_FAULT. */
int copy_from_user(void *dst, const void *usrc, size_t n);
int copy_to_user(void *udst, const void *src, size_t n);
/* Copies a NUL-terminated string of at most max-1 bytes; returns its length or -KE_FAULT. */
long strncpy_from_user(char *dst, const char *usrc, size_t max);
