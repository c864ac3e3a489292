/* Per-CPU data, reached through GS (its first field points to itself). */
#pragma once
#include "lib/types.h"
#include "lib/spinlock.h"
#include "arch/cpu.h"
#include "arch/desc.h"

#define MAX_CPUS 256

struct ipi_call;

struct cpu {
	struct cpu *self; /* must stay first: %gs:0 */
	uint32_t index;   /* 0 .. ncpus-1, 0 is the boot CPU */
	uint32_t apic_id;
	uint32_t acpi_uid;
	bool bsp;
	volatile bool online;
	struct cpu_features feat;

	volatile uint64_t ticks;        /* LAPIC timer interrupts taken */
	volatile uint64_t resched_ipis; /* reschedule IPIs taken */
	volatile uint64_t call_ipis;    /* remote-call IPIs taken */

	spinlock_t call_lock; /* protects the remote-call queue below */
	struct ipi_call *call_head, *call_tail;

	uint64_t stack_top;
	struct gdt gdt;
	struct tss tss __aligned(16);
	struct idt_entry idt[256] __aligned(16);
};

extern struct cpu *cpus[MAX_CPUS];
extern volatile uint32_t ncpus;        /* CPUs known from the MADT (started or not) */
extern volatile uint32_t ncpus_online;

static inline struct cpu *this_cpu(void)
{
	struct cpu *c;
	__asm__ volatile("mov %%gs:0, %0" : "=r"(c));
	return c;
}

static inline uint32_t this_cpu_index(void)
{
	struct cpu *c = this_cpu();
	return c ? c->index : 0;
}

void percpu_install(struct cpu *c);
