#include "arch/desc.h"
#include "smp/percpu.h"
#include "mm/vmm.h"
#include "lib/string.h"

extern void *isr_table[256]; /* entry stubs, arch/isr.S */

struct __packed dtr {
	uint16_t limit;
	uint64_t base;
};

static void set_gate(struct idt_entry *e, void *handler, uint8_t ist, uint8_t dpl)
{
	uint64_t a = (uint64_t)handler;
	e->off_lo = a & 0xffff;
	e->sel = SEL_KCODE;
	e->ist = ist;
	e->type = 0x8e | (dpl << 5); /* present, 64-bit interrupt gate */
	e->off_mid = (a >> 16) & 0xffff;
	e->off_hi = a >> 32;
	e->rsvd = 0;
}

void desc_init_cpu(struct cpu *c)
{
	struct gdt *g = &c->gdt;
	g->e[0] = 0;
	g->e[1] = 0x00af9a000000ffff; /* kernel code, 64-bit */
	g->e[2] = 0x00cf92000000ffff; /* kernel data */
	g->e[3] = 0x00cffa000000ffff; /* user code, 32-bit (unused; keeps the SYSRET layout) */
	g->e[4] = 0x00cff2000000ffff; /* user data */
	g->e[5] = 0x00affa000000ffff; /* user code, 64-bit */
	uint64_t tb = (uint64_t)&c->tss, tl = sizeof(c->tss) - 1;
	g->e[6] = (tl & 0xffff) | ((tb & 0xffffff) << 16) | (0x89ull << 40) |
		  (((tl >> 16) & 0xf) << 48) | (((tb >> 24) & 0xff) << 56);
	g->e[7] = tb >> 32;

	memset(&c->tss, 0, sizeof(c->tss));
	c->tss.ist[IST_DF - 1] = vmm_alloc_stack(2);
	c->tss.ist[IST_NMI - 1] = vmm_alloc_stack(2);
	c->tss.ist[IST_MC - 1] = vmm_alloc_stack(2);
	memset(c->tss.iomap, 0xff, sizeof(c->tss.iomap));
	c->tss.iomap_end = 0xff;
	c->tss.iomap_base = TSS_IOMAP_OFF; /* user port access faults until devpriv_switch */
	c->io_loaded = 0;

	for (int v = 0; v < 256; v++) {
		uint8_t ist = v == 8 ? IST_DF : v == 2 ? IST_NMI : v == 18 ? IST_MC : 0;
		set_gate(&c->idt[v], isr_table[v], ist, 0);
	}

	struct dtr gdtr = { sizeof(*g) - 1, (uint64_t)g };
	struct dtr idtr = { sizeof(c->idt) - 1, (uint64_t)c->idt };
	__asm__ volatile(
		"lgdt %0\n\t"
		"mov %w2, %%ds\n\t"
		"mov %w2, %%es\n\t"
		"mov %w2, %%ss\n\t"
		"pushq %1\n\t"
		"leaq 1f(%%rip), %%rax\n\t"
		"pushq %%rax\n\t"
		"lretq\n"
		"1:\n\t"
		"ltr %w3\n\t"
		"lidt %4\n\t"
		:
		: "m"(gdtr), "i"(SEL_KCODE), "r"(SEL_KDATA), "r"(SEL_TSS), "m"(idtr)
		: "rax", "memory");
	/* fs and gs selectors are null; their bases come from MSRs. Loading gs would clear the
	 * GS base, so it is set afterwards (percpu_install). */
}
