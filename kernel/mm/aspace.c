#include "mm/aspace.h"
#include "mm/heap.h"
#include "mm/pmm.h"
#include "mm/vmm.h"
#include "arch/x86.h"
#include "lib/string.h"
#include "smp/ipi.h"
#include "smp/percpu.h"
#include <axolotl/kcall.h>

struct aspace *as_create(void)
{
	struct aspace *as = kzalloc(sizeof(*as));
	if (!as)
		return NULL;
	as->cr3 = pmm_alloc_zeroed();
	if (!as->cr3) {
		kfree(as);
		return NULL;
	}
	uint64_t *pml4 = phys_to_virt(as->cr3);
	const uint64_t *k = phys_to_virt(vmm_kernel_cr3());
	for (int i = 256; i < 512; i++)
		pml4[i] = k[i];
	as->tables = 1;
	return as;
}

static void free_level(uint64_t table, int level)
{
	uint64_t *t = phys_to_virt(table);
	if (level > 1) {
		for (int i = 0; i < (level == 4 ? 256 : 512); i++)
			if (t[i] & PTE_P)
				free_level(t[i] & PTE_ADDR, level - 1);
	}
	pmm_free(table);
}

/* A CPU whose idle thread still runs in the space (sched.c) moves to the kernel's. */
static void drop_if_loaded(void *arg)
{
	uint64_t cr3 = *(const uint64_t *)arg;
	if ((read_cr3() & PTE_ADDR) != cr3)
		return;
	write_cr3(vmm_kernel_cr3());
	this_cpu()->loaded_cr3 = 0;
}

void as_destroy(struct aspace *as)
{
	if (!as)
		return;
	/* No thread of the space runs any more, but a CPU may idle in it: its page tables must
	 * not be freed under that CPU's CR3. */
	drop_if_loaded(&as->cr3);
	smp_call_loaded(as->cr3, drop_if_loaded, &as->cr3);
	free_level(as->cr3, 4);
	kfree(as);
}

int as_map(struct aspace *as, uint64_t va, uint64_t pa, uint64_t flags)
{
	if (va >= USER_TOP || (va & (PAGE_SIZE - 1)))
		return -KE_INVAL;
	uint64_t *e = pt_walk(as->cr3, va, 1, true, PTE_W | PTE_U);
	if (!e)
		return -KE_NOMEM;
	if (*e & PTE_P)
		return -KE_BUSY;
	*e = (pa & PTE_ADDR) | flags | PTE_U | PTE_P;
	return 0;
}

uint64_t as_lookup(struct aspace *as, uint64_t va)
{
	if (va >= USER_TOP)
		return 0;
	uint64_t *e = pt_walk(as->cr3, va, 1, false, 0);
	return e && (*e & PTE_P) ? *e : 0;
}

struct as_flush_req {
	uint64_t cr3, va, npages;
};

static void flush_if_loaded(void *arg)
{
	const struct as_flush_req *r = arg;
	uint64_t cr3 = read_cr3();
	if ((cr3 & PTE_ADDR) != r->cr3)
		return;
	if (r->npages > TLB_FLUSH_ALL_PAGES) {
		write_cr3(cr3); /* the whole TLB but global (kernel) pages */
		return;
	}
	for (uint64_t i = 0; i < r->npages; i++)
		invlpg(r->va + i * PAGE_SIZE);
}

void as_flush(struct aspace *as, uint64_t va, uint64_t npages)
{
	struct as_flush_req r = { as->cr3, va, npages };
	flush_if_loaded(&r);
	/* Only CPUs that have it loaded can cache its entries (no PCIDs: a CR3 write drops them). */
	smp_call_loaded(as->cr3, flush_if_loaded, &r);
}

uint64_t as_clear_range(struct aspace *as, uint64_t va, uint64_t npages)
{
	uint64_t cleared = 0;
	for (uint64_t i = 0; i < npages && va + i * PAGE_SIZE < USER_TOP;) {
		uint64_t at = va + i * PAGE_SIZE;
		/* the rest of this page table: up to the next 2 MiB boundary */
		uint64_t run = MIN(npages - i, (0x200000 - (at & 0x1fffff)) / PAGE_SIZE);
		uint64_t *e = pt_walk(as->cr3, at, 1, false, 0);
		for (uint64_t k = 0; e && k < run; k++)
			if (e[k] & PTE_P)
				e[k] = 0, cleared++;
		i += run;
	}
	return cleared;
}

void as_unmap_range(struct aspace *as, uint64_t va, uint64_t npages)
{
	if (as_clear_range(as, va, npages))
		as_flush(as, va, npages);
}

/* rep movsb with a fix-up: on a fault, returns the number of bytes not copied. */
static size_t copy_raw(void *dst, const void *src, size_t n)
{
	__asm__ volatile("1: rep movsb\n"
			 "2:\n\t"
			 ".pushsection .extable, \"a\"\n\t"
			 ".balign 8\n\t"
			 ".quad 1b, 2b\n\t"
			 ".popsection"
			 : "+D"(dst), "+S"(src), "+c"(n)
			 :
			 : "memory");
	return n;
}

static bool user_range_ok(const void *p, size_t n)
{
	uint64_t a = (uint64_t)p;
	return a < USER_TOP && n <= USER_TOP - a;
}

int copy_from_user(void *dst, const void *usrc, size_t n)
{
	if (!user_range_ok(usrc, n))
		return -KE_FAULT;
	return copy_raw(dst, usrc, n) ? -KE_FAULT : 0;
}

int copy_to_user(void *udst, const void *src, size_t n)
{
	if (!user_range_ok(udst, n))
		return -KE_FAULT;
	return copy_raw(udst, src, n) ? -KE_FAULT : 0;
}

long strncpy_from_user(char *dst, const char *usrc, size_t max)
{
	for (size_t i = 0; i < max; i++) {
		if (!user_range_ok(usrc + i, 1) || copy_raw(dst + i, usrc + i, 1))
			return -KE_FAULT;
		if (!dst[i])
			return (long)i;
	}
	if (max)
		dst[max - 1] = 0;
	return (long)(max ? max - 1 : 0);
}
