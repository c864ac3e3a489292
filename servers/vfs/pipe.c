/* Pipes: a ring per pipe (64 KiB, F_SETPIPE_SZ makes it 4 KiB to 1 MiB), a read end and a
 * write end (open files on one node outside the tree). A read of an empty pipe whose write
 * end is open, or a write to a full one, answers VFS_BLOCK: vfs.c keeps the caller waiting
 * (it does not reply) and tries the call again after every call it serves, so the answer
 * comes when the other side has acted. A write of at most PIPE_BUF bytes goes in whole or
 * waits (POSIX's atomic writes: writers sharing a pipe never interleave such writes).
 * pipe2's LX_O_DIRECT makes a packet pipe (Linux's): each write is one packet or, past PIPE_BUF,
 * several; a read takes one packet and drops what did not fit; a pipe holds at most one
 * packet per 4 KiB of its size (Linux's one per pipe buffer). */
#include "vfs.h"
#include "lx_abi.h"
#include "heap.h"

#define PIPE_SIZE 65536u
#define PIPE_MIN 4096u
#define PIPE_MAX (1u << 20) /* Linux's /proc/sys/fs/pipe-max-size */
#define PIPE_BUF 4096u

struct pipe {
	uint8_t *buf;
	uint32_t cap;             /* a power of two */
	uint64_t rd, wr;          /* bytes ever read and written */
	uint32_t readers, writers;
	uint16_t *plen;           /* a packet pipe: the packets' lengths, a ring of PKT_MAX */
	uint32_t phead, ptail;    /* packets ever read and written */
};
#define PKT_MAX (PIPE_MAX / PIPE_BUF)
static uint32_t pkt_slots(const struct pipe *p) { return p->cap / PIPE_BUF; }

/* A pipe with an empty ring of the default size and no ends yet, or NULL. */
static struct pipe *pipe_new(void)
{
	struct pipe *p = ax_calloc(1, sizeof(*p));
	uint8_t *buf = p ? ax_malloc(PIPE_SIZE) : NULL;
	if (!buf) {
		ax_free(p);
		return NULL;
	}
	p->buf = buf, p->cap = PIPE_SIZE;
	return p;
}

/* A pipe and what it held go (no end has it open); NULL: nothing. */
static void pipe_free(struct pipe *p)
{
	if (p)
		ax_free(p->buf), ax_free(p->plen);
	ax_free(p);
}

int64_t pipe_create(struct client *c, uint64_t ufds, uint64_t flags)
{
	if (flags & ~(uint64_t)(LX_O_NONBLOCK | LX_O_CLOEXEC | LX_O_DIRECT))
		return -LX_EINVAL;
	struct rnode *n = ramfs_anon(LX_S_IFIFO | 0600);
	struct pipe *p = pipe_new();
	struct ofile *r = ax_calloc(1, sizeof(*r)), *w = ax_calloc(1, sizeof(*w));
	if (p && (flags & LX_O_DIRECT) && !(p->plen = ax_calloc(PKT_MAX, sizeof(*p->plen))))
		pipe_free(p), p = NULL;
	if (!n || !p || !r || !w) {
		pipe_free(p);
		ax_free(r), ax_free(w);
		if (n)
			ramfs_release(n);
		return -LX_ENOMEM;
	}
	n->priv = p;
	*r = (struct ofile){ n, 0, (uint32_t)(flags & (LX_O_NONBLOCK | LX_O_DIRECT)), 0 };
	*w = (struct ofile){ n, 0, 1 | (uint32_t)(flags & (LX_O_NONBLOCK | LX_O_DIRECT)), 0 };
	n->opens = 2;
	p->readers = p->writers = 1;
	bool cloexec = flags & LX_O_CLOEXEC;
	int64_t fr = vfs_new_fd(c, r, cloexec);
	if (fr < 0) {
		vfs_drop(r);
		vfs_drop(w);
		return fr;
	}
	int64_t fw = vfs_new_fd(c, w, cloexec);
	if (fw < 0) {
		vfs_close_fd(c, (uint64_t)fr);
		vfs_drop(w);
		return fw;
	}
	int fds[2] = { (int)fr, (int)fw };
	if (ax_vcopy(EP_NONE, fds, c->ep, (void *)ufds, sizeof(fds)) < 0) {
		vfs_close_fd(c, (uint64_t)fr);
		vfs_close_fd(c, (uint64_t)fw);
		return -LX_EFAULT;
	}
	return 0;
}

/* An LX_O_RDWR end (opened through /proc/self/fd) counts as both. */
void pipe_end_opened(struct ofile *f)
{
	struct pipe *p = f->node->priv;
	p->readers += (f->flags & 3) != 1;
	p->writers += (f->flags & 3) != 0;
	f->node->events++;
}

void pipe_end_closed(struct ofile *f)
{
	struct pipe *p = f->node->priv;
	p->readers -= (f->flags & 3) != 1;
	p->writers -= (f->flags & 3) != 0;
	f->node->events++;
	if (!p->readers && !p->writers) {
		pipe_free(p);
		f->node->priv = NULL;
	}
}

uint64_t pipe_unread(const struct ofile *f)
{
	const struct pipe *p = f->node->priv;
	return p->wr - p->rd;
}

uint32_t pipe_poll(const struct ofile *f)
{
	const struct pipe *p = f->node->priv;
	uint32_t bits = 0;
	if ((f->flags & 3) != 1) /* a read end */
		bits |= (p->wr != p->rd ? LX_POLLIN | LX_POLLRDNORM : 0) | (p->writers ? 0 : LX_POLLHUP);
	bool slot = !p->plen || p->ptail - p->phead < pkt_slots(p);
	if ((f->flags & 3) != 0) /* a write end */
		bits |= (p->wr - p->rd < p->cap && slot ? LX_POLLOUT | LX_POLLWRNORM : 0) | (p->readers ? 0 : LX_POLLERR);
	return bits;
}

/* Copies n bytes between the caller and the ring at stream position at: n, or less on a
 * fault. */
static uint64_t ring_copy(struct client *c, struct pipe *p, uint64_t at, uint64_t ubuf, uint64_t n, bool in)
{
	uint64_t done = 0;
	while (done < n) {
		uint64_t o = (at + done) % p->cap, k = n - done < p->cap - o ? n - done : p->cap - o;
		if (in ? ax_vcopy(c->ep, (const void *)(ubuf + done), EP_NONE, p->buf + o, k) < 0
		       : ax_vcopy(EP_NONE, p->buf + o, c->ep, (void *)(ubuf + done), k) < 0)
			break;
		done += k;
	}
	return done;
}

/* A packet pipe's read or write (pipe_transfer's checks made). */
static int64_t packet_transfer(struct client *c, struct ofile *f, struct pipe *p, uint64_t ubuf, uint64_t len,
			       bool write, bool nonblock)
{
	if (write) {
		uint64_t room = p->cap - (p->wr - p->rd), slots = pkt_slots(p) - (p->ptail - p->phead);
		uint64_t need = (len + PIPE_BUF - 1) / PIPE_BUF; /* packets for all of it */
		if (!room || !slots || (len <= PIPE_BUF && room < len))
			return nonblock ? -LX_EAGAIN : VFS_BLOCK;
		uint64_t done = 0;
		for (uint64_t i = 0; i < need && i < slots && done < room; i++) {
			uint64_t k = len - done < PIPE_BUF ? len - done : PIPE_BUF;
			if (k > room - done)
				k = room - done;
			if (ring_copy(c, p, p->wr, ubuf + done, k, true) < k)
				break;
			p->wr += k;
			p->plen[p->ptail++ % PKT_MAX] = (uint16_t)k;
			done += k;
		}
		f->node->events++;
		return done ? (int64_t)done : -LX_EFAULT;
	}
	if (p->phead == p->ptail)
		return p->writers ? (nonblock ? -LX_EAGAIN : VFS_BLOCK) : 0;
	uint64_t plen = p->plen[p->phead % PKT_MAX], n = len < plen ? len : plen;
	if (ring_copy(c, p, p->rd, ubuf, n, false) < n)
		return -LX_EFAULT;
	p->rd += plen; /* what did not fit is dropped */
	p->phead++;
	f->node->events++;
	return (int64_t)n;
}

int64_t pipe_transfer(struct client *c, struct ofile *f, uint64_t ubuf, uint64_t len, bool write)
{
	struct pipe *p = f->node->priv;
	bool nonblock = f->flags & LX_O_NONBLOCK;
	if (!len)
		return 0;
	if (p->plen) {
		if (write && !p->readers)
			return -LX_EPIPE;
		return packet_transfer(c, f, p, ubuf, len, write, nonblock);
	}
	if (write) {
		if (!p->readers)
			return -LX_EPIPE; /* (SIGPIPE comes with signals) */
		uint64_t room = p->cap - (p->wr - p->rd);
		if (!room || (len <= PIPE_BUF && room < len)) /* (small writes go in whole) */
			return nonblock ? -LX_EAGAIN : VFS_BLOCK;
		uint64_t n = len < room ? len : room, done = ring_copy(c, p, p->wr, ubuf, n, true);
		p->wr += done;
		f->node->events++;
		return done ? (int64_t)done : -LX_EFAULT;
	}
	uint64_t avail = p->wr - p->rd;
	if (!avail)
		return p->writers ? (nonblock ? -LX_EAGAIN : VFS_BLOCK) : 0; /* 0: end of file */
	uint64_t n = len < avail ? len : avail, done = ring_copy(c, p, p->rd, ubuf, n, false);
	p->rd += done;
	f->node->events++;
	return done ? (int64_t)done : -LX_EFAULT;
}

int64_t pipe_size(struct ofile *f, uint64_t want, bool set)
{
	struct pipe *p = f->node->priv;
	if (!set)
		return p->cap;
	if (want > PIPE_MAX)
		return -LX_EPERM; /* past pipe-max-size */
	uint32_t cap = PIPE_MIN;
	while (cap < want)
		cap <<= 1;
	uint64_t unread = p->wr - p->rd;
	if (unread > cap || (p->plen && p->ptail - p->phead > cap / PIPE_BUF))
		return -LX_EBUSY;
	if (cap == p->cap)
		return cap;
	uint8_t *buf = ax_malloc(cap);
	if (!buf)
		return -LX_ENOMEM;
	for (uint64_t i = 0; i < unread; i++) /* the unread bytes where the new ring has them */
		buf[(p->rd + i) % cap] = p->buf[(p->rd + i) % p->cap];
	ax_free(p->buf);
	p->buf = buf, p->cap = cap;
	f->node->events++;
	return cap;
}

int64_t fifo_prepare(struct rnode *n, uint64_t flags)
{
	if (!n->priv && !(n->priv = pipe_new()))
		return -LX_ENOMEM;
	struct pipe *p = n->priv;
	if ((flags & 3) == 1 && (flags & LX_O_NONBLOCK) && !p->readers) {
		if (!p->writers) { /* nobody has it open: the ring goes again */
			pipe_free(p);
			n->priv = NULL;
		}
		return -LX_ENXIO;
	}
	return 0;
}

bool fifo_partner(const struct ofile *f)
{
	const struct pipe *p = f->node->priv;
	uint32_t acc = f->flags & 3;
	return acc == 2 || (acc == 0 ? p->writers > 0 : p->readers > 0);
}

void fifo_open_cancelled(uint64_t pid, struct vcall *v)
{
	struct client *c = v->fifo_fd ? vfs_client(pid, false) : NULL;
	if (c)
		vfs_close_fd(c, (uint64_t)(v->fifo_fd - 1));
	v->fifo_fd = 0;
}
