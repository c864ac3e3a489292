/* The vDSO image (build/vdso/vdso.so, built from kernel/vdso/vdso.c and checked by
 * kernel/vdso/check.sh), embedded in the kernel; kernel/linux/vdso.c copies it into the
 * memory object every Linux process maps. VDSO_SO is its path, from the Makefile. */
	.section .rodata
	.balign 16
	.globl vdso_image_start, vdso_image_end
vdso_image_start:
	.incbin VDSO_SO
vdso_image_end:
