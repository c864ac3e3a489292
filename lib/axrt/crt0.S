/* Process entry for native Axolotl programs: the kernel leaves argc, argv, envp and auxv on
 * the stack (Linux x86-64 layout); call main(argc, argv) and exit with its result. */
	.text
	.global _start
_start:
	xor %ebp, %ebp
	mov (%rsp), %rdi
	lea 8(%rsp), %rsi
	and $-16, %rsp
	call main
	mov %eax, %edi
	call ax_exit
	ud2
