/* KC_WAKE: a Linux process's wake word, which the servers ring (docs/sockets.md, "A library
 * that blocks"). The socket library of a process names one 32-bit word of memory it shares
 * with the stack (its activity page) and sleeps on it with a Linux LX_FUTEX_WAIT; a server that
 * has something for it (tcp or udp new data or room, syscall a changed status, vfs a ready
 * descriptor of the kernel's set) adds to the word and wakes the process's waiters there,
 * in one call and with no server in between. The word is changed by the kernel, so a ring
 * between the library's last look and its LX_FUTEX_WAIT makes the wait return at once: no
 * wake-up is lost. A process can spoil only its own wake-ups through its word. */
#include "linux/hooks.h"
#include "linux/lxstate.h"
#include "lx_abi.h"
#include "linux/futex.h"
#include "mm/aspace.h"
#include "mm/vmm.h"
#include "smp/percpu.h"

/* The word at va in p, writable and present, through the kernel's map of it; NULL if not. */
static uint32_t *word_of(struct proc *p, uint64_t va)
{
	uint64_t pte = as_lookup(p->as, va);
	if ((pte & (PTE_P | PTE_W | PTE_U)) != (PTE_P | PTE_W | PTE_U))
		return NULL;
	return (uint32_t *)phys_to_virt((pte & PTE_ADDR) + (va & (PAGE_SIZE - 1)));
}

int64_t kc_wake(struct thread *me, uint64_t op, uint64_t a, uint64_t b)
{
	struct lx_proc *lx = me->proc->lx;
	switch (op) {
	case WK_SET: /* (va): the caller's own word; 0 forgets it */
		if (!lx)
			return -KE_PERM;
		if ((a & 3) || a >= USER_TOP)
			return -KE_INVAL;
		lx->wake_va = a;
		return 0;
	case WK_RING: { /* (process, add): servers only */
		if (lx)
			return -KE_PERM;
		if (a > 0xffffffffull || (uint32_t)b != b)
			return -KE_INVAL;
		struct thread *t = ep_lookup((endpoint_t)a);
		struct proc *p = t ? t->proc : NULL;
		if (!p || p->id != (endpoint_t)a || p->exiting || !p->lx)
			return -KE_SRCH;
		if (!p->lx->wake_va)
			return -KE_AGAIN; /* no word (yet): the caller wakes it the old way */
		uint32_t *w = word_of(p, p->lx->wake_va);
		if (!w)
			return -KE_FAULT;
		__atomic_fetch_add(w, (uint32_t)b, __ATOMIC_SEQ_CST);
		KSTAT_INC(KST_WAKE_RINGS);
		return futex_wake(p, p->lx->wake_va, UINT64_MAX, ~0u);
	}
	default:
		return -KE_INVAL;
	}
}
