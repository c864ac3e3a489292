/* Memory-object kernel calls: create, map, unmap, grant, revoke, destroy, physical address
 * for DMA, and the privileged copy between address spaces. All under the kernel lock.
 *
 * A handle is a process's right to an object (KP_* rights). Mappings made through a handle
 * remember it, so revoking or destroying the handle removes exactly those mappings, on every
 * CPU (TLB shootdown) before the call returns: a grantee cannot touch the memory afterwards. */
#include "proc/memcall.h"
#include "proc/proc.h"
#include "proc/legacy.h"
#include "proc/demand.h"
#include "mm/aspace.h"
#include "mm/heap.h"
#include "mm/pmm.h"
#include "mm/vmm.h"
#include "lib/string.h"

#define KP_ALL (KP_R | KP_W | KP_X)

static struct mo_handle *handle_get(struct proc *p, uint64_t h)
{
	if (h == 0 || h > p->handles_cap || !p->handles[h - 1].mo)
		return NULL;
	return &p->handles[h - 1];
}

int proc_handles_reserve(struct proc *p, uint32_t cap)
{
	if (cap <= p->handles_cap)
		return 0;
	struct mo_handle *n = cap <= MAX_HANDLES ? kzalloc(cap * sizeof(*n)) : NULL;
	if (!n)
		return -KE_NOMEM;
	if (p->handles_cap)
		memcpy(n, p->handles, p->handles_cap * sizeof(*n));
	kfree(p->handles);
	p->handles = n, p->handles_cap = cap;
	return 0;
}

static int64_t handle_new(struct proc *p, struct memobj *mo, uint32_t rights, bool creator, endpoint_t granter)
{
	uint32_t i = 0;
	while (i < p->handles_cap && p->handles[i].mo)
		i++;
	/* full: the table doubles, up to MAX_HANDLES */
	if (i == p->handles_cap && proc_handles_reserve(p, p->handles_cap ? p->handles_cap * 2 : 16) < 0)
		return -KE_NOMEM;
	memobj_get(mo);
	if (granter != EP_NONE)
		mo->granted++;
	p->handles[i] = (struct mo_handle){ mo, rights, creator, granter };
	return i + 1;
}

void mo_handle_release(struct mo_handle *hd)
{
	if (hd->granter != EP_NONE)
		hd->mo->granted--;
	memobj_put(hd->mo);
	hd->mo = NULL;
}

/* Drops handle h of p and every mapping made through it. */
static void handle_close(struct proc *p, uint32_t h)
{
	for (uint32_t i = p->nmaps; i-- > 0;)
		if (p->maps[i].handle == h)
			proc_unmap_index(p, i);
	mo_handle_release(&p->handles[h - 1]);
}

struct memobj *proc_handle_object(struct proc *p, uint64_t h, uint32_t rights)
{
	struct mo_handle *hd = handle_get(p, h);
	return hd && (hd->rights & rights) == rights ? hd->mo : NULL;
}

static int64_t mo_create(struct proc *p, uint64_t npages, uint64_t flags)
{
	if ((flags & ~(uint64_t)(MOF_DMA | MOF_LAZY)) || (flags & MOF_DMA && flags & MOF_LAZY))
		return -KE_INVAL;
	if ((flags & MOF_DMA) && !p->dev.dma)
		return -KE_PERM;
	if (!npages || npages > (1u << 18)) /* 1 GiB per object */
		return -KE_INVAL;
	struct memobj *mo = memobj_create(npages, flags & MOF_DMA ? MO_CONTIG : flags & MOF_LAZY ? MO_LAZY : 0);
	if (!mo)
		return -KE_NOMEM;
	int64_t h = handle_new(p, mo, KP_ALL, true, EP_NONE);
	memobj_put(mo); /* the handle holds it now (or nobody, on failure) */
	return h;
}

static int64_t mo_map(struct proc *p, uint64_t h, uint64_t va, uint64_t first, uint64_t npages, uint64_t prot)
{
	struct mo_handle *hd = handle_get(p, h);
	if (!hd)
		return -KE_INVAL;
	if (!prot || (prot & ~(uint64_t)KP_ALL))
		return -KE_INVAL;
	if (prot & ~(uint64_t)hd->rights)
		return -KE_PERM;
	if (first >= hd->mo->npages || !npages || npages > hd->mo->npages - first)
		return -KE_INVAL;
	if (!va && !(va = proc_find_va(p, npages)))
		return -KE_NOMEM;
	int r = proc_map(p, va, hd->mo, first, npages, (uint32_t)prot, (uint32_t)h);
	return r ? r : (int64_t)va;
}

static int64_t mo_unmap(struct proc *p, uint64_t va)
{
	for (uint32_t i = 0; i < p->nmaps; i++) {
		if (p->maps[i].va == va) {
			proc_unmap_index(p, i);
			return 0;
		}
	}
	return -KE_INVAL;
}

static int64_t mo_grant(struct thread *me, uint64_t h, endpoint_t to, uint64_t rights)
{
	struct mo_handle *hd = handle_get(me->proc, h);
	struct proc *dst = proc_of(me, to);
	if (!hd || !rights || (rights & ~(uint64_t)KP_ALL))
		return -KE_INVAL;
	if (!dst)
		return -KE_DEADSRCDST;
	if (rights & ~(uint64_t)hd->rights)
		return -KE_PERM;
	return handle_new(dst, hd->mo, (uint32_t)rights, false, me->proc->id);
}

static int64_t mo_revoke(struct thread *me, endpoint_t from, uint64_t h)
{
	struct proc *p = proc_of(me, from);
	if (!p)
		return -KE_DEADSRCDST;
	struct mo_handle *hd = handle_get(p, h);
	if (!hd)
		return -KE_INVAL;
	if (p != me->proc && hd->granter != me->proc->id)
		return -KE_PERM;
	handle_close(p, (uint32_t)h);
	return 0;
}

static int64_t mo_destroy(struct proc *p, uint64_t h)
{
	struct mo_handle *hd = handle_get(p, h);
	if (!hd)
		return -KE_INVAL;
	struct memobj *mo = hd->mo;
	if (hd->creator) {
		/* Every handle on this object anywhere else came from a grant: all go. */
		for (uint32_t i = 1; i < MAX_THREADS && mo->granted; i++) {
			struct proc *q = threads[i].proc;
			if (threads[i].state == T_FREE || !q || q->main != &threads[i])
				continue;
			for (uint32_t k = 1; k <= q->handles_cap; k++)
				if (q->handles[k - 1].mo == mo && !(q == p && k == h))
					handle_close(q, k);
		}
		legacy_close_object(mo);
	}
	handle_close(p, (uint32_t)h);
	return 0;
}

static int64_t mo_phys(struct proc *p, uint64_t h, uint64_t page)
{
	struct mo_handle *hd = handle_get(p, h);
	if (!hd || page >= hd->mo->npages)
		return -KE_INVAL;
	if (!p->dev.dma || !(hd->mo->flags & MO_CONTIG))
		return -KE_PERM;
	return (int64_t)hd->mo->frames[page];
}

/* Copies len bytes between two user address spaces through the direct map, page by page;
 * every page must be mapped user-accessible (and writable at the destination). */
static int64_t vcopy(struct thread *me, endpoint_t sep, uint64_t src, endpoint_t dep, uint64_t dst, uint64_t len)
{
	struct proc *sp = proc_of(me, sep), *dp = proc_of(me, dep);
	if (!sp || !dp)
		return -KE_DEADSRCDST;
	if (len > (4u << 20))
		return -KE_INVAL; /* bounded time under the kernel lock */
	if (src >= USER_TOP || len > USER_TOP - src || dst >= USER_TOP || len > USER_TOP - dst)
		return -KE_FAULT;
	for (uint64_t done = 0; done < len;) {
		uint64_t s = src + done, d = dst + done;
		uint64_t spte = demand_page(sp, s), dpte = demand_page(dp, d); /* (made if lazy) */
		/* Device pages (uncached) are not in the direct map: never copied. */
		if (!(spte & PTE_U) || !(dpte & PTE_U) || !(dpte & PTE_W) || ((spte | dpte) & (PTE_PCD | PTE_PWT)))
			return -KE_FAULT;
		uint64_t n = MIN(len - done, MIN(PAGE_SIZE - (s & (PAGE_SIZE - 1)), PAGE_SIZE - (d & (PAGE_SIZE - 1))));
		memmove((uint8_t *)phys_to_virt(dpte & PTE_ADDR) + (d & (PAGE_SIZE - 1)),
			(const uint8_t *)phys_to_virt(spte & PTE_ADDR) + (s & (PAGE_SIZE - 1)), n);
		done += n;
	}
	return (int64_t)len;
}

int64_t memcall(struct thread *me, uint32_t n, const uint64_t a[6])
{
	struct proc *p = me->proc;
	switch (n) {
	case KC_MO_CREATE:
		return mo_create(p, a[0], a[1]);
	case KC_MO_MAP:
		return mo_map(p, a[0], a[1], a[2], a[3], a[4]);
	case KC_MO_UNMAP:
		return mo_unmap(p, a[0]);
	case KC_MO_GRANT:
		return mo_grant(me, a[0], (endpoint_t)a[1], a[2]);
	case KC_MO_REVOKE:
		return mo_revoke(me, (endpoint_t)a[0], a[1]);
	case KC_MO_DESTROY:
		return mo_destroy(p, a[0]);
	case KC_MO_PHYS:
		return mo_phys(p, a[0], a[1]);
	case KC_VCOPY:
		return vcopy(me, (endpoint_t)a[0], a[1], (endpoint_t)a[2], a[3], a[4]);
	default:
		return -KE_NOSYS;
	}
}
