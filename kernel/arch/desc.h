/* Descriptor tables: GDT with a TSS, IDT. One set per CPU. */
#pragma once
#include "lib/types.h"

#define SEL_KCODE 0x08
#define SEL_KDATA 0x10
#define SEL_UCODE32 0x18
#define SEL_UDATA 0x20
#define SEL_UCODE 0x28
#define SEL_TSS 0x30

/* IST slots used by exceptions that must not run on a possibly broken stack. */
#define IST_DF 1
#define IST_NMI 2
#define IST_MC 3

struct tss {
	uint32_t rsvd0;
	uint64_t rsp[3];
	uint64_t rsvd1;
	uint64_t ist[7];
	uint64_t rsvd2;
	uint16_t rsvd3;
	uint16_t iomap_base;
	/* I/O permission bitmap (bit set = port denied) and the byte of ones the CPU may read
	 * past its end; used only while iomap_base == TSS_IOMAP_ON (proc/devpriv.c). */
	uint8_t iomap[8192];
	uint8_t iomap_end;
} __packed;

#define TSS_IOMAP_ON 104u                     /* offsetof(struct tss, iomap) */
#define TSS_IOMAP_OFF ((uint16_t)sizeof(struct tss)) /* beyond the limit: every port faults */
_Static_assert(__builtin_offsetof(struct tss, iomap) == TSS_IOMAP_ON, "TSS layout");

struct gdt {
	uint64_t e[8]; /* null, kcode, kdata, ucode32, udata, ucode, tss (2 entries) */
};

struct idt_entry {
	uint16_t off_lo;
	uint16_t sel;
	uint8_t ist;
	uint8_t type;
	uint16_t off_mid;
	uint32_t off_hi;
	uint32_t rsvd;
} __packed;

struct cpu;
/* Fills and loads this CPU's GDT, TSS (with fresh IST stacks) and IDT. */
void desc_init_cpu(struct cpu *c);
