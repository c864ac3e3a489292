/* epoll: a set of registered (descriptor, open file) pairs, each with the events it wants
 * and a word of data given back; epoll_wait reports the ready ones, waiting (vfs_wait) while
 * none is. Readiness is recomputed from the files (vfs_poll) at every look, so level-
 * triggered is exact; LX_EPOLLET reports a registration again only when new bits appear or
 * the file's state changed since (rnode.events); LX_EPOLLONESHOT disarms it until
 * LX_EPOLL_CTL_MOD. A registration ends with LX_EPOLL_CTL_DEL or when its open file is closed for
 * the last time, as in Linux. Regular files and directories cannot be registered (EPERM). */
#include "vfs.h"
#include "lx_abi.h"
#include "heap.h"
#include "../../lib/net/sock_ax.h"

#define MAX_ITEMS 1024 /* registrations per epoll file (ENOSPC beyond) */
#define MAX_NEST 4     /* epoll files inside epoll files, as Linux's EP_MAX_NESTS */

struct item {
	struct ofile *f;
	int32_t fd;
	uint32_t events;       /* wanted, with LX_EPOLLET and LX_EPOLLONESHOT */
	uint64_t data;
	uint32_t seen_bits;    /* LX_EPOLLET: what was last reported, 0 once it was not ready */
	uint32_t seen_events;  /* LX_EPOLLET: the file's rnode.events when last reported */
	bool off;              /* LX_EPOLLONESHOT fired */
};

struct epoll {
	struct item *items;
	uint32_t n, cap;
	uint32_t next;         /* where the next wait starts looking: every ready one gets a turn */
	struct rnode *node;
	struct epoll *link;    /* all epoll files */
};

struct lx_epoll_event {
	uint32_t events;
	uint64_t data;
} __attribute__((packed));

static VFS_KEPT struct epoll *all;
/* Sets armed by a socket library about to sleep on its wake word (AX_EPOLL_ARM): each rings
 * its process once, when a registration becomes ready. Not kept: a new vfs rings every
 * process instead (epoll_restarted), and their libraries arm it again. */
#define MAX_ARMED 64
static struct {
	const struct epoll *ep;
	uint64_t pid;
} armed[MAX_ARMED];
static uint32_t narmed;
static int depth; /* of epoll_poll's recursion through nested epoll files */
static struct lx_epoll_event out[MAX_ITEMS];
static uint32_t out_index[MAX_ITEMS];

static struct epoll *epoll_of(const struct ofile *f)
{
	return f && vfs_kind(f->node) == S_IFANON_ && f->node->dev == ANON_EPOLL ? f->node->priv : NULL;
}

/* The events a registration would report now, 0 if none. */
static uint32_t item_bits(const struct item *it)
{
	if (it->off)
		return 0;
	uint32_t bits = vfs_poll(it->f) & (it->events | LX_POLLERR | LX_POLLHUP);
	if ((it->events & LX_EPOLLET) && !(bits & ~it->seen_bits) && it->f->node->events == it->seen_events)
		return 0; /* nothing new since it was reported */
	return bits;
}

static bool any_ready(const struct epoll *ep)
{
	bool ready = false;
	if (depth > MAX_NEST)
		return false;
	depth++;
	for (uint32_t i = 0; i < ep->n && !ready; i++)
		ready = item_bits(&ep->items[i]) != 0;
	depth--;
	return ready;
}

uint32_t epoll_poll(const struct ofile *f)
{
	struct epoll *ep = epoll_of(f);
	return ep && any_ready(ep) ? LX_POLLIN | LX_POLLRDNORM : 0;
}

static void disarm(uint32_t k)
{
	armed[k] = armed[--narmed];
}

/* AX_EPOLL_ARM: 1 if a registration is ready now; else 0, and the caller's process is rung
 * once when one becomes ready (epoll_rings). The set's last arming wins; when the table is
 * full another set's process is rung now and that arming dropped (a look for nothing, and
 * its library arms again), never lost. */
static int64_t arm(struct client *c, struct epoll *ep)
{
	if (any_ready(ep))
		return 1;
	for (uint32_t k = 0; k < narmed; k++)
		if (armed[k].ep == ep) {
			armed[k].pid = c->pid;
			return 0;
		}
	if (narmed == MAX_ARMED) {
		ax_wake_ring((endpoint_t)armed[0].pid, AX_RING_VFS);
		disarm(0);
	}
	armed[narmed].ep = ep, armed[narmed++].pid = c->pid;
	return 0;
}

void epoll_rings(void)
{
	for (uint32_t k = 0; k < narmed;) {
		if (any_ready(armed[k].ep)) {
			ax_wake_ring((endpoint_t)armed[k].pid, AX_RING_VFS);
			disarm(k);
		} else {
			k++;
		}
	}
}

void epoll_restarted(void)
{
	vfs_ring_clients(AX_RING_VFS);
}

static void remove_at(struct epoll *ep, uint32_t i)
{
	for (; i + 1 < ep->n; i++)
		ep->items[i] = ep->items[i + 1];
	ep->n--;
	if (ep->next >= ep->n)
		ep->next = 0;
}

void epoll_file_gone(const struct ofile *f)
{
	for (struct epoll *ep = all; ep; ep = ep->link)
		for (uint32_t i = ep->n; i-- > 0;)
			if (ep->items[i].f == f)
				remove_at(ep, i);
}

void epoll_closed(struct rnode *n)
{
	struct epoll *ep = n->priv, **pp = &all;
	for (uint32_t k = 0; k < narmed;)
		if (armed[k].ep == ep)
			disarm(k);
		else
			k++;
	while (*pp && *pp != ep)
		pp = &(*pp)->link;
	if (*pp)
		*pp = ep->link;
	ax_free(ep->items);
	ax_free(ep);
	n->priv = NULL;
}

static int64_t create(struct client *c, uint64_t flags)
{
	if (flags & ~(uint64_t)LX_O_CLOEXEC)
		return -LX_EINVAL;
	struct epoll *ep = ax_calloc(1, sizeof(*ep));
	if (!ep)
		return -LX_ENOMEM;
	int64_t fd = vfs_anon_fd(c, ANON_EPOLL, ep, LX_O_RDWR, flags & LX_O_CLOEXEC, &ep->node);
	if (fd >= 0) {
		ep->link = all;
		all = ep;
	}
	return fd;
}

/* Whether `to` can be reached from `from` through registered epoll files, or the nesting
 * would go too deep: adding `from` to `to` would make a loop (ELOOP). */
static bool reaches(const struct epoll *from, const struct epoll *to, int level)
{
	if (from == to || level > MAX_NEST)
		return true;
	for (uint32_t i = 0; i < from->n; i++) {
		const struct epoll *sub = epoll_of(from->items[i].f);
		if (sub && reaches(sub, to, level + 1))
			return true;
	}
	return false;
}

static int64_t ctl(struct client *c, uint64_t epfd, uint64_t op, uint64_t fd, uint64_t uev)
{
	struct lx_epoll_event ev = { 0, 0 };
	if (op == AX_EPOLL_ARM) {
		struct ofile *af = vfs_file(c, epfd);
		struct epoll *aep = epoll_of(af);
		return !af ? -LX_EBADF : !aep ? -LX_EINVAL : arm(c, aep);
	}
	if (op != LX_EPOLL_CTL_DEL && ax_vcopy(c->ep, (const void *)uev, EP_NONE, &ev, sizeof(ev)) < 0)
		return -LX_EFAULT;
	struct ofile *ef = vfs_file(c, epfd), *f = vfs_file(c, fd);
	if (!ef || !f)
		return -LX_EBADF;
	uint32_t kind = vfs_kind(f->node);
	if (kind == LX_S_IFREG || kind == LX_S_IFDIR)
		return -LX_EPERM; /* always ready: Linux refuses to watch them */
	struct epoll *ep = epoll_of(ef);
	if (!ep || ef == f)
		return -LX_EINVAL;
	struct item *it = NULL;
	for (uint32_t i = 0; i < ep->n && !it; i++)
		if (ep->items[i].f == f && ep->items[i].fd == (int32_t)fd)
			it = &ep->items[i];
	switch (op) {
	case LX_EPOLL_CTL_ADD:
		if (it)
			return -LX_EEXIST;
		if ((ev.events & LX_EPOLLEXCLUSIVE) && (ev.events & LX_EPOLLONESHOT))
			return -LX_EINVAL;
		if (epoll_of(f) && reaches(epoll_of(f), ep, 0))
			return -LX_ELOOP;
		if (ep->n == MAX_ITEMS)
			return -LX_ENOSPC;
		if (ep->n == ep->cap) {
			uint32_t cap = ep->cap ? ep->cap * 2 : 8;
			struct item *items = ax_realloc(ep->items, cap * sizeof(*items));
			if (!items)
				return -LX_ENOMEM;
			ep->items = items;
			ep->cap = cap;
		}
		ep->items[ep->n++] = (struct item){ f, (int32_t)fd, ev.events, ev.data, 0, 0, false };
		return 0;
	case LX_EPOLL_CTL_MOD:
		if (!it)
			return -LX_ENOENT;
		if (ev.events & LX_EPOLLEXCLUSIVE)
			return -LX_EINVAL;
		*it = (struct item){ f, (int32_t)fd, ev.events, ev.data, 0, 0, false }; /* armed anew */
		return 0;
	case LX_EPOLL_CTL_DEL:
		if (!it)
			return -LX_ENOENT;
		remove_at(ep, (uint32_t)(it - ep->items));
		return 0;
	}
	return -LX_EINVAL;
}

static int64_t wait(struct client *c, struct vcall *v, uint64_t epfd, uint64_t uevents, uint64_t maxevents, int64_t timeout)
{
	struct ofile *ef = vfs_file(c, epfd);
	struct epoll *ep = epoll_of(ef);
	if ((int32_t)maxevents <= 0 || maxevents > INT32_MAX / sizeof(struct lx_epoll_event))
		return -LX_EINVAL;
	if (!ef)
		return -LX_EBADF;
	if (!ep)
		return -LX_EINVAL;
	uint32_t max = maxevents < MAX_ITEMS ? (uint32_t)maxevents : MAX_ITEMS, got = 0;
	for (uint32_t k = 0; k < ep->n && got < max; k++) {
		uint32_t i = (ep->next + k) % ep->n;
		struct item *it = &ep->items[i];
		uint32_t bits = item_bits(it);
		if (!bits) {
			if (!(vfs_poll(it->f) & (it->events | LX_POLLERR | LX_POLLHUP)))
				it->seen_bits = 0; /* not ready: becoming ready again is an edge */
			continue;
		}
		out[got] = (struct lx_epoll_event){ bits, it->data };
		out_index[got++] = i;
	}
	if (!got)
		return vfs_wait(v, timeout); /* VFS_BLOCK, or 0 events when the time is up */
	if (ax_vcopy(EP_NONE, out, c->ep, (void *)uevents, got * sizeof(out[0])) < 0)
		return -LX_EFAULT;
	/* Reported: only now does an edge or a one-shot count as used. */
	for (uint32_t k = 0; k < got; k++) {
		struct item *it = &ep->items[out_index[k]];
		it->seen_bits = out[k].events;
		it->seen_events = it->f->node->events;
		it->off = it->events & LX_EPOLLONESHOT;
	}
	ep->next = (out_index[got - 1] + 1) % ep->n;
	return got;
}

/* A timeout in ns from epoll_pwait2's timespec (0: none, -1), or -errno in *err. */
static int64_t timespec_ns(struct client *c, uint64_t uts, int64_t *err)
{
	int64_t t[2];
	*err = 0;
	if (!uts)
		return -1;
	if (ax_vcopy(c->ep, (const void *)uts, EP_NONE, t, sizeof(t)) < 0)
		*err = -LX_EFAULT;
	else if (t[0] < 0 || t[1] < 0 || t[1] >= 1000000000)
		*err = -LX_EINVAL;
	return *err || t[0] > INT64_MAX / 1000000000 - 1 ? -1 : t[0] * 1000000000 + t[1];
}

int64_t epoll_call(struct client *c, struct vcall *v)
{
	sock_ready_drain(); /* what syscall said before answering the caller's last call */
	const uint64_t *a = v->a;
	int64_t ms = (int32_t)a[3] < 0 ? -1 : (int64_t)(int32_t)a[3] * 1000000, err, t;
	switch (v->nr) {
	case LX_SYS_epoll_create:
		return (int32_t)a[0] <= 0 ? -LX_EINVAL : create(c, 0);
	case LX_SYS_epoll_create1:
		return create(c, a[0]);
	case LX_SYS_epoll_ctl:
		return ctl(c, a[0], a[1], a[2], a[3]);
	case LX_SYS_epoll_wait:
		return wait(c, v, a[0], a[1], a[2], ms);
	case LX_SYS_epoll_pwait: /* the signal mask is not applied (README.md) */
		return (err = vfs_check_sigmask(a[4], a[5])) ? err : wait(c, v, a[0], a[1], a[2], ms);
	case LX_SYS_epoll_pwait2:
		t = timespec_ns(c, a[3], &err);
		if (!err)
			err = vfs_check_sigmask(a[4], a[5]);
		return err ? err : wait(c, v, a[0], a[1], a[2], t);
	}
	return VFS_NOT_MINE;
}
