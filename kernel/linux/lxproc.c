/* Linux processes and threads: the mechanism pm uses for fork, clone and execve
 * (KC_LX_*), and the thread calls the kernel serves itself (exit, set_tid_address,
 * robust lists, getpid/gettid). pm holds the policy: pids, parents, wait, sessions.
 *
 * fork copies every private mapping at once (no copy-on-write yet): simple and correct,
 * and cheap enough for the small static programs we run; MAP_SHARED memory is shared, and
 * objects mapped through native handles are not inherited (docs/decisions.md). */
#include "linux/lxproc.h"
#include "linux/lxstate.h"
#include "lx_abi.h"
#include "proc/exec.h"
#include "linux/futex.h"
#include "proc/ipc.h"
#include "linux/lxmem.h"
#include "proc/sched.h"
#include "linux/signal.h"
#include "linux/vdso.h"
#include "mm/aspace.h"
#include "mm/heap.h"
#include "mm/vmm.h"
#include "lib/string.h"

#define LX_ARGS_MAX (64 * 1024) /* argv + envp bytes (the stack holds them) */

/* Whether t waits for me's answer to a call it made: its user state is stable. */
bool held_by(const struct thread *t, const struct thread *me)
{
	return t->state == T_BLOCKED && t->blocked_on == B_REPLY && t->ipc_peer == thread_ep(me);
}

/* The thread ep, if it is a Linux thread of a child of me held in a call to me. */
static struct thread *held_child(struct thread *me, endpoint_t ep, int64_t *err)
{
	struct thread *t = ep_lookup(ep);
	*err = -KE_DEADSRCDST;
	if (!t)
		return NULL;
	*err = -KE_PERM;
	if (t->proc->parent != thread_ep(me) || !t->proc->lx)
		return NULL;
	*err = -KE_INVAL;
	return held_by(t, me) ? t : NULL;
}

int64_t kc_lx_pid(struct thread *me, endpoint_t child, uint64_t pid)
{
	int64_t err;
	struct proc *p = proc_child(me, child, &err);
	if (!p)
		return err;
	if (!pid || pid > 0x3fffffff)
		return -KE_INVAL;
	/* Spawned stopped and never run: it can still be given a vDSO (its stack has the slot). */
	bool fresh = !p->lx && p->stopped;
	if (!p->lx && !(p->lx = kzalloc(sizeof(*p->lx))))
		return -KE_NOMEM;
	if (fresh)
		vdso_give_spawned(p);
	p->lx->pid = (int32_t)pid;
	p->main->lxt.tid = (int32_t)pid;
	return 0;
}

/* New thread nt continues from t's user state (the instruction after its system call)
 * with rax = 0 on stack (0: t's). */
static void clone_user_state(struct thread *nt, const struct thread *t, uint64_t stack)
{
	thread_setup_user(nt, t->uframe->rip, stack ? stack : t->uframe->rsp);
	struct trap_frame *f = nt->uframe;
	uint64_t rip = f->rip, rsp = f->rsp;
	*f = *t->uframe;
	f->rip = rip, f->rsp = rsp, f->rax = 0;
	memcpy(nt->fpu, t->fpu, sizeof(nt->fpu));
	nt->fs_base = t->fs_base;
	nt->lxt.sigmask = t->lxt.sigmask;
	nt->lxt.altstack_sp = t->lxt.altstack_sp, nt->lxt.altstack_size = t->lxt.altstack_size;
	nt->prio = t->prio;
}

/* Gives child c its own copy (or, for MAP_SHARED and the kernel's vDSO and vvar, a share)
 * of each of p's mappings. */
static int copy_mappings(struct proc *c, const struct proc *p)
{
	for (uint32_t i = 0; i < p->nmaps; i++) {
		const struct mapping *m = &p->maps[i];
		if (!m->mo || m->handle)
			continue; /* devices and native objects stay with their owner */
		struct memobj *mo = m->mo;
		uint64_t first = m->first_page;
		if (!m->shared) {
			if (!(mo = memobj_create(m->npages, MO_LAZY)))
				return -KE_NOMEM;
			/* (pages the parent's reserved memory has not made yet stay unmade here) */
			for (uint64_t k = 0; k < m->npages; k++) {
				if (!m->mo->frames[first + k])
					continue;
				if (memobj_fill(mo, k, 1)) {
					memobj_put(mo);
					return -KE_NOMEM;
				}
				memcpy(phys_to_virt(mo->frames[k]), phys_to_virt(m->mo->frames[first + k]), PAGE_SIZE);
			}
			first = 0;
		}
		int r = proc_map(c, m->va, mo, first, m->npages, m->prot, 0);
		if (!m->shared)
			memobj_put(mo);
		if (r)
			return r;
		c->maps[c->nmaps - 1].shared = m->shared;
		c->maps[c->nmaps - 1].sys = m->sys;
	}
	return 0;
}

int64_t kc_lx_fork(struct thread *me, endpoint_t ep, uint64_t pid, uint64_t stack)
{
	int64_t r;
	struct thread *t = held_child(me, ep, &r);
	if (!t)
		return r;
	if (!pid || pid > 0x3fffffff || stack >= USER_TOP)
		return -KE_INVAL;
	struct proc *p = t->proc, *c = kzalloc(sizeof(*c));
	r = -KE_NOMEM;
	if (!c || !(c->as = as_create()) || !(c->lx = kzalloc(sizeof(*c->lx))))
		goto fail;
	memcpy(c->name, p->name, sizeof(c->name));
	c->parent = p->parent;
	c->kcalls_allowed = p->kcalls_allowed;
	memcpy(c->linux_servers, p->linux_servers, sizeof(c->linux_servers));
	memcpy(c->linux_route, p->linux_route, sizeof(c->linux_route));
	memcpy(c->lx->act, p->lx->act, sizeof(c->lx->act)); /* pending signals are not inherited */
	c->lx->sig_forkign = signal_fork_ignored(p->lx);
	c->lx->pid = (int32_t)pid;
	c->arg_start = p->arg_start, c->arg_end = p->arg_end, c->env_end = p->env_end;
	if ((r = copy_mappings(c, p)))
		goto fail;
	struct thread *nt = thread_alloc(c);
	if (!nt) {
		r = -KE_AGAIN;
		goto fail;
	}
	c->main = nt;
	c->id = thread_ep(nt);
	c->nthreads = c->nlive = 1;
	c->stopped = true; /* pm starts it once vfs knows it */
	clone_user_state(nt, t, stack);
	nt->lxt.tid = (int32_t)pid;
	return c->id;
fail:
	if (c) {
		if (c->as) {
			proc_unmap_all(c);
			as_destroy(c->as);
		}
		kfree(c->lx);
		kfree(c);
	}
	return r;
}

int64_t kc_lx_thread(struct thread *me, endpoint_t ep, uint64_t tid, uint64_t stack, uint64_t tls, uint64_t flags,
		     uint64_t clear_tid)
{
	int64_t r;
	struct thread *t = held_child(me, ep, &r);
	if (!t)
		return r;
	if (!tid || tid > 0x3fffffff || !stack || stack >= USER_TOP || (flags & ~(uint64_t)(LXT_SETTLS | LXT_CLEARTID)) ||
	    ((flags & LXT_SETTLS) && tls >= USER_TOP))
		return -KE_INVAL;
	struct proc *p = t->proc;
	struct thread *nt = thread_alloc(p);
	if (!nt)
		return -KE_AGAIN;
	p->nthreads++;
	p->nlive++;
	clone_user_state(nt, t, stack);
	if (flags & LXT_SETTLS)
		nt->fs_base = tls;
	nt->lxt.tid = (int32_t)tid;
	nt->lxt.clear_tid = flags & LXT_CLEARTID ? clear_tid : 0;
	sched_make_ready(nt);
	return thread_ep(nt);
}

/* Reads pm's argument block: filename, argv strings, envp strings. */
static int64_t read_args(uint64_t uargs, uint64_t len, char **buf, struct strvec *sv, const char **fn)
{
	uint32_t counts[2];
	if (len < 9 || len > LX_ARGS_MAX + 8 + 256)
		return -KE_INVAL;
	char *b = kmalloc(len);
	if (!b)
		return -KE_NOMEM;
	if (copy_from_user(b, (const void *)uargs, len)) {
		kfree(b);
		return -KE_FAULT;
	}
	memcpy(counts, b, 8);
	/* Count the strings: filename + argc + envc, all inside the block. */
	uint64_t at = 8, want = 1ull + counts[0] + counts[1], n = 0;
	for (; n < want && at < len; n++)
		at += strnlen(b + at, len - at) + 1;
	if (n != want || at > len || counts[0] == 0) {
		kfree(b);
		return -KE_INVAL;
	}
	*fn = b + 8;
	uint64_t fnl = strlen(*fn) + 1;
	*sv = (struct strvec){ b + 8 + fnl, counts[0], counts[1], at - 8 - fnl };
	*buf = b;
	return 0;
}

int64_t kc_lx_exec(struct thread *me, endpoint_t ep, uint64_t handle, uint64_t size, uint64_t uargs,
		   uint64_t args_len)
{
	int64_t r;
	struct thread *t = held_child(me, ep, &r);
	if (!t)
		return r;
	struct memobj *mo = proc_handle_object(me->proc, handle, KP_R);
	if (!mo)
		return -KE_INVAL;
	if (!size || size > mo->npages * PAGE_SIZE)
		return -KE_INVAL;
	char *buf;
	const char *fn;
	struct strvec sv;
	if ((r = read_args(uargs, args_len, &buf, &sv, &fn)))
		return r;
	struct elf_info ei;
	const struct img_src src = { NULL, mo, size };
	if ((r = image_parse(&src, &ei))) {
		kfree(buf);
		return -8; /* ENOEXEC */
	}
	/* The point of no return: the old image goes. */
	struct proc *p = t->proc;
	proc_kill_threads(p, t);
	while (p->nmaps)
		proc_unmap_index(p, p->nmaps - 1);
	p->main = t;
	p->nlive = 1;
	t->lxt.tid = p->lx->pid;
	uint64_t rsp = 0;
	if (!(r = image_load(p, &src, &ei)))
		rsp = stack_build(p, &sv, fn, &ei, vdso_map(p));
	const char *base = fn;
	for (const char *q = fn; *q; q++)
		if (*q == '/')
			base = q + 1;
	size_t nl = strnlen(base, sizeof(p->name) - 1);
	memcpy(p->name, base, nl);
	p->name[nl] = 0;
	kfree(buf);
	if (!rsp) { /* out of memory past the point of no return: the process cannot go on */
		proc_exit(p, LX_SIGSEGV);
		return r ? r : -KE_NOMEM;
	}
	struct trap_frame *f = t->uframe;
	uint64_t cs = f->cs, ss = f->ss;
	memset(f, 0, sizeof(*f));
	f->rip = ei.entry, f->rsp = rsp, f->cs = cs, f->ss = ss, f->rflags = 0x202;
	memset(t->fpu, 0, sizeof(t->fpu));
	t->fpu[0] = 0x7f, t->fpu[1] = 0x03;   /* x87 control word 0x37f */
	t->fpu[24] = 0x80, t->fpu[25] = 0x1f; /* MXCSR 0x1f80 */
	t->fs_base = 0;
	t->lxt.clear_tid = t->lxt.robust_list = 0;
	t->proc->lx->wake_va = 0; /* the new program names its own */
	signal_exec_reset(t);
	return 0;
}

void lx_exit(struct thread *me, uint64_t code, bool group)
{
	struct proc *p = me->proc;
	int64_t status = (int64_t)(code & 0xff) << 8; /* a Linux wait status */
	if (group || p->nlive <= 1) {
		proc_exit(p, status);
		schedule(); /* dead: never comes back */
		return;
	}
	/* One thread of several ends: tell a joiner (LX_CLONE_CHILD_CLEARTID), then go. */
	if (me->lxt.clear_tid) {
		uint32_t zero = 0;
		if (!copy_to_user((void *)me->lxt.clear_tid, &zero, 4))
			futex_wake(p, me->lxt.clear_tid, 1, ~0u);
	}
	p->nlive--;
	ipc_cancel(me);
	if (me == p->main) {
		/* The first thread names the process (its endpoint is the process id): it stays,
		 * never to run again, until the process ends. */
		me->state = T_BLOCKED;
		me->blocked_on = B_ZOMBIE;
	} else {
		me->state = T_DEAD;
	}
	vdso_thread_died();
	schedule();
}

int64_t lx_set_tid_address(struct thread *me, uint64_t addr)
{
	me->lxt.clear_tid = addr;
	return me->lxt.tid;
}

int64_t lx_robust_list(struct thread *me, bool set, uint64_t a0, uint64_t a1, uint64_t a2)
{
	if (set) { /* (head, len): stored; robust mutexes' owner-died marking is not done */
		if (a1 != 24)
			return -KE_INVAL;
		me->lxt.robust_list = a0;
		return 0;
	}
	/* get_robust_list(pid 0 = self, head_ptr, len_ptr) */
	if (a0 && a0 != (uint64_t)me->lxt.tid)
		return -KE_PERM;
	uint64_t len = 24;
	if (copy_to_user((void *)a1, &me->lxt.robust_list, 8) || copy_to_user((void *)a2, &len, 8))
		return -KE_FAULT;
	return 0;
}

int64_t kc_lx_munmap(struct thread *me, endpoint_t ep, uint64_t addr, uint64_t len)
{
	struct thread *t = ep_lookup(ep);
	if (!t)
		return -KE_DEADSRCDST;
	if (!t->proc->lx || !t->lxt.in_lxcall || !held_by(t, me))
		return -KE_PERM; /* only the server holding the thread's call, as KC_LX_MMAP */
	return lx_munmap(t, addr, len);
}

int64_t kc_lx_mmap(struct thread *me, endpoint_t ep, uint64_t handle, uint64_t addr, uint64_t len,
		   uint64_t prot_flags, uint64_t off)
{
	struct thread *t = ep_lookup(ep);
	if (!t)
		return -KE_DEADSRCDST;
	/* Only the server the thread is waiting on for this very call may map into it. */
	if (!t->proc->lx || !t->lxt.in_lxcall || !held_by(t, me))
		return -KE_PERM;
	struct memobj *src = NULL;
	uint32_t rights = KP_R | ((prot_flags >> 32) & LXM_SHARE && prot_flags & 2 /* PROT_WRITE */ ? KP_W : 0);
	if (handle && !(src = proc_handle_object(me->proc, handle, rights)))
		return -KE_INVAL;
	if (off & (PAGE_SIZE - 1))
		return -KE_INVAL;
	return lx_mmap_copy(t->proc, addr, len, prot_flags & 0xffffffff, prot_flags >> 32, src, off / PAGE_SIZE);
}

int64_t lx_pid_of(const struct proc *p)
{
	return p->lx ? p->lx->pid : -KE_SRCH;
}
