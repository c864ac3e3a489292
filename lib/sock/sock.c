/* lib/sock, first slice (sock.h, docs/sockets.md). The application side of a socket buffer
 * (lib/net/sockbuf.h, role SB_APP), run in the application: the same checked ring code the
 * servers use, so a stack that lies about the rings gets an error, never a wild access. */
#include "sock.h"
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include "sockbuf.h"
#include "sock_ax.h"
#include "activity.h"

#define MAX_FDS 1024

struct axsock {
	bool taken;
	bool stream;
	bool peer_fin;   /* stream: the peer's FIN was read (every read returns 0) */
	bool shut_rd, shut_wr; /* stream: shutdown here (reads return 0; sends EPIPE) */
	uint32_t rx_off; /* stream: bytes already read of the oldest RX piece */
	uint32_t eng, bit; /* its engine and bit in the activity page */
	uint64_t va, bytes; /* the buffer's mapping (unmapped at close) */
	struct sockbuf sb;
};
static struct axsock socks[MAX_FDS];
struct axsock_counts axsock_counts;

/* Every system call the library makes is counted (activity.h). */
static void made_syscall(void)
{
	axsock_counts.syscalls++;
	axsock_nsys++;
}

static struct axsock *get(int fd)
{
	return fd >= 0 && fd < MAX_FDS && socks[fd].taken ? &socks[fd] : NULL;
}

/* Before a fork: every socket goes back to syscall, so parent and child (which would share
 * the rings' private indices) both use system calls on them from then on (thesis §5.4.2:
 * fork falls back to compliant sockets). */
static void before_fork(void)
{
	for (int fd = 0; fd < MAX_FDS; fd++)
		if (socks[fd].taken)
			axsock_give_back(fd);
}

/* The fork handler, once: false if it cannot be had (then no socket is taken over). */
static bool atfork_ready(void)
{
	static bool atfork;
	if (!atfork)
		atfork = pthread_atfork(before_fork, NULL, NULL) == 0;
	return atfork;
}

int axsock_adopt(int fd, const struct ax_sockbuf *b)
{
	if (fd < 0 || fd >= MAX_FDS)
		return -EBADF;
	if (!atfork_ready())
		return -ENOMEM; /* without the handler a fork would break the socket */
	if (sockbuf_attach(&socks[fd].sb, (void *)(uintptr_t)b->va, b->bytes, SB_APP)) {
		uint32_t off = b->rx_off;
		made_syscall();
		setsockopt(fd, SOL_AXOLOTL, AX_SOCKBUF, &off, sizeof(off));
		return -EIO;
	}
	socks[fd].taken = true, socks[fd].stream = b->stream != 0;
	socks[fd].rx_off = b->rx_off, socks[fd].peer_fin = false;
	socks[fd].shut_rd = socks[fd].shut_wr = false;
	socks[fd].eng = b->eng, socks[fd].bit = b->bit;
	socks[fd].va = b->va, socks[fd].bytes = b->bytes;
	axsock_act_page(b->act_va);
	return 0;
}

int axsock_take(int fd)
{
	if (fd < 0 || fd >= MAX_FDS)
		return -EBADF;
	if (!atfork_ready())
		return -ENOMEM;
	struct ax_sockbuf b;
	socklen_t l = sizeof(b);
	made_syscall();
	if (getsockopt(fd, SOL_AXOLOTL, AX_SOCKBUF, &b, &l) != 0)
		return -errno;
	if (l != sizeof(b)) {
		uint32_t off = b.rx_off;
		setsockopt(fd, SOL_AXOLOTL, AX_SOCKBUF, &off, sizeof(off));
		return -EIO;
	}
	return axsock_adopt(fd, &b);
}

uint32_t axsock_bit(int fd)
{
	struct axsock *s = get(fd);
	return s ? s->bit : AX_ACT_SOCKS;
}

int axsock_give_back(int fd)
{
	struct axsock *s = get(fd);
	if (!s)
		return -EBADF;
	uint32_t off = s->rx_off;
	made_syscall();
	s->taken = false;
	return setsockopt(fd, SOL_AXOLOTL, AX_SOCKBUF, &off, sizeof(off)) ? -errno : 0;
}

/* The stack must look at the socket (TX queued, RX released). */
static void kick(int fd)
{
	struct axsock *s = get(fd);
	if (s)
		axsock_activity(fd, s->eng, s->bit);
}

/* Blocks in poll(2) until fd is ready for ev: 0, or the socket's error (-errno) when the
 * stack reports one (a reset, a refused connection), or 1 when it hung up without one. */
static int wait_for(int fd, short ev)
{
	struct pollfd p = { fd, ev, 0 };
	made_syscall();
	if (poll(&p, 1, -1) < 0)
		return -errno;
	if (p.revents & (POLLERR | POLLHUP)) {
		int e = 0;
		socklen_t l = sizeof(e);
		made_syscall();
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &l);
		if (e)
			return -e;
		if (!(p.revents & ev))
			return 1;
	}
	return 0;
}

/* A stream's bytes: from the oldest piece on, as many as fit (MSG_WAITALL: all of len). */
static ssize_t stream_recv(int fd, struct axsock *s, char *buf, size_t len, int flags)
{
	size_t got = 0;
	bool peek = flags & MSG_PEEK;
	for (;;) {
		while (got < len && !s->peer_fin && !s->shut_rd) {
			struct sockbuf_desc d;
			uint64_t n;
			int err;
			const unsigned char *p = sockbuf_stream_peek(&s->sb.rx, s->rx_off, len - got, &d, &n, &err);
			if (!p && err == SOCKBUF_EFIN) {
				if (!peek) /* every read from now on returns 0 */
					s->peer_fin = sockbuf_stream_advance(&s->sb.rx, &d, &s->rx_off, 0);
				break;
			}
			if (!p && err != CHAN_EAGAIN)
				return got ? (ssize_t)got : -EIO;
			if (!p)
				break;
			if (!(flags & MSG_TRUNC))
				memcpy(buf + got, p, n);
			got += n;
			if (peek)
				break;
			sockbuf_stream_advance(&s->sb.rx, &d, &s->rx_off, n);
		}
		if (got && !peek)
			kick(fd); /* RX space came free: the window opens */
		if (got == len || s->peer_fin || s->shut_rd || (got && !(flags & MSG_WAITALL)) || (got && peek)) {
			axsock_counts.user++;
			return (ssize_t)got;
		}
		if (flags & MSG_DONTWAIT) {
			axsock_counts.user++;
			return got ? (ssize_t)got : -EAGAIN;
		}
		int w = wait_for(fd, POLLIN);
		if (w < 0)
			return got ? (ssize_t)got : w;
		if (w > 0 && !sockbuf_ready(&s->sb.rx))
			return (ssize_t)got; /* hung up: end of stream */
	}
}

/* A stream's bytes into TX in pieces as room allows; a blocking call queues them all. */
static ssize_t stream_send(int fd, struct axsock *s, const char *buf, size_t len, int flags)
{
	size_t done = 0;
	if (s->shut_wr)
		return -EPIPE;
	for (;;) {
		while (done < len) {
			uint32_t room = sockbuf_room(&s->sb.tx);
			size_t n = len - done < room ? len - done : room;
			if (!n)
				break;
			int err;
			void *p = sockbuf_alloc(&s->sb.tx, (uint32_t)n, &err);
			if (!p)
				break;
			memcpy(p, buf + done, n);
			struct sockbuf_desc d = { 0 };
			if (sockbuf_commit(&s->sb.tx, (uint32_t)n, &d))
				break;
			done += n;
		}
		if (done)
			kick(fd);
		if (done == len || (flags & MSG_DONTWAIT)) {
			axsock_counts.user++;
			return done ? (ssize_t)done : -EAGAIN;
		}
		int w = wait_for(fd, POLLOUT);
		if (w)
			return done ? (ssize_t)done : w < 0 ? w : -EPIPE;
	}
}

ssize_t axsock_recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *from, socklen_t *fromlen)
{
	struct axsock *s = get(fd);
	if (!s)
		return -EBADF;
	if (s->stream)
		return stream_recv(fd, s, buf, len, flags);
	for (;;) {
		struct sockbuf_desc d;
		int err;
		const void *p = sockbuf_peek(&s->sb.rx, &d, &err);
		if (p) {
			size_t n = d.len < len ? d.len : len;
			memcpy(buf, p, n);
			if (from && fromlen && d.family == AF_INET) {
				struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = d.port };
				memcpy(&a.sin_addr, d.addr, 4);
				socklen_t l = *fromlen < sizeof(a) ? *fromlen : (socklen_t)sizeof(a);
				memcpy(from, &a, l);
				*fromlen = sizeof(a);
			}
			ssize_t r = (flags & MSG_TRUNC) ? (ssize_t)d.len : (ssize_t)n;
			if (!(flags & MSG_PEEK)) {
				sockbuf_consume(&s->sb.rx, &d);
				kick(fd); /* RX space came free */
			}
			axsock_counts.user++;
			return r;
		}
		if (err != CHAN_EAGAIN)
			return -EIO; /* the stack wrote impossible descriptors */
		if (flags & MSG_DONTWAIT) {
			axsock_counts.user++;
			return -EAGAIN;
		}
		int w = wait_for(fd, POLLIN);
		if (w)
			return w < 0 ? w : 0; /* hung up without an error: nothing more comes */
	}
}

ssize_t axsock_sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *to, socklen_t tolen)
{
	struct axsock *s = get(fd);
	if (!s)
		return -EBADF;
	if (s->stream)
		return stream_send(fd, s, buf, len, flags);
	if (len > 65507)
		return -EMSGSIZE;
	struct sockbuf_desc d = { 0 };
	if (to) {
		const struct sockaddr_in *a = (const void *)to;
		if (tolen < sizeof(*a) || a->sin_family != AF_INET)
			return tolen < sizeof(*a) ? -EINVAL : -EAFNOSUPPORT;
		d.family = AF_INET, d.port = a->sin_port;
		memcpy(d.addr, &a->sin_addr, 4);
	}
	for (;;) {
		int err;
		void *p = sockbuf_alloc(&s->sb.tx, (uint32_t)len, &err);
		if (p) {
			memcpy(p, buf, len);
			if (sockbuf_commit(&s->sb.tx, (uint32_t)len, &d) == 0) {
				kick(fd); /* the stack must send it */
				axsock_counts.user++;
				return (ssize_t)len;
			}
			err = CHAN_EAGAIN; /* the descriptor queue is full */
		}
		if (err != CHAN_EAGAIN)
			return err == CHAN_EINVAL ? -EMSGSIZE : -EIO;
		if (flags & MSG_DONTWAIT) {
			axsock_counts.user++;
			return -EAGAIN;
		}
		int w = wait_for(fd, POLLOUT);
		if (w)
			return w < 0 ? w : -EPIPE;
	}
}

int axsock_close(int fd)
{
	struct axsock *s = get(fd);
	uint64_t va = s ? s->va : 0, bytes = s ? s->bytes : 0;
	if (s)
		s->taken = false;
	made_syscall();
	int r = close(fd) ? -errno : 0;
	/* syscall mapped the buffer in for us and nothing else unmaps it: each closed socket
	 * would keep its buffer's memory for the process's life */
	if (va) {
		made_syscall();
		munmap((void *)(uintptr_t)va, bytes);
	}
	return r;
}

int axsock_shutdown(int fd, int how)
{
	struct axsock *s = get(fd);
	if (!s)
		return -EBADF;
	if (!s->stream)
		return -EOPNOTSUPP; /* datagrams: syscall tells udp (the caller makes the call) */
	if (how < SHUT_RD || how > SHUT_RDWR)
		return -EINVAL;
	s->shut_rd |= how != SHUT_WR;
	if (how != SHUT_RD && !s->shut_wr) {
		/* the FIN piece after the data (syscall's queue_fin for its own sockets) */
		struct sockbuf_desc d = { .flags = SBD_FIN };
		if (sockbuf_commit(&s->sb.tx, 0, &d) != 0) {
			axsock_give_back(fd); /* the descriptor queue is full: syscall queues it */
			return -EAGAIN;
		}
		s->shut_wr = true;
		kick(fd);
	}
	axsock_counts.user++;
	return 0;
}
