/* Process and thread life cycle: creation from ELF images, exit, faults, reaping. */
#include "proc/proc.h"
#include "proc/exec.h"
#include "proc/ipc.h"
#include "proc/memcall.h"
#include "proc/legacy.h"
#include "proc/root.h"
#include "linux/hooks.h"
#include "proc/klock.h"
#include "smp/ipi.h"
#include "proc/sched.h"
#include "boot/bootinfo.h"
#include "console/log.h"
#include "core/panic.h"
#include "mm/aspace.h"
#include "mm/heap.h"
#include "mm/pmm.h"
#include "mm/vmm.h"
#include "lib/string.h"
#include "smp/percpu.h"
#include "arch/x86.h"
#include "arch/time.h"

struct thread threads[MAX_THREADS];
static uint32_t next_slot = 1; /* slot 0 is never used: endpoint 0 is EP_NONE */
static uint64_t free_kstacks[MAX_THREADS];
static uint32_t nfree_kstacks;


extern char thread_first_run[];

struct thread *ep_lookup(endpoint_t ep)
{
	uint32_t slot = ep & 0xffff;
	if (ep == EP_ANY || ep == EP_NONE || slot >= MAX_THREADS)
		return NULL;
	struct thread *t = &threads[slot];
	if (t->gen != (ep >> 16) || t->state == T_FREE || t->state == T_DEAD)
		return NULL;
	return t;
}

struct thread *thread_alloc(struct proc *p)
{
	for (uint32_t i = 0; i < MAX_THREADS; i++) {
		uint32_t s = next_slot;
		next_slot = next_slot + 1 >= MAX_THREADS ? 1 : next_slot + 1;
		struct thread *t = &threads[s];
		if (t->state != T_FREE)
			continue;
		uint32_t gen = (t->gen + 1) & 0xffff;
		memset(t, 0, sizeof(*t));
		t->slot = s;
		t->gen = gen ? gen : 1;
		t->proc = p;
		t->pinned = -1;
		t->cpu = -1;
		t->kstack_top = nfree_kstacks ? free_kstacks[--nfree_kstacks]
					      : vmm_alloc_stack(THREAD_KSTACK_PAGES);
		t->state = T_BLOCKED; /* not runnable until set up */
		/* FNINIT/reset state: x87 control word 0x37f, MXCSR 0x1f80 (all exceptions masked). */
		t->fpu[0] = 0x7f, t->fpu[1] = 0x03;
		t->fpu[24] = 0x80, t->fpu[25] = 0x1f;
		return t;
	}
	return NULL;
}

/* Prepares t's kernel stack so that its first switch_to enters user mode at rip/rsp. */
void thread_setup_user(struct thread *t, uint64_t rip, uint64_t rsp)
{
	struct trap_frame *f = (struct trap_frame *)(t->kstack_top - sizeof(*f));
	memset(f, 0, sizeof(*f));
	f->rip = rip;
	f->cs = SEL_UCODE | 3;
	f->rflags = 0x202;
	f->rsp = rsp;
	f->ss = SEL_UDATA | 3;
	t->uframe = f;
	uint64_t *sp = (uint64_t *)f;
	*--sp = (uint64_t)thread_first_run;
	for (int i = 0; i < 6; i++)
		*--sp = 0; /* rbp rbx r12 r13 r14 r15 */
	t->ksp = (uint64_t)sp;
}

static bool range_free(struct proc *p, uint64_t va, uint64_t npages)
{
	for (uint32_t i = 0; i < p->nmaps; i++) {
		const struct mapping *m = &p->maps[i];
		if (va < m->va + m->npages * PAGE_SIZE && m->va < va + npages * PAGE_SIZE)
			return false;
	}
	return true;
}

#define MAP_AREA_BASE 0x0000100000000000ull /* where mappings without an address go */
#define MAP_AREA_TOP 0x0000700000000000ull

uint64_t proc_find_va(struct proc *p, uint64_t npages)
{
	if (!npages || npages > (MAP_AREA_TOP - MAP_AREA_BASE) / PAGE_SIZE)
		return 0;
	/* First fit above the highest mapping in the area (one pass: a server with a mapping per
	 * socket makes thousands), else the lowest gap; a guard page separates neighbours so an
	 * overrun faults instead of corrupting another object. */
	uint64_t top = MAP_AREA_BASE;
	for (uint32_t i = 0; i < p->nmaps; i++) {
		uint64_t end = p->maps[i].va + (p->maps[i].npages + 1) * PAGE_SIZE;
		if (end > top && p->maps[i].va < MAP_AREA_TOP)
			top = end;
	}
	if (top <= MAP_AREA_TOP && npages <= (MAP_AREA_TOP - top) / PAGE_SIZE)
		return top;
	uint64_t va = MAP_AREA_BASE;
	for (bool moved = true; moved;) {
		moved = false;
		for (uint32_t i = 0; i < p->nmaps; i++) {
			const struct mapping *m = &p->maps[i];
			uint64_t end = m->va + (m->npages + 1) * PAGE_SIZE;
			if (va < end && m->va < va + (npages + 1) * PAGE_SIZE) {
				va = end;
				moved = true;
			}
		}
		if (va + npages * PAGE_SIZE > MAP_AREA_TOP)
			return 0;
	}
	return va;
}

bool proc_maps_room(struct proc *p)
{
	if (p->nmaps < p->maps_cap)
		return true;
	if (p->maps_cap >= MAX_MAPPINGS)
		return false;
	uint32_t cap = p->maps_cap ? p->maps_cap * 2 : 32;
	struct mapping *n = kmalloc(cap * sizeof(*n));
	if (!n)
		return false;
	if (p->nmaps)
		memcpy(n, p->maps, p->nmaps * sizeof(*n));
	kfree(p->maps);
	p->maps = n, p->maps_cap = cap;
	return true;
}

static int map_range(struct proc *p, uint64_t va, const uint64_t *frames, uint64_t pa, uint64_t npages,
		     uint64_t flags)
{
	if (!proc_maps_room(p))
		return -KE_NOMEM;
	if (!npages || (va & (PAGE_SIZE - 1)) || va >= USER_TOP || npages > (USER_TOP - va) / PAGE_SIZE)
		return -KE_INVAL;
	if (!range_free(p, va, npages))
		return -KE_BUSY;
	for (uint64_t i = 0; i < npages; i++) {
		if (frames && !frames[i])
			continue; /* not made yet (MO_LAZY): its first touch makes it (demand.c) */
		int r = as_map(p->as, va + i * PAGE_SIZE, frames ? frames[i] : pa + i * PAGE_SIZE, flags);
		if (r) {
			as_unmap_range(p->as, va, i);
			return r;
		}
	}
	return 0;
}

uint64_t proc_prot_flags(uint32_t prot)
{
	return (prot & PROT_W ? PTE_W : 0) | (prot & PROT_X ? 0 : pte_nx);
}

int proc_map(struct proc *p, uint64_t va, struct memobj *mo, uint64_t first_page, uint64_t npages,
	     uint32_t prot, uint32_t handle)
{
	if (first_page > mo->npages || npages > mo->npages - first_page)
		return -KE_INVAL;
	/* No access (PROT_NONE): the range is reserved, no page-table entry made. */
	int r = prot ? map_range(p, va, mo->frames + first_page, 0, npages, proc_prot_flags(prot))
		     : !proc_maps_room(p) ? -KE_NOMEM : !range_free(p, va, npages) ? -KE_BUSY : 0;
	if (r)
		return r;
	memobj_get(mo);
	p->maps[p->nmaps++] = (struct mapping){ va, npages, mo, first_page, 0, prot, handle, false, false };
	return 0;
}

int proc_map_phys(struct proc *p, uint64_t va, uint64_t pa, uint64_t npages, uint32_t prot, uint64_t cache)
{
	if (pa & (PAGE_SIZE - 1))
		return -KE_INVAL;
	int r = map_range(p, va, NULL, pa, npages, proc_prot_flags(prot) | cache);
	if (r)
		return r;
	p->maps[p->nmaps++] = (struct mapping){ va, npages, NULL, 0, pa, prot, 0, false, false };
	return 0;
}

void proc_unmap_index(struct proc *p, uint32_t i)
{
	struct mapping *m = &p->maps[i];
	as_unmap_range(p->as, m->va, m->npages);
	if (m->mo)
		memobj_put(m->mo);
	p->maps[i] = p->maps[--p->nmaps];
}

void proc_unmap_all(struct proc *p)
{
	/* The address space dies with the process: no other CPU can be running it now,
	 * so the entries are dropped without a shootdown. */
	for (uint32_t i = 0; i < p->nmaps; i++)
		if (p->maps[i].mo)
			memobj_put(p->maps[i].mo);
	p->nmaps = 0;
	for (uint32_t h = 0; h < p->handles_cap; h++)
		if (p->handles[h].mo)
			mo_handle_release(&p->handles[h]);
	kfree(p->maps);
	kfree(p->handles);
	p->maps = NULL, p->handles = NULL;
	p->maps_cap = p->handles_cap = 0;
}

struct proc *proc_child(struct thread *me, endpoint_t ep, int64_t *err)
{
	struct thread *t = ep_lookup(ep);
	*err = t ? -KE_PERM : -KE_DEADSRCDST;
	if (!t || t->proc->parent != thread_ep(me) || t->proc == me->proc)
		return NULL;
	return t->proc;
}

struct proc *proc_of(struct thread *me, endpoint_t ep)
{
	if (ep == EP_NONE)
		return me->proc;
	struct thread *t = ep_lookup(ep);
	return t && !t->proc->exiting ? t->proc : NULL;
}

/* The boot-module argument string as an argv (name first, split on spaces; no environment). */
static uint64_t spawn_stack(struct proc *p, const char *name, const char *args, const struct elf_info *ei)
{
	char buf[512];
	struct strvec sv = { buf, 0, 0, 0 };
	size_t nl = strnlen(name, 31), al = args ? strnlen(args, sizeof(buf) - 40) : 0, n = 0;
	char line[512];
	memcpy(line, name, nl);
	line[nl] = ' ';
	if (al)
		memcpy(line + nl + 1, args, al);
	line[nl + 1 + al] = 0;
	for (char *w = line; *w && sv.argc < 31;) {
		while (*w == ' ')
			w++;
		if (!*w)
			break;
		char *e = w;
		while (*e && *e != ' ')
			e++;
		memcpy(buf + n, w, (size_t)(e - w));
		n += (size_t)(e - w);
		buf[n++] = 0;
		sv.argc++;
		w = e;
	}
	sv.len = n;
	return stack_build(p, &sv, name, ei, 0); /* a Linux process gets its vDSO at KC_LX_PID */
}

struct proc *proc_spawn_elf(const void *image, size_t len, const char *name, const char *args,
			    endpoint_t parent, int32_t cpu, uint8_t prio, bool stopped, int *err)
{
	struct elf_info ei;
	struct proc *p = NULL;
	const struct img_src src = { image, NULL, len };
	int r = image_parse(&src, &ei);
	if (r)
		goto fail;
	r = -KE_NOMEM;
	p = kzalloc(sizeof(*p));
	if (!p || !(p->as = as_create()))
		goto fail;
	size_t nl = strnlen(name, sizeof(p->name) - 1);
	memcpy(p->name, name, nl);
	p->name[nl] = 0;
	p->parent = parent;
	p->kcalls_allowed = ~0ull;
	r = image_load(p, &src, &ei);
	if (r)
		goto fail;
	uint64_t rsp = spawn_stack(p, p->name, args, &ei);
	struct thread *t = rsp ? thread_alloc(p) : NULL;
	if (!t) {
		r = rsp ? -KE_AGAIN : -KE_INVAL;
		goto fail;
	}
	p->main = t;
	p->id = thread_ep(t);
	p->nthreads = p->nlive = 1;
	t->prio = prio < NPRIO ? prio : NPRIO - 1;
	if (cpu >= 0 && (uint32_t)cpu < ncpus && cpus[cpu] && cpus[cpu]->online)
		t->pinned = cpu;
	thread_setup_user(t, ei.entry, rsp);
	p->stopped = stopped;
	if (!stopped)
		sched_make_ready(t);
	if (err)
		*err = 0;
	return p;
fail:
	if (p) {
		if (p->as) {
			proc_unmap_all(p);
			as_destroy(p->as);
		}
		kfree(p);
	}
	if (err)
		*err = r;
	return NULL;
}

void kmsg_post(struct thread *t, const struct kmsg *m)
{
	if (!t || t->nkmsgs >= 64)
		return; /* a receiver that never reads loses reports, never kernel memory */
	struct kmsg_node *n = kzalloc(sizeof(*n));
	if (!n)
		return;
	n->m = *m;
	n->m.source = EP_KERNEL;
	struct kmsg_node **pp = &t->kmsgs;
	while (*pp)
		pp = &(*pp)->next;
	*pp = n;
	t->nkmsgs++;
	ipc_wake_receiver(t);
}

static void report(struct proc *p, const struct kmsg *m)
{
	struct thread *parent = ep_lookup(p->parent);
	if (parent && parent->proc != p)
		kmsg_post(parent, m);
}

/* CPU time of the process's threads, the dead ones' included, up to their last switch
 * (schedule() adds each run to the process as it ends). */
uint64_t proc_cpu_us(const struct proc *p) { return p->cpu_us; }

/* The same with the current run of each of its threads that is on a CPU at `now` (a spinner
 * that is never switched out counts too): a look at each CPU, not at every thread slot (rs
 * asks for each service at every heartbeat). Another CPU's current thread and run_since_us
 * are read without its lock: at worst a run that just began or ended is a few microseconds
 * off. */
uint64_t proc_cpu_us_now(const struct proc *p, uint64_t now)
{
	uint64_t us = p->cpu_us;
	for (uint32_t i = 0; i < ncpus; i++) {
		const struct cpu *c = cpus[i];
		const struct thread *t = c ? READ_ONCE(c->current) : NULL;
		if (!t || t->proc != p)
			continue;
		uint64_t since = READ_ONCE(c->run_since_us);
		if (now > since)
			us += now - since;
	}
	return us;
}

/* Frees what a dead thread held; the last thread of a process frees the process. */
static void reap(struct thread *t)
{
	struct proc *p = t->proc;
	if (nfree_kstacks < MAX_THREADS)
		free_kstacks[nfree_kstacks++] = t->kstack_top;
	while (t->kmsgs) {
		struct kmsg_node *n = t->kmsgs;
		t->kmsgs = n->next;
		kfree(n);
	}
	sched_undedicate(t); /* its core goes back to general use */
	t->state = T_FREE;
	if (p && --p->nthreads == 0) {
		devpriv_release(p);
		legacy_parent_gone(p);
		proc_unmap_all(p);
		kfree(p->lx);
		as_destroy(p->as);
		kfree(p);
	}
}

void sched_reap_dead(void)
{
	struct cpu *c = this_cpu();
	if (c->last_dead) {
		reap(c->last_dead);
		c->last_dead = NULL;
	}
}

void proc_kill_threads(struct proc *p, struct thread *keep)
{
	if (!keep) {
		p->exiting = true;
		/* Its handles move to a legacy now, before its parent hears of its end (a thread
		 * still on another CPU is in user mode or waits for the kernel lock; its calls then
		 * find no handle). */
		legacy_take(p);
		root_died(p); /* (if p is the root: its successor starts) */
	}
	for (uint32_t i = 1; i < MAX_THREADS; i++) {
		struct thread *t = &threads[i];
		if (t->proc != p || t == keep || t->state == T_FREE || t->state == T_DEAD)
			continue;
		ipc_cancel(t);
		enum thread_state old = t->state;
		t->state = T_DEAD;
		vdso_thread_died();
		if (old == T_READY)
			sched_remove(t);
		if (old == T_RUNNING && t->cpu != (int32_t)this_cpu_index())
			smp_send_resched((uint32_t)t->cpu); /* it leaves the CPU at its next kernel entry */
		else if (old != T_RUNNING)
			reap(t);
	}
}

void proc_exit(struct proc *p, int64_t status)
{
	if (p->exiting)
		return;
	struct kmsg m = { 0 };
	m.type = KMSG_PROC_EXIT;
	m.w[0] = p->id;
	m.w[1] = (uint64_t)status;
	m.w[2] = proc_cpu_us(p);
	if (current_thread()->proc == p) /* ending itself: its current run counts too */
		m.w[2] += time_us_since_boot() - this_cpu()->run_since_us;
	report(p, &m);
	proc_kill_threads(p, NULL);
}

void proc_fault(struct trap_frame *f)
{
	klock();
	struct thread *t = current_thread();
	struct proc *p = t->proc;
	uint64_t cr2 = read_cr2();
	if (t->state == T_DEAD) { /* killed meanwhile (exit, execve): just leave */
		schedule();
		panic("dead thread resumed");
	}
	if (p->lx && signal_fault(t, f, cr2)) {
		kunlock();
		return; /* a handler runs, or the signal ended the process */
	}
	pr_warn("process %s (endpoint %#x) stopped: exception %llu error %#llx at rip %#llx, address %#llx",
		p->name, thread_ep(t), (unsigned long long)f->vector, (unsigned long long)f->error,
		(unsigned long long)f->rip, (unsigned long long)cr2);
	struct kmsg m = { 0 };
	m.type = KMSG_PROC_FAULT;
	m.w[0] = p->id;
	m.w[1] = f->vector;
	m.w[2] = f->error;
	m.w[3] = f->rip;
	m.w[4] = cr2;
	m.w[5] = f->rsp;
	report(p, &m);
	proc_kill_threads(p, NULL);
	schedule(); /* never returns: the thread is dead */
	panic("dead thread resumed");
}

