/* AF_UNIX sockets (Linux's unix(7)), kept by vfs beside pipes: stream, datagram and
 * seqpacket sockets; socketpair; bind to a path (an S_IFSOCK node in the tree) or to a name
 * in the abstract namespace (a first byte of zero), autobind; listen, connect, accept;
 * read/write, send/recv, sendto/recvfrom, sendmsg/recvmsg with their iovecs, MSG_PEEK,
 * MSG_DONTWAIT, MSG_WAITALL, MSG_TRUNC; shutdown; poll and epoll; getsockname/getpeername;
 * SO_PEERCRED. socket.c makes the descriptor (struct vsock, ANON_SOCKET) and hands every
 * call on an AF_UNIX one here.
 *
 * A socket's receive queue holds messages (one per send; a stream reads across them). A
 * connection is made whole at connect: the listener's side is an embryo socket in its
 * backlog, which the client can already write to, and accept gives it a descriptor. A call
 * that must wait answers VFS_BLOCK and is tried again after every call vfs serves (vfs.c),
 * so a call changes nothing before it knows it will not wait. */
#include "vfs.h"
#include "heap.h"
#include "lx_socket.h"
#include "unix.h"

#define SOCK_STREAM 1
#define SOCK_DGRAM 2
#define SOCK_SEQPACKET 5
#define MSG_CTRUNC 8
#define MSG_EOR 0x80
#define MSG_WAITALL 0x100
#define MSG_NOSIGNAL 0x4000
#define MSG_CMSG_CLOEXEC 0x40000000
#define SOL_SOCKET 1
#define SO_PEERCRED 17
#define E_PIPE 32
#define E_NOTSOCK 88
#define E_DESTADDRREQ 89
#define E_MSGSIZE 90
#define E_PROTOTYPE 91
#define E_OPNOTSUPP 95
#define E_ADDRINUSE 98
#define E_CONNRESET 104
#define E_ISCONN 106
#define E_NOTCONN 107
#define E_CONNREFUSED 111

#define UN_PATH 108           /* sun_path */
#define UN_ADDR (2 + UN_PATH) /* struct sockaddr_un */
#define UN_ABUF (UN_ADDR + 1)  /* one read from the caller: a path of 108 bytes still ends in NUL */
#define UN_RCVBUF 212992u     /* bytes a socket's queue takes (Linux's default buffer size) */
#define UN_DGRAM_QLEN 512     /* datagrams a socket's queue takes (Linux's max_dgram_qlen) */
#define UN_IOV_MAX 1024

struct umsg {
	struct umsg *next;
	uint32_t len, off;        /* bytes; read so far (a stream's partial read) */
	uint8_t from[UN_ADDR];    /* the sender's address (datagrams) */
	uint32_t fromlen;
	uint8_t data[];
};

struct usock {
	int type;
	bool listening, connected; /* connected: stream/seqpacket had a peer (it may be gone) */
	bool shut_rd, shut_wr;     /* our shutdown */
	bool peer_shut;            /* the peer shut its writing side or is gone: end of file */
	struct usock *peer;        /* the other end; a datagram socket's connected destination */
	struct usock *listener;    /* an embryo: the listener whose backlog holds it */
	struct rnode *node;        /* our descriptor's node (events for epoll); NULL: an embryo */
	struct rnode *bound;       /* the S_IFSOCK node of our path (held open while bound) */
	uint8_t addr[UN_ADDR];     /* our address, addrlen bytes (2: unnamed) */
	uint32_t addrlen;
	struct umsg *head, *tail;
	uint32_t qbytes, qmsgs;
	struct usock **backlog;    /* a listener's embryos, oldest first */
	int nbacklog, maxbacklog;
	int32_t cred_pid;          /* the Linux pid that made the connection (SO_PEERCRED) */
	struct usock *next_all;    /* every socket: the abstract namespace, datagram peers */
};

static VFS_KEPT struct usock *all;

static void touch(struct usock *u)
{
	if (u && u->node)
		u->node->events++; /* edge-triggered epoll sees a change */
}

/* ---- addresses ---- */

static size_t path_len(const uint8_t *p)
{
	size_t n = 0;
	while (n < UN_PATH && p[n])
		n++;
	return n;
}

/* A sockaddr_un from the caller: 0 and the name in a (len bytes, family included), or an
 * error. len 2: unnamed (autobind for bind). A path ends at its first NUL (Linux). */
static int64_t get_addr(struct client *c, uint64_t uaddr, uint64_t ulen, uint8_t a[UN_ABUF], uint32_t *len)
{
	if (ulen < 2 || ulen > UN_ADDR)
		return -E_INVAL;
	memset(a, 0, UN_ABUF);
	if (ax_vcopy(c->ep, (const void *)uaddr, EP_NONE, a, ulen) < 0)
		return -E_FAULT;
	if ((a[0] | a[1] << 8) != AF_UNIX_)
		return -E_INVAL;
	*len = (uint32_t)ulen;
	if (ulen > 2 && a[2]) /* a path: up to its NUL, the NUL counted as Linux's getsockname does */
		*len = (uint32_t)(2 + path_len(a + 2) + 1);
	if (*len > UN_ADDR)
		*len = UN_ADDR;
	return 0;
}

static bool abstract(const uint8_t *a, uint32_t len) { return len > 2 && !a[2]; }

static struct usock *find_abstract(const uint8_t *a, uint32_t len)
{
	for (struct usock *u = all; u; u = u->next_all)
		if (u->addrlen == len && abstract(u->addr, u->addrlen) && !memcmp(u->addr, a, len))
			return u;
	return NULL;
}

/* Writes an address the Linux way (truncated to the caller's buffer, the full length told). */
static int64_t put_addr(struct client *c, const uint8_t *a, uint32_t len, uint64_t uaddr, uint64_t ulen)
{
	if (!uaddr || !ulen)
		return 0;
	uint32_t have;
	if (ax_vcopy(c->ep, (const void *)ulen, EP_NONE, &have, 4) < 0)
		return -E_FAULT;
	if ((int32_t)have < 0)
		return -E_INVAL;
	if (ax_vcopy(EP_NONE, a, c->ep, (void *)uaddr, have < len ? have : len) < 0 ||
	    ax_vcopy(EP_NONE, &len, c->ep, (void *)ulen, 4) < 0)
		return -E_FAULT;
	return 0;
}

static void unnamed(struct usock *u)
{
	memset(u->addr, 0, sizeof(u->addr));
	u->addr[0] = (uint8_t)AF_UNIX_;
	u->addrlen = 2;
}

/* Linux's autobind: an abstract name of five hex digits. */
static int64_t autobind(struct usock *u)
{
	static VFS_KEPT uint32_t next;
	uint8_t a[UN_ADDR] = { (uint8_t)AF_UNIX_ };
	for (int tries = 0; tries < 0x100000; tries++) {
		ksnprintf((char *)a + 3, 6, "%05x", next++ & 0xfffff);
		if (!find_abstract(a, 8)) {
			memcpy(u->addr, a, sizeof(a));
			u->addrlen = 8;
			return 0;
		}
	}
	return -E_ADDRINUSE;
}

static int64_t bind_to(struct client *c, struct usock *u, uint64_t uaddr, uint64_t ulen)
{
	uint8_t a[UN_ABUF];
	uint32_t len;
	int64_t r = get_addr(c, uaddr, ulen, a, &len);
	if (r)
		return r;
	if (u->addrlen > 2)
		return -E_INVAL; /* bound already */
	if (len == 2)
		return autobind(u);
	if (abstract(a, len)) {
		if (find_abstract(a, len))
			return -E_ADDRINUSE;
	} else {
		struct rnode *n, *parent;
		const char *last;
		r = vfs_resolve_at(c, AT_FDCWD_, (const char *)a + 2, 0, &n, &parent, &last);
		if (r == 0)
			return -E_ADDRINUSE;
		if (r != -E_NOENT || !parent)
			return r;
		r = ramfs_create(parent, last, strlen(last), S_IFSOCK_ | (0777 & ~c->umask), &n);
		if (r)
			return r;
		n->opens++; /* the node lives while we are bound, unlinked or not */
		n->priv = u;
		u->bound = n;
	}
	memcpy(u->addr, a, UN_ADDR);
	u->addrlen = len;
	return 0;
}

/* The socket an address names: a bound one, or an error (ECONNREFUSED where nobody is). */
static int64_t lookup(struct client *c, const uint8_t *a, uint32_t len, struct usock **out)
{
	if (len == 2)
		return -E_INVAL;
	if (abstract(a, len)) {
		*out = find_abstract(a, len);
		return *out ? 0 : -E_CONNREFUSED;
	}
	struct rnode *n;
	int64_t r = vfs_resolve_at(c, AT_FDCWD_, (const char *)a + 2, RAMFS_FOLLOW, &n, NULL, NULL);
	if (r)
		return r;
	if (vfs_kind(n) != S_IFSOCK_ || !n->priv)
		return -E_CONNREFUSED;
	*out = n->priv;
	return 0;
}

/* ---- sockets ---- */

struct usock *unix_new(int type)
{
	struct usock *u = ax_calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	u->type = type;
	unnamed(u);
	u->next_all = all;
	all = u;
	return u;
}

bool unix_type_ok(int type) { return type == SOCK_STREAM || type == SOCK_DGRAM || type == SOCK_SEQPACKET; }

int unix_sock_type(const struct usock *u) { return u->type; }

void unix_attach(struct usock *u, struct rnode *node)
{
	u->node = node;
}

static void free_queue(struct usock *u)
{
	while (u->head) {
		struct umsg *m = u->head;
		u->head = m->next;
		ax_free(m);
	}
	u->tail = NULL;
	u->qbytes = u->qmsgs = 0;
}

static void unlink_all(struct usock *u)
{
	for (struct usock **p = &all; *p; p = &(*p)->next_all)
		if (*p == u) {
			*p = u->next_all;
			return;
		}
}

/* Our end goes: the peer reads to the end of what we sent, then end of file (ECONNRESET
 * when we left its data unread, as Linux). */
static void hang_up(struct usock *u)
{
	struct usock *p = u->peer;
	if (!p || u->type == SOCK_DGRAM)
		return;
	p->peer = NULL;
	p->peer_shut = true;
	touch(p);
	u->peer = NULL;
}

static void destroy(struct usock *u)
{
	hang_up(u);
	if (u->type == SOCK_DGRAM) /* sockets connected to us send nowhere now */
		for (struct usock *o = all; o; o = o->next_all)
			if (o->peer == u) {
				o->peer = NULL;
				touch(o);
			}
	for (int i = 0; i < u->nbacklog; i++) { /* connections never accepted: reset */
		u->backlog[i]->listener = NULL;
		destroy(u->backlog[i]);
	}
	ax_free(u->backlog);
	if (u->listener) { /* an embryo whose listener goes first: out of its backlog */
		struct usock *l = u->listener;
		for (int i = 0; i < l->nbacklog; i++)
			if (l->backlog[i] == u) {
				memmove(l->backlog + i, l->backlog + i + 1, (size_t)(l->nbacklog - i - 1) * sizeof(*l->backlog));
				l->nbacklog--;
				break;
			}
	}
	if (u->bound) {
		u->bound->priv = NULL;
		ramfs_release(u->bound);
	}
	free_queue(u);
	unlink_all(u);
	ax_free(u);
}

void unix_closed(struct usock *u)
{
	if (u)
		destroy(u);
}

/* ---- the data ---- */

/* The caller's buffers: an iovec array or one buffer. */
struct uio {
	uint64_t iov, cnt;  /* iov == 0: one buffer at base, len */
	uint64_t base, len;
	uint64_t total;
};

static int64_t uio_load(struct client *c, struct uio *io)
{
	if (!io->iov) {
		io->total = io->len;
		return 0;
	}
	if (io->cnt > UN_IOV_MAX)
		return -E_INVAL;
	io->total = 0;
	for (uint64_t i = 0; i < io->cnt; i++) {
		uint64_t v[2];
		if (ax_vcopy(c->ep, (const void *)(io->iov + i * 16), EP_NONE, v, sizeof(v)) < 0)
			return -E_FAULT;
		if ((int64_t)v[1] < 0)
			return -E_INVAL;
		io->total += v[1];
	}
	return 0;
}

/* Copies n bytes between buf and the caller's buffers at offset off: 0 or -EFAULT. */
static int64_t uio_copy(struct client *c, const struct uio *io, uint64_t off, uint8_t *buf, uint64_t n, bool in)
{
	uint64_t at = 0;
	for (uint64_t i = 0; n && i < (io->iov ? io->cnt : 1); i++) {
		uint64_t v[2] = { io->base, io->len };
		if (io->iov && ax_vcopy(c->ep, (const void *)(io->iov + i * 16), EP_NONE, v, sizeof(v)) < 0)
			return -E_FAULT;
		if (off >= at + v[1]) {
			at += v[1];
			continue;
		}
		uint64_t skip = off > at ? off - at : 0, k = v[1] - skip < n ? v[1] - skip : n;
		int64_t r = in ? ax_vcopy(c->ep, (const void *)(v[0] + skip), EP_NONE, buf, k)
			       : ax_vcopy(EP_NONE, buf, c->ep, (void *)(v[0] + skip), k);
		if (r < 0)
			return -E_FAULT;
		buf += k, n -= k, off += k;
		at += v[1];
	}
	return 0;
}

static uint32_t room(const struct usock *u)
{
	if (u->type != SOCK_STREAM && u->qmsgs >= UN_DGRAM_QLEN)
		return 0;
	return u->qbytes < UN_RCVBUF ? UN_RCVBUF - u->qbytes : 0;
}

static int64_t wait_or(uint64_t flags, const struct ofile *f)
{
	return (flags & MSG_DONTWAIT) || (f->flags & O_NONBLOCK_) ? -E_AGAIN : VFS_BLOCK;
}

/* A send: to the peer, or (datagrams) to the address given. */
static int64_t send_to(struct client *c, struct ofile *f, struct usock *u, struct uio *io, uint64_t flags,
		       uint64_t uaddr, uint64_t ulen)
{
	int64_t r = uio_load(c, io);
	if (r)
		return r;
	struct usock *to = u->peer;
	if (u->type == SOCK_DGRAM && uaddr) {
		uint8_t a[UN_ABUF];
		uint32_t len;
		if ((r = get_addr(c, uaddr, ulen, a, &len)) || (r = lookup(c, a, len, &to)))
			return r;
		if (to->type != SOCK_DGRAM)
			return -E_PROTOTYPE;
	} else if (u->type != SOCK_DGRAM && uaddr && !u->connected) {
		return -E_OPNOTSUPP; /* Linux: sendto with an address on an unconnected stream */
	}
	if (u->shut_wr)
		return -E_PIPE;
	if (!to)
		return u->type == SOCK_DGRAM ? (u->connected ? -E_CONNREFUSED : -E_DESTADDRREQ)
		       : u->connected ? -E_PIPE : -E_NOTCONN;
	if (to->shut_rd && u->type != SOCK_DGRAM)
		return -E_PIPE;
	uint64_t n = io->total;
	if (u->type != SOCK_STREAM && n > UN_RCVBUF)
		return -E_MSGSIZE;
	uint32_t space = room(to);
	if (u->type == SOCK_STREAM ? !space && n : space < n || !space)
		return wait_or(flags, f);
	if (u->type == SOCK_STREAM && n > space)
		n = space; /* a short write: the rest when the reader has made room */
	struct umsg *m = ax_malloc(sizeof(*m) + n);
	if (!m)
		return -E_NOMEM;
	m->next = NULL, m->len = (uint32_t)n, m->off = 0;
	memcpy(m->from, u->addr, sizeof(m->from));
	m->fromlen = u->addrlen;
	if (uio_copy(c, io, 0, m->data, n, true) < 0) {
		ax_free(m);
		return -E_FAULT;
	}
	if (!n && u->type == SOCK_STREAM) {
		ax_free(m); /* nothing to queue on a stream */
		return 0;
	}
	if (to->tail)
		to->tail->next = m;
	else
		to->head = m;
	to->tail = m;
	to->qbytes += (uint32_t)n;
	to->qmsgs++;
	touch(to);
	return (int64_t)n;
}

static bool eof(const struct usock *u) { return u->shut_rd || (u->type != SOCK_DGRAM && u->peer_shut); }

/* A receive; *mflags gets MSG_TRUNC when a message was cut. from (UN_ADDR bytes) and *fromlen: the
 * sender's address. */
static int64_t recv_from(struct client *c, struct ofile *f, struct usock *u, struct uio *io, uint64_t flags,
			 uint8_t *from, uint32_t *fromlen, uint32_t *mflags)
{
	int64_t r = uio_load(c, io);
	if (r)
		return r;
	*fromlen = 0;
	if (u->type != SOCK_DGRAM && !u->connected && !u->peer)
		return -E_NOTCONN;
	if (!u->head)
		return eof(u) ? 0 : wait_or(flags, f);
	if (u->type == SOCK_STREAM) {
		if ((flags & MSG_WAITALL) && !(flags & MSG_PEEK) && u->qbytes < io->total && !eof(u) &&
		    !(flags & MSG_DONTWAIT) && !(f->flags & O_NONBLOCK_))
			return VFS_BLOCK; /* all or nothing: nothing read until it is all there */
		uint64_t done = 0;
		struct umsg *m = u->head;
		while (m && done < io->total) {
			uint64_t k = m->len - m->off < io->total - done ? m->len - m->off : io->total - done;
			if (uio_copy(c, io, done, m->data + m->off, k, false) < 0)
				return done ? (int64_t)done : -E_FAULT;
			done += k;
			if (flags & MSG_PEEK) {
				m = m->next;
				continue;
			}
			m->off += (uint32_t)k;
			u->qbytes -= (uint32_t)k;
			if (m->off == m->len) {
				u->head = m->next;
				if (!u->head)
					u->tail = NULL;
				u->qmsgs--;
				ax_free(m);
				m = u->head;
			}
		}
		if (!(flags & MSG_PEEK))
			touch(u->peer); /* room for its writes */
		return (int64_t)done;
	}
	struct umsg *m = u->head;
	uint64_t k = m->len < io->total ? m->len : io->total;
	if (uio_copy(c, io, 0, m->data, k, false) < 0)
		return -E_FAULT;
	if (m->len > k)
		*mflags |= MSG_TRUNC;
	memcpy(from, m->from, UN_ADDR);
	*fromlen = m->fromlen;
	uint64_t len = m->len;
	if (!(flags & MSG_PEEK)) {
		u->head = m->next;
		if (!u->head)
			u->tail = NULL;
		u->qbytes -= m->len;
		u->qmsgs--;
		ax_free(m);
		touch(u->peer);
	}
	return (int64_t)((flags & MSG_TRUNC) ? len : k);
}

int64_t unix_transfer(struct client *c, struct ofile *f, struct usock *u, uint64_t ubuf, uint64_t len, bool write)
{
	struct uio io = { .base = ubuf, .len = len };
	if (write)
		return send_to(c, f, u, &io, 0, 0, 0);
	uint8_t from[UN_ADDR];
	uint32_t fromlen, mflags = 0;
	return recv_from(c, f, u, &io, 0, from, &fromlen, &mflags);
}

int64_t unix_vector(struct client *c, struct ofile *f, struct usock *u, uint64_t iov, uint64_t cnt, bool write)
{
	struct uio io = { .iov = iov, .cnt = cnt };
	if (write)
		return send_to(c, f, u, &io, 0, 0, 0);
	uint8_t from[UN_ADDR];
	uint32_t fromlen, mflags = 0;
	return recv_from(c, f, u, &io, 0, from, &fromlen, &mflags);
}

/* struct msghdr: name, namelen, iov, iovlen, control, controllen, flags. */
struct lx_msghdr {
	uint64_t name;
	uint32_t namelen, pad0;
	uint64_t iov, iovlen, control, controllen;
	int32_t flags, pad1;
};

static int64_t sendmsg_call(struct client *c, struct ofile *f, struct usock *u, uint64_t umsg, uint64_t flags)
{
	struct lx_msghdr h;
	if (ax_vcopy(c->ep, (const void *)umsg, EP_NONE, &h, sizeof(h)) < 0)
		return -E_FAULT;
	if (h.controllen)
		return -E_OPNOTSUPP; /* SCM_RIGHTS and SCM_CREDENTIALS: not yet */
	struct uio io = { .iov = h.iov, .cnt = h.iovlen };
	return send_to(c, f, u, &io, flags, h.name, h.name ? h.namelen : 0);
}

static int64_t recvmsg_call(struct client *c, struct ofile *f, struct usock *u, uint64_t umsg, uint64_t flags)
{
	struct lx_msghdr h;
	if (ax_vcopy(c->ep, (const void *)umsg, EP_NONE, &h, sizeof(h)) < 0)
		return -E_FAULT;
	struct uio io = { .iov = h.iov, .cnt = h.iovlen };
	uint8_t from[UN_ADDR];
	uint32_t fromlen = 0, mflags = 0;
	int64_t r = recv_from(c, f, u, &io, flags, from, &fromlen, &mflags);
	if (r < 0 || r == VFS_BLOCK)
		return r;
	if (u->type != SOCK_DGRAM) { /* a connection's sender is its peer */
		fromlen = 0;
	}
	uint32_t nl = h.name && fromlen ? (fromlen < h.namelen ? fromlen : h.namelen) : 0;
	if (nl && ax_vcopy(EP_NONE, from, c->ep, (void *)h.name, nl) < 0)
		return -E_FAULT;
	h.namelen = h.name ? fromlen : 0;
	h.controllen = 0;
	h.flags = (int32_t)mflags;
	if (ax_vcopy(EP_NONE, &h.namelen, c->ep, (void *)(umsg + 8), 4) < 0 ||
	    ax_vcopy(EP_NONE, &h.controllen, c->ep, (void *)(umsg + 40), 8) < 0 ||
	    ax_vcopy(EP_NONE, &h.flags, c->ep, (void *)(umsg + 48), 4) < 0)
		return -E_FAULT;
	return r;
}

/* ---- connections ---- */

static int64_t connect_to(struct client *c, struct ofile *f, struct usock *u, uint64_t uaddr, uint64_t ulen)
{
	uint8_t a[UN_ABUF];
	uint32_t len;
	int64_t r = get_addr(c, uaddr, ulen, a, &len);
	if (r)
		return r;
	struct usock *l;
	if (u->type == SOCK_DGRAM) {
		if (len == 2) { /* AF_UNSPEC-like: dissolve the association */
			u->peer = NULL, u->connected = false;
			return 0;
		}
		if ((r = lookup(c, a, len, &l)))
			return r;
		if (l->type != SOCK_DGRAM)
			return -E_PROTOTYPE;
		u->peer = l, u->connected = true;
		return 0;
	}
	if (u->listening)
		return -E_INVAL;
	if (u->connected)
		return -E_ISCONN;
	if ((r = lookup(c, a, len, &l)))
		return r;
	if (l->type != u->type)
		return -E_PROTOTYPE;
	if (!l->listening)
		return -E_CONNREFUSED;
	if (l->nbacklog >= l->maxbacklog)
		return (f->flags & O_NONBLOCK_) ? -E_AGAIN : VFS_BLOCK;
	struct usock *e = unix_new(u->type);
	if (!e)
		return -E_NOMEM;
	memcpy(e->addr, l->addr, sizeof(e->addr)); /* the accepted socket has the listener's name */
	e->addrlen = l->addrlen;
	e->peer = u, e->connected = true, e->listener = l;
	e->cred_pid = l->cred_pid;
	u->peer = e, u->connected = true;
	u->cred_pid = vfs_client_lxpid(c);
	l->backlog[l->nbacklog++] = e;
	touch(l);
	touch(u);
	return 0;
}

static int64_t listen_on(struct client *c, struct usock *u, uint64_t backlog)
{
	if (u->type == SOCK_DGRAM)
		return -E_OPNOTSUPP;
	if (u->connected)
		return -E_INVAL;
	if (u->addrlen == 2)
		return -E_INVAL; /* Linux: a unix socket listens only where it is bound */
	int want = (int32_t)backlog < 1 ? 1 : (int32_t)backlog > 4096 ? 4096 : (int)backlog;
	if (want < u->nbacklog)
		want = u->nbacklog;
	struct usock **b = ax_malloc((size_t)want * sizeof(*b));
	if (!b)
		return -E_NOMEM;
	if (u->nbacklog)
		memcpy(b, u->backlog, (size_t)u->nbacklog * sizeof(*b));
	ax_free(u->backlog);
	u->backlog = b, u->maxbacklog = want;
	u->listening = true;
	u->cred_pid = vfs_client_lxpid(c);
	touch(u);
	return 0;
}

static int64_t accept_on(struct client *c, struct ofile *f, struct usock *u, uint64_t uaddr, uint64_t ulen,
			 uint64_t flags)
{
	if (!u->listening)
		return -E_INVAL;
	if (flags & ~(uint64_t)(SOCK_NONBLOCK_ | SOCK_CLOEXEC_))
		return -E_INVAL;
	if (!u->nbacklog)
		return (f->flags & O_NONBLOCK_) ? -E_AGAIN : VFS_BLOCK;
	struct usock *e = u->backlog[0];
	int64_t fd = sock_unix_fd(c, e, flags);
	if (fd < 0)
		return fd; /* the connection stays in the backlog */
	memmove(u->backlog, u->backlog + 1, (size_t)(u->nbacklog - 1) * sizeof(*u->backlog));
	u->nbacklog--;
	e->listener = NULL;
	uint8_t none[UN_ADDR] = { (uint8_t)AF_UNIX_ };
	const struct usock *p = e->peer;
	int64_t r = put_addr(c, p ? p->addr : none, p ? p->addrlen : 2, uaddr, ulen);
	if (r) {
		vfs_close_fd(c, (uint64_t)fd);
		return r;
	}
	return fd;
}

int64_t unix_pair(struct client *c, uint64_t type, uint64_t usv)
{
	int base = (int)(type & 0xf);
	if (type & ~(uint64_t)(0xf | SOCK_NONBLOCK_ | SOCK_CLOEXEC_))
		return -E_INVAL;
	if (!unix_type_ok(base))
		return -E_OPNOTSUPP;
	struct usock *a = unix_new(base), *b = a ? unix_new(base) : NULL;
	if (!b) {
		unix_closed(a);
		return -E_NOMEM;
	}
	a->peer = b, b->peer = a;
	a->connected = b->connected = true;
	a->cred_pid = b->cred_pid = vfs_client_lxpid(c);
	int64_t fa = sock_unix_fd(c, a, type & ~(uint64_t)0xf);
	if (fa < 0) {
		unix_closed(a); /* (b's peer is a: both go) */
		unix_closed(b);
		return fa;
	}
	int64_t fb = sock_unix_fd(c, b, type & ~(uint64_t)0xf);
	if (fb < 0) {
		unix_closed(b);
		vfs_close_fd(c, (uint64_t)fa);
		return fb;
	}
	int fds[2] = { (int)fa, (int)fb };
	if (ax_vcopy(EP_NONE, fds, c->ep, (void *)usv, sizeof(fds)) < 0) {
		vfs_close_fd(c, (uint64_t)fa);
		vfs_close_fd(c, (uint64_t)fb);
		return -E_FAULT;
	}
	return 0;
}

static int64_t getopt_un(struct client *c, struct usock *u, int level, int name, uint64_t uval, uint64_t ulen)
{
	if (level != SOL_SOCKET || name != SO_PEERCRED)
		return VFS_NOT_MINE; /* socket.c's generic options */
	struct { int32_t pid, uid, gid; } cred = { 0, -1, -1 };
	if (u->peer || u->connected)
		cred.pid = u->peer ? u->peer->cred_pid : 0, cred.uid = cred.gid = 0;
	else if (u->listening)
		cred.pid = u->cred_pid, cred.uid = cred.gid = 0;
	uint32_t have, len = sizeof(cred);
	if (ax_vcopy(c->ep, (const void *)ulen, EP_NONE, &have, 4) < 0)
		return -E_FAULT;
	if ((int32_t)have < 0)
		return -E_INVAL;
	len = have < len ? have : len;
	if (ax_vcopy(EP_NONE, &cred, c->ep, (void *)uval, len) < 0 || ax_vcopy(EP_NONE, &len, c->ep, (void *)ulen, 4) < 0)
		return -E_FAULT;
	return 0;
}

uint32_t unix_poll(const struct usock *u)
{
	uint32_t bits = 0;
	if (u->listening)
		return u->nbacklog ? POLLIN | POLLRDNORM : 0;
	if (u->head || eof(u))
		bits |= POLLIN | POLLRDNORM;
	if (u->type == SOCK_DGRAM) {
		if (!u->peer || room(u->peer))
			bits |= POLLOUT | POLLWRNORM;
		return bits;
	}
	if (u->peer_shut)
		bits |= POLLRDHUP_;
	if (!u->peer || (u->shut_wr && u->peer_shut))
		bits |= POLLHUP; /* unconnected, or both directions ended */
	if (u->peer && !u->shut_wr && room(u->peer))
		bits |= POLLOUT | POLLWRNORM;
	else if (!u->connected)
		bits |= POLLOUT | POLLWRNORM; /* as Linux says of an unconnected stream */
	return bits;
}

int64_t unix_call(struct client *c, struct vcall *v, struct ofile *f, struct usock *u)
{
	const uint64_t *a = v->a;
	switch (v->nr) {
	case NR_BIND:
		return bind_to(c, u, a[1], a[2]);
	case NR_LISTEN:
		return listen_on(c, u, a[1]);
	case NR_CONNECT:
		return connect_to(c, f, u, a[1], a[2]);
	case NR_ACCEPT:
	case NR_ACCEPT4:
		return accept_on(c, f, u, a[1], a[2], v->nr == NR_ACCEPT4 ? a[3] : 0);
	case NR_SENDTO: {
		struct uio io = { .base = a[1], .len = a[2] };
		return send_to(c, f, u, &io, a[3], a[4], a[5]);
	}
	case NR_RECVFROM: {
		struct uio io = { .base = a[1], .len = a[2] };
		uint8_t from[UN_ADDR];
		uint32_t fromlen = 0, mflags = 0;
		int64_t r = recv_from(c, f, u, &io, a[3], from, &fromlen, &mflags);
		if (r >= 0 && r != VFS_BLOCK && a[4] && u->type == SOCK_DGRAM) {
			int64_t e = put_addr(c, from, fromlen, a[4], a[5]);
			if (e)
				return e;
		}
		return r;
	}
	case NR_SENDMSG:
		return sendmsg_call(c, f, u, a[1], a[2]);
	case NR_RECVMSG:
		return recvmsg_call(c, f, u, a[1], a[2]);
	case NR_SENDMMSG:
	case NR_RECVMMSG:
		return -E_OPNOTSUPP;
	case NR_SHUTDOWN:
		if (a[1] > 2)
			return -E_INVAL;
		if (u->type != SOCK_DGRAM && !u->peer && !u->connected)
			return -E_NOTCONN;
		if (a[1] != 1) /* SHUT_RD, SHUT_RDWR */
			u->shut_rd = true;
		if (a[1] != 0 && !u->shut_wr) {
			u->shut_wr = true;
			if (u->peer && u->type != SOCK_DGRAM) {
				u->peer->peer_shut = true;
				touch(u->peer);
			}
		}
		touch(u);
		return 0;
	case NR_GETSOCKNAME:
		return put_addr(c, u->addr, u->addrlen, a[1], a[2]);
	case NR_GETPEERNAME:
		if (!u->peer)
			return -E_NOTCONN;
		return put_addr(c, u->peer->addr, u->peer->addrlen, a[1], a[2]);
	case NR_GETSOCKOPT:
		return getopt_un(c, u, (int32_t)a[1], (int32_t)a[2], a[3], a[4]);
	}
	return VFS_NOT_MINE;
}
