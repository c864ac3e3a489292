/* lib/sock: the C library's descriptor and data calls, interposed with GNU ld
 * --wrap=NAME (wrap.syms, README.md). socket/accept/accept4 mark the AF_INET stream and
 * datagram sockets they make as tracked; a tracked socket is taken over lazily at its first
 * data call (one getsockopt) and its data then moves through the rings in user space
 * (sock.c). Every other descriptor goes straight to __real_NAME with no extra system call.
 * Fallbacks (the normal path): a socket that could not be taken (never), one not connected
 * yet, dup'ed ones (given back first), all after a fork, everything with AXOLOTL_SOCK=0. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>
#include "activity.h"
#include "posix.h"
#include "sock.h"
#include "sock_ax.h"
#include "sys.h"

int __real_socket(int, int, int);
int __real_accept(int, struct sockaddr *, socklen_t *);
int __real_accept4(int, struct sockaddr *, socklen_t *, int);
int __real_connect(int, const struct sockaddr *, socklen_t);
int __real_close(int);
int __real_dup(int);
int __real_dup2(int, int);
int __real_dup3(int, int, int);
int __real_fcntl(int, int, ...);
int __real_ioctl(int, unsigned long, ...);
int __real_setsockopt(int, int, int, const void *, socklen_t);
int __real_shutdown(int, int);
int __real_listen(int, int);
ssize_t __real_read(int, void *, size_t);
ssize_t __real_write(int, const void *, size_t);
ssize_t __real_readv(int, const struct iovec *, int);
ssize_t __real_writev(int, const struct iovec *, int);
ssize_t __real_recvfrom(int, void *, size_t, int, struct sockaddr *, socklen_t *);
ssize_t __real_recvmsg(int, struct msghdr *, int);
ssize_t __real_sendto(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
ssize_t __real_sendmsg(int, const struct msghdr *, int);
ssize_t __real_sendfile(int, int, off_t *, size_t);

bool axsock_on(void)
{
	static _Atomic int state; /* 0: not looked yet, 1: on, 2: off */
	int v = atomic_load_explicit(&state, memory_order_relaxed);
	if (!v) {
		const char *e = getenv("AXOLOTL_SOCK");
		v = e && !strcmp(e, "0") ? 2 : 1;
		atomic_store_explicit(&state, v, memory_order_relaxed);
	}
	return v == 1;
}

struct axsock *axsock_tracked(int fd)
{
	struct axsock *s = axsock_slot(fd);
	return s && s->tracked && axsock_on() ? s : NULL;
}

void axsock_resync(int fd)
{
	axsock_nsys++;
	ax_sys_setsockopt(fd, SOL_AXOLOTL, AX_KICK, NULL, 0);
}

static void track(int fd, bool stream, bool connected, bool nonblock)
{
	struct axsock *s = axsock_slot(fd);
	if (!s)
		return;
	s->taken = s->never = s->connecting = s->shut_rd = s->shut_wr = s->peer_fin = false;
	s->rcvtimeo_ms = s->sndtimeo_ms = 0;
	atomic_store(&s->hup_hint, false);
	s->stream = stream, s->connected = connected, s->nonblock = nonblock;
	s->broadcast = false;
	s->accept_take = 0;
	s->drained = s->listening = false;
	s->listen_slot = 0;
	s->tracked = true;
}

static void forget(int fd)
{
	axfile_forget(fd);
	struct axsock *s = axsock_slot(fd);
	if (s)
		s->tracked = s->taken = false;
	axsock_events_forget(fd);
}

/* The record if the library owns fd now, taking it over at its first data call. */
static struct axsock *own(int fd)
{
	struct axsock *s = axsock_tracked(fd);
	if (!s || s->never)
		return NULL;
	if (s->taken)
		return s;
	if (s->stream && !s->connected) {
		if (!s->connecting)
			return NULL; /* not connected: the normal path answers (ENOTCONN, ...) */
		struct sockaddr_in a;
		socklen_t l = sizeof(a);
		axsock_nsys++;
		if (getpeername(fd, (struct sockaddr *)&a, &l) != 0)
			return NULL; /* still connecting: ask again at the next data call */
		s->connected = true, s->connecting = false;
	}
	int r = axsock_take(fd);
	if (r == 0)
		return s;
	s->never = true; /* a listener, EBUSY, ...: the normal path from now on */
	return NULL;
}

/* A library answer (count or -errno) as the C library returns it. */
static ssize_t ret(ssize_t r)
{
	if (r >= 0)
		return r;
	errno = (int)-r;
	return -1;
}

/* A send's answer: EPIPE raises SIGPIPE unless MSG_NOSIGNAL, as Linux does. */
static ssize_t sent(ssize_t r, int flags)
{
	if (r == -EPIPE && !(flags & MSG_NOSIGNAL))
		raise(SIGPIPE);
	return ret(r);
}

/* Counts the call of kind c on a tracked socket: user when it made no system call. */
#define COUNT(c, n0) axsock_count((c), axsock_nsys == (n0))

int __wrap_socket(int dom, int type, int proto)
{
	int fd = __real_socket(dom, type, proto);
	int t = type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd >= 0 && dom == AF_INET && (t == SOCK_STREAM || t == SOCK_DGRAM) && axsock_on())
		track(fd, t == SOCK_STREAM, false, type & SOCK_NONBLOCK);
	return fd;
}

static int accepted(int l, int fd, int flags)
{
	if (!axsock_tracked(l))
		return fd;
	axsock_count(AXC_ACCEPT, false);
	if (fd >= 0) {
		forget(fd);
		track(fd, true, true, flags & SOCK_NONBLOCK);
	}
	return fd;
}

void axsock_listener_take(struct axsock *ls, int l)
{
	if (!ls->accept_take)
		ls->accept_take = axsock_listener_key(l, &ls->accept_key, &ls->listen_slot) == 0 ? 1 : 2;
}

int __wrap_listen(int fd, int backlog)
{
	int r = __real_listen(fd, backlog);
	struct axsock *s = axsock_tracked(fd);
	if (s && r == 0 && s->stream)
		s->listening = true;
	return r;
}

/* accept on a tracked listener: syscall takes the connection over during the accept
 * (AX_ACCEPT_TAKE, asked once per listener) and announces it in the activity page, where
 * the library finds it by the peer's address and adopts it without a system call
 * (docs/sockets.md, "accept and close"); without an entry the first data call takes the
 * socket over as usual. */
static int lib_accept(int l, struct sockaddr *a, socklen_t *al, int flags, bool four)
{
	struct axsock *ls = axsock_tracked(l);
	if (!ls)
		return four ? __real_accept4(l, a, al, flags) : __real_accept(l, a, al);
	axsock_listener_take(ls, l);
	/* the queue was empty at our last accept and syscall has heard of no connection since:
	 * the answer would be EAGAIN (once: a connection it has not heard of yet makes the
	 * listener readable, and the accept after this one asks) */
	bool drained = ls->drained;
	ls->drained = false;
	uint32_t arrived;
	if (drained && ls->nonblock && !(four && (flags & ~(SOCK_NONBLOCK | SOCK_CLOEXEC))) &&
	    axsock_arrivals(&arrived) && arrived == ls->drained_at) {
		axsock_count(AXC_ACCEPT, true);
		errno = EAGAIN;
		return -1;
	}
	uint64_t mark = axsock_accept_mark();
	struct sockaddr_in peer = { 0 };
	socklen_t pl = sizeof(peer);
	int fd = four ? __real_accept4(l, (struct sockaddr *)&peer, &pl, flags) : __real_accept(l, (struct sockaddr *)&peer, &pl);
	if (fd >= 0 && a && al) { /* the caller's address, cut to its size as Linux does */
		memcpy(a, &peer, *al < pl ? *al : pl);
		*al = pl;
	}
	fd = accepted(l, fd, flags);
	struct ax_sockbuf b;
	uint32_t arrivals, more;
	if (fd >= 0 && ls->accept_take == 1 && peer.sin_family == AF_INET &&
	    axsock_accepted(ls->accept_key, peer.sin_addr.s_addr, peer.sin_port, mark, &b, &arrivals, &more) == 0) {
		axsock_adopt(fd, &b);
		ls->drained = more == 0, ls->drained_at = arrivals;
	}
	return fd;
}

int __wrap_accept(int l, struct sockaddr *a, socklen_t *al)
{
	return lib_accept(l, a, al, 0, false);
}

int __wrap_accept4(int l, struct sockaddr *a, socklen_t *al, int flags)
{
	return lib_accept(l, a, al, flags, true);
}

/* A non-blocking connect of a fresh stream socket: by a connect descriptor (sock.h
 * axsock_connect): true and *r if done so. */
static bool lib_connect(int fd, struct axsock *s, const struct sockaddr *a, socklen_t al, int *r)
{
	if (s && s->stream && s->taken && s->connecting &&
	    !(axsock_status(s->bit) & (AXS_CONNECTED | POLLERR))) { /* ours is still on its way */
		axsock_count(AXC_OTHER, true);
		errno = EALREADY;
		*r = -1;
		return true;
	} /* (once it ended, syscall reports the result once, as for its own) */
	if (!s || !s->stream || !s->nonblock || s->never || s->taken || s->connected || s->connecting ||
	    !a || al < sizeof(struct sockaddr_in) || (uintptr_t)a < 4096 || a->sa_family != AF_INET)
		return false;
	uint64_t n0 = axsock_nsys;
	int e = axsock_connect(fd, (const struct sockaddr_in *)a);
	if (e != -EINPROGRESS) {
		if (axsock_owned(fd))
			axsock_give_back(fd);
		return false;
	}
	COUNT(AXC_OTHER, n0);
	errno = EINPROGRESS;
	*r = -1;
	return true;
}

int __wrap_connect(int fd, const struct sockaddr *a, socklen_t al)
{
	int r;
	if (lib_connect(fd, axsock_tracked(fd), a, al, &r))
		return r;
	r = __real_connect(fd, a, al);
	struct axsock *s = axsock_tracked(fd);
	if (s && s->stream) {
		int e = errno;
		axsock_count(AXC_OTHER, false);
		if (r == 0)
			s->connected = true;
		else if (e == EINPROGRESS || e == EALREADY || e == EISCONN)
			s->connecting = true;
		errno = e;
	} else if (s) {
		axsock_count(AXC_OTHER, false);
		if (r == 0) /* a datagram's peer: set, or dissolved by AF_UNSPEC */
			s->connected = a->sa_family != AF_UNSPEC;
	}
	return r;
}

int __wrap_close(int fd)
{
	if (axsock_tracked(fd))
		axsock_count(AXC_CLOSE, false);
	struct axsock *s = axsock_slot(fd);
	bool had = s && s->va;
	if (s && s->tracked)
		s->tracked = false; /* (even with AXOLOTL_SOCK=0 nothing was tracked) */
	axsock_events_forget(fd);
	axfile_forget(fd);
	if (had) /* its buffer is unmapped or kept as a spare too */
		return (int)ret(axsock_close(fd));
	if (s)
		s->taken = false;
	return __real_close(fd);
}

/* A descriptor about to be duplicated goes back to syscall: both then use system calls. */
static void before_dup(int fd)
{
	struct axsock *s = axsock_tracked(fd);
	if (!s)
		return;
	axsock_count(AXC_OTHER, false);
	if (s->taken)
		axsock_give_back(fd);
	s->never = true;
}

int __wrap_dup(int fd)
{
	before_dup(fd);
	return __real_dup(fd);
}

int __wrap_dup2(int fd, int to)
{
	if (fd != to) {
		before_dup(fd);
		forget(to);
	}
	return __real_dup2(fd, to);
}

int __wrap_dup3(int fd, int to, int flags)
{
	if (fd != to) {
		before_dup(fd);
		forget(to);
	}
	return __real_dup3(fd, to, flags);
}

/* A regular file's pread from its view (file.c); everything else as the system call. */
ssize_t __wrap_pread(int fd, void *buf, size_t n, off_t off)
{
	return ret(axfile_pread(fd, buf, n, off, axsock_on() && !axsock_tracked(fd)));
}

int __wrap_fcntl(int fd, int cmd, ...)
{
	va_list ap;
	va_start(ap, cmd);
	unsigned long arg = va_arg(ap, unsigned long);
	va_end(ap);
	if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)
		before_dup(fd);
	int r = __real_fcntl(fd, cmd, arg);
	struct axsock *s = axsock_tracked(fd);
	if (s && cmd == F_SETFL && r == 0)
		s->nonblock = (arg & O_NONBLOCK) != 0;
	return r;
}

int __wrap_ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	unsigned r32 = (unsigned)req; /* musl's is an int */
	struct axsock *s = axsock_tracked(fd);
	if (s && r32 == FIONREAD && arg && axsock_owned(fd)) {
		*(int *)arg = axsock_nread(fd);
		axsock_count(AXC_OTHER, true);
		return 0;
	}
	int r = __real_ioctl(fd, r32, arg);
	if (s && r32 == FIONBIO && r == 0 && arg)
		s->nonblock = *(int *)arg != 0;
	return r;
}

int __wrap_setsockopt(int fd, int level, int name, const void *v, socklen_t l)
{
	int r = __real_setsockopt(fd, level, name, v, l);
	struct axsock *s = level == SOL_SOCKET ? axsock_tracked(fd) : NULL;
	if (s && r == 0 && name == SO_BROADCAST)
		s->broadcast = *(const int *)v != 0; /* (syscall read the int: v is good) */
	if (s && r == 0 && (name == SO_RCVTIMEO || name == SO_SNDTIMEO) && v && l >= sizeof(struct timeval)) {
		const struct timeval *tv = v;
		long long ms = (long long)tv->tv_sec * 1000 + (tv->tv_usec + 999) / 1000;
		int32_t t = ms <= 0 ? 0 : ms > INT32_MAX ? INT32_MAX : (int32_t)ms;
		if (name == SO_RCVTIMEO)
			s->rcvtimeo_ms = t;
		else
			s->sndtimeo_ms = t;
	}
	return r;
}

/* shutdown on a stream the library owns: in user space (the FIN piece queued after the data,
 * SHUT_RD a flag: sock.h axsock_shutdown). Otherwise (no room for the FIN piece, a datagram
 * socket) given back first, then the real call, so syscall (the only writer of its own view)
 * queues the FIN and knows SHUT_RD/SHUT_WR for its readiness; the next data call takes the
 * socket over again, and the library keeps the flags (a receive after SHUT_RD reads 0, a
 * send after SHUT_WR fails with EPIPE). */
int __wrap_shutdown(int fd, int how)
{
	struct axsock *s = axsock_tracked(fd);
	if (!s)
		return __real_shutdown(fd, how);
	s->drained = false; /* a listener shut down: its next accept is the kernel's (EINVAL) */
	if (s->taken && axsock_shutdown(fd, how) == 0) { /* in user space: the FIN piece queued */
		axsock_count(AXC_SHUTDOWN, true);
		return 0;
	}
	axsock_count(AXC_SHUTDOWN, false);
	if (s->taken)
		axsock_give_back(fd);
	int r = __real_shutdown(fd, how);
	if (r == 0) {
		s->shut_rd |= how == SHUT_RD || how == SHUT_RDWR;
		s->shut_wr |= how == SHUT_WR || how == SHUT_RDWR;
	}
	return r;
}

ssize_t __wrap_read(int fd, void *b, size_t n)
{
	if (!axsock_tracked(fd))
		return __real_read(fd, b, n);
	uint64_t n0 = axsock_nsys;
	if (own(fd)) {
		ssize_t r = axsock_recvfrom(fd, b, n, 0, NULL, NULL);
		COUNT(AXC_READ, n0);
		return ret(r);
	}
	axsock_count(AXC_READ, false);
	return __real_read(fd, b, n);
}

ssize_t __wrap_recvfrom(int fd, void *b, size_t n, int flags, struct sockaddr *from, socklen_t *fl)
{
	if (!axsock_tracked(fd))
		return __real_recvfrom(fd, b, n, flags, from, fl);
	uint64_t n0 = axsock_nsys;
	if (own(fd)) {
		ssize_t r = axsock_recvfrom(fd, b, n, flags, from, fl);
		COUNT(AXC_RECV, n0);
		return ret(r);
	}
	axsock_count(AXC_RECV, false);
	return __real_recvfrom(fd, b, n, flags, from, fl);
}

ssize_t __wrap_recv(int fd, void *b, size_t n, int flags)
{
	return __wrap_recvfrom(fd, b, n, flags, NULL, NULL);
}

static ssize_t vec_recv(enum ax_call c, int fd, struct msghdr *m, int flags)
{
	uint64_t n0 = axsock_nsys;
	if (own(fd)) {
		ssize_t r = axsock_recvmsg(fd, m, flags);
		COUNT(c, n0);
		return ret(r);
	}
	axsock_count(c, false);
	return c == AXC_READV ? __real_readv(fd, m->msg_iov, (int)m->msg_iovlen) : __real_recvmsg(fd, m, flags);
}

ssize_t __wrap_readv(int fd, const struct iovec *v, int n)
{
	if (!axsock_tracked(fd))
		return __real_readv(fd, v, n);
	if (n < 0 || n > 1024)
		return ret(-EINVAL);
	struct msghdr m = { .msg_iov = (struct iovec *)v, .msg_iovlen = n };
	return vec_recv(AXC_READV, fd, &m, 0);
}

ssize_t __wrap_recvmsg(int fd, struct msghdr *m, int flags)
{
	if (!axsock_tracked(fd))
		return __real_recvmsg(fd, m, flags);
	return vec_recv(AXC_RECVMSG, fd, m, flags);
}

ssize_t __wrap_write(int fd, const void *b, size_t n)
{
	if (!axsock_tracked(fd))
		return __real_write(fd, b, n);
	uint64_t n0 = axsock_nsys;
	if (own(fd)) {
		ssize_t r = axsock_sendto(fd, b, n, 0, NULL, 0);
		COUNT(AXC_WRITE, n0);
		return sent(r, 0);
	}
	axsock_count(AXC_WRITE, false);
	return __real_write(fd, b, n);
}

ssize_t __wrap_sendto(int fd, const void *b, size_t n, int flags, const struct sockaddr *to, socklen_t tl)
{
	if (!axsock_tracked(fd))
		return __real_sendto(fd, b, n, flags, to, tl);
	uint64_t n0 = axsock_nsys;
	if (own(fd)) {
		ssize_t r = axsock_sendto(fd, b, n, flags, to, tl);
		COUNT(AXC_SEND, n0);
		return sent(r, flags);
	}
	axsock_count(AXC_SEND, false);
	return __real_sendto(fd, b, n, flags, to, tl);
}

ssize_t __wrap_send(int fd, const void *b, size_t n, int flags)
{
	return __wrap_sendto(fd, b, n, flags, NULL, 0);
}

static ssize_t vec_send(enum ax_call c, int fd, const struct msghdr *m, int flags)
{
	uint64_t n0 = axsock_nsys;
	if (own(fd)) {
		ssize_t r = axsock_sendmsg(fd, m, flags);
		COUNT(c, n0);
		return sent(r, flags);
	}
	axsock_count(c, false);
	return c == AXC_WRITEV ? __real_writev(fd, m->msg_iov, (int)m->msg_iovlen) : __real_sendmsg(fd, m, flags);
}

ssize_t __wrap_writev(int fd, const struct iovec *v, int n)
{
	if (!axsock_tracked(fd))
		return __real_writev(fd, v, n);
	if (n < 0 || n > 1024)
		return ret(-EINVAL);
	struct msghdr m = { .msg_iov = (struct iovec *)v, .msg_iovlen = n };
	return vec_send(AXC_WRITEV, fd, &m, 0);
}

ssize_t __wrap_sendmsg(int fd, const struct msghdr *m, int flags)
{
	if (!axsock_tracked(fd))
		return __real_sendmsg(fd, m, flags);
	return vec_send(AXC_SENDMSG, fd, m, flags);
}

ssize_t __wrap_sendfile(int out, int in, off_t *off, size_t count)
{
	struct axsock *s = axsock_tracked(out);
	if (!s)
		return __real_sendfile(out, in, off, count);
	uint64_t n0 = axsock_nsys;
	if (s->stream && own(out)) {
		ssize_t r = axsock_sendfile(out, in, off, count);
		COUNT(AXC_SENDFILE, n0);
		return sent(r, 0);
	}
	axsock_count(AXC_SENDFILE, false);
	return __real_sendfile(out, in, off, count);
}
