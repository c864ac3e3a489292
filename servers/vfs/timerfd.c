/* timerfd: a timer behind a descriptor. A read takes the count of expirations since the last
 * read (8 bytes) and waits while it is 0; poll and epoll see it readable then. The deadline
 * is on the monotonic clock whatever clock was asked (LX_CLOCK_REALTIME's absolute times are
 * turned into it when set, so a later change of the wall clock does not move them: there is
 * none, clock_settime is EPERM). Expirations are counted when someone looks, and vfs's loop
 * sleeps no longer than the nearest deadline (timerfd_timer): at one, it tries the held
 * calls again (reads, polls, epoll waits, armed sets), as after any other event. The list
 * of timers is kept memory, like every open file. */
#include "vfs.h"
#include "lx_abi.h"
#include "heap.h"
#include "deadline.h"

#define TFD_TIMER_ABSTIME 1
#define TFD_TIMER_CANCEL_ON_SET 2

struct tfd {
	struct tfd *next;
	struct rnode *node;
	int32_t clock;
	struct lx_deadline when;
	uint64_t ticks; /* expirations not read yet */
};
static VFS_KEPT struct tfd *tfds;

static void advance(struct tfd *t, uint64_t now) { t->ticks += lx_deadline_fire(&t->when, now); }

static struct tfd *tfd_of(struct client *c, uint64_t fd, int64_t *err)
{
	struct ofile *f = vfs_file(c, fd);
	*err = f ? -LX_EINVAL : -LX_EBADF;
	return f && vfs_kind(f->node) == S_IFANON_ && f->node->dev == ANON_TIMERFD ? f->node->priv : NULL;
}

int64_t timerfd_create(struct client *c, uint64_t clock, uint64_t flags)
{
	if (clock != 0 && clock != 1 && clock != 7 && clock != 8 && clock != 9) /* REALTIME, MONOTONIC, BOOTTIME (+ALARM) */
		return -LX_EINVAL;
	if (flags & ~(uint64_t)(LX_O_NONBLOCK | LX_O_CLOEXEC))
		return -LX_EINVAL;
	struct tfd *t = ax_calloc(1, sizeof(*t));
	if (!t)
		return -LX_ENOMEM;
	t->clock = (int32_t)clock;
	struct rnode *n = NULL;
	int64_t fd = vfs_anon_fd(c, ANON_TIMERFD, t, LX_O_RDWR | (uint32_t)(flags & LX_O_NONBLOCK), flags & LX_O_CLOEXEC, &n);
	if (fd >= 0) {
		t->node = n;
		t->next = tfds;
		tfds = t;
	}
	return fd;
}

void timerfd_closed(struct rnode *n)
{
	for (struct tfd **p = &tfds; *p; p = &(*p)->next)
		if (*p == n->priv) {
			*p = (*p)->next;
			break;
		}
	ax_free(n->priv);
	n->priv = NULL;
}

int64_t timerfd_settime(struct client *c, uint64_t fd, uint64_t flags, uint64_t new_va, uint64_t old_va)
{
	int64_t err;
	struct tfd *t = tfd_of(c, fd, &err);
	if (!t)
		return err;
	if (flags & ~(uint64_t)(TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET))
		return -LX_EINVAL;
	uint64_t now = ax_time_ns();
	advance(t, now); /* (the old setting as it stands now) */
	int64_t r = lx_deadline_settime(&t->when, c->ep, new_va, old_va, flags & TFD_TIMER_ABSTIME,
					lx_clock_is_wall(t->clock), now);
	if (r)
		return r;
	t->ticks = 0;
	t->node->events++; /* (the held calls are tried again after this call) */
	return 0;
}

int64_t timerfd_gettime(struct client *c, uint64_t fd, uint64_t cur_va)
{
	int64_t err;
	struct tfd *t = tfd_of(c, fd, &err);
	if (!t)
		return err;
	uint64_t now = ax_time_ns();
	advance(t, now);
	return lx_deadline_put(&t->when, now, c->ep, cur_va);
}

int64_t timerfd_read(struct client *c, struct ofile *f, uint64_t ubuf, uint64_t len, bool write)
{
	struct tfd *t = f->node->priv;
	if (write || len < 8)
		return -LX_EINVAL;
	advance(t, ax_time_ns());
	if (!t->ticks)
		return f->flags & LX_O_NONBLOCK ? -LX_EAGAIN : VFS_BLOCK;
	if (ax_vcopy(EP_NONE, &t->ticks, c->ep, (void *)ubuf, 8) < 0)
		return -LX_EFAULT;
	t->ticks = 0;
	f->node->events++;
	return 8;
}

uint32_t timerfd_poll(const struct ofile *f)
{
	struct tfd *t = f->node->priv;
	advance(t, ax_time_ns());
	return t->ticks ? LX_POLLIN | LX_POLLRDNORM : 0;
}

uint64_t timerfd_timer(bool *fired)
{
	uint64_t now = 0, next = 0;
	for (struct tfd *t = tfds; t; t = t->next) {
		if (!t->when.at_ns)
			continue;
		if (!now)
			now = ax_time_ns();
		uint64_t before = t->ticks;
		advance(t, now);
		if (t->ticks != before) {
			t->node->events++; /* (EPOLLET sees a new expiration) */
			*fired = true;
		}
		next = lx_deadline_sooner(next, &t->when, now);
	}
	return next;
}
