/* Demand paging of lazy memory objects (MOF_LAZY, MO_LAZY): a mapping of such an object
 * gets page-table entries only for the pages made so far (proc.c map_range); the first
 * touch of any other page, by the process itself or by the kernel on its behalf (a copy
 * to or from user memory, vcopy, MONITOR on a doorbell), faults here, and the page is made
 * (zeroed) and mapped. Every process mapping the object then sees the same page: a
 * second mapper's fault finds it made and only maps it.
 *
 * Nothing else is demand-paged: a fault anywhere else stops the process (or raises its
 * Linux signal) as before, and so does a fault in a lazy mapping without access
 * (PROT_NONE) or when no frame is left. */
#include "proc/demand.h"
#include "proc/klock.h"
#include "proc/proc.h"
#include "proc/memobj.h"
#include "mm/aspace.h"
#include "mm/vmm.h"
#include "arch/trap.h"
#include "arch/x86.h"
#include "smp/percpu.h"

/* The mapping of p that covers va, or NULL. */
static const struct mapping *mapping_at(const struct proc *p, uint64_t va)
{
	for (uint32_t i = 0; i < p->nmaps; i++) {
		const struct mapping *m = &p->maps[i];
		if (va >= m->va && va - m->va < m->npages * PAGE_SIZE)
			return m;
	}
	return NULL;
}

uint64_t demand_page(struct proc *p, uint64_t va)
{
	va &= ~(uint64_t)(PAGE_SIZE - 1);
	uint64_t pte = as_lookup(p->as, va);
	if (pte)
		return pte; /* made meanwhile (another thread of p, or the kernel) */
	const struct mapping *m = mapping_at(p, va);
	if (!m || !m->mo || !(m->mo->flags & MO_LAZY) || !m->prot)
		return 0;
	uint64_t page = m->first_page + (va - m->va) / PAGE_SIZE;
	if (memobj_fill(m->mo, page, 1))
		return 0;
	if (as_map(p->as, va, m->mo->frames[page], proc_prot_flags(m->prot)))
		return 0;
	KSTAT_INC(KST_DEMAND_PAGES);
	return as_lookup(p->as, va);
}

bool demand_fault(const struct trap_frame *f)
{
	uint64_t va = read_cr2();
	struct thread *t = this_cpu()->current;
	if (f->vector != 14 || (f->error & 1) || va >= USER_TOP || !t || !t->proc || !t->proc->as)
		return false; /* a protection fault, a kernel address, or no process */
	/* From user mode the lock is free; inside a kernel call it is ours already, except
	 * where a call drops it (wait.c's MONITOR/MWAIT). */
	bool take = !klock_mine();
	if (take)
		klock();
	bool made = t->state != T_DEAD && demand_page(t->proc, va) != 0;
	if (take)
		kunlock();
	return made;
}
