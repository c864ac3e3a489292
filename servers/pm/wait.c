/* Ends and waits: a process's end (zombie, LX_SIGCHLD, reparenting), wait4 with calls held
 * until a child ends, kill/tkill/tgkill, and giving held calls back for signals. */
#include "pm.h"
#include "lx_abi.h"
#include "vfs_proto.h"

#define WAIT_OPTIONS (1u | 2u | 8u | 0x20000000u | 0x40000000u | 0x80000000u)
#define CLD_EXITED 1
#define CLD_KILLED 2
#define CLD_DUMPED 3
#define MAX_WAITS 64

static struct lxcall waits[MAX_WAITS]; /* held wait4 calls (thread 0: free) */

static void free_proc(struct lxproc *p) { p->used = false; }

static bool matches(const struct lxproc *parent, const struct lxproc *q, int32_t pid)
{
	return q->used && q->ppid == parent->pid && q != parent &&
	       (pid == -1 || (pid > 0 && q->pid == pid) || (pid == 0 && q->pgid == parent->pgid) ||
		(pid < -1 && q->pgid == -pid));
}

/* One attempt at a wait4: a pid, 0 (LX_WNOHANG, none ended), -errno, or PM_HOLD. */
static int64_t wait_try(struct lxcall *c)
{
	struct lxproc *p = c->p;
	int32_t pid = (int32_t)c->a[0];
	bool any = false;
	for (int i = 0; i < MAX_PROCS; i++) {
		struct lxproc *q = &lx_procs[i];
		if (!matches(p, q, pid))
			continue;
		any = true;
		if (!q->zombie)
			continue;
		if (c->a[1] && ax_vcopy(EP_NONE, &q->status, p->ep, (void *)c->a[1], 4) < 0)
			return -LX_EFAULT;
		if (c->a[3] && lx_put_rusage(p, c->a[3], q->cpu_us + q->children_us) < 0)
			return -LX_EFAULT;
		p->children_us += q->cpu_us + q->children_us;
		int32_t r = q->pid;
		free_proc(q);
		return r;
	}
	if (!any)
		return -LX_ECHILD;
	return c->a[2] & LX_WNOHANG ? 0 : PM_HOLD;
}

int64_t lx_wait4(struct lxcall *c)
{
	if (c->a[2] & ~(uint64_t)WAIT_OPTIONS)
		return -LX_EINVAL;
	int64_t r = wait_try(c);
	if (r != PM_HOLD)
		return r;
	for (int i = 0; i < MAX_WAITS; i++)
		if (!waits[i].thread) {
			waits[i] = *c;
			return PM_HOLD;
		}
	return -LX_EAGAIN;
}

void lx_retry_waits(void)
{
	for (int i = 0; i < MAX_WAITS; i++) {
		struct lxcall *w = &waits[i];
		if (!w->thread)
			continue;
		if (!w->p->used || w->p->zombie) { /* the waiter itself is gone */
			w->thread = 0;
			continue;
		}
		int64_t r = wait_try(w);
		if (r != PM_HOLD) {
			lx_answer(w->thread, r);
			w->thread = 0;
		}
	}
}

void lx_cancel(endpoint_t thread)
{
	for (int i = 0; i < MAX_WAITS; i++)
		if (waits[i].thread == thread) {
			lx_answer(thread, -LX_ERESTARTSYS);
			waits[i].thread = 0;
		}
}

void lx_ended(struct lxproc *p, int32_t status)
{
	p->zombie = true;
	p->status = status;
	int sig = status & 0x7f;
	if (p->toplevel) {
		if (sig)
			ax_printf("pm: %s (pid %d) killed by signal %d\n", p->name, p->pid, sig);
		else
			ax_printf("pm: %s (pid %d) exited with status %d\n", p->name, p->pid, (status >> 8) & 0xff);
	}
	struct kmsg f = { .type = VFS_FORGET, .w = { p->ep } }; /* its descriptors go */
	lx_vfs_call(&f);
	lx_threads_forget(p->pid);
	if (p->vfork_parent) {
		lx_answer(p->vfork_parent, p->pid);
		p->vfork_parent = 0;
	}
	/* Its children go to the nearest living ancestor that is a subreaper
	 * (PR_SET_CHILD_SUBREAPER), else to pid 1 if that is alive, else nobody waits for them;
	 * those that asked (PR_SET_PDEATHSIG) get their signal. */
	struct lxproc *init = lx_find_pid(1), *reaper = NULL;
	bool init_alive = init && !init->zombie && init != p;
	struct lxproc *a = p->ppid ? lx_find_pid(p->ppid) : NULL;
	for (int steps = 0; a && !reaper && steps < MAX_PROCS; steps++, a = a->ppid ? lx_find_pid(a->ppid) : NULL)
		if (a->subreaper && !a->zombie && a != p)
			reaper = a;
	int32_t heir = reaper ? reaper->pid : init_alive ? 1 : 0;
	for (int i = 0; i < MAX_PROCS; i++) {
		struct lxproc *q = &lx_procs[i];
		if (!q->used || q->ppid != p->pid || q == p)
			continue;
		q->ppid = heir;
		if (q->zombie && !heir)
			free_proc(q);
		else if (!q->zombie && q->pdeathsig)
			kcall6(KC_LX_SIGNAL, q->ep, q->pdeathsig, 0, (uint64_t)p->pid, 0, 0);
	}
	struct lxproc *parent = p->ppid ? lx_find_pid(p->ppid) : NULL;
	if (!parent || parent->zombie) {
		free_proc(p);
	} else if (kcall6(KC_LX_SIGNAL, parent->ep, LX_SIGCHLD, LXS_QUERY, 0, 0, 0) == 1) {
		free_proc(p); /* LX_SIGCHLD ignored or LX_SA_NOCLDWAIT: no zombie */
	} else if (p->exit_signal) {
		int code = !sig ? CLD_EXITED : status & 0x80 ? CLD_DUMPED : CLD_KILLED;
		kcall6(KC_LX_SIGNAL, parent->ep, p->exit_signal, 0, (uint64_t)p->pid, (uint64_t)code, 0);
	}
	lx_retry_waits();
}

static int64_t send_to(struct lxproc *from, struct lxproc *q, uint64_t sig)
{
	if (!sig || q->zombie)
		return 0;
	int64_t r = kcall6(KC_LX_SIGNAL, q->ep, sig, 0, from ? (uint64_t)from->pid : 0, 0 /* SI_USER */, 0);
	return r < 0 ? r : 0;
}

int64_t lx_kill(struct lxproc *from, int64_t pid, uint64_t sig)
{
	if (sig > 64)
		return -LX_EINVAL;
	if (pid > 0) {
		struct lxproc *q = lx_find_pid((int32_t)pid);
		if (!q)
			return -LX_ESRCH;
		return lx_may_signal(from, q) ? send_to(from, q, sig) : -LX_EPERM;
	}
	if (pid == 0 && !from)
		return -LX_ESRCH;
	int32_t group = pid == 0 ? from->pgid : (int32_t)-pid;
	bool found = false, sent = false;
	for (int i = 0; i < MAX_PROCS; i++) {
		struct lxproc *q = &lx_procs[i];
		if (!q->used || (pid == -1 ? q->pid == 1 || q == from : q->pgid != group))
			continue;
		found = true;
		if (lx_may_signal(from, q)) { /* the others are skipped (Linux: EPERM if none could be) */
			sent = true;
			send_to(from, q, sig);
		}
	}
	return !found ? -LX_ESRCH : sent ? 0 : -LX_EPERM;
}

int64_t lx_tgkill(struct lxproc *from, int64_t tgid, int64_t tid, uint64_t sig)
{
	if (sig > 64 || tid <= 0 || tgid == 0 || tgid < -1)
		return -LX_EINVAL;
	int32_t pid = 0;
	endpoint_t ep = lx_thread_ep((int32_t)tid, &pid);
	struct lxproc *q = lx_find_pid((int32_t)tid);
	if (!ep && q) /* a process's first thread: its tid is the pid */
		ep = q->ep, pid = q->pid;
	if (!ep || (tgid > 0 && pid != tgid))
		return -LX_ESRCH;
	struct lxproc *target = lx_find_pid(pid);
	if (target && !lx_may_signal(from, target))
		return -LX_EPERM;
	if (!sig)
		return 0;
	int64_t r = kcall6(KC_LX_SIGNAL, ep, sig, LXS_THREAD, from ? (uint64_t)from->pid : 0, (uint64_t)-6 /* SI_TKILL */, 0);
	return r < 0 ? -LX_ESRCH : 0;
}
