/* Readiness of every kind of open file, and the calls that wait for it: poll, ppoll, select,
 * pselect6. A call with nothing ready yet is held (vfs_wait) and looked at again after
 * every call vfs serves, and once more when its timeout passes. The signal masks of ppoll
 * and pselect6 are applied by the kernel around the call (kernel-api.md §8b); here they are
 * only checked. Remaining times are not written back. */
#include "vfs.h"
#include "lx_abi.h"

#define MAX_POLLFDS 4096 /* Linux's limit is RLIMIT_NOFILE; ours is far below that anyway */
#define FDSET_MAX 1024   /* select's FD_SETSIZE */

static struct pollfd {
	int32_t fd;
	int16_t events, revents;
} pfds[MAX_POLLFDS];

uint32_t vfs_poll(const struct ofile *f)
{
	const struct rnode *n = f->node;
	switch (vfs_kind(n)) {
	case LX_S_IFIFO:
		return pipe_poll(f);
	case S_IFANON_:
		return n->dev == ANON_EVENTFD ? eventfd_poll(f) : n->dev == ANON_SOCKET ? sock_poll(f)
		       : n->dev == ANON_TIMERFD ? timerfd_poll(f) : epoll_poll(f);
	case LX_S_IFCHR:
		if (n->dev == DEV_CONSOLE)
			return tty_poll((struct ofile *)f);
		break;
	}
	/* Files, directories and the other devices never make anyone wait. */
	return LX_POLLIN | LX_POLLRDNORM | LX_POLLOUT | LX_POLLWRNORM;
}

/* A timeout in ns from a timespec (ppoll, pselect6) or timeval (select) at ut: -1 for none
 * (ut is 0), or -EFAULT, -EINVAL in *err. */
static int64_t timeout_of(struct client *c, uint64_t ut, bool timeval, int64_t *err)
{
	int64_t t[2];
	*err = 0;
	if (!ut)
		return -1;
	if (ax_vcopy(c->ep, (const void *)ut, EP_NONE, t, sizeof(t)) < 0) {
		*err = -LX_EFAULT;
		return 0;
	}
	int64_t unit = timeval ? 1000 : 1, limit = timeval ? 1000000 : 1000000000;
	if (t[0] < 0 || t[1] < 0 || t[1] >= limit) {
		*err = -LX_EINVAL;
		return 0;
	}
	if (t[0] > INT64_MAX / 1000000000 - 1)
		return -1; /* centuries: forever */
	return t[0] * 1000000000 + t[1] * unit;
}

/* Signal masks (ppoll, epoll_pwait): a mask must be a whole sigset_t; it is not applied. */
int64_t vfs_check_sigmask(uint64_t mask, uint64_t size) { return mask && size != 8 ? -LX_EINVAL : 0; }

static int64_t poll_fds(struct client *c, struct vcall *v, uint64_t ufds, uint64_t nfds, int64_t timeout)
{
	if (nfds > MAX_POLLFDS)
		return -LX_EINVAL;
	if (nfds && ax_vcopy(c->ep, (const void *)ufds, EP_NONE, pfds, nfds * sizeof(pfds[0])) < 0)
		return -LX_EFAULT;
	int64_t ready = 0;
	for (uint64_t i = 0; i < nfds; i++) {
		struct pollfd *p = &pfds[i];
		struct ofile *f = p->fd < 0 ? NULL : vfs_file(c, (uint64_t)p->fd);
		uint32_t bits = p->fd < 0 ? 0 : !f ? LX_POLLNVAL : vfs_poll(f);
		/* Errors and hang-ups are reported whether asked for or not. */
		p->revents = (int16_t)(bits & ((uint16_t)p->events | LX_POLLERR | LX_POLLHUP | LX_POLLNVAL));
		ready += p->revents != 0;
	}
	if (!ready) {
		int64_t w = vfs_wait(v, timeout);
		if (w)
			return w;
	}
	if (nfds && ax_vcopy(EP_NONE, pfds, c->ep, (void *)ufds, nfds * sizeof(pfds[0])) < 0)
		return -LX_EFAULT;
	return ready;
}

/* select's three sets, bit per descriptor, in and out. */
static uint64_t sets[3][FDSET_MAX / 64];

static int64_t select_fds(struct client *c, struct vcall *v, int64_t nfds, const uint64_t uset[3], int64_t timeout)
{
	if (nfds < 0 || nfds > FDSET_MAX)
		return -LX_EINVAL;
	uint64_t words = ((uint64_t)nfds + 63) / 64, out[3][FDSET_MAX / 64];
	memset(sets, 0, sizeof(sets));
	memset(out, 0, sizeof(out));
	for (int s = 0; s < 3; s++)
		if (uset[s] && words && ax_vcopy(c->ep, (const void *)uset[s], EP_NONE, sets[s], words * 8) < 0)
			return -LX_EFAULT;
	/* The bits each set counts: reading includes hang-ups and errors, as in Linux. */
	static const uint32_t want[3] = { LX_POLLIN | LX_POLLRDNORM | LX_POLLRDBAND | LX_POLLHUP | LX_POLLERR,
					  LX_POLLOUT | LX_POLLWRNORM | LX_POLLWRBAND | LX_POLLERR, LX_POLLPRI };
	int64_t ready = 0;
	for (int64_t fd = 0; fd < nfds; fd++) {
		uint64_t w = (uint64_t)fd / 64, bit = 1ull << (fd % 64);
		if (!((sets[0][w] | sets[1][w] | sets[2][w]) & bit))
			continue;
		struct ofile *f = vfs_file(c, (uint64_t)fd);
		if (!f)
			return -LX_EBADF;
		uint32_t bits = vfs_poll(f);
		for (int s = 0; s < 3; s++)
			if ((sets[s][w] & bit) && (bits & want[s])) {
				out[s][w] |= bit;
				ready++;
			}
	}
	if (!ready) {
		int64_t r = vfs_wait(v, timeout);
		if (r)
			return r;
	}
	for (int s = 0; s < 3; s++)
		if (uset[s] && words && ax_vcopy(EP_NONE, out[s], c->ep, (void *)uset[s], words * 8) < 0)
			return -LX_EFAULT;
	return ready;
}

int64_t poll_call(struct client *c, struct vcall *v)
{
	if (v->nr == LX_SYS_poll || v->nr == LX_SYS_ppoll || v->nr == LX_SYS_select || v->nr == LX_SYS_pselect6)
		sock_ready_drain(); /* what syscall said before answering the caller's last call */
	const uint64_t *a = v->a;
	int64_t err, t;
	uint64_t sig[2] = { 0, 0 };
	switch (v->nr) {
	case LX_SYS_poll:
		return poll_fds(c, v, a[0], a[1], (int32_t)a[2] < 0 ? -1 : (int64_t)(int32_t)a[2] * 1000000);
	case LX_SYS_ppoll:
		t = timeout_of(c, a[2], false, &err);
		if (!err)
			err = vfs_check_sigmask(a[3], a[4]);
		return err ? err : poll_fds(c, v, a[0], a[1], t);
	case LX_SYS_select:
		t = timeout_of(c, a[4], true, &err);
		return err ? err : select_fds(c, v, (int64_t)(int32_t)a[0], a + 1, t);
	case LX_SYS_pselect6:
		t = timeout_of(c, a[4], false, &err);
		/* a[5]: { const sigset_t *mask; size_t size } or NULL */
		if (!err && a[5] && ax_vcopy(c->ep, (const void *)a[5], EP_NONE, sig, sizeof(sig)) < 0)
			err = -LX_EFAULT;
		if (!err)
			err = vfs_check_sigmask(sig[0], sig[1]);
		return err ? err : select_fds(c, v, (int64_t)(int32_t)a[0], a + 1, t);
	}
	return VFS_NOT_MINE;
}
