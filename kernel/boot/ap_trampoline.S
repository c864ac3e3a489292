/* Application-processor start-up code. smp.c copies it to AP_TRAMPOLINE (0x8000) and fills
 * ap_tramp_params; the SIPI starts the AP here in real mode (CS=0x0800, IP=0). It goes
 * through protected mode straight into long mode on the boot page tables, then jumps to
 * ap_start64(cpu, kernel_cr3, stack_top) in the higher-half kernel. */
#include "boot/layout.h"

#define REL(x) (AP_TRAMPOLINE + (x) - ap_tramp_start)

	.section .rodata
	.balign 16
	.global ap_tramp_start, ap_tramp_end, ap_tramp_params
	.code16
ap_tramp_start:
	cli
	cld
	xor %ax, %ax
	mov %ax, %ds
	lgdtl REL(tramp_gdtr)
	mov %cr0, %eax
	or $1, %eax
	mov %eax, %cr0
	ljmpl $0x08, $REL(tramp32)

	.code32
tramp32:
	mov $0x10, %ax
	mov %ax, %ds
	mov %ax, %es
	mov %ax, %ss
	mov %cr4, %eax
	or $(1 << 5), %eax                       /* PAE */
	mov %eax, %cr4
	mov REL(p_boot_cr3), %eax
	mov %eax, %cr3
	mov $0xc0000080, %ecx
	rdmsr
	or $(1 << 8), %eax                       /* LME */
	testl $1, REL(p_nx)
	jz 1f
	or $(1 << 11), %eax                      /* NXE */
1:	wrmsr
	mov %cr0, %eax
	or $0x80010000, %eax                     /* PG | WP */
	mov %eax, %cr0
	ljmp $0x18, $REL(tramp64)

	.code64
tramp64:
	mov $0x10, %ax
	mov %ax, %ds
	mov %ax, %es
	mov %ax, %ss
	mov REL(p_cpu), %rdi
	mov REL(p_kcr3), %rsi
	mov REL(p_stack), %rdx
	mov REL(p_entry), %rax
	jmp *%rax

	.balign 8
tramp_gdt:
	.quad 0
	.quad 0x00cf9a000000ffff                 /* 0x08: 32-bit code */
	.quad 0x00cf92000000ffff                 /* 0x10: data */
	.quad 0x00af9a000000ffff                 /* 0x18: 64-bit code */
tramp_gdtr:
	.word tramp_gdtr - tramp_gdt - 1
	.long REL(tramp_gdt)

	.balign 8
ap_tramp_params:
p_boot_cr3: .long 0
p_nx:       .long 0
p_entry:    .quad 0
p_cpu:      .quad 0
p_kcr3:     .quad 0
p_stack:    .quad 0
ap_tramp_end:
