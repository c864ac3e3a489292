/* Message-signalled interrupts for user-level drivers (KC_MSI_BIND, docs/devices.md
 * "MSI-X"). The kernel only hands out vectors from a pool (VEC_MSI_BASE..+VEC_MSI_COUNT) to
 * a process holding the PCI function, says which message (address, data) makes each one
 * arrive, and turns each arrival into the binder's notification bits. The driver programs
 * its function's MSI-X table and enables it itself; it masks at the device while it polls.
 * No I/O APIC is involved: a message is an edge, nothing stays masked here. */
#include "proc/devpriv.h"
#include "proc/msipool.h"
#include "proc/proc.h"
#include "proc/ipc.h"
#include "proc/klock.h"
#include "arch/lapic.h"
#include "arch/trap.h"
#include "mm/aspace.h"
#include "smp/percpu.h"

struct msi_binding {
	struct proc *owner; /* NULL: free; cleared by msi_release before the proc is freed */
	endpoint_t ep;      /* the thread notified */
	uint64_t bits;
	uint32_t bdf;
	uint64_t count;     /* messages delivered to a binder */
};
static struct msi_binding vecs[VEC_MSI_COUNT];
static struct msi_pool pool = { .size = VEC_MSI_COUNT };
static uint64_t strays; /* messages for a vector nobody holds (a dead binder's device) */
static bool handlers_set;

static void msi_irq(struct trap_frame *f)
{
	uint32_t i = (uint32_t)(f->vector - VEC_MSI_BASE);
	KSTAT_INC(KST_DEVICE_IRQS);
	klock();
	struct msi_binding *b = i < VEC_MSI_COUNT ? &vecs[i] : NULL;
	struct thread *t = b && b->owner ? ep_lookup(b->ep) : NULL;
	if (t && t->proc == b->owner && !t->proc->exiting) {
		b->count++;
		t->notify_pending |= b->bits;
		ipc_wake_receiver(t);
	} else {
		strays++;
	}
	kunlock();
	lapic_eoi();
}

void msi_install_handlers(void)
{
	if (handlers_set)
		return;
	for (int i = 0; i < VEC_MSI_COUNT; i++)
		trap_set_handler(VEC_MSI_BASE + i, msi_irq);
	handlers_set = true;
}

static void unbind(uint32_t i)
{
	vecs[i] = (struct msi_binding){ .ep = EP_NONE };
	msi_pool_free(&pool, i);
}

/* Frees p's vectors for bdf (every function's if bdf is KPCI_ALL). */
static void release_bdf(struct proc *p, uint32_t bdf)
{
	for (uint32_t i = 0; i < VEC_MSI_COUNT; i++)
		if (vecs[i].owner == p && (bdf == KPCI_ALL || vecs[i].bdf == bdf))
			unbind(i);
}

int64_t msi_bind(struct thread *me, uint64_t bdf, uint64_t nvec, uint64_t ubits, uint64_t uout)
{
	struct proc *p = me->proc;
	if (bdf > 0xffff || nvec > KMSI_MAX)
		return -KE_INVAL;
	if (!devpriv_pci_held(p, (uint32_t)bdf))
		return -KE_PERM;
	if (!nvec) {
		release_bdf(p, (uint32_t)bdf);
		return 0;
	}
	uint64_t bits[KMSI_MAX];
	if (copy_from_user(bits, (const void *)ubits, nvec * sizeof(bits[0])))
		return -KE_FAULT;
	for (uint32_t i = 0; i < nvec; i++)
		if (!bits[i])
			return -KE_INVAL;
	uint32_t apic = cpus[0]->apic_id; /* the boot CPU, where the I/O APIC lines go too */
	if (apic > 0xff)
		return -KE_NOSYS; /* beyond the 8-bit destination of a message (no remapping) */
	uint32_t mine = 0;
	for (uint32_t i = 0; i < VEC_MSI_COUNT; i++)
		mine += vecs[i].owner == p && vecs[i].bdf == bdf;
	if (msi_pool_free_count(&pool) + mine < nvec)
		return -KE_BUSY; /* none left: the old binding stays */
	release_bdf(p, (uint32_t)bdf);
	struct kc_msi out[KMSI_MAX];
	int got[KMSI_MAX];
	for (uint32_t i = 0; i < nvec; i++) {
		got[i] = msi_pool_alloc(&pool);
		uint32_t v = VEC_MSI_BASE + (uint32_t)got[i];
		vecs[got[i]] = (struct msi_binding){ .owner = p, .ep = thread_ep(me), .bits = bits[i], .bdf = (uint32_t)bdf };
		out[i] = (struct kc_msi){ .addr = msi_address(apic), .data = msi_data(v), .vector = v };
	}
	msi_install_handlers();
	if (copy_to_user((void *)uout, out, nvec * sizeof(out[0]))) {
		for (uint32_t i = 0; i < nvec; i++)
			unbind((uint32_t)got[i]);
		return -KE_FAULT;
	}
	return (int64_t)nvec;
}

void msi_release(struct proc *p) { release_bdf(p, KPCI_ALL); }

uint64_t msi_strays(void) { return strays; }
