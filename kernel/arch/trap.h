#pragma once
#include "lib/types.h"

struct trap_frame {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8, rbp, rdi, rsi, rdx, rcx, rbx, rax;
	uint64_t vector, error;
	uint64_t rip, cs, rflags, rsp, ss;
};

/* Interrupt vectors (see docs/boot.md). */
#define VEC_PIC_BASE 0x20   /* legacy PIC, remapped and masked */
#define VEC_IRQ_BASE 0x30   /* IOAPIC pins 0..23 */
#define VEC_TIMER 0x40
#define VEC_MSI_BASE 0x50   /* message-signalled interrupts of user drivers (proc/msi.c) */
#define VEC_MSI_COUNT 32    /* 0x50..0x6f */
#define VEC_IPI_CALL 0xf0
#define VEC_IPI_RESCHED 0xf1
#define VEC_IPI_KICK 0xf2    /* wakes a CPU halted waiting for the kernel lock */
#define VEC_APIC_ERROR 0xfe
#define VEC_SPURIOUS 0xff

typedef void (*irq_handler_t)(struct trap_frame *f);
void trap_set_handler(int vector, irq_handler_t h);
void trap_dispatch(struct trap_frame *f);
void trap_dump(const struct trap_frame *f);

/* Exception fix-ups: a faulting instruction listed here resumes at its fixup address
 * with rax = -1 instead of panicking (used by probe_read). */
struct extable_entry {
	uint64_t insn, fixup;
};
/* Reads 8 bytes at va; returns 0 and the value, or -1 if the read faulted. */
int probe_read(uint64_t va, uint64_t *out);
