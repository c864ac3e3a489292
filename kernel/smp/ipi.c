#include "smp/ipi.h"
#include "smp/percpu.h"
#include "arch/lapic.h"
#include "arch/trap.h"
#include "arch/x86.h"

#define CALLQ_SIZE 64

struct callq {
	spinlock_t lock;
	uint32_t head, tail;
	struct ipi_call *slot[CALLQ_SIZE];
};
static struct callq queues[MAX_CPUS];

void ipi_poll(void)
{
	struct callq *q = &queues[this_cpu_index()];
	for (;;) {
		uint64_t f = spin_lock_irqsave(&q->lock);
		if (q->head == q->tail) {
			spin_unlock_irqrestore(&q->lock, f);
			return;
		}
		struct ipi_call *c = q->slot[q->head % CALLQ_SIZE];
		q->head++;
		spin_unlock_irqrestore(&q->lock, f);
		c->fn(c->arg);
		__atomic_fetch_sub(&c->pending, 1, __ATOMIC_RELEASE);
	}
}

static void call_irq(struct trap_frame *f)
{
	(void)f;
	/* EOI first: a kick that arrives while we drain raises the interrupt again. */
	lapic_eoi();
	this_cpu()->call_ipis++;
	ipi_poll();
}

static void resched_irq(struct trap_frame *f)
{
	(void)f;
	lapic_eoi();
	/* A thread was made ready here: it gets the CPU at the next return to user mode. */
	this_cpu()->need_resched = true;
	this_cpu()->resched_ipis++;
}

void ipi_init(void)
{
	trap_set_handler(VEC_IPI_CALL, call_irq);
	trap_set_handler(VEC_IPI_RESCHED, resched_irq);
}

static void enqueue(uint32_t cpu, struct ipi_call *call)
{
	struct callq *q = &queues[cpu];
	for (;;) {
		uint64_t f = spin_lock_irqsave(&q->lock);
		if (q->tail - q->head < CALLQ_SIZE) {
			q->slot[q->tail % CALLQ_SIZE] = call;
			q->tail++;
			spin_unlock_irqrestore(&q->lock, f);
			return;
		}
		spin_unlock_irqrestore(&q->lock, f);
		ipi_poll(); /* the target may be waiting on us: keep serving while its queue is full */
		cpu_relax();
	}
}

void smp_send_ipi(uint32_t apic_id, uint32_t icr_low)
{
	uint64_t t0 = rdtsc();
	lapic_send_ipi(apic_id, icr_low, &this_cpu()->icr_dest);
	KSTAT_ADD(KST_IPI_CYCLES, rdtsc() - t0);
}

int smp_call_start(uint32_t cpu, struct ipi_call *call)
{
	if (cpu >= ncpus || !cpus[cpu] || !cpus[cpu]->online || cpu == this_cpu_index())
		return -1;
	__atomic_fetch_add(&call->pending, 1, __ATOMIC_RELAXED);
	enqueue(cpu, call);
	KSTAT_INC(KST_IPI_CALL);
	smp_send_ipi(cpus[cpu]->apic_id, VEC_IPI_CALL | ICR_FIXED | ICR_ASSERT);
	return 0;
}

void smp_call_wait(struct ipi_call *call)
{
	while (__atomic_load_n(&call->pending, __ATOMIC_ACQUIRE)) {
		ipi_poll();
		cpu_relax();
	}
}

int smp_call(uint32_t cpu, void (*fn)(void *), void *arg)
{
	if (cpu == this_cpu_index()) {
		uint64_t f = irq_save();
		fn(arg);
		irq_restore(f);
		return 0;
	}
	struct ipi_call call = { fn, arg, 0 };
	if (smp_call_start(cpu, &call))
		return -1;
	smp_call_wait(&call);
	return 0;
}

/* Starts fn(arg) on every other online CPU (cr3 != 0: only those whose loaded user address
 * space it is), runs it here too if `here`, then waits. */
static void call_each(void (*fn)(void *), void *arg, bool here, uint64_t cr3)
{
	struct ipi_call call = { fn, arg, 0 };
	uint32_t me = this_cpu_index();
	for (uint32_t i = 0; i < ncpus; i++)
		if (i != me && (!cr3 || (cpus[i] && cpus[i]->loaded_cr3 == cr3)))
			smp_call_start(i, &call);
	if (here)
		fn(arg);
	smp_call_wait(&call);
}

void smp_call_others(void (*fn)(void *), void *arg) { call_each(fn, arg, false, 0); }
void smp_call_all(void (*fn)(void *), void *arg) { call_each(fn, arg, true, 0); }
void smp_call_loaded(uint64_t cr3, void (*fn)(void *), void *arg) { call_each(fn, arg, false, cr3); }

void smp_send_resched(uint32_t cpu)
{
	if (cpu < ncpus && cpus[cpu] && cpus[cpu]->online) {
		KSTAT_INC(KST_IPI_RESCHED);
		smp_send_ipi(cpus[cpu]->apic_id, VEC_IPI_RESCHED | ICR_FIXED | ICR_ASSERT);
	}
}

struct flush_range {
	uint64_t va, npages;
};

static void flush_local(void *arg)
{
	const struct flush_range *r = arg;
	if (r->npages > TLB_FLUSH_ALL_PAGES) {
		/* Toggling PGE flushes everything, global kernel entries included. */
		uint64_t cr4 = read_cr4();
		write_cr4(cr4 & ~(uint64_t)CR4_PGE);
		write_cr4(cr4);
		return;
	}
	for (uint64_t i = 0; i < r->npages; i++)
		invlpg(r->va + i * 4096);
}

void tlb_shootdown(uint64_t va, uint64_t npages)
{
	struct flush_range r = { va, npages };
	uint64_t f = irq_save();
	flush_local(&r);
	irq_restore(f);
	if (ncpus_online > 1)
		smp_call_others(flush_local, &r);
}
