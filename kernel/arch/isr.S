/* Interrupt and exception entry: 256 stubs that push a uniform frame (struct trap_frame)
 * and call trap_dispatch. GS is swapped only when coming from user mode, except for NMI and
 * #MC: they can arrive between `syscall` and its `swapgs`, or between the exit path's
 * `swapgs` and `iretq`, where the frame says kernel but GS is still the user's; they look
 * at the GS base itself (kernel addresses are negative) and swap only when needed. */

	.macro STUB v
	.balign 16
isr_\v:
	.if (\v == 8 || \v == 10 || \v == 11 || \v == 12 || \v == 13 || \v == 14 || \v == 17 || \v == 21 || \v == 29 || \v == 30)
	.else
	pushq $0
	.endif
	pushq $\v
	.if (\v == 2 || \v == 18)
	jmp isr_paranoid
	.else
	jmp isr_common
	.endif
	.endm

#include "arch/trap_frame.inc"

	.text
	.altmacro
	.set v, 0
	.rept 256
	STUB %v
	.set v, v + 1
	.endr

isr_common:
	cld
	testb $3, 24(%rsp)
	jz 1f
	swapgs
1:	PUSH_GPRS
	mov %rsp, %rdi
	call trap_dispatch
	.global trap_return
trap_return:
	POP_GPRS
	testb $3, 24(%rsp)
	jz 2f
	swapgs
2:	add $16, %rsp
	iretq

isr_paranoid:
	cld
	PUSH_GPRS
	xor %ebx, %ebx           /* rbx (callee-saved): 1 if we swapped GS */
	mov $0xc0000101, %ecx    /* IA32_GS_BASE */
	rdmsr
	test %edx, %edx
	js 3f
	swapgs
	mov $1, %ebx
3:	mov %rsp, %rdi
	call trap_dispatch
	test %ebx, %ebx
	jz 4f
	swapgs
4:	POP_GPRS
	add $16, %rsp
	iretq

	.macro ENTRY v
	.quad isr_\v
	.endm

	.section .rodata
	.balign 8
	.global isr_table
isr_table:
	.set v, 0
	.rept 256
	ENTRY %v
	.set v, v + 1
	.endr
