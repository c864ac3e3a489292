/* The kernel lock's slow path (klock.h): spin a bounded time, then halt until kicked. */
#include "proc/klock.h"
#include "arch/lapic.h"
#include "arch/time.h"
#include "arch/trap.h"
#include "arch/x86.h"
#include "smp/ipi.h"
#include "smp/percpu.h"

volatile uint32_t kernel_lock;
volatile uint32_t kernel_lock_sleepers;

/* How long a waiter spins before it halts. Long enough that an uncontended hand-off on
 * real cores never halts (a kernel call holds the lock for a few microseconds), short
 * enough that a waiter whose holder the host has descheduled soon gives its CPU back. */
#define SPIN_US 20

static inline bool try_take(void)
{
	return !__atomic_load_n(&kernel_lock, __ATOMIC_RELAXED) && klock_try();
}

/* Halts until a release kicks this CPU (or any interrupt arrives). Interrupts are on only
 * inside the HLT: STI's shadow covers it, so a kick sent after the last look ends the HLT
 * instead of being taken before it. */
static void halt_for_lock(struct cpu *c)
{
	c->klock_halted = true;
	__atomic_fetch_add(&kernel_lock_sleepers, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&kernel_lock, __ATOMIC_SEQ_CST)) {
		c->stat[KST_KLOCK_HALTS]++;
		__asm__ volatile("sti; hlt; cli" ::: "memory");
	}
	__atomic_fetch_sub(&kernel_lock_sleepers, 1, __ATOMIC_RELAXED);
	c->klock_halted = false;
}

void klock_slow(void)
{
	struct cpu *c = this_cpu();
	uint64_t t0 = rdtsc(), spin = tsc_hz / 1000000 * SPIN_US, since = t0;
	c->stat[KST_KLOCK_CONTENDED]++;
	for (;;) {
		ipi_poll();
		if (try_take())
			break;
		cpu_relax();
		/* Inside an interrupt handler (one that came in while this CPU halted here, say)
		 * the waiter only spins: halting there would nest interrupts without bound. */
		if (c->irq_depth == 0 && rdtsc() - since > spin) {
			halt_for_lock(c);
			since = rdtsc();
		}
	}
	c->stat[KST_KLOCK_WAIT_CYCLES] += rdtsc() - t0;
}

/* A release saw halted waiters: wake one (the next after this CPU, so all get turns). A
 * woken waiter that loses the race halts again, and the winner's release kicks again. */
void klock_kick(void)
{
	uint32_t me = this_cpu_index(), n = ncpus;
	for (uint32_t k = 1; k <= n; k++) {
		uint32_t i = (me + k) % n;
		struct cpu *o = cpus[i];
		if (i != me && o && __atomic_load_n(&o->klock_halted, __ATOMIC_RELAXED)) {
			KSTAT_INC(KST_IPI_KICK);
			smp_send_ipi(o->apic_id, VEC_IPI_KICK | ICR_FIXED | ICR_ASSERT);
			return;
		}
	}
}

static void kick_irq(struct trap_frame *f)
{
	(void)f;
	lapic_eoi(); /* ending the HLT was all it had to do */
}

void klock_init(void)
{
	trap_set_handler(VEC_IPI_KICK, kick_irq);
}
