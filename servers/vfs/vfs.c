/* vfs: serves the file calls of Linux programs (routed to it by the kernel at pm's request,
 * KC_LINUX_ROUTE) on a RAM file system loaded from the initrd (a cpio boot module).
 *   vfs [initrd=MODULE] [pm=SERVICE]...
 *     initrd=  default initrd.cpio
 *     pm=      the service names of the process managers whose messages (vfs_proto.h) are
 *              accepted; default pm (tests run several, one per program)
 * README.md has the calls, the state and the recovery story. */
#include "vfs.h"
#include "lx_abi.h"
#include "sysv.h"
#include "service.h"
#include "evloop.h"
#include "heap.h"
#include "keep.h"
#include "tty.h"
#include "tty_proto.h"
#include "syscall_proto.h"

VFS_KEPT struct rnode *vfs_root;

/* The kept state's name and the version of its layout (ax_keep_image): bump the version when
 * a VFS_KEPT variable or a structure reachable from one changes. */
#define VFS_KEEP_MAGIC 0x5346565f5841ull /* "AX_VFS" */
#ifndef VFS_STATE_VERSION /* (the Makefile builds vfs.layout2 with 2, for the refusal's test) */
#define VFS_STATE_VERSION 1
#endif

/* Calls that must wait: the calling thread stays blocked in its call until we reply. Not
 * kept: when an instance ends, the kernel makes the calls it held again to its successor
 * (docs/kernel-api.md §8a). */
#define MAX_HELD 128
static struct held {
	uint64_t pid; /* 0: a free slot */
	struct vcall v;
	uint64_t alive_at; /* ax_thread_deaths() when its thread was last found alive; ~0: never */
} held[MAX_HELD];
static int held_top; /* one past the highest slot in use: the scans stop there */

static void held_trim(void)
{
	while (held_top > 0 && !held[held_top - 1].pid)
		held_top--;
}

/* The wall clock for nodes' times, read without a system call (ax_wall_ns): a node is made
 * for every accepted connection, and each was a clock_gettime. */
uint64_t vfs_now(void)
{
	return ax_wall_ns();
}

void vfs_answer(endpoint_t to, int64_t r)
{
	struct kmsg m = { .type = 0 };
	m.w[0] = (uint64_t)r;
	ax_reply(to, &m);
}

int64_t vfs_put_sized(struct client *c, const void *v, uint32_t len, uint64_t ubuf, uint64_t ulen, bool full)
{
	uint32_t have;
	if (ax_vcopy(c->ep, (const void *)ulen, EP_NONE, &have, 4) < 0)
		return -LX_EFAULT;
	if ((int32_t)have < 0)
		return -LX_EINVAL;
	uint32_t n = have < len ? have : len, told = full ? len : n;
	if (ax_vcopy(EP_NONE, v, c->ep, (void *)ubuf, n) < 0 || ax_vcopy(EP_NONE, &told, c->ep, (void *)ulen, 4) < 0)
		return -LX_EFAULT;
	return 0;
}

int64_t vfs_mo_make(uint64_t pages, uint64_t *va)
{
	int64_t h = ax_mo_create(pages, 0);
	if (h < 0)
		return -LX_ENOMEM;
	int64_t v = ax_mo_map(h, 0, 0, pages, KP_R | KP_W);
	if (v < 0) {
		ax_mo_destroy(h);
		return -LX_ENOMEM;
	}
	*va = (uint64_t)v;
	return h;
}

struct vcall *vfs_cur_call;

/* Serves v for process pid; VFS_BLOCK if it must wait. */
static int64_t serve(uint64_t pid, struct vcall *v)
{
	vfs_cur_call = v;
	struct client *c = vfs_client(pid, true);
	if (!c)
		return -LX_ENOMEM;
	c->ep = v->thread;
	vfs_current = c;
	return vfs_call(c, v);
}

/* Whether a thread still exists: a copy of nothing from its memory fails if not. */
static bool alive(endpoint_t thread) { return ax_vcopy(thread, NULL, EP_NONE, NULL, 0) != -KE_DEADSRCDST; }

/* Tries every held call again; answers those that can finish now. */
static bool retrying, retry_again;
static void retry_held(void)
{
	if (retrying) { /* asked from inside a retry: one more round when this one ends */
		retry_again = true;
		return;
	}
	retrying = true;
	sock_ready_drain(); /* readiness syscall pushed without ringing us (only losses) */
	for (bool progress = true; progress;) {
		progress = retry_again = false;
		/* A thread found alive stays so while no thread anywhere has ended: one kernel
		 * call per held caller only after some thread ended, not at every look. */
		uint64_t deaths = ax_thread_deaths();
		for (int i = 0; i < held_top; i++) {
			struct held *h = &held[i];
			if (!h->pid)
				continue;
			if (h->alive_at != deaths) {
				if (!alive(h->v.thread)) {
					h->pid = 0; /* the thread ended (its process exec'd): it must not take data */
					continue;
				}
				h->alive_at = deaths;
			}
			int64_t r = serve(h->pid, &h->v);
			if (r == VFS_BLOCK)
				continue;
			h->pid = 0;
			if (r != VFS_PASSED) /* (passed: syscall answers it) */
				vfs_answer(h->v.thread, r);
			progress = true; /* it may have unblocked another one */
		}
		progress |= retry_again;
	}
	retrying = false;
	held_trim();
	epoll_rings(); /* the armed sets that became ready meanwhile */
}

void vfs_kick(void) { retry_held(); }

int vfs_held_count(bool (*match)(const struct vcall *v, void *arg), void *arg)
{
	int n = 0;
	for (int i = 0; i < held_top; i++)
		n += held[i].pid && match(&held[i].v, arg);
	return n;
}

/* Answers the held calls whose deadline has passed; the time until the next deadline in
 * ns (the event loop's longest sleep), 0 if none. */
static uint64_t held_timer(void)
{
	uint64_t now = 0, next = UINT64_MAX;
	for (int i = 0; i < held_top; i++) {
		struct held *h = &held[i];
		if (!h->pid || !h->v.deadline)
			continue;
		if (!now)
			now = ax_time_ns();
		if (h->v.deadline > now) {
			next = h->v.deadline < next ? h->v.deadline : next;
			continue;
		}
		h->v.expired = true;
		sock_ready_drain(); /* (losses come without a ring) */
		int64_t r = serve(h->pid, &h->v);
		h->pid = 0;
		if (r != VFS_PASSED)
			vfs_answer(h->v.thread, r == VFS_BLOCK ? -LX_EINTR : r);
	}
	held_trim();
	return next == UINT64_MAX ? 0 : next - now;
}

int64_t vfs_wait(struct vcall *v, int64_t timeout_ns)
{
	if (timeout_ns == 0 || v->expired)
		return 0;
	if (!v->again && timeout_ns > 0) {
		uint64_t now = ax_time_ns();
		v->deadline = (uint64_t)timeout_ns > UINT64_MAX - now ? UINT64_MAX : now + (uint64_t)timeout_ns;
	}
	return VFS_BLOCK;
}

/* A signal came for a thread whose call we hold (KMSG_LINUX_CANCEL): it gets -ERESTARTSYS
 * now, which the kernel makes EINTR or a restart of the call. */
static void cancel(endpoint_t thread)
{
	for (int i = 0; i < held_top; i++)
		if (held[i].pid && held[i].v.thread == thread) {
			fifo_open_cancelled(held[i].pid, &held[i].v); /* (a restart opens anew) */
			lock_wait_cancelled(held[i].pid, &held[i].v);
			held[i].pid = 0;
			vfs_answer(thread, -LX_ERESTARTSYS);
		}
	tty_cancel(thread);
}

static void forget(uint64_t pid)
{
	for (int i = 0; i < held_top; i++)
		if (held[i].pid == pid)
			held[i].pid = 0; /* its threads are gone: nobody to answer */
	tty_cancel((endpoint_t)pid);
	vfs_forget(pid);
	sysv_forget(pid);
}

/* The process managers (pm= arguments) and their endpoints, looked up again when a message
 * claims to be from one but is not from an instance we know (pm may have been restarted). */
#define MAX_PMS 16
static const char *pm_names[MAX_PMS] = { "pm" };
static endpoint_t pm_eps[MAX_PMS];
static int npms = 1;

static bool from_pm(endpoint_t from)
{
	for (int i = 0; i < npms; i++)
		if (from && from == pm_eps[i])
			return true;
	for (int i = 0; i < npms; i++) {
		int64_t ep = ax_svc_lookup(pm_names[i], NULL);
		pm_eps[i] = ep > 0 ? (endpoint_t)ep : 0;
		if (from && from == pm_eps[i])
			return true;
	}
	return false;
}

/* pm's messages (vfs_proto.h). */
static void pm_message(struct kmsg *m)
{
	endpoint_t from = m->source;
	int64_t r = -LX_ENOSYS, handle = 0;
	uint64_t setid[2] = { 0, 0 };
	if (!from_pm(from))
		r = -LX_EPERM;
	else if (m->type == VFS_CREDS)
		r = vfs_set_creds(m);
	else if (m->type == VFS_COMM)
		r = vfs_set_comm(m);
	else if (m->type == VFS_FORGET)
		forget(m->w[0]), r = 0;
	else if (m->type == VFS_FORK)
		r = vfs_fork(m->w[0], m->w[1]), sysv_fork(m->w[0], m->w[1]);
	else if (m->type == VFS_EXEC)
		r = vfs_exec_done(m->w[0]), sysv_exec(m->w[0]);
	else if (m->type == VFS_SESSION && (r = vfs_client(m->w[0], true) ? 0 : -LX_ENOMEM) == 0)
		tty_session((int32_t)m->w[1]);
	else if (m->type == VFS_EXEC_OPEN)
		r = exec_open(vfs_current = vfs_client(m->w[0], true), (endpoint_t)m->w[1], m->w[2], from, &handle, setid);
	struct kmsg a = { .type = 0, .w = { (uint64_t)r, (uint64_t)handle, setid[0], setid[1] } };
	ax_reply(from, &a);
}

static void on_message(struct ax_evloop *l, struct kmsg *m)
{
	(void)l;
	if (tty_message(m))
		return; /* the console attaching to the terminal's input */
	if ((m->type & 0xffffff00u) == 0x7600u) {
		pm_message(m);
		retry_held(); /* a process that ended may have held a pipe's other end */
		return;
	}
	if ((m->type & ~0x3ffu) == KMSG_LINUX_PASSED) {
		sock_passed_back(m); /* syscall finishing an accept or a sendfile */
		retry_held();
		return;
	}
	if ((m->type & 0xffff0000u) != KMSG_LINUX)
		return;
	struct vcall v = { .nr = m->type & 0xffff, .thread = m->source };
	memcpy(v.a, m->w, sizeof(v.a));
	uint64_t pid = m->w[6];
	int64_t r = serve(pid, &v);
	if (r == VFS_PASSED)
		return; /* syscall answers it */
	if (r == VFS_BLOCK) {
		struct held *h = NULL;
		for (int i = 0; i < MAX_HELD && !h; i++)
			if (!held[i].pid)
				h = &held[i];
		if (h && h - held >= held_top)
			held_top = (int)(h - held) + 1;
		if (h) {
			v.again = true;
			*h = (struct held){ pid, v, ~0ull };
			return; /* answered by retry_held or held_timer */
		}
		r = -LX_EAGAIN; /* too many blocked callers */
	}
	vfs_answer(m->source, r);
	retry_held();
}

static void on_report(struct ax_evloop *l, const struct kmsg *m)
{
	(void)l;
	if (m->type == KMSG_LINUX_CANCEL)
		cancel((endpoint_t)m->w[0]);
}

static void on_notify(struct ax_evloop *l, uint64_t bits)
{
	(void)l;
	if (bits & TTY_INPUT_BIT)
		tty_input();
	if (bits & SYSCALL_READY_BIT)
		sock_ready_input();
}

/* The sooner of two waits in ns, 0 meaning none. */
static uint64_t sooner(uint64_t a, uint64_t b) { return !a ? b : !b ? a : a < b ? a : b; }

/* Each turn of the loop: calls whose time ran out are answered (held calls, the terminal's
 * timers), and the next deadline says how long we may sleep. */
static bool on_poll(struct ax_evloop *l)
{
	bool fired = false;
	uint64_t a = held_timer(), b = tty_timer(), t = timerfd_timer(&fired);
	if (fired)
		retry_held(); /* a timerfd expired: its readers, polls and armed sets */
	l->wait_ns = sooner(sooner(a, b), t);
	if (sock_flush_closes() && (!l->wait_ns || l->wait_ns > 2000000))
		l->wait_ns = 2000000; /* syscall was busy: tell it again soon */
	if (sock_syscall_awaited()) {
		retry_held(); /* socket calls held while syscall is gone: is it back? */
		if (!l->wait_ns || l->wait_ns > 10000000)
			l->wait_ns = 10000000;
	}
	return false;
}

static int make_dev(struct rnode *dev, const char *name, uint32_t which, struct rnode **out)
{
	int r = ramfs_create(dev, name, strlen(name), LX_S_IFCHR | 0666, out);
	if (r == 0)
		(*out)->dev = which;
	return r;
}

/* /dev beyond null, zero and the console: /dev/tty is the console (the only terminal, so
 * every process's controlling one), stdin, stdout and stderr lead to /proc/self/fd. */
static int make_more_devs(struct rnode *dev)
{
	struct rnode *n;
	static const char *const std[] = { "stdin", "stdout", "stderr" };
	int r = make_dev(dev, "full", DEV_FULL, &n);
	r = r ? r : make_dev(dev, "random", DEV_RANDOM, &n);
	r = r ? r : make_dev(dev, "urandom", DEV_URANDOM, &n);
	r = r ? r : make_dev(dev, "tty", DEV_CONSOLE, &n);
	for (int i = 0; i < 3 && !r; i++) {
		char target[16];
		ksnprintf(target, sizeof(target), "/proc/self/fd/%d", i);
		r = ramfs_symlink(dev, std[i], strlen(std[i]), target, strlen(target), &n);
	}
	return r;
}

/* The first instance's file system: the root, /dev, /proc and the initrd's files. */
static bool build_root(const char *initrd)
{
	vfs_root = ramfs_init();
	struct rnode *dev = NULL, *console = NULL, *node;
	if (!vfs_root || ramfs_create(vfs_root, "dev", 3, LX_S_IFDIR | 0755, &dev) || make_dev(dev, "null", DEV_NULL, &node) ||
	    make_dev(dev, "zero", DEV_ZERO, &node) || make_dev(dev, "console", DEV_CONSOLE, &console) ||
	    make_more_devs(dev) || procfs_init(vfs_root)) {
		ax_printf("vfs: out of memory building the root\n");
		return false;
	}
	int mod = ax_find_module(initrd);
	struct kc_module_info mi;
	long n = -LX_ENOENT;
	if (mod >= 0 && ax_module_info((uint32_t)mod, &mi) == 0) {
		int64_t va = kcall1(KC_MODULE_MAP, (uint64_t)mod);
		n = va > 0 ? cpio_load(vfs_root, (const uint8_t *)va, mi.size) : -LX_EIO;
	}
	if (n < 0)
		ax_printf("vfs: initrd %s not loaded (error %ld): the file system is empty but for /dev\n", initrd, n);
	else
		ax_printf("vfs: %ld entries from %s\n", n, initrd);
	vfs_proc_init(console);
	return true;
}

/* Before a node's bytes change or it is freed: what was copied of them goes. */
static void node_changed(struct rnode *n)
{
	exec_node_changed(n);
	fview_node_changed(n);
}

/* Path walks need search permission on each directory for the caller being served. */
static bool may_search(const struct rnode *dir) { return vfs_permit(vfs_current, dir, 1, false) == 0; }

int main(int argc, char **argv)
{
	ax_svc_init(argc, argv);
	/* Everything a program left here (files, descriptors, pipes, epoll sets, the terminal's
	 * state) is kept across a restart or a live update (README.md, "Recovery"). */
	bool adopted = ax_keep_image(VFS_KEEP_MAGIC, VFS_STATE_VERSION, 0);
	exec_init(adopted); /* claims the cached images' objects */
	fview_init(adopted); /* and the file views' */
	sysv_init(adopted); /* and the shared memory segments' */
	fmap_init(adopted); /* and the shared-mapped files', where they were */
	if (ax_svc.restarts)
		ax_keep_sweep(); /* before we make objects: the predecessor's that nobody took go */
	if (!ax_can_vcopy())
		ax_printf("vfs: no KC_VCOPY, so every call touching memory fails (system.conf: kcalls=vcopy)\n");
	const char *initrd = "initrd.cpio";
	int named = 0;
	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "initrd=", 7))
			initrd = argv[i] + 7;
		else if (!strncmp(argv[i], "pm=", 3) && named < MAX_PMS)
			pm_names[named++] = argv[i] + 3;
	}
	npms = named ? named : 1;
	if (adopted)
		ax_printf("vfs: took over the file system (%llu nodes, %llu bytes) and every open file\n",
			  (unsigned long long)ramfs_nodes, (unsigned long long)ramfs_bytes);
	else if (!build_root(initrd))
		return 1;
	/* Code pointers and per-instance links, set by every instance. */
	ramfs_hooks.now = vfs_now;
	ramfs_hooks.changed = node_changed;
	ramfs_hooks.unback = fmap_unback;
	ramfs_hooks.search = may_search;
	procfs_hooks();
	dev_init();
	tty_init(adopted);
	sock_init(adopted);
	if (adopted)
		epoll_restarted(); /* the libraries' armings died with our predecessor */
	struct ax_evloop l = { .on_message = on_message, .on_report = on_report, .on_notify = on_notify,
			       .poll = on_poll, .restartable = true };
	return (int)ax_evloop_run(&l);
}
