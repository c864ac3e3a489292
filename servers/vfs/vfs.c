/* vfs: serves the file calls of Linux programs (routed to it by the kernel at pm's request,
 * KC_LINUX_ROUTE) on a RAM file system loaded from the initrd (a cpio boot module).
 *   vfs [initrd=MODULE]      default initrd.cpio
 * README.md has the calls, the state and the recovery story. */
#include "vfs.h"
#include "service.h"
#include "evloop.h"
#include "heap.h"
#include "tty.h"
#include "tty_proto.h"

#define MAX_CLIENTS 64

struct rnode *vfs_root;
static struct client clients[MAX_CLIENTS];
static struct ofile *console_file;

/* A new client starts with 0, 1 and 2 on the console. */
static struct client *client_of(endpoint_t ep)
{
	struct client *free_slot = NULL;
	for (int i = 0; i < MAX_CLIENTS; i++) {
		if (clients[i].used && clients[i].ep == ep)
			return &clients[i];
		if (!clients[i].used && !free_slot)
			free_slot = &clients[i];
	}
	if (!free_slot)
		return NULL;
	*free_slot = (struct client){ .ep = ep, .cwd = vfs_root, .used = true };
	vfs_root->opens++; /* the working directory */
	for (int fd = 0; fd < 3; fd++) {
		free_slot->fd[fd] = console_file;
		console_file->refs++;
	}
	return free_slot;
}

/* Calls waiting on a pipe: the caller stays blocked in its call until we reply. */
#define MAX_WAITERS 64
static struct waiter {
	endpoint_t ep;
	uint32_t nr;
	uint64_t a[6];
} waiters[MAX_WAITERS];

static void answer(endpoint_t to, int64_t r)
{
	struct kmsg m = { .type = 0 };
	m.w[0] = (uint64_t)r;
	ax_reply(to, &m);
}

/* Tries every waiting call again; answers those that can finish now. */
static void retry_waiters(void)
{
	for (bool progress = true; progress;) {
		progress = false;
		for (int i = 0; i < MAX_WAITERS; i++) {
			struct waiter *w = &waiters[i];
			if (!w->ep)
				continue;
			struct client *c = client_of(w->ep);
			int64_t r = c ? vfs_call(c, w->nr, w->a) : -E_NOMEM;
			if (r == VFS_BLOCK)
				continue;
			answer(w->ep, r);
			w->ep = 0;
			progress = true; /* it may have unblocked another waiter */
		}
	}
}

void vfs_kick(void) { retry_waiters(); }

/* A signal came for a thread whose call we hold (KMSG_LINUX_CANCEL): it gets -ERESTARTSYS
 * now, and the kernel makes that EINTR or restarts the call. */
static void cancel(endpoint_t thread)
{
	for (int i = 0; i < MAX_WAITERS; i++)
		if (waiters[i].ep == thread) {
			answer(thread, -LX_ERESTARTSYS);
			waiters[i].ep = 0;
		}
	tty_cancel(thread);
}

static void forget(endpoint_t ep)
{
	tty_cancel(ep);
	for (int i = 0; i < MAX_WAITERS; i++)
		if (waiters[i].ep == ep)
			waiters[i].ep = 0;
	for (int i = 0; i < MAX_CLIENTS; i++)
		if (clients[i].used && clients[i].ep == ep) {
			vfs_close_all(&clients[i]);
			ramfs_release(clients[i].cwd);
			clients[i].used = false;
		}
}

static endpoint_t pm_ep(void)
{
	int64_t ep = ax_svc_lookup("pm", NULL);
	return ep > 0 ? (endpoint_t)ep : 0;
}

static void on_message(struct ax_evloop *l, struct kmsg *m)
{
	(void)l;
	endpoint_t from = m->source;
	if ((m->type & 0xff00u) == 0x7600u && !(m->type & 0xffff0000u)) {
		/* pm's messages (vfs_proto.h); only pm, which starts the programs, may send them. */
		int64_t r = -38; /* ENOSYS: not served yet */
		if (from != pm_ep())
			r = -1;
		else if (m->type == VFS_FORGET)
			forget((endpoint_t)m->w[0]), r = 0;
		else if (m->type == VFS_SESSION && (r = client_of((endpoint_t)m->w[0]) ? 0 : -E_NOMEM) == 0)
			tty_session((int32_t)m->w[1]);
		answer(from, r);
		return;
	}
	if (tty_message(m))
		return;
	if ((m->type & 0xffff0000u) != KMSG_LINUX)
		return;
	struct client *c = client_of(from);
	uint64_t a[6];
	memcpy(a, m->w, sizeof(a));
	int64_t r = c ? vfs_call(c, m->type & 0xffff, a) : -E_NOMEM;
	if (r == VFS_BLOCK) {
		struct waiter *w = NULL;
		for (int i = 0; i < MAX_WAITERS && !w; i++)
			if (!waiters[i].ep)
				w = &waiters[i];
		if (w) {
			*w = (struct waiter){ from, m->type & 0xffff, { a[0], a[1], a[2], a[3], a[4], a[5] } };
			return; /* answered by retry_waiters */
		}
		r = -11; /* EAGAIN: too many blocked callers */
	}
	answer(from, r);
	retry_waiters();
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
}

/* Each turn of the loop: the terminal's timers set how long we may sleep. */
static bool on_poll(struct ax_evloop *l)
{
	l->wait_ns = tty_timer();
	return false;
}

static int make_dev(struct rnode *dev, const char *name, uint32_t which, struct rnode **out)
{
	int r = ramfs_create(dev, name, strlen(name), S_IFCHR_ | 0666, out);
	if (r == 0)
		(*out)->dev = which;
	return r;
}

int main(int argc, char **argv)
{
	ax_svc_init(argc, argv);
	if (!ax_can_vcopy())
		ax_printf("vfs: no KC_VCOPY, so every call touching memory fails (system.conf: kcalls=vcopy)\n");
	const char *initrd = "initrd.cpio";
	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], "initrd=", 7))
			initrd = argv[i] + 7;
	vfs_root = ramfs_init();
	struct rnode *dev = NULL, *console = NULL, *node;
	if (!vfs_root || ramfs_create(vfs_root, "dev", 3, S_IFDIR_ | 0755, &dev) || make_dev(dev, "null", DEV_NULL, &node) ||
	    make_dev(dev, "zero", DEV_ZERO, &node) || make_dev(dev, "console", DEV_CONSOLE, &console)) {
		ax_printf("vfs: out of memory building the root\n");
		return 1;
	}
	int mod = ax_find_module(initrd);
	struct kc_module_info mi;
	long n = -E_NOENT;
	if (mod >= 0 && ax_module_info((uint32_t)mod, &mi) == 0) {
		int64_t va = kcall1(KC_MODULE_MAP, (uint64_t)mod);
		n = va > 0 ? cpio_load(vfs_root, (const uint8_t *)va, mi.size) : -E_IO;
	}
	if (n < 0)
		ax_printf("vfs: initrd %s not loaded (error %ld): the file system is empty but for /dev\n", initrd, n);
	else
		ax_printf("vfs: %ld entries from %s\n", n, initrd);
	console_file = ax_calloc(1, sizeof(*console_file));
	if (!console_file)
		return 1;
	*console_file = (struct ofile){ console, 0, 2 /* O_RDWR */, 1 };
	console->opens++;
	tty_init();
	struct ax_evloop l = { .on_message = on_message, .on_report = on_report, .on_notify = on_notify,
			       .poll = on_poll };
	return (int)ax_evloop_run(&l);
}
