/* Kernel page tables: a direct map of RAM at DIRECT_MAP_BASE, the kernel image at -2 GiB with
 * per-section permissions, and windows for stacks and device memory. One address space for
 * the kernel, shared by every CPU; changes that remove or alter a mapping are shot down
 * on all CPUs before they return. */
#include "mm/vmm.h"
#include "mm/pmm.h"
#include "boot/bootinfo.h"
#include "arch/x86.h"
#include "lib/spinlock.h"
#include "lib/string.h"
#include "smp/ipi.h"
#include "core/panic.h"

extern char _text_start[], _text_end[], _rodata_start[], _rodata_end[], _data_start[], _data_end[];

uint64_t pte_nx;
static uint64_t kernel_cr3;
static spinlock_t pt_lock = SPINLOCK_INIT;
static bool early = true; /* before the switch only the first 1 GiB is in the direct map */
static uint64_t mmio_next = MMIO_BASE, stack_next = KSTACK_BASE;

static uint64_t alloc_table(void)
{
	uint64_t p = early ? pmm_alloc_contig(1, 1, GiB(1)) : pmm_alloc();
	if (!p)
		panic("out of memory for page tables");
	memset(phys_to_virt(p), 0, PAGE_SIZE);
	return p;
}

static unsigned idx(uint64_t va, int level) { return (va >> (12 + 9 * (level - 1))) & 511; }

uint64_t *pt_walk(uint64_t root, uint64_t va, int level, bool create, uint64_t table_flags)
{
	uint64_t *table = phys_to_virt(root);
	for (int l = 4; l > level; l--) {
		uint64_t *e = &table[idx(va, l)];
		if (!(*e & PTE_P)) {
			if (!create)
				return NULL;
			*e = alloc_table() | PTE_P | table_flags;
		} else if (*e & PTE_PS) {
			return NULL;
		}
		table = phys_to_virt(*e & PTE_ADDR);
	}
	return &table[idx(va, level)];
}

static uint64_t *walk(uint64_t va, int level, bool create)
{
	return pt_walk(kernel_cr3, va, level, create, PTE_W);
}

static int map_locked(uint64_t va, uint64_t pa, uint64_t flags)
{
	uint64_t *e = walk(va, (flags & PTE_PS) ? 2 : 1, true);
	if (!e)
		return -1;
	*e = (pa & PTE_ADDR) | flags | PTE_P;
	return 0;
}

int vmm_map(uint64_t va, uint64_t pa, uint64_t flags)
{
	uint64_t f = spin_lock_irqsave(&pt_lock);
	uint64_t *e = walk(va, (flags & PTE_PS) ? 2 : 1, true);
	int r = -1;
	if (e && !(*e & PTE_P)) {
		*e = (pa & PTE_ADDR) | flags | PTE_P;
		r = 0;
	}
	spin_unlock_irqrestore(&pt_lock, f);
	return r;
}

uint64_t vmm_lookup(uint64_t va, uint64_t *page_size)
{
	uint64_t *table = phys_to_virt(kernel_cr3);
	for (int l = 4; l >= 1; l--) {
		uint64_t e = table[idx(va, l)];
		if (!(e & PTE_P))
			return 0;
		if (l == 1 || (e & PTE_PS)) {
			if (page_size)
				*page_size = 1ull << (12 + 9 * (l - 1));
			return e;
		}
		table = phys_to_virt(e & PTE_ADDR);
	}
	return 0;
}

static uint64_t *find_leaf(uint64_t va)
{
	uint64_t *e = walk(va, 1, false);
	if (!e) {
		e = walk(va, 2, false);
		if (e && !(*e & PTE_PS))
			e = NULL;
	}
	return e && (*e & PTE_P) ? e : NULL;
}

uint64_t vmm_unmap(uint64_t va)
{
	uint64_t f = spin_lock_irqsave(&pt_lock);
	uint64_t *e = find_leaf(va);
	uint64_t old = e ? *e : 0;
	if (e)
		*e = 0;
	spin_unlock_irqrestore(&pt_lock, f);
	if (old)
		tlb_shootdown(va, 1);
	return old;
}

int vmm_remap(uint64_t va, uint64_t pa, uint64_t flags)
{
	uint64_t f = spin_lock_irqsave(&pt_lock);
	uint64_t *e = find_leaf(va);
	if (e)
		*e = (pa & PTE_ADDR) | flags | PTE_P;
	spin_unlock_irqrestore(&pt_lock, f);
	if (!e)
		return -1;
	tlb_shootdown(va, 1);
	return 0;
}

static void map_range_2m(uint64_t start, uint64_t end, uint64_t flags)
{
	for (uint64_t p = ALIGN_DOWN(start, LARGE_PAGE_SIZE); p < end; p += LARGE_PAGE_SIZE) {
		uint64_t *e = walk(DIRECT_MAP_BASE + p, 2, true);
		if (e && !(*e & PTE_P))
			*e = p | flags | PTE_PS | PTE_P;
	}
}

static void map_kernel_section(const char *s, const char *e, uint64_t flags)
{
	for (uint64_t va = (uint64_t)s; va < (uint64_t)e; va += PAGE_SIZE)
		if (map_locked(va, va - KERNEL_VMA, flags))
			panic("cannot map kernel page %#llx", (unsigned long long)va);
}

void vmm_init(void)
{
	pte_nx = (rdmsr(MSR_EFER) & EFER_NXE) ? PTE_NX : 0;
	write_cr4(read_cr4() | CR4_PGE);
	kernel_cr3 = alloc_table();

	uint64_t dm = PTE_W | PTE_G | pte_nx;
	map_range_2m(0, MiB(2), dm); /* low memory: trampoline, BIOS data, VGA text */
	for (uint32_t i = 0; i < boot_info.nmem; i++) {
		const struct mem_region *r = &boot_info.mem[i];
		if (r->type == MEM_USABLE || r->type == MEM_ACPI || r->type == MEM_NVS)
			map_range_2m(r->base, r->base + r->len, dm);
	}
	/* Modules and the boot information can sit in unlisted memory on odd firmware. */
	map_range_2m(boot_info.mbi_phys, boot_info.mbi_phys + boot_info.mbi_size, dm);
	for (uint32_t i = 0; i < boot_info.nmods; i++)
		map_range_2m(boot_info.mods[i].start, boot_info.mods[i].end, dm);

	map_kernel_section(_text_start, _text_end, PTE_G);
	map_kernel_section(_rodata_start, _rodata_end, PTE_G | pte_nx);
	map_kernel_section(_data_start, _data_end, PTE_G | PTE_W | pte_nx);

	/* Every upper-half PML4 slot gets its PDPT now and never changes afterwards, so user
	 * address spaces share the kernel half by copying these 256 entries once. */
	uint64_t *pml4 = phys_to_virt(kernel_cr3);
	for (int i = 256; i < 512; i++)
		if (!(pml4[i] & PTE_P))
			pml4[i] = alloc_table() | PTE_P | PTE_W;

	write_cr3(kernel_cr3);
	early = false;
}

uint64_t vmm_kernel_cr3(void) { return kernel_cr3; }

void *vmm_map_mmio(uint64_t pa, uint64_t size)
{
	uint64_t off = pa & (PAGE_SIZE - 1);
	uint64_t pages = ALIGN_UP(size + off, PAGE_SIZE) / PAGE_SIZE;
	uint64_t f = spin_lock_irqsave(&pt_lock);
	uint64_t va = mmio_next;
	mmio_next += (pages + 1) * PAGE_SIZE; /* a hole between windows catches overruns */
	for (uint64_t i = 0; i < pages; i++)
		if (map_locked(va + i * PAGE_SIZE, pa - off + i * PAGE_SIZE,
			       PTE_W | PTE_PCD | PTE_PWT | PTE_G | pte_nx)) {
			spin_unlock_irqrestore(&pt_lock, f);
			return NULL;
		}
	spin_unlock_irqrestore(&pt_lock, f);
	return (void *)(va + off);
}

uint64_t vmm_alloc_stack(uint64_t pages)
{
	uint64_t f = spin_lock_irqsave(&pt_lock);
	uint64_t base = stack_next + PAGE_SIZE; /* guard page stays unmapped */
	stack_next = base + pages * PAGE_SIZE;
	for (uint64_t i = 0; i < pages; i++) {
		uint64_t pa = pmm_alloc();
		if (!pa || map_locked(base + i * PAGE_SIZE, pa, PTE_W | PTE_G | pte_nx)) {
			spin_unlock_irqrestore(&pt_lock, f);
			panic("out of memory for a kernel stack");
		}
	}
	spin_unlock_irqrestore(&pt_lock, f);
	return base + pages * PAGE_SIZE;
}
