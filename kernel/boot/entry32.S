/* Multiboot2 header and the 32-bit entry point: checks for long mode, builds the boot page
 * tables (low 1 GiB identity-mapped, in the direct map and at -2 GiB), enables PAE, long mode,
 * NX and paging, and jumps to the higher-half kernel. */
#include "boot/layout.h"

#define MB2_MAGIC 0xe85250d6
#define PHYS(x) ((x) - KERNEL_VMA)

	.section .multiboot2, "a"
	.balign 8
mb2_header:
	.long MB2_MAGIC
	.long 0                                  /* architecture: i386 protected mode */
	.long mb2_header_end - mb2_header
	.long -(MB2_MAGIC + (mb2_header_end - mb2_header))
	/* module alignment tag: page-aligned modules */
	.balign 8
	.word 6, 0
	.long 8
	/* end tag */
	.balign 8
	.word 0, 0
	.long 8
mb2_header_end:

	.section .boot.text, "ax"
	.code32
	.global _start
_start:
	cli
	cld
	mov $PHYS(boot_stack_top), %esp
	mov %eax, PHYS(boot_mb_magic)
	mov %ebx, PHYS(boot_mb_info)

	/* Long mode present? */
	mov $0x80000000, %eax
	cpuid
	cmp $0x80000001, %eax
	jb no_long_mode
	mov $0x80000001, %eax
	cpuid
	test $(1 << 29), %edx
	jz no_long_mode
	mov %edx, PHYS(boot_ext_edx)

	/* Zero the three boot page-table pages and fill them. */
	mov $PHYS(boot_pml4), %edi
	mov $(4096 * 4 / 4), %ecx
	xor %eax, %eax
	rep stosl

	mov $PHYS(boot_pdpt_low), %eax
	or $3, %eax
	mov %eax, PHYS(boot_pml4)                /* [0]   identity */
	mov %eax, PHYS(boot_pml4) + 256 * 8      /* [256] direct map */
	mov $PHYS(boot_pdpt_high), %eax
	or $3, %eax
	mov %eax, PHYS(boot_pml4) + 511 * 8      /* [511] kernel at -2 GiB */
	mov $PHYS(boot_pd), %eax
	or $3, %eax
	mov %eax, PHYS(boot_pdpt_low)
	mov %eax, PHYS(boot_pdpt_high) + 510 * 8

	mov $PHYS(boot_pd), %edi
	mov $0x83, %eax                          /* present, writable, 2 MiB */
	mov $512, %ecx
1:	mov %eax, (%edi)
	add $0x200000, %eax
	add $8, %edi
	loop 1b

	mov %cr4, %eax
	or $(1 << 5), %eax                       /* PAE */
	mov %eax, %cr4
	mov $PHYS(boot_pml4), %eax
	mov %eax, %cr3

	mov $0xc0000080, %ecx                    /* EFER */
	rdmsr
	or $(1 << 8), %eax                       /* LME */
	testl $(1 << 20), PHYS(boot_ext_edx)
	jz 2f
	or $(1 << 11), %eax                      /* NXE when the CPU has NX */
2:	wrmsr

	mov %cr0, %eax
	or $0x80010001, %eax                     /* PG | WP | PE */
	mov %eax, %cr0

	lgdt boot_gdtr
	ljmp $0x08, $long_mode_entry

no_long_mode:
	/* Say so on COM1 and stop. */
	mov $no_lm_msg, %esi
	mov $0x3f8, %dx
3:	lodsb
	test %al, %al
	jz 4f
	out %al, %dx
	jmp 3b
4:	hlt
	jmp 4b

	.code64
long_mode_entry:
	mov $0x10, %ax
	mov %ax, %ds
	mov %ax, %es
	mov %ax, %ss
	xor %ax, %ax
	mov %ax, %fs
	mov %ax, %gs
	movabs $higher_half, %rax
	jmp *%rax

	.section .boot.data, "a"
	.balign 16
boot_gdt:
	.quad 0
	.quad 0x00af9a000000ffff                 /* 0x08: 64-bit code */
	.quad 0x00cf92000000ffff                 /* 0x10: data */
boot_gdtr:
	.word boot_gdtr - boot_gdt - 1
	.long boot_gdt
no_lm_msg:
	.asciz "Axolotl needs an x86-64 (long mode) CPU"

	.text
	.code64
higher_half:
	movabs $boot_stack_top, %rsp
	xor %ebp, %ebp
	mov boot_mb_magic(%rip), %edi
	mov boot_mb_info(%rip), %esi
	call kmain
1:	cli
	hlt
	jmp 1b

/* ap_start64(cpu, cr3, stack_top): the AP trampoline lands here on the boot page tables;
 * switch to the kernel page tables and the CPU's own stack, then run ap_main(cpu). */
	.global ap_start64
ap_start64:
	mov %rsi, %cr3
	mov %rdx, %rsp
	xor %ebp, %ebp
	call ap_main
1:	cli
	hlt
	jmp 1b

	.bss
	.balign 4096
	.global boot_pml4
boot_pml4:      .skip 4096
boot_pdpt_low:  .skip 4096
boot_pdpt_high: .skip 4096
boot_pd:        .skip 4096
	.balign 16
boot_stack:     .skip BOOT_STACK_SIZE
	.global boot_stack_top
boot_stack_top:
	.data
	.global boot_mb_magic, boot_mb_info
boot_mb_magic:  .long 0
boot_mb_info:   .long 0
boot_ext_edx:   .long 0
