/* Interrupt and exception entry: 256 stubs that push a uniform frame (struct trap_frame)
 * and call trap_dispatch. GS is swapped only when coming from user mode. */

	.macro STUB v
	.balign 16
isr_\v:
	.if (\v == 8 || \v == 10 || \v == 11 || \v == 12 || \v == 13 || \v == 14 || \v == 17 || \v == 21 || \v == 29 || \v == 30)
	.else
	pushq $0
	.endif
	pushq $\v
	jmp isr_common
	.endm

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
1:	pushq %rax
	pushq %rbx
	pushq %rcx
	pushq %rdx
	pushq %rsi
	pushq %rdi
	pushq %rbp
	pushq %r8
	pushq %r9
	pushq %r10
	pushq %r11
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	mov %rsp, %rdi
	call trap_dispatch
	.global trap_return
trap_return:
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %r11
	popq %r10
	popq %r9
	popq %r8
	popq %rbp
	popq %rdi
	popq %rsi
	popq %rdx
	popq %rcx
	popq %rbx
	popq %rax
	testb $3, 24(%rsp)
	jz 2f
	swapgs
2:	add $16, %rsp
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
