/* Per-CPU data, reached through GS (its first field points to itself). */
#pragma once
#include "lib/types.h"
#include "lib/spinlock.h"
#include "arch/cpu.h"
#include "arch/desc.h"
#include <axolotl/kcall.h>
#include <axolotl/kstat.h>

#define MAX_CPUS 256

struct thread;

struct cpu {
	struct cpu *self;       /* %gs:0  (offsets used by kernel/proc/entry.S) */
	uint64_t kstack_top;    /* %gs:8  kernel stack of the running thread */
	uint64_t user_rsp;      /* %gs:16 scratch for the syscall entry */
	struct thread *current; /* %gs:24 */
	uint32_t index;   /* 0 .. ncpus-1, 0 is the boot CPU */
	uint32_t apic_id;
	uint32_t acpi_uid;
	bool bsp;
	volatile bool online;
	struct cpu_features feat;

	volatile uint64_t ticks;        /* LAPIC timer interrupts taken */
	volatile uint64_t resched_ipis; /* reschedule IPIs taken */
	volatile uint64_t call_ipis;    /* remote-call IPIs taken */

	struct thread *idle;      /* this CPU's idle thread */
	struct thread *dedicated; /* the only thread allowed here, or NULL */
	struct thread *last_dead; /* switched away from while dead: reaped by the next thread */
	volatile bool need_resched;
	uint64_t run_since_us;    /* when the current thread was switched in (CPU-time accounting) */
	uint64_t stack_top;
	uint64_t io_loaded;       /* I/O bitmap key in tss.iomap (proc/devpriv.c), 0 = none */
	uint64_t loaded_cr3;      /* the user address space in CR3, also while the idle thread
	                             borrows it (written under the kernel lock by schedule() and
	                             as_destroy), 0: the kernel's; as_flush reads it */
	uint32_t irq_depth;       /* interrupt handlers running (a waiter for the kernel lock
	                             halts only outside them) */
	volatile bool klock_halted; /* halted in klock_slow, waiting for a kick */
	uint64_t klock_since;       /* TSC when this CPU took the kernel lock (klock.h) */
	uint32_t klock_call;        /* 1 + the kernel call that took it here (KC_COUNT: a Linux
	                               call), 0: none; its hold is charged to that call */
	uint32_t lx_nr;             /* the Linux call number, when klock_call names a Linux call */
	uint32_t icr_dest;          /* the destination in this CPU's APIC's ICR + 1, 0 unknown (lapic.c) */
	bool resched_any;           /* resched_pending has a bit set */
	struct thread *deferred;    /* woken by the current thread, kept here (proc/sched.c) */
	uint32_t deferred_to;       /* the CPU it would have gone to */
	bool deferred_due;          /* a tick came while it was kept: it moves at the next return */
	uint64_t resched_pending[MAX_CPUS / 64]; /* reschedule IPIs to send once the kernel lock
	                                            is released (proc/sched.c) */
	uint64_t stat[KST_COUNT]; /* activity counters (axolotl/kstat.h); only this CPU writes */
	uint64_t kc_stat[KC_COUNT + 1][3]; /* per kernel call (KC_COUNT: Linux calls): KCS_* */
	uint64_t lx_stat[LX_STAT_NRS];     /* Linux calls by number (KI_LX_STAT) */
	struct gdt gdt;
	struct tss tss __aligned(16);
	struct idt_entry idt[256] __aligned(16);
};

_Static_assert(__builtin_offsetof(struct cpu, kstack_top) == 8, "entry.S");
_Static_assert(__builtin_offsetof(struct cpu, user_rsp) == 16, "entry.S");
_Static_assert(__builtin_offsetof(struct cpu, current) == 24, "entry.S");

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

/* Bumps an activity counter of this CPU (interrupts are off in the kernel: no race). */
#define KSTAT_ADD(k, n) (this_cpu()->stat[(k)] += (n))
#define KSTAT_INC(k) KSTAT_ADD(k, 1)
