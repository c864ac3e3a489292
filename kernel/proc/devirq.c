/* ISA IRQ lines for user-level drivers. KC_IRQ_BIND routes the line through the I/O APIC to
 * VEC_IRQ_BASE + irq on the boot CPU; each interrupt masks the line, EOIs and notifies the
 * bound thread; KC_IRQ_UNMASK accepts the next one. See docs/devices.md. */
#include "proc/devpriv.h"
#include "proc/proc.h"
#include "proc/ipc.h"
#include "proc/klock.h"
#include "smp/ipi.h"
#include "arch/ioapic.h"
#include "arch/lapic.h"
#include "arch/trap.h"
#include "smp/percpu.h"
#include "arch/time.h"

#define NISA 16
/* Lines never given to user space: 2 is the PIC cascade (and where IRQ 0 usually arrives
 * through an override). The kernel routes no other ISA line itself. */
#define IRQ_KERNEL_MASK (1u << 2)

struct irq_binding {
	struct proc *owner; /* NULL: free; cleared by devirq_release before the proc is freed */
	endpoint_t ep;      /* the thread notified */
	uint64_t bits;
	uint32_t gsi;
	uint64_t count;     /* interrupts delivered */
	bool watched;       /* KIRQ_WATCHED: a line masked for long is a deaf driver */
	uint64_t masked_ns; /* when an interrupt masked it (0: unmasked since) */
};
static struct irq_binding binds[NISA];
static bool handlers_set;

static void isa_irq(struct trap_frame *f)
{
	uint32_t irq = (uint32_t)(f->vector - VEC_IRQ_BASE);
	if (irq >= NISA) {
		lapic_eoi();
		return;
	}
	KSTAT_INC(KST_DEVICE_IRQS);
	klock();
	struct irq_binding *b = &binds[irq];
	if (b->owner) {
		/* Masked until the driver has served the device and asks for more. */
		ioapic_set_masked(b->gsi, true);
		b->count++;
		if (b->watched && !b->masked_ns) /* (the clock only for lines rs watches) */
			b->masked_ns = time_ns_since_boot() | 1;
		struct thread *t = ep_lookup(b->ep);
		if (t && t->proc == b->owner && !t->proc->exiting) {
			t->notify_pending |= b->bits;
			ipc_wake_receiver(t);
		}
	} else {
		ioapic_set_masked(ioapic_isa_gsi((uint8_t)irq), true); /* stray: unbound line */
	}
	kunlock();
	lapic_eoi();
}

static bool gsi_taken(uint32_t gsi, uint32_t except)
{
	for (uint32_t i = 0; i < NISA; i++)
		if (i != except && binds[i].owner && binds[i].gsi == gsi)
			return true;
	return false;
}

int64_t devirq_bind(struct thread *me, uint64_t irq, uint64_t bits, uint64_t flags)
{
	struct proc *p = me->proc;
	if (irq >= NISA || !bits || (flags & ~(uint64_t)KIRQ_WATCHED))
		return -KE_INVAL;
	if (!p->dev.all && !(p->dev.irqs & (1u << irq)))
		return -KE_PERM;
	if (IRQ_KERNEL_MASK & (1u << irq))
		return -KE_BUSY;
	struct irq_binding *b = &binds[irq];
	if (b->owner && b->owner != p)
		return -KE_BUSY;
	uint32_t gsi = ioapic_isa_gsi((uint8_t)irq);
	if (gsi_taken(gsi, (uint32_t)irq))
		return -KE_BUSY; /* two ISA lines overridden onto one pin */
	if (!handlers_set) {
		for (int i = 0; i < NISA; i++)
			trap_set_handler(VEC_IRQ_BASE + i, isa_irq);
		handlers_set = true;
	}
	bool rebind = b->owner == p;
	b->owner = p;
	b->ep = thread_ep(me);
	b->bits = bits;
	b->gsi = gsi;
	b->watched = flags & KIRQ_WATCHED;
	if (rebind)
		return 0;
	b->count = 0;
	b->masked_ns = 0;
	if (ioapic_route_isa((uint8_t)irq, (uint8_t)(VEC_IRQ_BASE + irq), cpus[0]->apic_id, false) < 0) {
		b->owner = NULL;
		return -KE_INVAL; /* no I/O APIC serves it */
	}
	return 0;
}

int64_t devirq_unmask(struct thread *me, uint64_t irq)
{
	if (irq >= NISA)
		return -KE_INVAL;
	struct irq_binding *b = &binds[irq];
	if (b->owner != me->proc)
		return -KE_PERM;
	b->masked_ns = 0;
	ioapic_set_masked(b->gsi, false);
	return 0;
}

/* Anyone may ask: who serves a line, and since when it waits, is nothing secret. */
int64_t devirq_masked(uint64_t irq)
{
	if (irq >= NISA)
		return -KE_INVAL;
	const struct irq_binding *b = &binds[irq];
	if (!b->owner || !b->watched || !b->masked_ns)
		return 0;
	uint64_t now = time_ns_since_boot(), ms = now > b->masked_ns ? (now - b->masked_ns) / 1000000 : 0;
	return (int64_t)((uint64_t)b->ep | (ms < 0x7fffffffull ? ms : 0x7fffffffull) << 32);
}

void devirq_release(struct proc *p)
{
	for (uint32_t i = 0; i < NISA; i++) {
		struct irq_binding *b = &binds[i];
		if (b->owner != p)
			continue;
		ioapic_set_masked(b->gsi, true);
		b->owner = NULL;
		b->ep = EP_NONE;
	}
}
