/* switch_to(prev, next): saves the callee-saved registers on prev's kernel stack, stores
 * the stack pointer in prev->ksp (offset 0), and resumes next from next->ksp. */
	.text
	.global switch_to
switch_to:
	pushq %rbp
	pushq %rbx
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	mov %rsp, (%rdi)
	mov (%rsi), %rsp
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %rbx
	popq %rbp
	ret

/* First run of a new thread: switch_to "returns" here with the user trap frame on top of
 * the stack. Drop the kernel lock handed over by schedule() and enter user mode. */
	.global thread_first_run
thread_first_run:
	call thread_start_unlock
	jmp trap_return
