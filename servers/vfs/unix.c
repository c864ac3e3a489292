/* AF_UNIX sockets (Linux's unix(7)), kept by vfs beside pipes: stream, datagram and
 * seqpacket sockets; socketpair; bind to a path (an S_IFSOCK node in the tree) or to a name
 * in the abstract namespace (a first byte of zero), autobind; listen, connect, accept;
 * read/write, send/recv, sendto/recvfrom, sendmsg/recvmsg with their iovecs, LX_MSG_PEEK,
 * LX_MSG_DONTWAIT, LX_MSG_WAITALL, LX_MSG_TRUNC; shutdown; poll and epoll; getsockname/getpeername;
 * LX_SO_PEERCRED, LX_SO_PASSCRED; passing open files (LX_SCM_RIGHTS) and credentials
 * (SCM_CREDENTIALS). socket.c makes the descriptor (struct vsock, ANON_SOCKET) and hands every
 * call on an AF_UNIX one here.
 *
 * A socket's receive queue holds messages (one per send; a stream reads across them). A
 * connection is made whole at connect: the listener's side is an embryo socket in its
 * backlog, which the client can already write to, and accept gives it a descriptor. A call
 * that must wait answers VFS_BLOCK and is tried again after every call vfs serves (vfs.c),
 * so a call changes nothing before it knows it will not wait. */
#include "vfs.h"
#include "lx_abi.h"
#include "heap.h"
#include "unix.h"

#define UN_PATH 108           /* sun_path */
#define UN_ADDR (2 + UN_PATH) /* struct sockaddr_un */
#define UN_ABUF (UN_ADDR + 1)  /* one read from the caller: a path of 108 bytes still ends in NUL */
#define UN_RCVBUF 212992u     /* bytes a socket's queue takes (Linux's default buffer size) */
#define UN_DGRAM_QLEN 512     /* datagrams a socket's queue takes (Linux's max_dgram_qlen) */
#define UN_IOV_MAX 1024
#define UN_MAX_FDS 253        /* descriptors in one LX_SCM_RIGHTS (Linux's SCM_MAX_FD) */
#define UN_CTL_MAX 20480      /* control bytes a sendmsg may carry (Linux's optmem_max) */
#define SCM_CREDENTIALS 2

/* What travels beside a message's bytes (sendmsg's control data, recvmsg's). */
struct uctl {
	struct ofile *fds[UN_MAX_FDS]; /* LX_SCM_RIGHTS: a reference each */
	uint32_t nfds;
	int32_t pid, uid, gid;         /* the sender's credentials */
};

struct umsg {
	struct umsg *next;
	uint32_t len, off;        /* bytes; read so far (a stream's partial read) */
	uint8_t from[UN_ADDR];    /* the sender's address (datagrams) */
	uint32_t fromlen;
	int32_t pid, uid, gid;    /* the sender's credentials (SCM_CREDENTIALS) */
	uint32_t nfds;
	struct ofile **fds;       /* LX_SCM_RIGHTS: files in flight, a reference each */
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
	int32_t cred_pid;          /* the Linux pid that made the connection (LX_SO_PEERCRED) */
	bool passcred;             /* LX_SO_PASSCRED: every message received comes with SCM_CREDENTIALS */
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
		return -LX_EINVAL;
	memset(a, 0, UN_ABUF);
	if (ax_vcopy(c->ep, (const void *)uaddr, EP_NONE, a, ulen) < 0)
		return -LX_EFAULT;
	if ((a[0] | a[1] << 8) != LX_AF_UNIX)
		return -LX_EINVAL;
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
	return !uaddr || !ulen ? 0 : vfs_put_sized(c, a, len, uaddr, ulen, true);
}

static void unnamed(struct usock *u)
{
	memset(u->addr, 0, sizeof(u->addr));
	u->addr[0] = (uint8_t)LX_AF_UNIX;
	u->addrlen = 2;
}

/* Linux's autobind: an abstract name of five hex digits. */
static int64_t autobind(struct usock *u)
{
	static VFS_KEPT uint32_t next;
	uint8_t a[UN_ADDR] = { (uint8_t)LX_AF_UNIX };
	for (int tries = 0; tries < 0x100000; tries++) {
		ksnprintf((char *)a + 3, 6, "%05x", next++ & 0xfffff);
		if (!find_abstract(a, 8)) {
			memcpy(u->addr, a, sizeof(a));
			u->addrlen = 8;
			return 0;
		}
	}
	return -LX_EADDRINUSE;
}

static int64_t bind_to(struct client *c, struct usock *u, uint64_t uaddr, uint64_t ulen)
{
	uint8_t a[UN_ABUF];
	uint32_t len;
	int64_t r = get_addr(c, uaddr, ulen, a, &len);
	if (r)
		return r;
	if (u->addrlen > 2)
		return -LX_EINVAL; /* bound already */
	if (len == 2)
		return autobind(u);
	if (abstract(a, len)) {
		if (find_abstract(a, len))
			return -LX_EADDRINUSE;
	} else {
		struct rnode *n, *parent;
		const char *last;
		r = vfs_resolve_at(c, LX_AT_FDCWD, (const char *)a + 2, 0, &n, &parent, &last);
		if (r == 0)
			return -LX_EADDRINUSE;
		if (r != -LX_ENOENT || !parent)
			return r;
		if ((r = vfs_permit_entry(c, parent, NULL)) ||
		    (r = ramfs_create(parent, last, strlen(last), LX_S_IFSOCK | (0777 & ~c->umask), &n)))
			return r;
		vfs_own(c, n);
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
		return -LX_EINVAL;
	if (abstract(a, len)) {
		*out = find_abstract(a, len);
		return *out ? 0 : -LX_ECONNREFUSED;
	}
	struct rnode *n;
	int64_t r = vfs_resolve_at(c, LX_AT_FDCWD, (const char *)a + 2, RAMFS_FOLLOW, &n, NULL, NULL);
	if (r)
		return r;
	if (vfs_kind(n) != LX_S_IFSOCK || !n->priv)
		return -LX_ECONNREFUSED;
	if ((r = vfs_permit(c, n, 2, false)))
		return r; /* connecting or sending needs write permission on the socket's file */
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

bool unix_type_ok(int type) { return type == LX_SOCK_STREAM || type == LX_SOCK_DGRAM || type == LX_SOCK_SEQPACKET; }

int unix_sock_type(const struct usock *u) { return u->type; }

void unix_attach(struct usock *u, struct rnode *node)
{
	u->node = node;
}

static void put_fds(struct ofile **fds, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		vfs_put(fds[i]);
}

/* A message goes, and with it the files it carried that nobody received. */
static void msg_free(struct umsg *m)
{
	put_fds(m->fds, m->nfds);
	ax_free(m->fds);
	ax_free(m);
}

static void free_queue(struct usock *u)
{
	while (u->head) {
		struct umsg *m = u->head;
		u->head = m->next;
		msg_free(m);
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
	if (!p || u->type == LX_SOCK_DGRAM)
		return;
	p->peer = NULL;
	p->peer_shut = true;
	touch(p);
	u->peer = NULL;
}

static void destroy(struct usock *u)
{
	hang_up(u);
	if (u->type == LX_SOCK_DGRAM) /* sockets connected to us send nowhere now */
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
		return -LX_EINVAL;
	io->total = 0;
	for (uint64_t i = 0; i < io->cnt; i++) {
		uint64_t v[2];
		if (ax_vcopy(c->ep, (const void *)(io->iov + i * 16), EP_NONE, v, sizeof(v)) < 0)
			return -LX_EFAULT;
		if ((int64_t)v[1] < 0)
			return -LX_EINVAL;
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
			return -LX_EFAULT;
		if (off >= at + v[1]) {
			at += v[1];
			continue;
		}
		uint64_t skip = off > at ? off - at : 0, k = v[1] - skip < n ? v[1] - skip : n;
		int64_t r = in ? ax_vcopy(c->ep, (const void *)(v[0] + skip), EP_NONE, buf, k)
			       : ax_vcopy(EP_NONE, buf, c->ep, (void *)(v[0] + skip), k);
		if (r < 0)
			return -LX_EFAULT;
		buf += k, n -= k, off += k;
		at += v[1];
	}
	return 0;
}

static uint32_t room(const struct usock *u)
{
	if (u->type != LX_SOCK_STREAM && u->qmsgs >= UN_DGRAM_QLEN)
		return 0;
	return u->qbytes < UN_RCVBUF ? UN_RCVBUF - u->qbytes : 0;
}

static int64_t wait_or(uint64_t flags, const struct ofile *f)
{
	return (flags & LX_MSG_DONTWAIT) || (f->flags & LX_O_NONBLOCK) ? -LX_EAGAIN : VFS_BLOCK;
}

/* A send: to the peer, or (datagrams) to the address given; ctl: files and credentials
 * to go with it (NULL: the caller's credentials, no files). */
static int64_t send_to(struct client *c, struct ofile *f, struct usock *u, struct uio *io, uint64_t flags,
		       uint64_t uaddr, uint64_t ulen, const struct uctl *ctl)
{
	int64_t r = uio_load(c, io);
	if (r)
		return r;
	struct usock *to = u->peer;
	if (u->type == LX_SOCK_DGRAM && uaddr) {
		uint8_t a[UN_ABUF];
		uint32_t len;
		if ((r = get_addr(c, uaddr, ulen, a, &len)) || (r = lookup(c, a, len, &to)))
			return r;
		if (to->type != LX_SOCK_DGRAM)
			return -LX_EPROTOTYPE;
	} else if (u->type != LX_SOCK_DGRAM && uaddr && !u->connected) {
		return -LX_EOPNOTSUPP; /* Linux: sendto with an address on an unconnected stream */
	}
	if (u->shut_wr)
		return -LX_EPIPE;
	if (!to)
		return u->type == LX_SOCK_DGRAM ? (u->connected ? -LX_ECONNREFUSED : -LX_EDESTADDRREQ)
		       : u->connected ? -LX_EPIPE : -LX_ENOTCONN;
	if (to->shut_rd && u->type != LX_SOCK_DGRAM)
		return -LX_EPIPE;
	uint64_t n = io->total;
	if (u->type != LX_SOCK_STREAM && n > UN_RCVBUF)
		return -LX_EMSGSIZE;
	uint32_t space = room(to);
	if (u->type == LX_SOCK_STREAM ? !space && n : space < n || !space)
		return wait_or(flags, f);
	if (u->type == LX_SOCK_STREAM && n > space)
		n = space; /* a short write: the rest when the reader has made room */
	if (!n && u->type == LX_SOCK_STREAM)
		return 0; /* nothing to queue on a stream (files need a byte to ride on, as Linux) */
	struct umsg *m = ax_calloc(1, sizeof(*m) + n);
	if (!m)
		return -LX_ENOMEM;
	m->len = (uint32_t)n;
	memcpy(m->from, u->addr, sizeof(m->from));
	m->fromlen = u->addrlen;
	m->pid = ctl ? ctl->pid : vfs_client_lxpid(c);
	m->uid = ctl ? ctl->uid : 0, m->gid = ctl ? ctl->gid : 0;
	if (uio_copy(c, io, 0, m->data, n, true) < 0 ||
	    (ctl && ctl->nfds && !(m->fds = ax_malloc(ctl->nfds * sizeof(*m->fds))))) {
		bool fault = !ctl || !ctl->nfds || m->fds;
		msg_free(m);
		return fault ? -LX_EFAULT : -LX_ENOMEM;
	}
	for (uint32_t i = 0; ctl && i < ctl->nfds; i++) {
		m->fds[i] = ctl->fds[i];
		m->fds[i]->refs++; /* in flight: open until received or the message goes */
	}
	m->nfds = ctl ? ctl->nfds : 0;
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

static bool eof(const struct usock *u) { return u->shut_rd || (u->type != LX_SOCK_DGRAM && u->peer_shut); }

/* What a receive hands back beside the bytes. */
struct urecv {
	uint8_t from[UN_ADDR];
	uint32_t fromlen, mflags; /* the sender's address (datagrams); LX_MSG_TRUNC */
	bool got;                 /* ctl is the first message's */
	struct uctl ctl;          /* its files (ours now: a reference each) and credentials */
};

/* The message's files and credentials move to rv (the first message of a receive only). */
static void take_ctl(struct umsg *m, struct urecv *rv, bool peek)
{
	if (rv->got)
		return;
	rv->got = true;
	rv->ctl.pid = m->pid, rv->ctl.uid = m->uid, rv->ctl.gid = m->gid;
	if (peek || !m->nfds)
		return; /* a peek leaves the files with the message */
	memcpy(rv->ctl.fds, m->fds, m->nfds * sizeof(*m->fds));
	rv->ctl.nfds = m->nfds;
	ax_free(m->fds);
	m->fds = NULL, m->nfds = 0;
}

static void dequeue(struct usock *u, struct umsg *m)
{
	u->head = m->next;
	if (!u->head)
		u->tail = NULL;
	u->qbytes -= m->len - m->off;
	u->qmsgs--;
	msg_free(m);
}

static int64_t recv_from(struct client *c, struct ofile *f, struct usock *u, struct uio *io, uint64_t flags,
			 struct urecv *rv)
{
	int64_t r = uio_load(c, io);
	if (r)
		return r;
	rv->fromlen = rv->mflags = 0, rv->got = false, rv->ctl.nfds = 0;
	if (u->type != LX_SOCK_DGRAM && !u->connected && !u->peer)
		return -LX_ENOTCONN;
	if (!u->head)
		return eof(u) ? 0 : wait_or(flags, f);
	bool peek = flags & LX_MSG_PEEK;
	if (u->type == LX_SOCK_STREAM) {
		if ((flags & LX_MSG_WAITALL) && !peek && u->qbytes < io->total && !eof(u) && !(flags & LX_MSG_DONTWAIT) &&
		    !(f->flags & LX_O_NONBLOCK))
			return VFS_BLOCK; /* all or nothing: nothing read until it is all there */
		uint64_t done = 0;
		struct umsg *m = u->head;
		while (m && done < io->total) {
			if (done && m->nfds)
				break; /* files go with the read that starts at their message */
			uint64_t k = m->len - m->off < io->total - done ? m->len - m->off : io->total - done;
			if (uio_copy(c, io, done, m->data + m->off, k, false) < 0)
				return done ? (int64_t)done : -LX_EFAULT;
			done += k;
			take_ctl(m, rv, peek);
			if (peek) {
				m = m->next;
				continue;
			}
			m->off += (uint32_t)k;
			u->qbytes -= (uint32_t)k;
			if (m->off == m->len) {
				dequeue(u, m);
				m = u->head;
			}
		}
		if (!peek)
			touch(u->peer); /* room for its writes */
		return (int64_t)done;
	}
	struct umsg *m = u->head;
	uint64_t k = m->len < io->total ? m->len : io->total;
	if (uio_copy(c, io, 0, m->data, k, false) < 0)
		return -LX_EFAULT;
	if (m->len > k)
		rv->mflags |= LX_MSG_TRUNC;
	memcpy(rv->from, m->from, UN_ADDR);
	rv->fromlen = m->fromlen;
	uint64_t len = m->len;
	take_ctl(m, rv, peek);
	if (!peek) {
		dequeue(u, m);
		touch(u->peer);
	}
	return (int64_t)((flags & LX_MSG_TRUNC) ? len : k);
}

/* A receive with no room for control data: files that came are closed (as Linux). */
static int64_t recv_plain(struct client *c, struct ofile *f, struct usock *u, struct uio *io, uint64_t flags,
			  struct urecv *rv)
{
	int64_t r = recv_from(c, f, u, io, flags, rv);
	put_fds(rv->ctl.fds, rv->ctl.nfds);
	rv->ctl.nfds = 0;
	return r;
}

/* read/write and readv/writev: a send or receive with no flags, address or control data. */
static int64_t plain_io(struct client *c, struct ofile *f, struct usock *u, struct uio *io, bool write)
{
	if (write)
		return send_to(c, f, u, io, 0, 0, 0, NULL);
	struct urecv rv;
	return recv_plain(c, f, u, io, 0, &rv);
}

int64_t unix_transfer(struct client *c, struct ofile *f, struct usock *u, uint64_t ubuf, uint64_t len, bool write)
{
	struct uio io = { .base = ubuf, .len = len };
	return plain_io(c, f, u, &io, write);
}

int64_t unix_vector(struct client *c, struct ofile *f, struct usock *u, uint64_t iov, uint64_t cnt, bool write)
{
	struct uio io = { .iov = iov, .cnt = cnt };
	return plain_io(c, f, u, &io, write);
}

/* struct msghdr: name, namelen, iov, iovlen, control, controllen, flags. */
struct lx_msghdr {
	uint64_t name;
	uint32_t namelen, pad0;
	uint64_t iov, iovlen, control, controllen;
	int32_t flags, pad1;
};

/* struct cmsghdr: len (header included), level, type; the data 8-aligned after it. */
#define CMSG_HDR 16u
static uint64_t cmsg_align(uint64_t n) { return (n + 7) & ~(uint64_t)7; }

/* sendmsg's control data: LX_SCM_RIGHTS (open descriptors of the caller) and SCM_CREDENTIALS
 * (its own pid; uid and gid anything, as root may). 0, or -EINVAL, -EBADF, -EPERM, -EFAULT. */
static int64_t ctl_load(struct client *c, uint64_t uctl, uint64_t len, struct uctl *ctl)
{
	ctl->nfds = 0;
	ctl->pid = vfs_client_lxpid(c), ctl->uid = ctl->gid = 0;
	if (!len)
		return 0;
	if (len > UN_CTL_MAX || len < CMSG_HDR)
		return -LX_EINVAL;
	uint8_t *b = ax_malloc(len);
	if (!b)
		return -LX_ENOMEM;
	int64_t r = ax_vcopy(c->ep, (const void *)uctl, EP_NONE, b, len) < 0 ? -LX_EFAULT : 0;
	for (uint64_t off = 0; !r && off + CMSG_HDR <= len; off += cmsg_align(*(uint64_t *)(b + off))) {
		uint64_t cl;
		int32_t level, type;
		memcpy(&cl, b + off, 8);
		memcpy(&level, b + off + 8, 4);
		memcpy(&type, b + off + 12, 4);
		if (cl < CMSG_HDR || cl > len - off || level != LX_SOL_SOCKET) {
			r = -LX_EINVAL;
		} else if (type == LX_SCM_RIGHTS) {
			uint64_t n = (cl - CMSG_HDR) / 4;
			if (ctl->nfds + n > UN_MAX_FDS)
				r = -LX_EINVAL;
			for (uint64_t i = 0; !r && i < n; i++) {
				int32_t fd;
				memcpy(&fd, b + off + CMSG_HDR + 4 * i, 4);
				struct ofile *of = fd >= 0 ? vfs_file(c, (uint64_t)fd) : NULL;
				if (!of)
					r = -LX_EBADF;
				else
					ctl->fds[ctl->nfds++] = of;
			}
		} else if (type == SCM_CREDENTIALS && cl == CMSG_HDR + 12) {
			memcpy(&ctl->pid, b + off + CMSG_HDR, 4);
			memcpy(&ctl->uid, b + off + CMSG_HDR + 4, 4);
			memcpy(&ctl->gid, b + off + CMSG_HDR + 8, 4);
			if (ctl->pid != vfs_client_lxpid(c))
				r = -LX_EPERM; /* another process's pid: only with CAP_SYS_ADMIN on Linux */
		} else {
			r = -LX_EINVAL;
		}
	}
	ax_free(b);
	return r;
}

static int64_t sendmsg_call(struct client *c, struct ofile *f, struct usock *u, uint64_t umsg, uint64_t flags)
{
	struct lx_msghdr h;
	if (ax_vcopy(c->ep, (const void *)umsg, EP_NONE, &h, sizeof(h)) < 0)
		return -LX_EFAULT;
	struct uctl *ctl = ax_malloc(sizeof(*ctl));
	if (!ctl)
		return -LX_ENOMEM;
	int64_t r = ctl_load(c, h.control, h.controllen, ctl);
	if (!r) {
		struct uio io = { .iov = h.iov, .cnt = h.iovlen };
		r = send_to(c, f, u, &io, flags, h.name, h.name ? h.namelen : 0, ctl);
	}
	ax_free(ctl);
	return r;
}

/* recvmsg's control data into buf (cap bytes): SCM_CREDENTIALS when LX_SO_PASSCRED is on, then
 * the files as new descriptors, as many as fit (the rest closed, LX_MSG_CTRUNC). The bytes used. */
static uint64_t ctl_store(struct client *c, struct usock *u, struct urecv *rv, uint8_t *buf, uint64_t cap,
			  bool cloexec)
{
	uint64_t used = 0;
	if (u->passcred && rv->got) {
		if (cap >= CMSG_HDR + 12) {
			uint64_t cl = CMSG_HDR + 12;
			int32_t hdr[2] = { LX_SOL_SOCKET, SCM_CREDENTIALS }, cred[3] = { rv->ctl.pid, rv->ctl.uid, rv->ctl.gid };
			memcpy(buf, &cl, 8);
			memcpy(buf + 8, hdr, 8);
			memcpy(buf + CMSG_HDR, cred, 12);
			used = cmsg_align(cl) < cap ? cmsg_align(cl) : cap;
		} else {
			rv->mflags |= LX_MSG_CTRUNC;
		}
	}
	uint32_t k = 0;
	uint64_t room_fds = cap > used + CMSG_HDR ? (cap - used - CMSG_HDR) / 4 : 0;
	for (; k < rv->ctl.nfds && k < room_fds; k++) {
		int64_t fd = vfs_new_fd(c, rv->ctl.fds[k], cloexec);
		if (fd < 0)
			break;
		vfs_put(rv->ctl.fds[k]); /* the message's reference: the descriptor holds one now */
		int32_t v = (int32_t)fd;
		memcpy(buf + used + CMSG_HDR + 4 * k, &v, 4);
	}
	if (k) {
		uint64_t cl = CMSG_HDR + 4 * (uint64_t)k;
		int32_t hdr[2] = { LX_SOL_SOCKET, LX_SCM_RIGHTS };
		memcpy(buf + used, &cl, 8);
		memcpy(buf + used + 8, hdr, 8);
		used += cmsg_align(cl) < cap - used ? cmsg_align(cl) : cap - used;
	}
	if (k < rv->ctl.nfds) {
		rv->mflags |= LX_MSG_CTRUNC;
		put_fds(rv->ctl.fds + k, rv->ctl.nfds - k);
	}
	rv->ctl.nfds = 0;
	return used;
}

static int64_t recvmsg_call(struct client *c, struct ofile *f, struct usock *u, uint64_t umsg, uint64_t flags)
{
	struct lx_msghdr h;
	if (ax_vcopy(c->ep, (const void *)umsg, EP_NONE, &h, sizeof(h)) < 0)
		return -LX_EFAULT;
	uint64_t cap = h.control ? (h.controllen < UN_CTL_MAX ? h.controllen : UN_CTL_MAX) : 0;
	uint8_t *cbuf = cap ? ax_calloc(1, cap) : NULL;
	struct urecv *rv = ax_malloc(sizeof(*rv));
	if ((cap && !cbuf) || !rv) {
		ax_free(cbuf), ax_free(rv);
		return -LX_ENOMEM;
	}
	struct uio io = { .iov = h.iov, .cnt = h.iovlen };
	int64_t r = recv_from(c, f, u, &io, flags, rv);
	if (r >= 0 && r != VFS_BLOCK) {
		uint64_t used = ctl_store(c, u, rv, cbuf, cap, flags & LX_MSG_CMSG_CLOEXEC);
		uint32_t fromlen = u->type == LX_SOCK_DGRAM ? rv->fromlen : 0; /* a connection's sender is its peer */
		uint32_t nl = h.name && fromlen ? (fromlen < h.namelen ? fromlen : h.namelen) : 0;
		h.namelen = h.name ? fromlen : 0;
		h.controllen = used;
		h.flags = (int32_t)rv->mflags;
		if ((nl && ax_vcopy(EP_NONE, rv->from, c->ep, (void *)h.name, nl) < 0) ||
		    (used && ax_vcopy(EP_NONE, cbuf, c->ep, (void *)h.control, used) < 0) ||
		    ax_vcopy(EP_NONE, &h.namelen, c->ep, (void *)(umsg + 8), 4) < 0 ||
		    ax_vcopy(EP_NONE, &h.controllen, c->ep, (void *)(umsg + 40), 8) < 0 ||
		    ax_vcopy(EP_NONE, &h.flags, c->ep, (void *)(umsg + 48), 4) < 0)
			r = -LX_EFAULT;
	}
	put_fds(rv->ctl.fds, rv->ctl.nfds); /* (a failed receive took none) */
	ax_free(cbuf), ax_free(rv);
	return r;
}

/* sendmmsg/recvmmsg: sendmsg/recvmsg over an array of struct mmsghdr (a msghdr and the
 * length moved, 64 bytes each), stopping at the first that would wait or fails once some
 * went (Linux); recvmmsg's LX_MSG_WAITFORONE waits for the first only, its timeout is not used. */
static int64_t mmsg(struct client *c, struct ofile *f, struct usock *u, uint64_t vec, uint64_t vlen, uint64_t flags,
		    bool send)
{
	if (vlen > UN_IOV_MAX)
		vlen = UN_IOV_MAX;
	uint64_t done = 0;
	for (; done < vlen; done++) {
		uint64_t at = vec + done * 64, fl = flags & ~(uint64_t)LX_MSG_WAITFORONE;
		if (done && (flags & LX_MSG_WAITFORONE))
			fl |= LX_MSG_DONTWAIT;
		int64_t r = send ? sendmsg_call(c, f, u, at, fl) : recvmsg_call(c, f, u, at, fl);
		if (r == VFS_BLOCK || r < 0) {
			if (!done)
				return r;
			break; /* (what went is answered; the error comes with the next call, as Linux) */
		}
		uint32_t n = (uint32_t)r;
		if (ax_vcopy(EP_NONE, &n, c->ep, (void *)(at + 56), 4) < 0)
			return done ? (int64_t)done : -LX_EFAULT;
		if (!send && !r && u->type != LX_SOCK_DGRAM) {
			done++;
			break; /* end of file */
		}
	}
	return (int64_t)done;
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
	if (u->type == LX_SOCK_DGRAM) {
		if (len == 2) { /* AF_UNSPEC-like: dissolve the association */
			u->peer = NULL, u->connected = false;
			return 0;
		}
		if ((r = lookup(c, a, len, &l)))
			return r;
		if (l->type != LX_SOCK_DGRAM)
			return -LX_EPROTOTYPE;
		u->peer = l, u->connected = true;
		return 0;
	}
	if (u->listening)
		return -LX_EINVAL;
	if (u->connected)
		return -LX_EISCONN;
	if ((r = lookup(c, a, len, &l)))
		return r;
	if (l->type != u->type)
		return -LX_EPROTOTYPE;
	if (!l->listening)
		return -LX_ECONNREFUSED;
	if (l->nbacklog >= l->maxbacklog)
		return (f->flags & LX_O_NONBLOCK) ? -LX_EAGAIN : VFS_BLOCK;
	struct usock *e = unix_new(u->type);
	if (!e)
		return -LX_ENOMEM;
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
	if (u->type == LX_SOCK_DGRAM)
		return -LX_EOPNOTSUPP;
	if (u->connected)
		return -LX_EINVAL;
	if (u->addrlen == 2)
		return -LX_EINVAL; /* Linux: a unix socket listens only where it is bound */
	int want = (int32_t)backlog < 1 ? 1 : (int32_t)backlog > 4096 ? 4096 : (int)backlog;
	if (want < u->nbacklog)
		want = u->nbacklog;
	struct usock **b = ax_malloc((size_t)want * sizeof(*b));
	if (!b)
		return -LX_ENOMEM;
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
		return -LX_EINVAL;
	if (flags & ~(uint64_t)(LX_SOCK_NONBLOCK | LX_SOCK_CLOEXEC))
		return -LX_EINVAL;
	if (!u->nbacklog)
		return (f->flags & LX_O_NONBLOCK) ? -LX_EAGAIN : VFS_BLOCK;
	struct usock *e = u->backlog[0];
	int64_t fd = sock_unix_fd(c, e, flags);
	if (fd < 0)
		return fd; /* the connection stays in the backlog */
	memmove(u->backlog, u->backlog + 1, (size_t)(u->nbacklog - 1) * sizeof(*u->backlog));
	u->nbacklog--;
	e->listener = NULL;
	uint8_t none[UN_ADDR] = { (uint8_t)LX_AF_UNIX };
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
	if (type & ~(uint64_t)(0xf | LX_SOCK_NONBLOCK | LX_SOCK_CLOEXEC))
		return -LX_EINVAL;
	if (!unix_type_ok(base))
		return -LX_EOPNOTSUPP;
	struct usock *a = unix_new(base), *b = a ? unix_new(base) : NULL;
	if (!b) {
		unix_closed(a);
		return -LX_ENOMEM;
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
		return -LX_EFAULT;
	}
	return 0;
}

static int64_t getopt_un(struct client *c, struct usock *u, int level, int name, uint64_t uval, uint64_t ulen)
{
	struct { int32_t pid, uid, gid; } cred = { 0, -1, -1 };
	int32_t on = u->listening;
	const void *v = &cred;
	uint32_t len = sizeof(cred);
	if (level == LX_SOL_SOCKET && name == LX_SO_ACCEPTCONN) {
		v = &on, len = 4;
	} else if (level == LX_SOL_SOCKET && name == LX_SO_PEERCRED) {
		if (u->peer || u->connected)
			cred.pid = u->peer ? u->peer->cred_pid : 0, cred.uid = cred.gid = 0;
		else if (u->listening)
			cred.pid = u->cred_pid, cred.uid = cred.gid = 0;
	} else {
		return VFS_NOT_MINE; /* socket.c's generic options */
	}
	return vfs_put_sized(c, v, len, uval, ulen, false);
}

uint32_t unix_poll(const struct usock *u)
{
	uint32_t bits = 0;
	if (u->listening)
		return u->nbacklog ? LX_POLLIN | LX_POLLRDNORM : 0;
	if (u->head || eof(u))
		bits |= LX_POLLIN | LX_POLLRDNORM;
	if (u->type == LX_SOCK_DGRAM) {
		if (!u->peer || room(u->peer))
			bits |= LX_POLLOUT | LX_POLLWRNORM;
		return bits;
	}
	if (u->peer_shut)
		bits |= LX_POLLRDHUP;
	if (!u->peer || (u->shut_wr && u->peer_shut))
		bits |= LX_POLLHUP; /* unconnected, or both directions ended */
	if (u->peer && !u->shut_wr && room(u->peer))
		bits |= LX_POLLOUT | LX_POLLWRNORM;
	else if (!u->connected)
		bits |= LX_POLLOUT | LX_POLLWRNORM; /* as Linux says of an unconnected stream */
	return bits;
}

int64_t unix_call(struct client *c, struct vcall *v, struct ofile *f, struct usock *u)
{
	const uint64_t *a = v->a;
	switch (v->nr) {
	case LX_SYS_bind:
		return bind_to(c, u, a[1], a[2]);
	case LX_SYS_listen:
		return listen_on(c, u, a[1]);
	case LX_SYS_connect:
		return connect_to(c, f, u, a[1], a[2]);
	case LX_SYS_accept:
	case LX_SYS_accept4:
		return accept_on(c, f, u, a[1], a[2], v->nr == LX_SYS_accept4 ? a[3] : 0);
	case LX_SYS_sendto: {
		struct uio io = { .base = a[1], .len = a[2] };
		return send_to(c, f, u, &io, a[3], a[4], a[5], NULL);
	}
	case LX_SYS_recvfrom: {
		struct uio io = { .base = a[1], .len = a[2] };
		struct urecv *rv = ax_malloc(sizeof(*rv));
		if (!rv)
			return -LX_ENOMEM;
		int64_t r = recv_plain(c, f, u, &io, a[3], rv);
		if (r >= 0 && r != VFS_BLOCK && a[4] && u->type == LX_SOCK_DGRAM) {
			int64_t e = put_addr(c, rv->from, rv->fromlen, a[4], a[5]);
			if (e)
				r = e;
		}
		ax_free(rv);
		return r;
	}
	case LX_SYS_setsockopt:
		if ((int32_t)a[1] == LX_SOL_SOCKET && (int32_t)a[2] == LX_SO_PASSCRED && a[4] >= 4) {
			int32_t on;
			if (ax_vcopy(c->ep, (const void *)a[3], EP_NONE, &on, 4) < 0)
				return -LX_EFAULT;
			u->passcred = on != 0;
		}
		return VFS_NOT_MINE; /* socket.c keeps every option for getsockopt */
	case LX_SYS_sendmsg:
		return sendmsg_call(c, f, u, a[1], a[2]);
	case LX_SYS_recvmsg:
		return recvmsg_call(c, f, u, a[1], a[2]);
	case LX_SYS_sendmmsg:
	case LX_SYS_recvmmsg:
		return mmsg(c, f, u, a[1], a[2], a[3], v->nr == LX_SYS_sendmmsg);
	case LX_SYS_shutdown:
		if (a[1] > 2)
			return -LX_EINVAL;
		if (u->type != LX_SOCK_DGRAM && !u->peer && !u->connected)
			return -LX_ENOTCONN;
		if (a[1] != 1) /* SHUT_RD, SHUT_RDWR */
			u->shut_rd = true;
		if (a[1] != 0 && !u->shut_wr) {
			u->shut_wr = true;
			if (u->peer && u->type != LX_SOCK_DGRAM) {
				u->peer->peer_shut = true;
				touch(u->peer);
			}
		}
		touch(u);
		return 0;
	case LX_SYS_getsockname:
		return put_addr(c, u->addr, u->addrlen, a[1], a[2]);
	case LX_SYS_getpeername:
		if (!u->peer)
			return -LX_ENOTCONN;
		return put_addr(c, u->peer->addr, u->peer->addrlen, a[1], a[2]);
	case LX_SYS_getsockopt:
		return getopt_un(c, u, (int32_t)a[1], (int32_t)a[2], a[3], a[4]);
	}
	return VFS_NOT_MINE;
}
