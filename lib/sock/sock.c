/* lib/sock (sock.h, docs/sockets.md). The application side of a socket buffer
 * (lib/net/sockbuf.h, role SB_APP), run in the application: the same checked ring code the
 * servers use, so a stack that lies about the rings gets an error, never a wild access.
 * Data moves between the rings and an iovec cursor; a per-socket spin lock (state.h) is held
 * around ring operations, never while waiting in poll. */
#include "sock.h"
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "activity.h"
#include "sock_ax.h"
#include "sockbuf.h"
#include "posix.h"
#include "state.h"
#include "sys.h"

static struct axsock socks[AXSOCK_MAX_FDS];
struct axsock_counts axsock_counts;

/* Every system call the library makes is counted (activity.h). */
static void made_syscall(void)
{
	axsock_counts.syscalls++;
	axsock_nsys++;
}

struct axsock *axsock_slot(int fd)
{
	return fd >= 0 && fd < AXSOCK_MAX_FDS ? &socks[fd] : NULL;
}

struct axsock *axsock_owned(int fd)
{
	return fd >= 0 && fd < AXSOCK_MAX_FDS && socks[fd].taken ? &socks[fd] : NULL;
}

static void lock(struct axsock *s)
{
	while (atomic_flag_test_and_set_explicit(&s->lock, memory_order_acquire))
		__builtin_ia32_pause();
}

static void unlock(struct axsock *s)
{
	atomic_flag_clear_explicit(&s->lock, memory_order_release);
}

/* Before a fork: every socket goes back to syscall, so parent and child (which would share
 * the rings' private indices) both use system calls on them from then on (thesis §5.4.2:
 * fork falls back to compliant sockets). */
static void before_fork(void)
{
	for (int fd = 0; fd < AXSOCK_MAX_FDS; fd++) {
		if (socks[fd].taken)
			axsock_give_back(fd);
		/* not taken yet too: a child that took one over and ended would leave syscall
		 * thinking a dead process owns it */
		socks[fd].never = true;
	}
}

static void kick(int fd, struct axsock *s);
/* events.c's, when linked (a program calling the library explicitly has no epoll lists) */
void axsock_events_to_kernel(int fd) __attribute__((weak));

/* The fork handlers, once: false if they cannot be had (then no socket is taken over). */
static bool atfork_ready(void)
{
	static bool atfork;
	if (!atfork)
		atfork = pthread_atfork(before_fork, NULL, axsock_act_forked) == 0;
	return atfork;
}

/* Sockets whose buffer is mapped here now (the lazy-closing rule compares spares with it). */
static atomic_uint_fast64_t mapped_now;

int axsock_adopt(int fd, const struct ax_sockbuf *b)
{
	struct axsock *s = axsock_slot(fd);
	if (!s)
		return -EBADF;
	if (!atfork_ready())
		return -ENOMEM; /* without the handler a fork would break the socket */
	if (sockbuf_attach(&s->sb, (void *)(uintptr_t)b->va, b->bytes, SB_APP)) {
		uint32_t off = b->rx_off;
		made_syscall();
		ax_sys_setsockopt(fd, SOL_AXOLOTL, AX_SOCKBUF, &off, sizeof(off));
		return -EIO;
	}
	s->stream = b->stream != 0;
	s->rx_off = b->rx_off, s->peer_fin = false;
	s->eng = b->eng, s->bit = b->bit;
	if (!s->va)
		atomic_fetch_add(&mapped_now, 1);
	s->va = b->va, s->bytes = b->bytes;
	axsock_act_page(b->act_va);
	s->taken = true;
	return 0;
}

static int take(int fd, uint32_t intent);

int axsock_take(int fd)
{
	return take(fd, 0);
}

/* intent: what syscall is told in rx_off (AX_TAKE_CONNECT, or 0) */
static int take(int fd, uint32_t intent)
{
	struct axsock *s = axsock_slot(fd);
	if (!s)
		return -EBADF;
	if (s->taken)
		return 0;
	if (!atfork_ready())
		return -ENOMEM;
	struct ax_sockbuf b = { .rx_off = intent };
	socklen_t l = sizeof(b);
	made_syscall();
	if (ax_sys_getsockopt(fd, SOL_AXOLOTL, AX_SOCKBUF, &b, &l) != 0)
		return -errno;
	if (l != sizeof(b)) {
		uint32_t off = b.rx_off;
		made_syscall();
		ax_sys_setsockopt(fd, SOL_AXOLOTL, AX_SOCKBUF, &off, sizeof(off));
		return -EIO;
	}
	return axsock_adopt(fd, &b);
}

uint32_t axsock_bit(int fd)
{
	struct axsock *s = axsock_owned(fd);
	return s ? s->bit : AX_ACT_SOCKS;
}

void axsock_mapping(int fd, uint64_t *va, uint64_t *bytes)
{
	struct axsock *s = axsock_slot(fd);
	*va = s && s->va ? s->va : 0;
	*bytes = s && s->va ? s->bytes : 0;
	if (s && s->va)
		atomic_fetch_sub(&mapped_now, 1);
	if (s)
		s->va = 0;
}

int axsock_close(int fd)
{
	struct axsock *s = axsock_slot(fd);
	bool owned = s && s->taken;
	uint32_t bit = s ? s->bit : 0;
	uint64_t va, bytes;
	axsock_mapping(fd, &va, &bytes);
	if (s)
		s->taken = false;
	/* lazy closing: a stream's buffer stays mapped for the next accepted connection, which
	 * syscall gives it once the engine is done with it (sock_ax.h `spares`) */
	enum axsock_keep k = va && owned && s->stream ? axsock_spare_keep(bit, va, bytes, atomic_load(&mapped_now))
						       : AXK_UNMAP;
	if (k == AXK_SHRINK && axsock_spares_reclaim() > 0) {
		made_syscall();
		ax_sys_setsockopt(fd, SOL_AXOLOTL, AX_RECLAIM, NULL, 0); /* before fd goes */
	}
	made_syscall();
	int r = (int)syscall(SYS_close, fd) ? -errno : 0;
	/* syscall mapped the buffer in for us and nothing else unmaps it: each closed socket
	 * would keep its 560 KiB for the process's life */
	if (va && k != AXK_KEPT) {
		made_syscall();
		syscall(SYS_munmap, (void *)(uintptr_t)va, bytes);
	}
	return r;
}

int axsock_connect(int fd, const struct sockaddr_in *a)
{
	struct axsock *t = axsock_slot(fd);
	if (!t || t->taken)
		return -EISCONN; /* (taken before: not a fresh socket) */
	int r = take(fd, AX_TAKE_CONNECT);
	struct axsock *s = r ? NULL : axsock_owned(fd);
	if (!s)
		return r ? r : -EBADF;
	if (!s->stream)
		return -EINVAL;
	struct sockbuf_desc d = { .flags = SBD_CONNECT, .family = AF_INET, .port = a->sin_port };
	memcpy(d.addr, &a->sin_addr, 4);
	lock(s);
	/* first in TX (posix.c calls this only for a socket never connected nor taken before:
	 * nothing can be queued ahead of it) */
	bool ok = sockbuf_commit(&s->sb.tx, 0, &d) == 0;
	if (ok)
		s->connecting = true;
	unlock(s);
	if (!ok)
		return -EAGAIN;
	kick(fd, s);
	return -EINPROGRESS;
}

int axsock_shutdown(int fd, int how)
{
	struct axsock *s = axsock_owned(fd);
	if (!s || !s->stream)
		return -EBADF;
	if (how < SHUT_RD || how > SHUT_RDWR)
		return -EINVAL;
	if (how != SHUT_RD) {
		int r = axsock_queue_fin(fd);
		if (r)
			return r;
	}
	if (how != SHUT_WR)
		s->shut_rd = true;
	return 0;
}

int axsock_queue_fin(int fd)
{
	struct axsock *s = axsock_owned(fd);
	if (!s || !s->stream)
		return -EBADF;
	lock(s);
	int r = 0;
	if (!s->shut_wr) {
		/* the FIN piece after the data (syscall's queue_fin for its own sockets) */
		struct sockbuf_desc d = { .flags = SBD_FIN };
		r = sockbuf_commit(&s->sb.tx, 0, &d) == 0 ? 0 : -EAGAIN;
		s->shut_wr = r == 0;
	}
	unlock(s);
	if (r == 0)
		kick(fd, s);
	return r;
}

int axsock_give_back(int fd)
{
	struct axsock *s = axsock_owned(fd);
	if (!s)
		return -EBADF;
	lock(s);
	/* the stream's offset, and whether our FIN piece is queued (syscall must not queue
	 * another) */
	uint32_t back[2] = { s->rx_off, s->shut_wr ? AX_BACK_FIN : 0 };
	s->taken = false;
	unlock(s);
	made_syscall();
	int r = ax_sys_setsockopt(fd, SOL_AXOLOTL, AX_SOCKBUF, back, sizeof(back)) ? -errno : 0;
	if (axsock_events_to_kernel) /* its epoll registrations, held here, go to the kernel */
		axsock_events_to_kernel(fd);
	return r;
}

/* The stack must look at the socket (TX queued, RX released). */
static void kick(int fd, struct axsock *s)
{
	axsock_activity(fd, s->eng, s->bit);
}


/* Waits in poll(2) until fd is ready for ev (timeout ms, 0: none): 0, -EAGAIN when the
 * timeout passed, the socket's error (-errno) when the stack reports one (a reset, a refused
 * connection), or 1 when it hung up without one. ms < 0: only look (timeout 0). */
static int wait_for(int fd, short ev, int ms)
{
	struct pollfd p = { fd, ev, 0 };
	if (ms >= 0)
		axsock_kernel_wait(fd, true);
	made_syscall();
	int r = ax_sys_poll(&p, 1, ms < 0 ? 0 : ms ? ms : -1);
	if (ms >= 0)
		axsock_kernel_wait(fd, false);
	if (r < 0)
		return -errno;
	if (r == 0)
		return -EAGAIN;
	if (p.revents & (POLLERR | POLLHUP | POLLNVAL)) {
		if (p.revents & POLLNVAL)
			return -EBADF;
		int e = 0;
		socklen_t l = sizeof(e);
		made_syscall();
		ax_sys_getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &l);
		if (e)
			return -e;
		/* hung up: nothing more comes (syscall reports POLLIN with it, so the caller
		 * would wait again at once) */
		if ((p.revents & POLLHUP) || !(p.revents & ev))
			return 1;
	}
	return 0;
}

/* wait_for for a blocking call on a socket we own (ms: its timeout, 0: none): asleep on the
 * process's wake word (activity.h), which tcp and udp ring when they post an event for one
 * of its sockets while it waits, and syscall when a status changes; no poll through vfs.
 * The kernel is asked (with no wait) only when the status shows an error or a hang-up, whose
 * details it keeps. A handler with SA_RESTART does not end a wait without a timeout (the
 * kernel makes the sleep again); any handler ends a timed one with EINTR, as on Linux. */
static int wait_owned(int fd, short ev, int ms)
{
	_Atomic uint32_t *word = axsock_wake_word();
	if (!word)
		return wait_for(fd, ev, ms);
	int64_t timeout = ms ? (int64_t)ms * 1000000 : -1, deadline = ms ? axsock_now_ns() + timeout : 0;
	for (;;) {
		axsock_waiting(true);
		uint32_t seen = atomic_load_explicit(word, memory_order_acquire);
		short r = axsock_ready(fd, ev);
		int e = r ? 0 : axsock_sleep(word, seen, axsock_left(timeout, deadline), !ms);
		axsock_waiting(false);
		if (r)
			return (r & (POLLERR | POLLHUP)) ? wait_for(fd, ev, -1) : 0;
		if (e == EINTR)
			return -EINTR;
		if (ms && axsock_left(timeout, deadline) == 0)
			return -EAGAIN;
	}
}

/* An iovec cursor: where the next byte goes to or comes from. */
struct cur {
	const struct iovec *iov;
	int n, i;
	size_t off;
};

static size_t iov_total(const struct iovec *iov, int n)
{
	size_t t = 0;
	for (int i = 0; i < n; i++)
		t += iov[i].iov_len;
	return t;
}

/* Whether [p, p+len) can be user memory at all: not in the first page (NULL and small
 * offsets from it, the usual bad pointer), not past the canonical lower half. A call given
 * such a buffer fails with EFAULT as the system call would; other unmapped addresses fault
 * in the program (the library cannot probe them without a system call: README.md). */
bool axsock_user_range(const void *p, size_t len)
{
	uintptr_t a = (uintptr_t)p;
	return len == 0 || (a >= 4096 && a + len >= a && a + len <= 0x7ffffffff000ull);
}

static bool iov_ok(const struct iovec *iov, int n)
{
	if (n && !axsock_user_range(iov, (size_t)n * sizeof(*iov)))
		return false;
	for (int i = 0; i < n; i++)
		if (!axsock_user_range(iov[i].iov_base, iov[i].iov_len))
			return false;
	return true;
}

/* Copies len bytes from src into the cursor's buffers (to: true) or from them into src;
 * with p NULL the cursor only moves on. */
static void cur_copy(struct cur *c, void *p, size_t len, bool to)
{
	unsigned char *b = p;
	while (len && c->i < c->n) {
		size_t room = c->iov[c->i].iov_len - c->off;
		size_t k = len < room ? len : room;
		unsigned char *at = (unsigned char *)c->iov[c->i].iov_base + c->off;
		if (b && to)
			memcpy(at, b, k);
		else if (b)
			memcpy(b, at, k);
		if (b)
			b += k;
		len -= k, c->off += k;
		if (c->off == c->iov[c->i].iov_len)
			c->i++, c->off = 0;
	}
}

/* A receive found nothing and may not wait: EAGAIN, unless the kernel told the poll or
 * epoll wrappers of an error or hang-up: then the socket's error, or the end. */
static ssize_t empty_nowait(int fd, struct axsock *s)
{
	if (!atomic_load_explicit(&s->hup_hint, memory_order_relaxed) && !(axsock_status(s->bit) & (POLLERR | POLLHUP)))
		return -EAGAIN;
	int w = wait_for(fd, POLLIN, -1);
	return w < 0 ? w : w > 0 ? 0 : -EAGAIN;
}

/* A stream's bytes: from the oldest piece on, as many as fit (MSG_WAITALL: all of len). */
/* sockbuf_stream_read's copy into the application's iovecs (the cursor moves on). */
static int copy_to_cur(void *ctx, uint64_t at, const unsigned char *p, uint64_t n)
{
	(void)at; /* the cursor knows where */
	cur_copy(ctx, (void *)p, n, true);
	return 0;
}

static ssize_t stream_recv(int fd, struct axsock *s, struct cur *c, size_t len, int flags, int ms)
{
	size_t got = 0;
	bool peek = flags & MSG_PEEK;
	if (s->shut_rd)
		return 0;
	for (;;) {
		lock(s);
		struct cur pc = *c; /* a peek copies from the start each time */
		struct sockbuf_read r = { .got = got };
		if (!s->peer_fin)
			sockbuf_stream_read(&s->sb.rx, &s->rx_off, len, (peek ? SOCKBUF_READ_PEEK : 0) |
					    (flags & MSG_TRUNC ? SOCKBUF_READ_TRUNC : 0), copy_to_cur, peek ? &pc : c, &r);
		got = r.got;
		if (r.fin && !peek) /* every read from now on returns 0 */
			s->peer_fin = true;
		bool fin = s->peer_fin || (peek && !got && r.fin); /* a peek at the FIN reads the end */
		unlock(s);
		if (r.err)
			return got ? (ssize_t)got : -EIO;
		/* RX space came free: tcp opens its window. A sleeping tcp is woken only when the
		 * release reaches the mark it set (sockbuf_notify_at: when lwIP would announce the
		 * window, or at once when it holds bytes waiting for room); below it the socket is
		 * marked for tcp's next turn (docs/decisions.md). */
		if (got && !peek)
			axsock_activity_rx(fd, s->eng, s->bit, &s->sb.rx);
		if (got == len || fin || (got && !(flags & MSG_WAITALL)) || (got && peek)) {
			axsock_counts.user++;
			return (ssize_t)got;
		}
		if (flags & MSG_DONTWAIT) {
			axsock_counts.user++;
			return got ? (ssize_t)got : empty_nowait(fd, s);
		}
		int w = wait_owned(fd, POLLIN, ms);
		if (w < 0)
			return got ? (ssize_t)got : w;
		if (w > 0 && !sockbuf_ready(&s->sb.rx))
			return (ssize_t)got; /* hung up: end of stream */
	}
}

/* A connection syscall says is gone (its status: a reset, a hang-up): the pending error
 * (asked once from the kernel, which then forgets it), else EPIPE; 0 while it lives. */
static int dead_connection(int fd, struct axsock *s)
{
	uint32_t st = axsock_status(s->bit);
	if (!(st & (POLLERR | POLLHUP)))
		return 0;
	if (st >> AXS_ERR_SHIFT) {
		int e = 0;
		socklen_t l = sizeof(e);
		made_syscall();
		if (ax_sys_getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &l) == 0 && e)
			return -e;
	}
	return -EPIPE;
}

/* sockbuf_*_write's fill from the application's iovecs: the cursor moves on; a piece asked
 * again (its commit was refused) is found again from the iovecs' start. */
struct cur_at {
	struct cur c;
	uint64_t at;
};

static int fill_from_cur(void *ctx, uint64_t at, unsigned char *p, uint64_t n)
{
	struct cur_at *f = ctx;
	if (at != f->at) {
		f->c.i = 0, f->c.off = 0;
		cur_copy(&f->c, NULL, at, false);
		f->at = at;
	}
	cur_copy(&f->c, p, n, false);
	f->at += n;
	return 0;
}

/* A stream's bytes into TX in pieces as room allows; a blocking call queues them all. */
static ssize_t stream_send(int fd, struct axsock *s, struct cur *c, size_t len, int flags, int ms)
{
	uint64_t done = 0;
	if (s->shut_wr)
		return -EPIPE;
	int dead = dead_connection(fd, s);
	if (dead)
		return dead;
	struct cur_at src = { *c, 0 };
	for (;;) {
		lock(s);
		uint64_t before = done;
		sockbuf_stream_write(&s->sb.tx, &done, len, 0, fill_from_cur, &src); /* (our fill cannot fail) */
		unlock(s);
		if (done > before)
			kick(fd, s);
		if (done == len || (flags & MSG_DONTWAIT)) {
			axsock_counts.user++;
			return done ? (ssize_t)done : -EAGAIN;
		}
		int w = wait_owned(fd, POLLOUT, ms);
		if (w)
			return done ? (ssize_t)done : w < 0 ? w : -EPIPE;
	}
}

static ssize_t dgram_recv(int fd, struct axsock *s, struct cur *c, size_t len, int flags, struct sockaddr *from,
			  socklen_t *fromlen, int *mflags, int ms)
{
	for (;;) {
		lock(s);
		struct sockbuf_desc d;
		bool cut;
		int cerr;
		int64_t r = sockbuf_dgram_read(&s->sb.rx, len, (flags & MSG_PEEK ? SOCKBUF_READ_PEEK : 0) |
					       (flags & MSG_TRUNC ? SOCKBUF_READ_TRUNC : 0), copy_to_cur, c, &d, &cut, &cerr);
		if (r >= 0) {
			if (from && fromlen && d.family == AF_INET) {
				struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = d.port };
				memcpy(&a.sin_addr, d.addr, 4);
				socklen_t l = *fromlen < sizeof(a) ? *fromlen : (socklen_t)sizeof(a);
				memcpy(from, &a, l);
				*fromlen = sizeof(a);
			} else if (fromlen)
				*fromlen = 0;
			if (mflags)
				*mflags = cut ? MSG_TRUNC : 0;
			unlock(s);
			if (!(flags & MSG_PEEK)) /* udp drops what finds no room: nothing waits for it */
				axsock_activity_lazy(s->eng, s->bit);
			axsock_counts.user++;
			return (ssize_t)r;
		}
		unlock(s);
		if (r != CHAN_EAGAIN)
			return -EIO; /* the stack wrote impossible descriptors */
		if (s->shut_rd) { /* what came before SHUT_RD is read; then the end (as syscall) */
			axsock_counts.user++;
			return 0;
		}
		if (flags & MSG_DONTWAIT) {
			axsock_counts.user++;
			return empty_nowait(fd, s);
		}
		int w = wait_owned(fd, POLLIN, ms);
		if (w)
			return w < 0 ? w : 0; /* hung up without an error: nothing more comes */
	}
}

static ssize_t dgram_send(int fd, struct axsock *s, struct cur *c, size_t len, int flags, const struct sockaddr *to,
			  socklen_t tolen, int ms)
{
	/* syscall's checks, in its order (servers/syscall/calls.c), so the answer is the same */
	if (s->shut_wr)
		return -EPIPE;
	struct sockbuf_desc d = { 0 };
	if (to) {
		const struct sockaddr_in *a = (const void *)to;
		if (tolen < sizeof(*a))
			return -EINVAL;
		if (!axsock_user_range(to, sizeof(*a)))
			return -EFAULT;
		if (a->sin_family != AF_INET)
			return -EAFNOSUPPORT;
		if (!a->sin_port)
			return -EINVAL;
		if (a->sin_addr.s_addr == 0xffffffffu && s->tracked && !s->broadcast)
			return -EACCES; /* (udp checks subnet broadcasts itself: the error comes later) */
		d.family = AF_INET, d.port = a->sin_port;
		memcpy(d.addr, &a->sin_addr, 4);
	} else if (s->tracked && !s->connected) { /* (posix.c saw every connect of a tracked one) */
		return -EDESTADDRREQ;
	}
	if (len > 65507)
		return -EMSGSIZE;
	struct cur_at src = { *c, 0 };
	for (;;) {
		lock(s);
		int err = sockbuf_dgram_write(&s->sb.tx, len, &d, fill_from_cur, &src);
		unlock(s);
		if (err == 0) {
			kick(fd, s); /* the stack must send it */
			axsock_counts.user++;
			return (ssize_t)len;
		}
		if (err != CHAN_EAGAIN)
			return err == CHAN_EINVAL ? -EMSGSIZE : -EIO;
		if (flags & MSG_DONTWAIT) {
			axsock_counts.user++;
			return -EAGAIN;
		}
		int w = wait_owned(fd, POLLOUT, ms);
		if (w)
			return w < 0 ? w : -EPIPE;
	}
}

static int flags_of(struct axsock *s, int flags)
{
	return s->nonblock ? flags | MSG_DONTWAIT : flags;
}

ssize_t axsock_recvmsg(int fd, struct msghdr *m, int flags)
{
	struct axsock *s = axsock_owned(fd);
	if (!s)
		return -EBADF;
	struct cur c = { m->msg_iov, (int)m->msg_iovlen, 0, 0 };
	if (!iov_ok(m->msg_iov, (int)m->msg_iovlen) || (m->msg_name && !axsock_user_range(m->msg_name, m->msg_namelen)))
		return -EFAULT;
	size_t len = iov_total(m->msg_iov, (int)m->msg_iovlen);
	flags = flags_of(s, flags);
	m->msg_flags = 0;
	m->msg_controllen = 0;
	if (s->stream) {
		if (m->msg_name)
			m->msg_namelen = 0;
		return stream_recv(fd, s, &c, len, flags, s->rcvtimeo_ms);
	}
	return dgram_recv(fd, s, &c, len, flags, m->msg_name, m->msg_name ? &m->msg_namelen : NULL, &m->msg_flags,
			  s->rcvtimeo_ms);
}

ssize_t axsock_sendmsg(int fd, const struct msghdr *m, int flags)
{
	struct axsock *s = axsock_owned(fd);
	if (!s)
		return -EBADF;
	struct cur c = { m->msg_iov, (int)m->msg_iovlen, 0, 0 };
	if (!iov_ok(m->msg_iov, (int)m->msg_iovlen))
		return -EFAULT;
	size_t len = iov_total(m->msg_iov, (int)m->msg_iovlen);
	flags = flags_of(s, flags);
	if (s->stream)
		return stream_send(fd, s, &c, len, flags, s->sndtimeo_ms);
	return dgram_send(fd, s, &c, len, flags, m->msg_name, m->msg_namelen, s->sndtimeo_ms);
}

ssize_t axsock_recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *from, socklen_t *fromlen)
{
	struct iovec v = { buf, len };
	struct msghdr m = { .msg_name = from, .msg_namelen = fromlen ? *fromlen : 0, .msg_iov = &v, .msg_iovlen = 1 };
	ssize_t r = axsock_recvmsg(fd, &m, flags);
	if (r >= 0 && from && fromlen)
		*fromlen = m.msg_namelen;
	return r;
}

ssize_t axsock_sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *to, socklen_t tolen)
{
	struct iovec v = { (void *)buf, len };
	struct msghdr m = { .msg_name = (void *)to, .msg_namelen = to ? tolen : 0, .msg_iov = &v, .msg_iovlen = 1 };
	struct axsock *s = axsock_owned(fd);
	if (s && s->stream)
		m.msg_name = NULL, m.msg_namelen = 0; /* a connected stream ignores the address */
	return axsock_sendmsg(fd, &m, flags);
}

short axsock_ready(int fd, short events)
{
	struct axsock *s = axsock_owned(fd);
	if (!s)
		return 0;
	short r = 0;
	lock(s);
	/* what only syscall knows (a reset, a hang-up), from its status in the page */
	uint32_t st = axsock_status(s->bit);
	if (s->stream && s->connecting) { /* our connect descriptor (axsock_connect) */
		if (st & AXS_CONNECTED) {
			s->connecting = false, s->connected = true;
		} else {
			unlock(s); /* failed: writable with the error, as Linux; else nothing yet */
			return (st & POLLERR) ? (short)((POLLOUT | POLLWRNORM | POLLERR | POLLHUP) & (events | POLLERR | POLLHUP)) : 0;
		}
	}
	if (st & (POLLERR | POLLHUP))
		r |= (short)(st & (POLLERR | POLLHUP)) | POLLIN | POLLRDNORM;
	if (sockbuf_ready(&s->sb.rx) || s->peer_fin || s->shut_rd)
		r |= POLLIN | POLLRDNORM;
	/* the peer shut down writing (its FIN is queued, or was read): from the ring itself too,
	 * as syscall's status may come a moment after the data */
	bool rdhup = s->stream && (s->peer_fin || (st & POLLRDHUP) || sockbuf_stream_fin_queued(&s->sb.rx));
	if (rdhup)
		r |= POLLRDHUP;
	if (rdhup && s->shut_wr) /* closed both ways (our FIN is ours to know) */
		r |= POLLHUP;
	if (!s->shut_wr && (s->stream ? sockbuf_room(&s->sb.tx) >= 4096 : sockbuf_space(&s->sb.tx) > 0))
		r |= POLLOUT | POLLWRNORM;
	unlock(s);
	return r & (events | POLLERR | POLLHUP);
}

int axsock_nread(int fd)
{
	struct axsock *s = axsock_owned(fd);
	if (!s)
		return -EBADF;
	struct sockbuf_desc d;
	uint64_t n = 0;
	int err;
	lock(s);
	if (s->stream) {
		if (!s->shut_rd && !s->peer_fin && !sockbuf_stream_peek(&s->sb.rx, s->rx_off, UINT32_MAX, &d, &n, &err))
			n = 0;
	} else if (sockbuf_peek(&s->sb.rx, &d, &err))
		n = d.len;
	unlock(s);
	return (int)n;
}

ssize_t axsock_sendfile(int out, int in, off_t *off, size_t count)
{
	struct axsock *s = axsock_owned(out);
	if (!s || !s->stream)
		return -EBADF;
	if (s->shut_wr)
		return -EPIPE;
	size_t done = 0;
	ssize_t ferr = 0;
	for (;;) {
		lock(s);
		while (done < count) {
			uint32_t room = sockbuf_room(&s->sb.tx);
			size_t n = count - done < room ? count - done : room;
			int err;
			void *p = n ? sockbuf_alloc(&s->sb.tx, (uint32_t)n, &err) : NULL;
			if (!p)
				break;
			/* the file's bytes straight into TX (from its view, if it has one) */
			ssize_t r;
			if (off) {
				r = axfile_pread(in, p, n, *off + (off_t)done, true);
			} else {
				made_syscall();
				r = read(in, p, n);
				r = r < 0 ? -errno : r;
			}
			if (r <= 0) {
				ferr = r;
				count = done; /* the file ended (or failed) */
				break;
			}
			if ((size_t)r < n) { /* a short read: where r bytes go may differ from n's */
				void *q = sockbuf_alloc(&s->sb.tx, (uint32_t)r, &err);
				if (!q)
					break;
				memmove(q, p, (size_t)r);
			}
			struct sockbuf_desc d = { 0 };
			if (sockbuf_commit(&s->sb.tx, (uint32_t)r, &d))
				break;
			done += (size_t)r;
		}
		unlock(s);
		if (done)
			kick(out, s);
		if (done == count || s->nonblock)
			break;
		int w = wait_owned(out, POLLOUT, s->sndtimeo_ms);
		if (w) {
			ferr = w < 0 ? w : -EPIPE;
			break;
		}
	}
	if (off)
		*off += (off_t)done;
	if (done)
		return (ssize_t)done;
	return ferr ? ferr : count ? -EAGAIN : 0;
}

uint64_t axsock_rx_seq(int fd)
{
	struct axsock *s = axsock_owned(fd);
	return s ? sockbuf_produced_count(&s->sb.rx) : 0;
}
