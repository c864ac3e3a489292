/* Virtual memory layout constants shared by assembly and C (see docs/memory.md). */
#pragma once

#define KERNEL_VMA      0xffffffff80000000
#define DIRECT_MAP_BASE 0xffff800000000000 /* all RAM, 2 MiB pages, NX */
#define KSTACK_BASE     0xffffc00000000000 /* kernel stacks with guard pages */
#define MMIO_BASE       0xffffc80000000000 /* uncached device mappings */
#define KTEST_BASE      0xffffd00000000000 /* scratch window for self-tests */
#define KERNEL_PHYS     0x100000
#define AP_TRAMPOLINE   0x8000             /* real-mode start-up page for APs */
#define BOOT_STACK_SIZE 16384
