/* Device privileges and KC_PRIV. The device calls themselves (ports, IRQs, MMIO, PCI) are
 * not in yet: they answer -ENOSYS. */
#include "proc/devpriv.h"
#include "proc/proc.h"

/* KC_PRIV: the parent gives its child a privilege it holds itself. */
static int64_t priv_give(struct thread *me, endpoint_t ep, uint64_t kind, uint64_t a, uint64_t b)
{
	(void)b;
	struct thread *t = ep_lookup(ep);
	if (!t)
		return -KE_DEADSRCDST;
	struct proc *p = t->proc, *mine = me->proc;
	if (p->parent != thread_ep(me) || p == mine)
		return -KE_PERM;
	switch (kind) {
	case KPRIV_KCALLS:
		p->kcalls_allowed |= a & mine->kcalls_allowed;
		return 0;
	case KPRIV_ALL:
		p->kcalls_allowed |= mine->kcalls_allowed;
		p->dev.all = mine->dev.all;
		p->dev.dma = mine->dev.dma;
		return 0;
	default:
		return -KE_INVAL;
	}
}

int64_t devpriv_call(struct thread *me, uint32_t n, const uint64_t a[6])
{
	switch (n) {
	case KC_PRIV:
		return priv_give(me, (endpoint_t)a[0], a[1], a[2], a[3]);
	default:
		return -KE_NOSYS;
	}
}

void devpriv_grant_all(struct proc *p) { p->dev.all = true, p->dev.dma = true; }
void devpriv_release(struct proc *p) { (void)p; }
void devpriv_switch(struct proc *next) { (void)next; }
