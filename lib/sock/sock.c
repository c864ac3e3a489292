/* lib/sock, first slice (sock.h, docs/sockets.md). The application side of a socket buffer
 * (lib/net/sockbuf.h, role SB_APP), run in the application: the same checked ring code the
 * servers use, so a stack that lies about the rings gets an error, never a wild access. */
#include "sock.h"
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "sockbuf.h"
#include "sock_ax.h"

#define MAX_FDS 1024

struct axsock {
	bool taken;
	bool stream;
	struct sockbuf sb;
};
static struct axsock socks[MAX_FDS];
struct axsock_counts axsock_counts;

static struct axsock *get(int fd)
{
	return fd >= 0 && fd < MAX_FDS && socks[fd].taken ? &socks[fd] : NULL;
}

int axsock_take(int fd)
{
	if (fd < 0 || fd >= MAX_FDS)
		return -EBADF;
	struct ax_sockbuf b;
	socklen_t l = sizeof(b);
	axsock_counts.syscalls++;
	if (getsockopt(fd, SOL_AXOLOTL, AX_SOCKBUF, &b, &l) != 0)
		return -errno;
	if (l != sizeof(b) || b.stream || sockbuf_attach(&socks[fd].sb, (void *)(uintptr_t)b.va, b.bytes, SB_APP)) {
		uint32_t off = 0;
		setsockopt(fd, SOL_AXOLOTL, AX_SOCKBUF, &off, sizeof(off));
		return b.stream ? -EOPNOTSUPP : -EIO;
	}
	socks[fd].taken = true, socks[fd].stream = false;
	return 0;
}

int axsock_give_back(int fd)
{
	struct axsock *s = get(fd);
	if (!s)
		return -EBADF;
	uint32_t off = 0;
	axsock_counts.syscalls++;
	s->taken = false;
	return setsockopt(fd, SOL_AXOLOTL, AX_SOCKBUF, &off, sizeof(off)) ? -errno : 0;
}

/* The stack must look at the socket (TX queued, RX released). */
static void kick(int fd)
{
	axsock_counts.syscalls++;
	setsockopt(fd, SOL_AXOLOTL, AX_KICK, NULL, 0);
}

static int wait_for(int fd, short ev)
{
	struct pollfd p = { fd, ev, 0 };
	axsock_counts.syscalls++;
	return poll(&p, 1, -1) < 0 ? -errno : 0;
}

ssize_t axsock_recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *from, socklen_t *fromlen)
{
	struct axsock *s = get(fd);
	if (!s)
		return -EBADF;
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
			return w;
	}
}

ssize_t axsock_sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *to, socklen_t tolen)
{
	struct axsock *s = get(fd);
	if (!s)
		return -EBADF;
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
			return w;
	}
}
