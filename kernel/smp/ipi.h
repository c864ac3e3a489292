/* Inter-processor calls, reschedule kicks and TLB shootdowns.
 * Each CPU has a queue of call descriptors; an IPI only says "look at your queue", so
 * requests are never lost when IPIs coalesce. A CPU waiting for a call to complete keeps
 * serving its own queue, so two CPUs calling each other (even with interrupts off) never
 * deadlock. */
#pragma once
#include "lib/types.h"

struct ipi_call {
	void (*fn)(void *arg);
	void *arg;
	volatile uint32_t pending; /* targets that have not finished yet */
};

void ipi_init(void);
/* Queues call on cpu (not the caller) and kicks it; returns -1 if cpu is not online. */
int smp_call_start(uint32_t cpu, struct ipi_call *call);
/* Waits for every target of call, serving this CPU's queue meanwhile. */
void smp_call_wait(struct ipi_call *call);
/* Runs fn(arg) on cpu (directly if it is the caller) and waits for it. */
int smp_call(uint32_t cpu, void (*fn)(void *), void *arg);
/* Runs fn(arg) on every other online CPU and waits for all of them. */
void smp_call_others(void (*fn)(void *), void *arg);
/* Runs fn(arg) on every online CPU at once, this one included, and waits for all. */
void smp_call_all(void (*fn)(void *), void *arg);
/* Runs fn(arg) on every other CPU whose CR3 holds the user address space cr3 (cpu->loaded_cr3,
 * which changes only under the kernel lock: the caller holds it) and waits. */
void smp_call_loaded(uint64_t cr3, void (*fn)(void *), void *arg);
void smp_send_resched(uint32_t cpu);
/* Sends an IPI from a running CPU, its cost counted (KST_IPI_CYCLES). */
void smp_send_ipi(uint32_t apic_id, uint32_t icr_low);
/* Invalidates [va, va + npages pages) on this CPU and all others, acknowledged. */
void tlb_shootdown(uint64_t va, uint64_t npages);
/* Runs the calls queued for this CPU. */
void ipi_poll(void);
