/* Self-tests: frame allocator, heap, page mapping and cross-CPU TLB shootdown. */
#include "core/ktest.h"
#include "acpi/acpi.h"
#include "boot/bootinfo.h"
#include "arch/trap.h"
#include "mm/heap.h"
#include "mm/pmm.h"
#include "mm/vmm.h"
#include "smp/ipi.h"
#include "smp/percpu.h"
#include "lib/string.h"

static const char *forbidden(uint64_t pa)
{
	const struct phys_range *r;
	size_t n = pmm_reserved_ranges(&r);
	for (size_t i = 0; i < n; i++)
		if (pa >= r[i].start && pa < r[i].end)
			return r[i].what;
	for (uint32_t i = 0; i < acpi_ntables; i++)
		if (pa + PAGE_SIZE > acpi_tables[i].phys && pa < acpi_tables[i].phys + acpi_tables[i].len)
			return "ACPI table";
	for (uint32_t i = 0; i < boot_info.nmem; i++) {
		const struct mem_region *m = &boot_info.mem[i];
		if (m->type != MEM_USABLE && pa + PAGE_SIZE > m->base && pa < m->base + m->len)
			return "non-usable memory";
	}
	return NULL;
}

KTEST(pmm_all_memory)
{
	uint64_t free0 = pmm_free_frames();
	/* Chain every frame through its own first word: a frame handed out twice breaks the chain. */
	uint64_t head = 0, count = 0;
	for (uint64_t pa; (pa = pmm_alloc()) != 0;) {
		const char *bad = forbidden(pa);
		KT_ASSERT(!bad, "frame %#llx overlaps %s", (unsigned long long)pa, bad);
		KT_ASSERT(!(pa & (PAGE_SIZE - 1)), "frame %#llx is not page aligned", (unsigned long long)pa);
		*(uint64_t *)phys_to_virt(pa) = head;
		head = pa;
		count++;
	}
	KT_ASSERT(pmm_free_frames() == 0, "allocator ran dry with %llu frames still counted free",
		  (unsigned long long)pmm_free_frames());
	KT_ASSERT(count == free0, "allocated %llu frames, %llu were free", (unsigned long long)count,
		  (unsigned long long)free0);
	uint64_t walked = 0;
	while (head) {
		uint64_t next = *(uint64_t *)phys_to_virt(head);
		pmm_free(head); /* panics on a double free */
		head = next;
		KT_ASSERT(++walked <= count, "frame chain is longer than the allocations: a frame was reused");
	}
	KT_ASSERT(walked == count, "chain has %llu of %llu frames", (unsigned long long)walked,
		  (unsigned long long)count);
	KT_ASSERT(pmm_free_frames() == free0, "free frames %llu after freeing all, %llu before",
		  (unsigned long long)pmm_free_frames(), (unsigned long long)free0);
	ktest_info("frames=%llu bytes=%llu", (unsigned long long)count,
		   (unsigned long long)(count * PAGE_SIZE));
	return KTEST_OK;
}

KTEST(pmm_contig)
{
	uint64_t free0 = pmm_free_frames();
	uint64_t a = pmm_alloc_contig(512, LARGE_PAGE_SIZE, 0);
	KT_ASSERT(a && !(a & (LARGE_PAGE_SIZE - 1)), "no aligned 2 MiB block (%#llx)", (unsigned long long)a);
	uint64_t low = pmm_alloc_contig(4, PAGE_SIZE, MiB(16));
	KT_ASSERT(low && low + 4 * PAGE_SIZE <= MiB(16), "no block below 16 MiB (%#llx)", (unsigned long long)low);
	pmm_free_contig(a, 512);
	pmm_free_contig(low, 4);
	KT_ASSERT(pmm_free_frames() == free0, "contiguous blocks leaked");
	return KTEST_OK;
}

KTEST(heap)
{
	uint64_t free0 = pmm_free_frames();
	enum { N = 300 };
	static void *ptrs[N];
	for (int i = 0; i < N; i++) {
		size_t sz = (size_t)(1 + (i * 37) % 5000);
		ptrs[i] = kmalloc(sz);
		KT_ASSERT(ptrs[i], "kmalloc(%zu) failed", sz);
		KT_ASSERT(((uintptr_t)ptrs[i] & 15) == 0, "kmalloc(%zu) is not 16-byte aligned", sz);
		const uint8_t *z = ptrs[i];
		for (size_t b = 0; b < sz; b++)
			KT_ASSERT(!z[b], "kmalloc(%zu) memory is not zeroed", sz);
		memset(ptrs[i], i & 0xff, sz);
	}
	for (int i = 0; i < N; i++) {
		size_t sz = (size_t)(1 + (i * 37) % 5000);
		const uint8_t *p = ptrs[i];
		for (size_t b = 0; b < sz; b++)
			KT_ASSERT(p[b] == (i & 0xff), "object %d was overwritten at byte %zu", i, b);
	}
	for (int i = 0; i < N; i++)
		kfree(ptrs[i]);
	/* Large blocks and empty slab pages return to the frame allocator; at most one empty
	 * page per size class (8 classes) stays cached. */
	void *big = kmalloc(64 * 1024);
	KT_ASSERT(big, "kmalloc(64 KiB) failed");
	kfree(big);
	ktest_info("frames_before=%llu frames_after=%llu", (unsigned long long)free0,
		   (unsigned long long)pmm_free_frames());
	KT_ASSERT(free0 - pmm_free_frames() <= 8, "heap kept %llu frames after freeing everything",
		  (unsigned long long)(free0 - pmm_free_frames()));
	return KTEST_OK;
}

#define TEST_VA (KTEST_BASE + 0x200000)

struct probe {
	uint64_t va, value;
	int err;
	uint32_t cpu;
};

static void probe_on_cpu(void *arg)
{
	struct probe *p = arg;
	p->err = probe_read(p->va, &p->value);
	p->cpu = this_cpu_index();
}

KTEST(map_unmap_shootdown)
{
	uint64_t a = pmm_alloc(), b = pmm_alloc();
	KT_ASSERT(a && b, "out of frames");
	*(volatile uint64_t *)phys_to_virt(a) = 0xaaaaaaaaaaaaaaaaull;
	*(volatile uint64_t *)phys_to_virt(b) = 0xbbbbbbbbbbbbbbbbull;
	uint64_t flags = PTE_W | pte_nx;
	KT_ASSERT(vmm_map(TEST_VA, a, flags) == 0, "map failed");
	KT_ASSERT(vmm_map(TEST_VA, b, flags) != 0, "mapping an already mapped page succeeded");
	KT_ASSERT(*(volatile uint64_t *)TEST_VA == 0xaaaaaaaaaaaaaaaaull, "mapped page reads wrong");

	/* Every other CPU reads the page, so its TLB now holds the translation to a. */
	for (uint32_t i = 0; i < ncpus; i++) {
		struct probe p = { TEST_VA, 0, -1, 0 };
		smp_call(i, probe_on_cpu, &p);
		KT_ASSERT(!p.err && p.value == 0xaaaaaaaaaaaaaaaaull, "cpu%u read %#llx before remap", i,
			  (unsigned long long)p.value);
	}
	/* Remap to b: without the shootdown the other CPUs would keep reading a. */
	KT_ASSERT(vmm_remap(TEST_VA, b, flags) == 0, "remap failed");
	for (uint32_t i = 0; i < ncpus; i++) {
		struct probe p = { TEST_VA, 0, -1, 0 };
		smp_call(i, probe_on_cpu, &p);
		KT_ASSERT(p.cpu == i, "probe ran on cpu%u instead of cpu%u", p.cpu, i);
		KT_ASSERT(!p.err && p.value == 0xbbbbbbbbbbbbbbbbull,
			  "cpu%u still sees the old mapping after the shootdown (%#llx)", i,
			  (unsigned long long)p.value);
	}
	/* Unmap: every CPU must now fault on the address. */
	KT_ASSERT(vmm_unmap(TEST_VA) != 0, "unmap found nothing");
	for (uint32_t i = 0; i < ncpus; i++) {
		struct probe p = { TEST_VA, 0, 0, 0 };
		smp_call(i, probe_on_cpu, &p);
		KT_ASSERT(p.err, "cpu%u can still read the unmapped page (%#llx)", i,
			  (unsigned long long)p.value);
	}
	KT_ASSERT(vmm_lookup(TEST_VA, NULL) == 0, "page table still maps the page");
	pmm_free(a);
	pmm_free(b);
	ktest_info("cpus_checked=%u", ncpus);
	return KTEST_OK;
}

KTEST(kernel_protections)
{
	extern char _text_start[], _rodata_start[], _data_start[];
	uint64_t sz;
	uint64_t text = vmm_lookup((uint64_t)_text_start, &sz);
	uint64_t ro = vmm_lookup((uint64_t)_rodata_start, &sz);
	uint64_t data = vmm_lookup((uint64_t)_data_start, &sz);
	KT_ASSERT(text && !(text & PTE_W) && !(text & PTE_NX), "text must be read-only and executable");
	KT_ASSERT(ro && !(ro & PTE_W), "rodata must be read-only");
	KT_ASSERT(data && (data & PTE_W), "data must be writable");
	if (pte_nx) {
		KT_ASSERT(ro & PTE_NX, "rodata must not be executable");
		KT_ASSERT(data & PTE_NX, "data must not be executable");
		uint64_t dm = vmm_lookup(DIRECT_MAP_BASE + MiB(1), &sz);
		KT_ASSERT(dm & PTE_NX, "direct map must not be executable");
	}
	uint64_t v;
	KT_ASSERT(probe_read(0, &v) != 0, "address 0 is mapped");
	return KTEST_OK;
}

/* Deliberate kernel page fault: the harness checks the dump, the backtrace and that every
 * CPU is halted. Only run when named: tests=panic. */
static __attribute__((noinline)) void fault_here(volatile uint64_t *p)
{
	*p = 0xdead;
}

KTEST_EXPLICIT(panic)
{
	fault_here((volatile uint64_t *)0xffffd000dead0000ull);
	ktest_fail("the write to an unmapped page did not fault");
	return KTEST_FAILED;
}
