/* Kernel activity counters (KC_INFO KI_STAT and KI_KCALL_STAT), for the per-request
 * accounting of make bench and the console's `perf` (docs/benchmarks.md). Each CPU keeps its
 * own; KC_INFO answers their sum over every CPU. They only grow (wrap at 2^64). */
#pragma once

enum kstat {
	KST_KCALLS = 0,          /* native kernel calls */
	KST_LINUX_CALLS,         /* Linux system calls that entered the kernel */
	KST_SWITCHES,            /* context switches (a different thread got the CPU) */
	KST_AS_SWITCHES,         /* address-space switches (CR3 written) */
	KST_IPI_RESCHED,         /* reschedule IPIs sent */
	KST_IPI_CALL,            /* remote-call IPIs sent (TLB shootdowns and the like) */
	KST_IPI_KICK,            /* kernel-lock kicks sent to halted waiters */
	KST_BLOCKS,              /* threads blocked (IPC, wait, futex, sleep) */
	KST_WAKES,               /* threads made ready */
	KST_DEVICE_IRQS,         /* device interrupts */
	KST_TICKS,               /* timer interrupts (the count KI_CPU_TICKS gives per CPU) */
	KST_IDLE_HALTS,          /* HLTs of the idle loop */
	KST_KLOCK_CONTENDED,     /* kernel-lock acquisitions that found it held */
	KST_KLOCK_HALTS,         /* ... and halted waiting for it */
	KST_KLOCK_WAIT_CYCLES,   /* TSC cycles spent waiting for the lock */
	KST_KLOCK_HOLD_CYCLES,   /* TSC cycles the lock was held (calls, interrupts, idle) */
	KST_WAIT_CALLS,          /* KC_WAIT calls */
	KST_WAIT_SLEEPS,         /* ... that slept (blocked or MWAIT) */
	KST_IDLE_CYCLES,         /* TSC cycles CPUs spent halted in the idle loop */
	KST_IPI_SAVED,           /* wake-ups on another CPU that needed no IPI: it runs a thread
	                            as urgent, which finds the woken one when it blocks or yields */
	KST_WAKE_MOVES,          /* woken threads placed on another CPU than their last: theirs
	                            was busy, another idle or running something less urgent */
	KST_WAKE_DEFERRED,       /* woken threads kept on the waker's CPU, to run when it blocks */
	KST_DEFER_MOVED,         /* ... sent on to an idle CPU because the waker went on */
	KST_STEALS,              /* threads an idle CPU took from the queue of a busy one */
	KST_WAKE_RINGS,          /* wake words rung (KC_WAKE WK_RING) */
	KST_DEMAND_PAGES,        /* pages of lazy memory objects made at their first touch */
	KST_IPI_CYCLES,          /* TSC cycles spent sending IPIs (an APIC register access is a
				  * trap into the hypervisor: the sender pays it) */
	KST_TSC,                 /* the TSC now, once per CPU (KI_STAT: their sum; KI_CPU_STAT: one) */
	KST_COUNT
};

/* KI_KCALL_STAT's arg: a kernel call number (KC_COUNT for all Linux calls together) in bits
 * 0-7, what to answer in bits 8-15. */
#define KCS_CALLS 0        /* calls made */
#define KCS_WAIT_CYCLES 1  /* TSC cycles they waited for the kernel lock */
#define KCS_HOLD_CYCLES 2  /* TSC cycles the lock was held from their taking it to its release
                              on that CPU (a call that blocked: up to the release by the thread
                              it switched to), never the time they slept */
