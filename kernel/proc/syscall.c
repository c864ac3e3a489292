/* System-call entry setup and the native kernel-call dispatcher. Linux system calls (numbers
 * below KC_BASE) go to kernel/linux/linux.c. */
#include "linux/hooks.h"
#include "proc/ipc.h"
#include "proc/memcall.h"
#include "proc/wait.h"
#include "proc/klock.h"
#include "proc/proc.h"
#include "proc/exec.h"
#include "proc/legacy.h"
#include "proc/root.h"
#include "proc/text.h"
#include "proc/sched.h"
#include "proc/swtrace.h"
#include "proc/devpriv.h"
#include "arch/desc.h"
#include "arch/time.h"
#include "arch/x86.h"
#include "boot/bootinfo.h"
#include "console/log.h"
#include "mm/aspace.h"
#include "mm/pmm.h"
#include "smp/ipi.h"
#include "mm/vmm.h"
#include "lib/string.h"
#include "smp/percpu.h"
#include "core/panic.h"

#define MSR_STAR 0xc0000081
#define MSR_LSTAR 0xc0000082
#define MSR_FMASK 0xc0000084
#define EFER_SCE 1u

extern void syscall_entry(void);

void syscall_init_cpu(void)
{
	/* x87 and SSE for user mode: CR0.MP on, EM and TS off; CR4.OSFXSR and OSXMMEXCPT on.
	 * No XSAVE (CR4.OSXSAVE stays off), so user code sees no AVX and FXSAVE covers it all. */
	write_cr0((read_cr0() | (1u << 1)) & ~(uint64_t)((1u << 2) | (1u << 3)));
	write_cr4(read_cr4() | CR4_OSFXSR | (1u << 10));
	wrmsr(MSR_EFER, rdmsr(MSR_EFER) | EFER_SCE);
	/* SYSCALL loads CS=0x08/SS=0x10; SYSRET would use 0x18+16 / 0x18+8 (we return by IRETQ). */
	wrmsr(MSR_STAR, ((uint64_t)SEL_UCODE32 << 48) | ((uint64_t)SEL_KCODE << 32));
	wrmsr(MSR_LSTAR, (uint64_t)syscall_entry);
	/* Enter with interrupts, direction, trap and alignment-check flags clear. */
	wrmsr(MSR_FMASK, 0x40700);
	/* RDTSCP gives user mode TSC_AUX: the CPU index, the vDSO's getcpu (node 0 above bit 12,
	 * as in Linux). */
	if (this_cpu()->feat.rdtscp)
		wrmsr(MSR_TSC_AUX, this_cpu_index());
}

static int64_t kc_debug_write(const char *ubuf, uint64_t len)
{
	char buf[512];
	uint64_t done = 0;
	if (len > 65536)
		return -KE_INVAL;
	while (done < len) {
		uint64_t n = MIN(len - done, sizeof(buf));
		if (copy_from_user(buf, ubuf + done, n))
			return -KE_FAULT;
		/* The UART is slow (two port accesses per byte, each a VM exit under QEMU, and it
		 * waits for the transmitter): write without the kernel lock, which the other CPUs
		 * need for every call. The console lock keeps lines whole; wait.c's MWAIT drops
		 * the kernel lock in a call the same way. */
		kunlock();
		console_write(buf, n);
		klock();
		done += n;
	}
	return (int64_t)len;
}

static int64_t kc_module_info(uint64_t idx, void *uout)
{
	if (idx >= boot_info.nmods)
		return -KE_INVAL;
	struct kc_module_info info = { 0 };
	const struct boot_module *m = &boot_info.mods[idx];
	info.size = m->end - m->start;
	size_t n = strnlen(m->cmdline, sizeof(info.name) - 1);
	memcpy(info.name, m->cmdline, n);
	return copy_to_user(uout, &info, sizeof(info));
}

static int64_t kc_module_map(struct proc *p, uint64_t idx)
{
	if (idx >= boot_info.nmods)
		return -KE_INVAL;
	const struct boot_module *m = &boot_info.mods[idx];
	uint64_t first = m->start & ~(PAGE_SIZE - 1), npages = (m->end - first + PAGE_SIZE - 1) / PAGE_SIZE;
	if (!npages)
		return -KE_INVAL;
	uint64_t va = proc_find_va(p, npages);
	if (!va)
		return -KE_NOMEM;
	/* Module memory stays reserved for the whole run: a plain read-only, cached mapping. */
	int r = proc_map_phys(p, va, first, npages, PROT_R, 0);
	return r ? r : (int64_t)(va + (m->start - first));
}

static int64_t kc_spawn(struct thread *me, const void *uargs)
{
	struct kc_spawn a;
	char args[256] = "";
	if (copy_from_user(&a, uargs, sizeof(a)))
		return -KE_FAULT;
	if (a.module >= boot_info.nmods || a.priority >= NPRIO || (a.flags & ~(uint32_t)SPAWN_STOPPED))
		return -KE_INVAL;
	if (a.cpu != SPAWN_ANY_CPU && (a.cpu >= ncpus || !cpus[a.cpu] || !cpus[a.cpu]->online))
		return -KE_INVAL;
	if (a.cpu != SPAWN_ANY_CPU && cpus[a.cpu]->dedicated)
		return -KE_BUSY; /* a dedicated core runs its one thread only */
	if (a.args && strncpy_from_user(args, a.args, sizeof(args)) < 0)
		return -KE_FAULT;
	const struct boot_module *m = &boot_info.mods[a.module];
	char name[32];
	size_t i = 0;
	const char *c = m->cmdline, *base = m->cmdline;
	for (const char *q = c; *q && *q != ' '; q++)
		if (*q == '/')
			base = q + 1;
	for (c = base; *c && *c != ' ' && i < sizeof(name) - 1; c++)
		name[i++] = *c;
	name[i] = 0;
	int err;
	struct proc *p = proc_spawn_elf(phys_to_virt(m->start), m->end - m->start, name, args,
					thread_ep(me), a.cpu == SPAWN_ANY_CPU ? -1 : (int32_t)a.cpu,
					(uint8_t)a.priority, a.flags & SPAWN_STOPPED, &err);
	if (!p)
		return err;
	p->kcalls_allowed = me->proc->kcalls_allowed & ~KC_PRIVILEGED;
	return p->id;
}

static int64_t kc_start(struct thread *me, endpoint_t ep)
{
	struct thread *t = ep_lookup(ep);
	if (!t)
		return -KE_DEADSRCDST;
	if (t->proc->parent != thread_ep(me))
		return -KE_PERM;
	if (!t->proc->stopped)
		return -KE_INVAL;
	t->proc->stopped = false;
	sched_make_ready(t->proc->main);
	return 0;
}

static int64_t kc_kill(struct thread *me, endpoint_t ep)
{
	struct thread *t = ep_lookup(ep);
	if (!t)
		return -KE_DEADSRCDST;
	if (t->proc->parent != thread_ep(me) && t->proc != me->proc)
		return -KE_PERM;
	bool self = t->proc == me->proc;
	proc_exit(t->proc, -9);
	if (self)
		schedule();
	return 0;
}

/* The activity counters: one CPU's, or their sum over every CPU. */
static int64_t kstat_read(uint64_t what, uint64_t arg)
{
	uint32_t k = arg & 0xff, field = (arg >> 8) & 0xff, only = (uint32_t)(arg >> 8);
	if (what == KI_KCALL_STAT ? (k > KC_COUNT || field > KCS_HOLD_CYCLES || arg >> 16)
				  : (k >= KST_COUNT || (what == KI_STAT && arg >> 8) ||
				     (what == KI_CPU_STAT && (only >= ncpus || !cpus[only]))))
		return -KE_INVAL;
	uint64_t sum = 0;
	for (uint32_t i = 0; i < ncpus; i++) {
		if (!cpus[i] || (what == KI_CPU_STAT && i != only))
			continue;
		sum += what == KI_KCALL_STAT ? cpus[i]->kc_stat[k][field]
		       : k == KST_TSC	     ? rdtsc()
		       : k == KST_TICKS	     ? cpus[i]->ticks /* counted there already */
					     : cpus[i]->stat[k];
	}
	return (int64_t)(sum & INT64_MAX);
}

/* One field of the thread in endpoint slot `slot` (KI_THREAD_STAT): counters and names any
 * process may read, as Linux's /proc shows every task. */
static int64_t thread_stat(uint32_t slot, uint64_t field)
{
	if (slot >= MAX_THREADS)
		return -KE_SRCH;
	const struct thread *t = &threads[slot];
	if (t->state == T_FREE || !t->proc || field > KTS_NAME_END)
		return -KE_INVAL;
	switch (field) {
	case KTS_ENDPOINT:
		return thread_ep(t);
	case KTS_RUNS:
		return (int64_t)(t->runs & INT64_MAX);
	case KTS_CPU_US:
		return (int64_t)(t->cpu_us & INT64_MAX);
	case KTS_CPU:
		return (int64_t)(uint32_t)t->cpu | (t->pinned == t->cpu ? 0x100 : 0);
	case KTS_STATE:
		return (int64_t)((uint64_t)t->state | (uint64_t)t->blocked_on << 8);
	case KTS_AS:
		return t->proc->as ? (int64_t)t->proc->as->cr3 : 0;
	case KTS_KCALLS:
		return (int64_t)(t->kcalls & INT64_MAX);
	case KTS_NOTIFIES:
		return (int64_t)(t->notifies & INT64_MAX);
	}
	uint64_t v = 0;
	const char *n = t->proc->name + (field - KTS_NAME) * 8;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | (uint8_t)n[i];
	return (int64_t)(v & INT64_MAX); /* a name's bytes are ASCII */
}

static int64_t kc_info(struct thread *me, uint64_t what, uint64_t arg)
{
	switch (what) {
	case KI_FREE_FRAMES:
		return (int64_t)pmm_free_frames();
	case KI_MEMOBJS:
		return (int64_t)memobj_live;
	case KI_FREE_RUN:
		return (int64_t)pmm_longest_free_run();
	case KI_THREADS: {
		int64_t n = 0;
		for (uint32_t i = 1; i < MAX_THREADS; i++)
			n += threads[i].state != T_FREE;
		return n;
	}
	case KI_NCPUS:
		return ncpus_online;
	case KI_CPU_TICKS:
		return arg < ncpus && cpus[arg] ? (int64_t)cpus[arg]->ticks : -KE_INVAL;
	case KI_PARENT:
		return me->proc->parent;
	case KI_THREAD_STAT:
		return thread_stat((uint32_t)arg, arg >> 32);
	case KI_SWTRACE_COUNT:
		return (int64_t)swtrace_count();
	case KI_SWTRACE:
		return swtrace_info(arg);
	case KI_HANDLE: {
		struct proc *p = me->proc;
		if (arg == 0 || arg > p->handles_cap)
			return -KE_SRCH;
		const struct mo_handle *hd = &p->handles[arg - 1];
		return hd->mo ? (int64_t)(hd->rights | (hd->creator ? 0x100u : 0)) : -KE_INVAL;
	}
	case KI_LX_PID: {
		struct proc *p = arg <= 0xffffffffull ? proc_of(me, (endpoint_t)arg) : NULL;
		return p ? lx_pid_of(p) : -KE_SRCH;
	}
	case KI_LX_ARGS: {
		struct proc *p = proc_of(me, (endpoint_t)(arg & 0xffffffffu));
		uint64_t f = arg >> 32;
		if (!p)
			return -KE_SRCH;
		return f == 0 ? (int64_t)p->arg_start : f == 1 ? (int64_t)p->arg_end : f == 2 ? (int64_t)p->env_end : -KE_INVAL;
	}
	case KI_LX_MAP:
	case KI_LX_MAP_PAGES: {
		struct proc *p = proc_of(me, (endpoint_t)(arg & 0xffffffffu));
		uint64_t i = arg >> 32;
		if (!p || i >= p->nmaps)
			return -KE_SRCH;
		const struct mapping *m = &p->maps[i];
		if (what == KI_LX_MAP_PAGES)
			return (int64_t)m->npages;
		uint64_t bits = (m->prot & PROT_R ? KIM_R : 0) | (m->prot & PROT_W ? KIM_W : 0) |
				(m->prot & PROT_X ? KIM_X : 0) | (m->shared || m->sys ? KIM_SHARED : 0) |
				(m->sys ? KIM_SYS : 0) | (m->va == USER_STACK_TOP - USER_STACK_PAGES * PAGE_SIZE ? KIM_STACK : 0) |
				(!m->mo ? KIM_DEVICE : 0);
		return (int64_t)(m->va | bits);
	}
	case KI_PROC_CPU_US: {
		struct proc *p = arg <= 0xffffffffull ? proc_of(me, (endpoint_t)arg) : NULL;
		return p ? (int64_t)proc_cpu_us_now(p, time_us_since_boot()) : -KE_SRCH;
	}
	case KI_THREAD_STATE:
	case KI_THREAD_PEER:
	case KI_THREAD_RIP: {
		struct thread *t = arg <= 0xffffffffull ? ep_lookup((endpoint_t)arg) : NULL;
		if (!t)
			return -KE_SRCH;
		if (t->proc->parent != thread_ep(me) && t->proc != me->proc)
			return -KE_PERM; /* a parent's (rs's) view of its children, as for KC_KILL */
		if (what == KI_THREAD_RIP)
			return t->uframe ? (int64_t)t->uframe->rip : 0;
		if (what == KI_THREAD_PEER)
			return t->state == T_BLOCKED ? (int64_t)t->ipc_peer : 0;
		return (int64_t)((uint64_t)t->state | (uint64_t)t->blocked_on << 8 | (uint64_t)(t->cpu & 0xff) << 16);
	}
	case KI_LINUX_CALLS:
		return (int64_t)me->proc->linux_calls;
	case KI_WAIT_MWAIT:
		return (int64_t)wait_mwait_count;
	case KI_WAIT_BLOCK:
		return (int64_t)wait_block_count;
	case KI_CPU_FEATURES:
		return arg < ncpus && cpus[arg] ? (int64_t)cpus[arg]->feat.monitor : -KE_INVAL;
	case KI_STAT:
	case KI_KCALL_STAT:
	case KI_CPU_STAT:
		return kstat_read(what, arg);
	case KI_LX_STAT: {
		if (arg >= LX_STAT_NRS)
			return -KE_INVAL;
		uint64_t sum = 0;
		for (uint32_t i = 0; i < ncpus; i++)
			sum += cpus[i] ? cpus[i]->lx_stat[arg] : 0;
		return (int64_t)(sum & INT64_MAX);
	}
	case KI_TSC_HZ:
		return (int64_t)tsc_hz;
	case KI_IRQ_MASKED:
		return devirq_masked(arg);
	case KI_VVAR: {
		uint64_t va = vdso_map_vvar(me->proc);
		return va ? (int64_t)va : -KE_NOMEM;
	}
	default:
		return -KE_INVAL;
	}
}

static int64_t kc_sched(struct thread *me, endpoint_t ep, uint64_t cpu, uint64_t flags)
{
	struct thread *t = ep_lookup(ep);
	if (!t)
		return -KE_DEADSRCDST;
	if (t->proc->parent != thread_ep(me) && t->proc != me->proc)
		return -KE_PERM;
	if (flags & ~(uint64_t)KS_DEDICATED)
		return -KE_INVAL;
	if (cpu == SPAWN_ANY_CPU) {
		if (flags)
			return -KE_INVAL;
		sched_undedicate(t);
		t->pinned = -1;
		return 0;
	}
	if (cpu >= ncpus || !cpus[cpu] || !cpus[cpu]->online)
		return -KE_INVAL;
	if (cpus[cpu]->dedicated && cpus[cpu]->dedicated != t)
		return -KE_BUSY;
	if (!(flags & KS_DEDICATED))
		sched_undedicate(t); /* placing without the flag gives a dedicated core back */
	if (flags & KS_DEDICATED) {
		int64_t r = sched_dedicate(t, (uint32_t)cpu);
		if (r)
			return r;
	}
	t->pinned = (int32_t)cpu;
	if (t->state == T_READY && t->cpu != (int32_t)cpu) {
		sched_remove(t);
		t->state = T_BLOCKED;
		sched_make_ready(t);
	} else if (t->state == T_RUNNING && t->cpu != (int32_t)this_cpu_index()) {
		sched_resched_cpu((uint32_t)t->cpu); /* moves at its next kernel entry */
	} else if (t == me && t->cpu != (int32_t)cpu) {
		me->state = T_READY;
		schedule(); /* requeued on the pinned CPU */
	}
	return 0;
}

static int64_t msg_in(struct kmsg *m, const void *u)
{
	if (copy_from_user(m, u, sizeof(*m)))
		return -KE_FAULT;
	/* kernel-only types are never forged; negative errnos as types are replies */
	return m->type >= KMSG_KERNEL && m->type < KMSG_KERNEL_END ? -KE_INVAL : 0;
}

/* Which arguments of each call are endpoints (bit i: argument i). */
static const uint8_t ep_args[KC_COUNT] = {
	[KC_SEND] = 1, [KC_CALL] = 1, [KC_RECEIVE] = 1, [KC_REPLY] = 1, [KC_SENDNB] = 1,
	[KC_NOTIFY] = 1, [KC_KILL] = 1, [KC_SCHED] = 1, [KC_START] = 1, [KC_PRIV] = 1,
	[KC_MO_GRANT] = 2, [KC_MO_REVOKE] = 1, [KC_VCOPY] = 1 | 4, [KC_LINUX_ROUTE] = 1,
	[KC_LX_PID] = 1, [KC_LX_FORK] = 1, [KC_LX_THREAD] = 1, [KC_LX_EXEC] = 1, [KC_LX_SIGNAL] = 1, [KC_LX_MMAP] = 1, [KC_LX_MUNMAP] = 1,
	[KC_LX_PASS] = 1 | 2, [KC_LEGACY] = 2 | 4,
};

static int64_t dispatch(struct thread *me, uint32_t n, const uint64_t a[6])
{
	struct kmsg m;
	int64_t r;
	uint64_t a0 = a[0], a1 = a[1], a2 = a[2];
	/* Endpoints are 32 bits: a wider value is an error, never silently EP_ANY. */
	for (uint32_t i = 0; i < 6; i++)
		if ((ep_args[n] & (1u << i)) && a[i] > 0xffffffffull)
			return -KE_INVAL;
	switch (n) {
	case KC_DEBUG_WRITE:
		return kc_debug_write((const char *)a0, a1);
	case KC_EXIT:
		proc_exit(me->proc, (int64_t)a0);
		schedule(); /* dead: never comes back */
		return 0;
	case KC_YIELD:
		me->state = T_READY;
		schedule();
		return 0;
	case KC_SELF:
		return thread_ep(me);
	case KC_MODULE_MAP:
		return kc_module_map(me->proc, a0);
	case KC_MODULE_INFO:
		return kc_module_info(a0, (void *)a1);
	case KC_SPAWN:
		return kc_spawn(me, (const void *)a0);
	case KC_SEND:
	case KC_CALL:
		if ((r = msg_in(&m, (const void *)a1)))
			return r;
		r = ipc_send(me, (endpoint_t)a0, &m, n == KC_CALL);
		if (r == 0 && n == KC_CALL && copy_to_user((void *)a1, &me->ipc_msg, sizeof(m)))
			return -KE_FAULT;
		return r;
	case KC_RECEIVE:
		/* Check the buffer first: a message taken off the queue must not be lost. */
		m = (struct kmsg){ 0 };
		if (copy_to_user((void *)a1, &m, sizeof(m)))
			return -KE_FAULT;
		r = ipc_receive(me, (endpoint_t)a0);
		if (r == 0 && copy_to_user((void *)a1, &me->ipc_msg, sizeof(m)))
			return -KE_FAULT;
		return r;
	case KC_REPLY:
	case KC_SENDNB:
		if ((r = msg_in(&m, (const void *)a1)))
			return r;
		return ipc_reply(me, (endpoint_t)a0, &m, n == KC_SENDNB);
	case KC_NOTIFY:
		return ipc_notify(me, (endpoint_t)a0, a1);
	case KC_TIME:
		return (int64_t)(time_us_since_boot() * 1000);
	case KC_CPU:
		return this_cpu_index();
	case KC_KILL:
		return kc_kill(me, (endpoint_t)a0);
	case KC_POWEROFF:
		pr_info("power off requested by %s with status %llu", me->proc->name, (unsigned long long)a0);
		qemu_exit(0x20 | ((uint32_t)a0 & 0x1f));
	case KC_INFO:
		return kc_info(me, a0, a1);
	case KC_SCHED:
		return kc_sched(me, (endpoint_t)a0, a1, a2);
	case KC_MO_CREATE:
	case KC_MO_MAP:
	case KC_MO_UNMAP:
	case KC_MO_GRANT:
	case KC_MO_REVOKE:
	case KC_MO_DESTROY:
	case KC_MO_PHYS:
	case KC_VCOPY:
		return memcall(me, n, a);
	case KC_WAIT:
		return kc_wait(me, a0, a1, a2);
	case KC_PRIV:
	case KC_IRQ_BIND:
	case KC_IRQ_UNMASK:
	case KC_MMIO_MAP:
	case KC_PCI_CFG:
	case KC_MSI_BIND:
		return devpriv_call(me, n, a);
	case KC_START:
		return kc_start(me, (endpoint_t)a0);
	case KC_LINUX_ROUTE:
		return kc_linux_route(me, (endpoint_t)a0, a1, a2);
	case KC_LX_PID:
		return kc_lx_pid(me, (endpoint_t)a0, a1);
	case KC_LX_FORK:
		return kc_lx_fork(me, (endpoint_t)a0, a1, a2);
	case KC_LX_THREAD:
		return kc_lx_thread(me, (endpoint_t)a0, a1, a2, a[3], a[4], a[5]);
	case KC_LX_EXEC:
		return kc_lx_exec(me, (endpoint_t)a0, a1, a2, a[3], a[4]);
	case KC_LX_SIGNAL:
		return kc_lx_signal(me, (endpoint_t)a0, a1, a2, a[3], a[4], a[5]);
	case KC_LX_MMAP:
		return kc_lx_mmap(me, (endpoint_t)a0, a1, a2, a[3], a[4], a[5]);
	case KC_LX_MUNMAP:
		return kc_lx_munmap(me, (endpoint_t)a0, a1, a2);
	case KC_LEGACY:
		return kc_legacy(me, a0, (endpoint_t)a1, (endpoint_t)a2);
	case KC_LX_PASS:
		return kc_lx_pass(me, (endpoint_t)a0, (endpoint_t)a1, a2);
	case KC_ALIVE:
		return root_alive(me, a0);
	case KC_TEXT:
		return kc_text(me, (endpoint_t)a0, a1, a2, a[3], a[4]);
	case KC_WAKE:
		return kc_wake(me, a0, a1, a2);
	default:
		return -KE_NOSYS;
	}
}

/* Counts a call and the cycles it waited for the kernel lock (t0 to t1); its hold is counted
 * at the release (klock.h). Runs on the CPU the call ends on, with the lock held. */
static void account(uint32_t call, enum kstat kind, uint64_t t0, uint64_t t1)
{
	struct cpu *c = this_cpu();
	c->stat[kind]++;
	c->kc_stat[call][KCS_CALLS]++;
	c->kc_stat[call][KCS_WAIT_CYCLES] += t1 - t0;
}

static bool keeps_deferred(uint32_t n)
{
	switch (n) {
	case KC_WAIT: case KC_RECEIVE: case KC_CALL:                  /* likely to block */
	case KC_NOTIFY: case KC_REPLY: case KC_SENDNB: case KC_INFO: case KC_WAKE: /* short steps */
		return true;
	}
	return false;
}

void syscall_dispatch(struct trap_frame *f);
void syscall_dispatch(struct trap_frame *f)
{
	struct thread *me = current_thread();
	uint64_t nr = f->rax;
	if ((nr & 0xff000000u) == KC_BASE && nr < ((uint64_t)KC_BASE | KC_COUNT)) {
		uint32_t n = nr & 0xffffff;
		if (!(me->proc->kcalls_allowed & (1ull << MIN(n, 63u)))) {
			f->rax = (uint64_t)-KE_PERM;
		} else {
			const uint64_t a[6] = { f->rdi, f->rsi, f->rdx, f->r10, f->r8, f->r9 };
			uint64_t t0 = rdtsc();
			klock();
			uint64_t t1 = rdtsc();
			this_cpu()->klock_call = n + 1;
			/* a thread this one woke waits on this CPU for it to block: a call that
			 * neither waits nor is a short step of the same pass (kicking another peer,
			 * answering) means it goes on, so the woken thread goes to an idle CPU now */
			if (this_cpu()->deferred && !keeps_deferred(n))
				sched_release_deferred();
			text_sample(me->proc, f->rip);
			me->kcalls++;
			me->notifies += n == KC_NOTIFY;
			f->rax = (uint64_t)dispatch(me, n, a);
			/* a call that was to block came back at once (a wait whose doorbell had
			 * rung, a message already there), or an application's notify (a doorbell:
			 * the socket library waking its engine; its next kernel call may be a tick
			 * away): the waker goes on, the woken one moves */
			if (this_cpu()->deferred && (n == KC_WAIT || n == KC_RECEIVE || n == KC_CALL ||
						     (n == KC_NOTIFY && me->proc->lx)))
				sched_release_deferred();
			account(n, KST_KCALLS, t0, t1);
			kunlock();
		}
	} else {
		const uint64_t a[6] = { f->rdi, f->rsi, f->rdx, f->r10, f->r8, f->r9 };
		uint64_t t0 = rdtsc();
		klock();
		uint64_t t1 = rdtsc();
		this_cpu()->klock_call = KC_COUNT + 1;
		this_cpu()->lx_nr = (uint32_t)nr;
		if (nr < LX_STAT_NRS)
			this_cpu()->lx_stat[nr]++;
		f->rax = (uint64_t)linux_syscall(me, nr, a);
		account(KC_COUNT, KST_LINUX_CALLS, t0, t1);
		kunlock();
	}
	sched_user_return();
	signal_user_return(f);
}
