/* lib/sock: poll, ppoll, select, pselect and epoll_wait/epoll_pwait, interposed (README.md,
 * docs/sockets.md "select, poll, epoll"). A set without a socket the library owns goes to
 * the real call untouched. Otherwise the owned sockets are answered from their rings; when
 * one is ready the call returns without a system call, except that every 8th such call of a
 * thread also asks the kernel (timeout 0) about the other descriptors, so they do not
 * starve. When none is ready, a poll or select of owned sockets alone (no signal mask) sleeps
 * on the wake word as epoll does (below); otherwise the kernel gets the whole set (vfs answers owned sockets from
 * syscall's view): for an owned socket its POLLERR/POLLHUP are the truth (a reset is known
 * only that way: the socket's next receive asks the kernel), but its POLLIN/POLLOUT are
 * checked against the rings; a report the rings do not confirm is stale: syscall is told to
 * look again and the call waits again for what is left of its timeout.
 * epoll: the library keeps a user-space list of the tracked sockets of every epoll set. A
 * socket it owns when registered is in that list only (epoll_ctl makes no system call); one
 * registered before (a connecting socket) is in the kernel's set too. To block, the library
 * counts itself as waiting, reads its wake word, looks at its sockets once more, arms vfs
 * for the kernel's part of the set if it has one (AX_EPOLL_ARM) and sleeps on the word
 * (FUTEX_WAIT): tcp and udp ring it when one of its sockets has an event, syscall when a
 * status changes, vfs when the kernel's part became ready (then the kernel is asked, with
 * no wait). With a signal mask to apply (epoll_pwait) or without KC_WAKE it blocks in vfs
 * instead, with its wake socket in the kernel's set (edge-triggered, once): syscall wakes
 * it through the wake socket when one of its sockets becomes ready. Level-triggered entries are
 * reported while the rings (and syscall's status: errors, hang-ups) say ready. EPOLLET:
 * reported when the readiness rises between two looks (a sweep that finds it unchanged
 * stays quiet). EPOLLONESHOT: once, then disarmed (in the kernel too if it is there) until
 * EPOLL_CTL_MOD. A socket given back (a fork, a dup) goes into the kernel's sets it is in. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>
#include "activity.h"
#include "posix.h"
#include "sock.h"
#include "sys.h"

int __real_poll(struct pollfd *, nfds_t, int);
int __real_ppoll(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
int __real_select(int, fd_set *, fd_set *, fd_set *, struct timeval *);
int __real_pselect(int, fd_set *, fd_set *, fd_set *, const struct timespec *, const sigset_t *);
int __real_epoll_ctl(int, int, int, struct epoll_event *);
int __real_epoll_wait(int, struct epoll_event *, int, int);
int __real_epoll_pwait(int, struct epoll_event *, int, int, const sigset_t *);

#define FAIR 8 /* every FAIR-th call answered from the rings also asks the kernel */
static _Thread_local unsigned fair;

/* The kernel's poll on f with timeout ns (-1: none), with the caller's signal mask if any. */
static int kern_poll(struct pollfd *f, nfds_t n, int64_t ns, const sigset_t *mask, bool masked)
{
	axsock_nsys++;
	if (!masked)
		return __real_poll(f, n, ns < 0 ? -1 : (int)((ns + 999999) / 1000000));
	struct timespec ts = { ns / 1000000000, ns % 1000000000 };
	return __real_ppoll(f, n, ns < 0 ? NULL : &ts, mask);
}

/* The owned sockets' revents from their rings; the number of entries with any. */
static int sweep(struct pollfd *f, nfds_t n)
{
	int ready = 0;
	for (nfds_t i = 0; i < n; i++)
		if (axsock_owned(f[i].fd)) {
			f[i].revents = axsock_ready(f[i].fd, f[i].events);
			ready += f[i].revents != 0;
		}
	return ready;
}

static int count_ready(struct pollfd *f, nfds_t n)
{
	int c = 0;
	for (nfds_t i = 0; i < n; i++)
		c += f[i].revents != 0;
	return c;
}

/* Whether every descriptor of f is an owned socket (negative ones are skipped by poll). */
static bool all_owned(const struct pollfd *f, nfds_t n)
{
	for (nfds_t i = 0; i < n; i++)
		if (f[i].fd >= 0 && !axsock_owned(f[i].fd))
			return false;
	return true;
}

/* A poll of owned sockets alone sleeps on the wake word (tcp, udp and syscall ring it), not
 * in the kernel's poll (which vfs would hand to syscall): the sockets ready after the sleep
 * (0: none yet), or -1 with EINTR when a handler ran. */
static int owned_sleep(struct pollfd *f, nfds_t n, _Atomic uint32_t *word, int64_t ns)
{
	axsock_waiting(true);
	uint32_t seen = atomic_load_explicit(word, memory_order_acquire);
	int r = sweep(f, n), err = 0;
	if (!r)
		err = axsock_sleep(word, seen, ns, false);
	axsock_waiting(false);
	if (!r)
		r = sweep(f, n);
	if (!r && err == EINTR) {
		errno = EINTR;
		return -1;
	}
	return r;
}

/* lib_poll's rounds: the rings, then a sleep on the wake word (word: owned sockets alone) or
 * the kernel's poll of the whole set. */
static int poll_loop(struct pollfd *f, nfds_t n, int64_t timeout, const sigset_t *mask, bool masked,
		     _Atomic uint32_t *word, int kfd)
{
	int64_t deadline = timeout < 0 ? 0 : axsock_now_ns() + timeout;
	for (;;) {
		for (nfds_t i = 0; i < n; i++)
			f[i].revents = 0;
		int ready = sweep(f, n);
		if (ready) {
			if (++fair % FAIR)
				return ready;
			/* the others once in a while: the owned ones hidden (a negative fd is skipped) */
			for (nfds_t i = 0; i < n; i++)
				if (axsock_owned(f[i].fd))
					f[i].fd = -1 - f[i].fd;
			int r = kern_poll(f, n, 0, mask, masked);
			for (nfds_t i = 0; i < n; i++)
				if (f[i].fd < -1 && axsock_owned(-1 - f[i].fd))
					f[i].fd = -1 - f[i].fd;
			if (r < 0)
				return r;
			sweep(f, n);
			return count_ready(f, n);
		}
		if (word) {
			int r = owned_sleep(f, n, word, axsock_left(timeout, deadline));
			if (r || axsock_left(timeout, deadline) == 0)
				return r;
			continue;
		}
		if (kfd >= 0) { /* counted in, then the last look */
			axsock_kernel_wait(kfd, true);
			int r = sweep(f, n);
			if (r) {
				axsock_kernel_wait(kfd, false);
				return r;
			}
		}
		int r = kern_poll(f, n, axsock_left(timeout, deadline), mask, masked);
		if (kfd >= 0)
			axsock_kernel_wait(kfd, false);
		if (r <= 0)
			return r;
		bool stale = false;
		for (nfds_t i = 0; i < n; i++) {
			struct axsock *s = axsock_owned(f[i].fd);
			if (!s || !f[i].revents)
				continue;
			short truth = f[i].revents & (POLLERR | POLLHUP | POLLNVAL);
			if (truth)
				atomic_store_explicit(&s->hup_hint, true, memory_order_relaxed);
			short rings = axsock_ready(f[i].fd, f[i].events);
			if (!truth && !rings) {
				stale = true;
				axsock_resync(f[i].fd);
			}
			f[i].revents = truth | rings;
		}
		int c = count_ready(f, n);
		if (c || !stale || axsock_left(timeout, deadline) == 0)
			return c;
	}
}

/* poll with owned sockets in f (the rules above). One that blocks in the kernel counts
 * itself there first (activity.h axsock_kernel_wait, kfd: an owned socket of f): syscall's
 * view of the owned ones counts then. */
static int lib_poll(struct pollfd *f, nfds_t n, int64_t timeout, const sigset_t *mask, bool masked)
{
	_Atomic uint32_t *word = !masked && timeout != 0 && all_owned(f, n) ? axsock_wake_word() : NULL;
	int kfd = -1;
	for (nfds_t i = 0; i < n && !word && timeout != 0 && kfd < 0; i++)
		if (axsock_owned(f[i].fd))
			kfd = f[i].fd;
	return poll_loop(f, n, timeout, mask, masked, word, kfd);
}

static bool any_owned(const struct pollfd *f, nfds_t n, bool *tracked)
{
	bool owned = false;
	*tracked = false;
	for (nfds_t i = 0; i < n; i++) {
		*tracked |= axsock_tracked(f[i].fd) != NULL;
		owned |= axsock_owned(f[i].fd) != NULL && axsock_on();
	}
	return owned;
}

static int poll_common(struct pollfd *f, nfds_t n, int64_t timeout, const sigset_t *mask, bool masked,
		       enum ax_call kind)
{
	uint64_t n0 = axsock_nsys;
	int r = lib_poll(f, n, timeout, mask, masked);
	axsock_count(kind, axsock_nsys == n0);
	return r;
}

int __wrap_poll(struct pollfd *f, nfds_t n, int ms)
{
	bool tracked;
	if (!any_owned(f, n, &tracked)) {
		if (tracked)
			axsock_count(AXC_POLL, false);
		return __real_poll(f, n, ms);
	}
	return poll_common(f, n, ms < 0 ? -1 : (int64_t)ms * 1000000, NULL, false, AXC_POLL);
}

int __wrap_ppoll(struct pollfd *f, nfds_t n, const struct timespec *ts, const sigset_t *mask)
{
	bool tracked;
	if (!any_owned(f, n, &tracked)) {
		if (tracked)
			axsock_count(AXC_POLL, false);
		return __real_ppoll(f, n, ts, mask);
	}
	int64_t t = ts ? (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec : -1;
	return poll_common(f, n, t, mask, true, AXC_POLL);
}

/* select through lib_poll: the sets as pollfds, and back. */
static int lib_select(int nfds, fd_set *r, fd_set *w, fd_set *e, int64_t timeout, const sigset_t *mask, bool masked)
{
	struct pollfd f[FD_SETSIZE];
	nfds_t n = 0;
	for (int fd = 0; fd < nfds && fd < FD_SETSIZE; fd++) {
		short ev = (r && FD_ISSET(fd, r) ? POLLIN : 0) | (w && FD_ISSET(fd, w) ? POLLOUT : 0) |
			   (e && FD_ISSET(fd, e) ? POLLPRI : 0);
		if (ev)
			f[n++] = (struct pollfd){ fd, ev, 0 };
	}
	uint64_t n0 = axsock_nsys;
	int res = lib_poll(f, n, timeout, mask, masked);
	axsock_count(AXC_SELECT, axsock_nsys == n0);
	if (res < 0)
		return res;
	int c = 0;
	for (nfds_t i = 0; i < n; i++)
		if (f[i].revents & POLLNVAL) {
			errno = EBADF;
			return -1;
		}
	for (nfds_t i = 0; i < n; i++) {
		int fd = f[i].fd;
		short rv = f[i].revents;
		if (r && FD_ISSET(fd, r) && !(rv & (POLLIN | POLLHUP | POLLERR)))
			FD_CLR(fd, r);
		if (w && FD_ISSET(fd, w) && !(rv & (POLLOUT | POLLERR)))
			FD_CLR(fd, w);
		if (e && FD_ISSET(fd, e) && !(rv & POLLPRI))
			FD_CLR(fd, e);
		c += (r && FD_ISSET(fd, r)) + (w && FD_ISSET(fd, w)) + (e && FD_ISSET(fd, e));
	}
	return c;
}

static bool select_owned(int nfds, fd_set *r, fd_set *w, fd_set *e, bool *tracked)
{
	bool owned = false;
	*tracked = false;
	if (!axsock_on())
		return false;
	for (int fd = 0; fd < nfds && fd < FD_SETSIZE; fd++)
		if ((r && FD_ISSET(fd, r)) || (w && FD_ISSET(fd, w)) || (e && FD_ISSET(fd, e))) {
			*tracked |= axsock_tracked(fd) != NULL;
			owned |= axsock_owned(fd) != NULL;
		}
	return owned;
}

int __wrap_select(int nfds, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv)
{
	bool tracked;
	if (!select_owned(nfds, r, w, e, &tracked)) {
		if (tracked)
			axsock_count(AXC_SELECT, false);
		return __real_select(nfds, r, w, e, tv);
	}
	int64_t t = tv ? (int64_t)tv->tv_sec * 1000000000 + (int64_t)tv->tv_usec * 1000 : -1;
	return lib_select(nfds, r, w, e, t, NULL, false);
}

int __wrap_pselect(int nfds, fd_set *r, fd_set *w, fd_set *e, const struct timespec *ts, const sigset_t *mask)
{
	bool tracked;
	if (!select_owned(nfds, r, w, e, &tracked)) {
		if (tracked)
			axsock_count(AXC_SELECT, false);
		return __real_pselect(nfds, r, w, e, ts, mask);
	}
	int64_t t = ts ? (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec : -1;
	return lib_select(nfds, r, w, e, t, mask, true);
}

/* epoll: the user-space lists. */
struct ent {
	int fd;
	uint32_t events; /* as registered */
	epoll_data_t data;
	bool off;        /* EPOLLONESHOT fired: disarmed until EPOLL_CTL_MOD */
	bool kern;       /* registered in the kernel's set too (not owned when added) */
	bool lis;        /* a listener answered from the page (its `listen` entry), not the kernel */
	uint32_t last;   /* EPOLLET: the readiness last seen */
	uint64_t seq;    /* EPOLLET: RX pieces produced when last seen */
};
struct eplist {
	atomic_flag lock;
	int n, cap;
	unsigned rr;     /* where the next sweep starts (every entry gets its turn) */
	bool wake_in;    /* the wake socket is in the kernel's set */
	int kfds;        /* descriptors we do not track in the kernel's set (added less deleted;
	                    one closed without a delete stays counted: vfs is armed for nothing) */
	bool armed;      /* vfs holds our AX_EPOLL_ARM for the set ... */
	uint32_t arm_vfs; /* ... made when the wake word's vfs count (>> 16) was this: once
	                    the count moved vfs may have rung and dropped it (it rings once) */
	struct ent *e;
};
static struct eplist *eps[AXSOCK_MAX_FDS];
static _Atomic int neps; /* lists in use: a close looks only when there are some */
/* The wake socket's registration data: no owned entry is reported through the kernel, so
 * an event with this tag is the wake-up (an application's own tag equal to it would only
 * make its event look like one: it is then found by the sweep). */
#define WAKE_TAG 0x57414b45534f434bull /* "WAKESOCK" */

static void ep_lock(struct eplist *l)
{
	while (atomic_flag_test_and_set_explicit(&l->lock, memory_order_acquire))
		__builtin_ia32_pause();
}

static void ep_unlock(struct eplist *l)
{
	atomic_flag_clear_explicit(&l->lock, memory_order_release);
}

static struct eplist *list_of(int epfd, bool make)
{
	if (epfd < 0 || epfd >= AXSOCK_MAX_FDS)
		return NULL;
	struct eplist *l = __atomic_load_n(&eps[epfd], __ATOMIC_ACQUIRE);
	if (l || !make)
		return l;
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	struct eplist *none = NULL;
	if (!__atomic_compare_exchange_n(&eps[epfd], &none, l, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		free(l);
		return none;
	}
	atomic_fetch_add(&neps, 1);
	return l;
}

static struct ent *ent_find(struct eplist *l, int fd)
{
	for (int i = 0; i < l->n; i++)
		if (l->e[i].fd == fd)
			return &l->e[i];
	return NULL;
}

static void ent_remove(struct eplist *l, int fd)
{
	struct ent *x = ent_find(l, fd);
	if (x)
		*x = l->e[--l->n];
}

static bool ent_add(struct eplist *l, const struct ent *x)
{
	if (l->n == l->cap) {
		int cap = l->cap ? 2 * l->cap : 16;
		struct ent *e = realloc(l->e, (size_t)cap * sizeof(*e));
		if (!e)
			return false;
		l->e = e, l->cap = cap;
	}
	l->e[l->n++] = *x;
	return true;
}

void axsock_events_forget(int fd)
{
	if (!atomic_load_explicit(&neps, memory_order_relaxed))
		return;
	if (fd >= 0 && fd < AXSOCK_MAX_FDS) {
		struct eplist *l = __atomic_exchange_n(&eps[fd], NULL, __ATOMIC_ACQ_REL);
		if (l) { /* an epoll descriptor closed (nobody may use it any more) */
			atomic_fetch_sub(&neps, 1);
			free(l->e);
			free(l);
		}
	}
	for (int i = 0; i < AXSOCK_MAX_FDS; i++) {
		struct eplist *l = __atomic_load_n(&eps[i], __ATOMIC_ACQUIRE);
		if (l) {
			ep_lock(l);
			ent_remove(l, fd);
			ep_unlock(l);
		}
	}
}

void axsock_events_to_kernel(int fd)
{
	if (!atomic_load_explicit(&neps, memory_order_relaxed))
		return;
	for (int i = 0; i < AXSOCK_MAX_FDS; i++) {
		struct eplist *l = __atomic_load_n(&eps[i], __ATOMIC_ACQUIRE);
		if (!l)
			continue;
		ep_lock(l);
		struct ent *x = ent_find(l, fd);
		if (x && !x->kern) {
			struct epoll_event ev = { .events = x->off ? 0 : x->events, .data = x->data };
			axsock_nsys++;
			x->kern = __real_epoll_ctl(i, EPOLL_CTL_ADD, fd, &ev) == 0;
		}
		ep_unlock(l);
	}
}

/* epoll_ctl on a socket the library owns: the user-space list alone (the kernel's set never
 * hears of it; the wake socket stands for it when the library blocks). */
static int ctl_owned(int epfd, int op, int fd, struct epoll_event *ev, bool lis)
{
	struct eplist *l = list_of(epfd, op == EPOLL_CTL_ADD);
	if (!l) {
		errno = op == EPOLL_CTL_ADD ? ENOMEM : ENOENT;
		return -1;
	}
	if (op != EPOLL_CTL_DEL && !ev) {
		errno = EFAULT;
		return -1;
	}
	int r = 0, e = 0;
	ep_lock(l);
	struct ent *x = ent_find(l, fd);
	if (op == EPOLL_CTL_ADD) {
		if (x)
			e = EEXIST;
		else if (!ent_add(l, &(struct ent){ .fd = fd, .events = ev->events, .data = ev->data, .lis = lis }))
			e = ENOMEM;
	} else if (!x) {
		e = ENOENT;
	} else if (x->kern) { /* registered before the library owned it: the kernel's too */
		axsock_nsys++;
		r = __real_epoll_ctl(epfd, op, fd, ev);
		e = r ? errno : 0;
	}
	if (!e && x && op == EPOLL_CTL_MOD)
		x->events = ev->events, x->data = ev->data, x->off = false, x->last = 0;
	if (!e && x && op == EPOLL_CTL_DEL)
		ent_remove(l, fd);
	ep_unlock(l);
	if (e) {
		errno = e;
		return -1;
	}
	return 0;
}

/* Whether listener s (fd) is answered from the page (asking syscall to take its accepts
 * over first if it has not yet: the first accept would ask anyway). */
static bool listener_in_page(struct axsock *s, int fd)
{
	if (!s->listening || s->never)
		return false;
	axsock_listener_take(s, fd);
	uint32_t bits, seq;
	return s->accept_take == 1 && axsock_listen_read(s->listen_slot, s->accept_key, &bits, &seq);
}

/* Whether fd has a listener's entry in epfd's list (its page entry may be gone since). */
static bool listener_entry(int epfd, int fd)
{
	struct eplist *l = list_of(epfd, false);
	if (!l)
		return false;
	ep_lock(l);
	struct ent *x = ent_find(l, fd);
	bool lis = x && x->lis;
	ep_unlock(l);
	return lis;
}

int __wrap_epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	struct axsock *s = axsock_tracked(fd);
	bool lis = false;
	if (s && (op == EPOLL_CTL_ADD || op == EPOLL_CTL_MOD || op == EPOLL_CTL_DEL) &&
	    (axsock_owned(fd) || (lis = listener_in_page(s, fd)) || (op != EPOLL_CTL_ADD && listener_entry(epfd, fd)))) {
		uint64_t n0 = axsock_nsys;
		int r = ctl_owned(epfd, op, fd, ev, lis);
		axsock_count(AXC_EPOLL_CTL, axsock_nsys == n0);
		return r;
	}
	int r = __real_epoll_ctl(epfd, op, fd, ev);
	if (r == 0 && !s && (op == EPOLL_CTL_ADD || op == EPOLL_CTL_DEL)) {
		struct eplist *k = list_of(epfd, op == EPOLL_CTL_ADD);
		if (k) {
			ep_lock(k);
			if (op == EPOLL_CTL_ADD)
				k->kfds++;
			else if (k->kfds > 0 && !ent_find(k, fd))
				k->kfds--;
			ep_unlock(k);
		}
	}
	if (r != 0 || (!s && op != EPOLL_CTL_DEL))
		return r;
	struct eplist *l = list_of(epfd, op != EPOLL_CTL_DEL);
	if (s)
		axsock_count(AXC_EPOLL_CTL, false);
	if (!l)
		return r;
	ep_lock(l);
	ent_remove(l, fd);
	if (op != EPOLL_CTL_DEL && ev)
		ent_add(l, &(struct ent){ .fd = fd, .events = ev->events, .data = ev->data, .kern = true });
	ep_unlock(l);
	return r;
}

/* The rings' readiness of an entry as epoll bits (EPOLLIN/EPOLLOUT are POLLIN/POLLOUT;
 * EPOLLERR/EPOLLHUP from syscall's status are reported whatever was asked); a listener's
 * from the page (*seq: its arrivals, for EPOLLET). */
static uint32_t ent_ready(const struct ent *x, uint64_t *seq)
{
	if (x->lis) {
		struct axsock *s = axsock_slot(x->fd);
		uint32_t bits = 0, n = 0;
		axsock_listen_read(s->listen_slot, s->accept_key, &bits, &n);
		*seq = n;
		return bits & (x->events | EPOLLERR | EPOLLHUP);
	}
	*seq = axsock_rx_seq(x->fd);
	return (uint32_t)axsock_ready(x->fd, (short)(x->events & (EPOLLIN | EPOLLOUT | EPOLLRDNORM | EPOLLWRNORM | EPOLLRDHUP)));
}

/* Whether entry x is answered here (an owned socket, a listener in the page). A listener
 * whose page entry is gone goes into the kernel's set now, with what it was registered
 * for (the caller holds the list's lock). */
static bool ent_here(int epfd, struct ent *x)
{
	if (!x->lis)
		return axsock_owned(x->fd) != NULL;
	struct axsock *s = axsock_slot(x->fd);
	uint32_t bits, seq;
	if (s && s->tracked && axsock_listen_read(s->listen_slot, s->accept_key, &bits, &seq))
		return true;
	if (s)
		s->listen_slot = 0; /* asked again only after a new AX_ACCEPT_TAKE (never, here) */
	x->lis = false;
	if (!x->kern) {
		struct epoll_event ev = { .events = x->off ? 0 : x->events, .data = x->data };
		axsock_nsys++;
		x->kern = __real_epoll_ctl(epfd, EPOLL_CTL_ADD, x->fd, &ev) == 0 || errno == EEXIST;
	}
	return false;
}

/* Entries ready by their rings into ev (at most max), fairly from rr on. */
static int ep_sweep(int epfd, struct eplist *l, struct epoll_event *ev, int max)
{
	int got = 0;
	ep_lock(l);
	for (int k = 0; k < l->n && got < max; k++) {
		struct ent *x = &l->e[(l->rr + (unsigned)k) % (unsigned)l->n];
		if (x->off || !ent_here(epfd, x))
			continue;
		uint64_t seq;
		uint32_t bits = ent_ready(x, &seq), report = bits;
		if (x->events & EPOLLET) { /* a new bit, or new data (each arrival, as Linux) */
			bool arrived = (bits & EPOLLIN) && seq != x->seq;
			report = (bits & ~x->last) || arrived ? bits : 0;
			x->last = bits, x->seq = seq;
		}
		if (!report)
			continue;
		ev[got++] = (struct epoll_event){ .events = report, .data = x->data };
		if (x->events & EPOLLONESHOT) {
			x->off = true;
			if (x->kern) {
				struct epoll_event off = { .events = 0, .data = x->data };
				axsock_nsys++;
				__real_epoll_ctl(epfd, EPOLL_CTL_MOD, x->fd, &off);
			}
		}
	}
	if (l->n)
		l->rr = (l->rr + 1) % (unsigned)l->n;
	ep_unlock(l);
	return got;
}

/* The kernel's events ev[0..n) without the wake socket's and the owned sockets' (the
 * sweep answers those; their errors and hang-ups are in syscall's status). Returns the
 * events kept, moved to the front. */
static int ep_filter(struct eplist *l, struct epoll_event *ev, int n)
{
	int kept = 0;
	ep_lock(l);
	for (int i = 0; i < n; i++) {
		if (ev[i].data.u64 == WAKE_TAG && l->wake_in)
			continue;
		bool owned = false;
		for (int k = 0; k < l->n && !owned; k++)
			owned = l->e[k].data.u64 == ev[i].data.u64 && (l->e[k].lis || axsock_owned(l->e[k].fd));
		if (!owned)
			ev[kept++] = ev[i];
	}
	ep_unlock(l);
	return kept;
}

static bool ep_owned(struct eplist *l, bool *tracked)
{
	bool owned = false;
	*tracked = false;
	ep_lock(l);
	for (int i = 0; i < l->n; i++) {
		*tracked |= axsock_tracked(l->e[i].fd) != NULL;
		owned |= l->e[i].lis || axsock_owned(l->e[i].fd) != NULL;
	}
	ep_unlock(l);
	return owned && axsock_on();
}

/* Before the kernel may block for the owned sockets: the wake socket in its set (once).
 * Without one (no activity page) every owned socket goes into the kernel's set instead. */
static void ep_prepare(int epfd, struct eplist *l)
{
	if (l->wake_in)
		return;
	int w = axsock_wake_fd();
	if (w >= 0) {
		struct epoll_event ev = { .events = EPOLLIN | EPOLLET, .data.u64 = WAKE_TAG };
		axsock_nsys++;
		if (__real_epoll_ctl(epfd, EPOLL_CTL_ADD, w, &ev) == 0 || errno == EEXIST) {
			l->wake_in = true;
			return;
		}
	}
	ep_lock(l);
	for (int i = 0; i < l->n; i++)
		if (!l->e[i].kern && !l->e[i].off) {
			struct epoll_event ev = { .events = l->e[i].events, .data = l->e[i].data };
			axsock_nsys++;
			l->e[i].kern = __real_epoll_ctl(epfd, EPOLL_CTL_ADD, l->e[i].fd, &ev) == 0;
		}
	ep_unlock(l);
}

static int kern_epoll(int epfd, struct epoll_event *ev, int max, int64_t ns, const sigset_t *mask)
{
	axsock_nsys++;
	return __real_epoll_pwait(epfd, ev, max, ns < 0 ? -1 : (int)((ns + 999999) / 1000000), mask);
}

/* An entry's descriptor that the library owns now, -1 if none (kern_only: among those in
 * the kernel's set too, registered before the library owned them): a wait in the kernel
 * on the set then depends on syscall's view of it (axsock_kernel_wait). */
static int ep_owned_fd(struct eplist *l, bool kern_only)
{
	int fd = -1;
	ep_lock(l);
	for (int i = 0; i < l->n && fd < 0; i++)
		if ((!kern_only || l->e[i].kern) && !l->e[i].off && axsock_owned(l->e[i].fd))
			fd = l->e[i].fd;
	ep_unlock(l);
	return fd;
}

/* Whether the kernel's set holds descriptors of its own (vfs must be armed for them). */
static bool ep_kernel_part(struct eplist *l)
{
	ep_lock(l);
	bool k = l->kfds > 0;
	for (int i = 0; i < l->n && !k; i++)
		k = l->e[i].kern && !l->e[i].off;
	ep_unlock(l);
	return k;
}

#define SLEEP_OLD_WAY (-2)
static _Atomic bool arm_refused; /* vfs does not know AX_EPOLL_ARM: the wake socket's way */

/* One sleep on the wake word (docs/sockets.md, "A library that blocks"): counted in as
 * waiting, the word read, the owned sockets looked at once more, vfs armed for the kernel's
 * part of the set, then FUTEX_WAIT until tcp, udp or syscall ring (AX_RING_STACK: an owned
 * socket may be ready), vfs rings (AX_RING_VFS: ask the kernel), a signal or the timeout.
 * Returns the events found (0: none, look again), -1 with errno, or SLEEP_OLD_WAY. */
static int word_sleep(int epfd, struct eplist *l, _Atomic uint32_t *word, struct epoll_event *ev, int max,
		      int64_t ns, bool kern)
{
	axsock_waiting(true);
	uint32_t seen = atomic_load_explicit(word, memory_order_acquire);
	int r = ep_sweep(epfd, l, ev, max), err = 0;
	if (r) {
		axsock_waiting(false);
		return r;
	}
	bool ask_kernel = false;
	ep_lock(l);
	bool arm = kern && (!l->armed || l->arm_vfs != seen / AX_RING_VFS);
	l->armed = false;
	ep_unlock(l);
	if (arm) { /* (an arming vfs still holds costs no call: most sleeps make none) */
		axsock_nsys++;
		int a = __real_epoll_ctl(epfd, AX_EPOLL_ARM, 0, NULL);
		if (a < 0) {
			axsock_waiting(false);
			atomic_store_explicit(&arm_refused, true, memory_order_relaxed);
			return SLEEP_OLD_WAY;
		}
		ask_kernel = a > 0; /* ready already: no sleep */
	}
	ep_lock(l);
	l->armed = kern && !ask_kernel, l->arm_vfs = seen / AX_RING_VFS;
	ep_unlock(l);
	if (!ask_kernel)
		err = axsock_sleep(word, seen, ns, false);
	axsock_waiting(false);
	uint32_t now = atomic_load_explicit(word, memory_order_acquire);
	if (ask_kernel || now - seen >= AX_RING_VFS) {
		r = kern_epoll(epfd, ev, max, 0, NULL);
		r = r > 0 ? ep_filter(l, ev, r) : 0;
	}
	if (r < max)
		r += ep_sweep(epfd, l, ev + r, max - r);
	if (!r && err == EINTR) {
		errno = EINTR; /* a signal's handler ran: Linux's epoll_wait ends too */
		return -1;
	}
	return r;
}

/* The wake word's sleep for an epoll set (word_sleep), or SLEEP_OLD_WAY when vfs refuses
 * arming; counted as a kernel wait while vfs watches an owned socket in the kernel's part. */
static int ep_sleep(int epfd, struct eplist *l, _Atomic uint32_t *word, struct epoll_event *ev, int max, int64_t ns)
{
	bool kern = ep_kernel_part(l);
	if (kern && atomic_load_explicit(&arm_refused, memory_order_relaxed))
		return SLEEP_OLD_WAY;
	/* vfs, armed, watches the kernel's part through syscall's view of what is there */
	int kfd = kern ? ep_owned_fd(l, true) : -1;
	if (kfd >= 0)
		axsock_kernel_wait(kfd, true);
	int r = word_sleep(epfd, l, word, ev, max, ns, kern);
	if (kfd >= 0)
		axsock_kernel_wait(kfd, false);
	return r;
}

/* epoll_wait with owned sockets in the set: the sweep answers them from their rings and
 * syscall's status; the kernel answers the others. To block: the wake word (ep_sleep), or
 * with a signal mask the kernel's epoll with the wake socket in the set (docs/sockets.md,
 * "A library that blocks"). */
int __wrap_epoll_pwait(int epfd, struct epoll_event *ev, int max, int ms, const sigset_t *mask)
{
	struct eplist *l = list_of(epfd, false);
	bool tracked = false;
	if (!l || max <= 0 || !ep_owned(l, &tracked)) {
		if (tracked)
			axsock_count(AXC_EPOLL_WAIT, false);
		int r = __real_epoll_pwait(epfd, ev, max, ms, mask);
		/* the wake socket stays in the kernel's set: its event is never the caller's */
		return l && r > 0 && l->wake_in ? ep_filter(l, ev, r) : r;
	}
	uint64_t n0 = axsock_nsys;
	int64_t timeout = ms < 0 ? -1 : (int64_t)ms * 1000000, deadline = timeout < 0 ? 0 : axsock_now_ns() + timeout;
	int r;
	for (;;) {
		r = ep_sweep(epfd, l, ev, max);
		if (r) {
			/* (a set whose every entry is answered here has nothing for the kernel) */
			if (++fair % FAIR == 0 && r < max && ep_kernel_part(l)) {
				int k = kern_epoll(epfd, ev + r, max - r, 0, mask);
				if (k > 0)
					r += ep_filter(l, ev + r, k);
			}
			break;
		}
		if (timeout == 0) {
			r = kern_epoll(epfd, ev, max, 0, mask);
			r = r > 0 ? ep_filter(l, ev, r) : r;
			break;
		}
		_Atomic uint32_t *word = mask ? NULL : axsock_wake_word();
		if (word) { /* no signal mask to apply: the wake word */
			r = ep_sleep(epfd, l, word, ev, max, axsock_left(timeout, deadline));
			if (r != SLEEP_OLD_WAY) {
				if (r || axsock_left(timeout, deadline) == 0)
					break;
				continue;
			}
		}
		ep_prepare(epfd, l);
		/* counted in before the last look: syscall, seeing an owned socket become ready,
		 * wakes us if we are in (activity.h); it must hear of their events meanwhile */
		int kfd = ep_owned_fd(l, false);
		if (kfd >= 0)
			axsock_kernel_wait(kfd, true);
		axsock_waiting(true);
		int swept = ep_sweep(epfd, l, ev, max);
		r = swept ? swept : kern_epoll(epfd, ev, max, axsock_left(timeout, deadline), mask);
		axsock_waiting(false);
		if (kfd >= 0)
			axsock_kernel_wait(kfd, false);
		if (swept)
			break;
		if (r < 0)
			break;
		r = r > 0 ? ep_filter(l, ev, r) : 0;
		if (r < max)
			r += ep_sweep(epfd, l, ev + r, max - r);
		if (r || axsock_left(timeout, deadline) == 0)
			break;
	}
	axsock_count(AXC_EPOLL_WAIT, axsock_nsys == n0);
	return r;
}

int __wrap_epoll_wait(int epfd, struct epoll_event *ev, int max, int ms)
{
	return __wrap_epoll_pwait(epfd, ev, max, ms, NULL);
}
