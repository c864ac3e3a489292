/* `syscall` entry: switch to the thread's kernel stack (per-CPU data at %gs), build the same
 * struct trap_frame an interrupt from user mode builds (vector 0x100), run
 * syscall_dispatch, and leave through trap_return (iretq), which restores every register. */
#include "arch/trap_frame.inc"

	.text
	.global syscall_entry
syscall_entry:
	swapgs
	mov %rsp, %gs:16
	mov %gs:8, %rsp
	pushq $0x23              /* user SS */
	pushq %gs:16             /* user RSP */
	pushq %r11               /* user RFLAGS */
	pushq $0x2b              /* user CS */
	pushq %rcx               /* user RIP */
	pushq $0                 /* error code */
	pushq $0x100             /* vector: system call */
	PUSH_GPRS
	xor %ebp, %ebp
	mov %rsp, %rdi
	call syscall_dispatch
	jmp trap_return
