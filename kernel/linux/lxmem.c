/* Linux memory calls the kernel serves itself (kernel/linux/linux.c): anonymous mmap,
 * munmap, mprotect and madvise. Anonymous memory is a memory object of its own (frames
 * allocated and zeroed at once; no demand paging yet) mapped into the process, except
 * memory mapped PROT_NONE: its frames are made when mprotect first grants access to them
 * (glibc reserves 128 MiB per malloc arena and each thread's stack so, then opens what it
 * uses; making them all at once held every CPU up for 300 ms under TCG); munmap and
 * mprotect may cut mappings into pieces, each piece keeping a reference to the object, so
 * the frames of an object go back when its last piece is unmapped. */
#include "linux/lxmem.h"
#include "lx_abi.h"
#include "proc/memobj.h"
#include "mm/aspace.h"
#include "mm/vmm.h"
#include "lib/string.h"

static uint32_t prot_of(uint64_t lx)
{
	return (lx & LX_PROT_READ ? PROT_R : 0) | (lx & LX_PROT_WRITE ? PROT_W | PROT_R : 0) |
	       (lx & LX_PROT_EXEC ? PROT_X | PROT_R : 0);
}

/* Installs the page-table entries of pages [first, first + n) of mapping m (none when the
 * mapping has no access: PROT_NONE pages fault). */
static void install(struct proc *p, const struct mapping *m, uint64_t first, uint64_t n)
{
	if (!m->prot)
		return;
	for (uint64_t i = first; i < first + n; i++)
		if (m->mo->frames[m->first_page + i]) /* (made: memobj_fill before access is given) */
			as_map(p->as, m->va + i * PAGE_SIZE, m->mo->frames[m->first_page + i],
			       proc_prot_flags(m->prot));
}

/* Cuts mapping i so that no piece straddles va or va + len. Pieces keep references to the
 * object. 0 or -ENOMEM (no free mapping slot). */
static int64_t split_at(struct proc *p, uint32_t i, uint64_t at)
{
	uint64_t end = p->maps[i].va + p->maps[i].npages * PAGE_SIZE;
	if (at <= p->maps[i].va || at >= end)
		return 0;
	if (!proc_maps_room(p))
		return -LX_ENOMEM;
	struct mapping *m = &p->maps[i]; /* after the table may have moved */
	uint64_t left = (at - m->va) / PAGE_SIZE;
	struct mapping right = *m;
	right.va = at;
	right.npages = m->npages - left;
	right.first_page = m->first_page + left;
	m->npages = left;
	memobj_get(m->mo);
	p->maps[p->nmaps++] = right;
	return 0;
}

/* The mappings Linux calls may cut: anonymous or image memory, not devices nor objects the
 * native memory-object calls manage (those have a handle). */
static bool linux_owned(const struct mapping *m) { return m->mo && !m->handle; }

static bool overlaps(const struct mapping *m, uint64_t va, uint64_t end)
{
	return m->va < end && va < m->va + m->npages * PAGE_SIZE;
}

/* Splits every mapping overlapping [va, end) at the range's edges. */
static int64_t isolate(struct proc *p, uint64_t va, uint64_t end)
{
	for (uint32_t i = 0; i < p->nmaps; i++) {
		if (!overlaps(&p->maps[i], va, end))
			continue;
		if (!linux_owned(&p->maps[i]))
			return -KE_INVAL;
		int64_t r = split_at(p, i, va);
		if (r == 0)
			r = split_at(p, i, end);
		if (r)
			return r;
	}
	return 0;
}

static int64_t unmap_range(struct proc *p, uint64_t va, uint64_t end)
{
	int64_t r = isolate(p, va, end);
	if (r)
		return r;
	for (uint32_t i = 0; i < p->nmaps;)
		if (overlaps(&p->maps[i], va, end))
			proc_unmap_index(p, i); /* moves the last entry into i */
		else
			i++;
	return 0;
}

static bool range_ok(uint64_t va, uint64_t len)
{
	return !(va & (PAGE_SIZE - 1)) && len && len <= USER_TOP && va < USER_TOP && len <= USER_TOP - va;
}

/* The end of [va, va + len) rounded up to a page (range_ok(va, len) holds). */
static uint64_t page_end(uint64_t va, uint64_t len) { return va + ((len + PAGE_SIZE - 1) & ~(uint64_t)(PAGE_SIZE - 1)); }

int64_t lx_mmap(struct thread *me, uint64_t addr, uint64_t len, uint64_t prot, uint64_t flags)
{
	return lx_mmap_copy(me->proc, addr, len, prot, flags, NULL, 0);
}

int64_t lx_mmap_copy(struct proc *p, uint64_t addr, uint64_t len, uint64_t prot, uint64_t flags,
		     const struct memobj *src, uint64_t first)
{
	uint64_t type = flags & (LX_MAP_SHARED | LX_MAP_PRIVATE);
	bool share = flags & LXM_SHARE;
	if (!len || len > USER_TOP || !type || type == (LX_MAP_SHARED | LX_MAP_PRIVATE))
		return -KE_INVAL;
	uint64_t npages = (len + PAGE_SIZE - 1) / PAGE_SIZE, size = npages * PAGE_SIZE;
	if (share && (!src || type != LX_MAP_SHARED || first > src->npages || npages > src->npages - first))
		return -KE_INVAL;
	uint64_t va = 0;
	if (flags & (LX_MAP_FIXED | LX_MAP_FIXED_NOREPLACE)) {
		if (!range_ok(addr, size))
			return -KE_INVAL;
		va = addr;
		bool busy = false;
		for (uint32_t i = 0; i < p->nmaps; i++)
			busy |= overlaps(&p->maps[i], va, va + size);
		if (busy && (flags & LX_MAP_FIXED_NOREPLACE))
			return -LX_EEXIST;
		int64_t r = busy ? unmap_range(p, va, va + size) : 0;
		if (r)
			return r;
	} else {
		bool hint_free = range_ok(addr, size) && addr >= PAGE_SIZE * 16;
		for (uint32_t i = 0; hint_free && i < p->nmaps; i++)
			hint_free = !overlaps(&p->maps[i], addr, addr + size);
		va = hint_free ? addr : proc_find_va(p, npages);
		if (!va)
			return -LX_ENOMEM;
	}
	if (share) { /* the server's object itself (socket buffers): shared, kept at fork */
		int r = proc_map(p, va, (struct memobj *)src, first, npages, prot_of(prot), 0);
		if (r)
			return r == -KE_NOMEM ? -LX_ENOMEM : r;
		p->maps[p->nmaps - 1].shared = true;
		return (int64_t)va;
	}
	struct memobj *mo = memobj_create(npages, !src && !prot_of(prot) ? MO_LAZY : 0);
	if (!mo)
		return -LX_ENOMEM;
	/* A file's pages are copied in (beyond its object: zeros, where Linux would SIGBUS). */
	for (uint64_t i = 0; src && i < npages && first + i < src->npages; i++)
		if (src->frames[first + i]) /* (a lazy object's page not made yet: zeros) */
			memcpy(phys_to_virt(mo->frames[i]), phys_to_virt(src->frames[first + i]), PAGE_SIZE);
	int r = proc_map(p, va, mo, 0, npages, prot_of(prot), 0);
	memobj_put(mo); /* the mapping holds it now (or nobody, on failure) */
	if (r)
		return r == -KE_NOMEM ? -LX_ENOMEM : r;
	p->maps[p->nmaps - 1].shared = type == LX_MAP_SHARED && !src;
	return (int64_t)va;
}

int64_t lx_munmap(struct thread *me, uint64_t addr, uint64_t len)
{
	if (!range_ok(addr, len))
		return -KE_INVAL;
	return unmap_range(me->proc, addr, page_end(addr, len));
}

/* Whether every page of [addr, end) is mapped. */
static bool all_mapped(const struct proc *p, uint64_t addr, uint64_t end)
{
	uint64_t covered = 0;
	for (uint32_t i = 0; i < p->nmaps; i++) {
		const struct mapping *m = &p->maps[i];
		if (overlaps(m, addr, end)) {
			uint64_t lo = m->va > addr ? m->va : addr, me_end = m->va + m->npages * PAGE_SIZE;
			covered += (me_end < end ? me_end : end) - lo;
		}
	}
	return covered == end - addr;
}

/* msync: shared mappings are the file's own pages (vfs fmap.c), so there is nothing to
 * write back; the arguments are checked as Linux does. */
int64_t lx_msync(struct thread *me, uint64_t addr, uint64_t len, uint64_t flags)
{
	enum { MS_ASYNC = 1, MS_INVALIDATE = 2, MS_SYNC = 4 };
	if ((flags & ~(uint64_t)(MS_ASYNC | MS_INVALIDATE | MS_SYNC)) || (addr & (PAGE_SIZE - 1)) ||
	    ((flags & MS_ASYNC) && (flags & MS_SYNC)))
		return -KE_INVAL;
	if (!len)
		return 0;
	if (!range_ok(addr, len))
		return -LX_ENOMEM;
	return all_mapped(me->proc, addr, page_end(addr, len)) ? 0 : -LX_ENOMEM;
}

int64_t lx_mprotect(struct thread *me, uint64_t addr, uint64_t len, uint64_t prot)
{
	struct proc *p = me->proc;
	if (addr & (PAGE_SIZE - 1))
		return -KE_INVAL;
	if (!len)
		return 0;
	if (!range_ok(addr, len))
		return -LX_ENOMEM;
	uint64_t end = page_end(addr, len);
	if (!all_mapped(p, addr, end))
		return -LX_ENOMEM; /* every page of the range must be mapped (Linux) */
	uint32_t pr = prot_of(prot);
	/* The vDSO and vvar pages are every process's: never writable (Linux: EACCES for a
	 * mapping that may not be written). */
	for (uint32_t i = 0; i < p->nmaps && (pr & PROT_W); i++)
		if (p->maps[i].sys && overlaps(&p->maps[i], addr, end))
			return -LX_EACCES;
	int64_t r = isolate(p, addr, end);
	if (r)
		return r;
	/* Reserved pages get access: made now (each piece lies inside the range after isolate) */
	for (uint32_t i = 0; i < p->nmaps && pr; i++)
		if (overlaps(&p->maps[i], addr, end) && p->maps[i].mo &&
		    memobj_fill(p->maps[i].mo, p->maps[i].first_page, p->maps[i].npages))
			return -LX_ENOMEM;
	for (uint32_t i = 0; i < p->nmaps; i++) {
		struct mapping *m = &p->maps[i];
		if (!overlaps(m, addr, end))
			continue;
		as_unmap_range(p->as, m->va, m->npages);
		m->prot = pr;
		install(p, m, 0, m->npages);
	}
	return 0;
}

int64_t lx_madvise(struct thread *me, uint64_t va, uint64_t len, uint64_t advice)
{
	if (len ? !range_ok(va, len) : (va & (PAGE_SIZE - 1)) || va >= USER_TOP)
		return -KE_INVAL;
	/* MADV_DONTNEED must leave zeros behind (Linux drops the pages); every other advice is a
	 * hint. Only Linux-owned memory is touched. */
	if (advice != LX_MADV_DONTNEED || !len)
		return 0;
	struct proc *p = me->proc;
	uint64_t end = page_end(va, len);
	for (uint32_t i = 0; i < p->nmaps; i++) {
		const struct mapping *m = &p->maps[i];
		if (!linux_owned(m) || m->sys)
			continue; /* the vDSO's pages are shared: Linux would bring them back unchanged */
		for (uint64_t k = 0; k < m->npages; k++) {
			uint64_t at = m->va + k * PAGE_SIZE;
			if (at >= va && at < end && m->mo->frames[m->first_page + k]) /* (unmade: zeros) */
				memset(phys_to_virt(m->mo->frames[m->first_page + k]), 0, PAGE_SIZE);
		}
	}
	return 0;
}
