/* The Linux file calls vfs serves. The caller's memory is reached with KC_VCOPY only, every
 * length and descriptor is checked, and errors are Linux errno values. */
#include "vfs.h"
#include "lx_abi.h"
#include "sysv.h"
#include "heap.h"
#include "vfs_proto.h"
#include "tty.h"
#include "fview.h"

#define IO_MAX (1u << 20)  /* bytes one call moves at most */
#define IOV_MAX 1024

static char iobuf[65536];

static bool readable(const struct ofile *f) { return (f->flags & LX_O_ACCMODE) != LX_O_WRONLY; }
static bool writable(const struct ofile *f) { return (f->flags & LX_O_ACCMODE) != 0; }
static uint32_t kind(const struct rnode *n) { return n->mode & LX_S_IFMT; }

static struct ofile *file_of(struct client *c, uint64_t fd)
{
	return fd < MAX_FDS ? c->fd[fd] : NULL;
}

static int64_t new_fd(struct client *c, struct ofile *f, uint64_t min, bool cloexec)
{
	for (uint64_t fd = min; fd < MAX_FDS; fd++)
		if (!c->fd[fd]) {
			c->fd[fd] = f;
			c->cloexec[fd] = cloexec;
			f->refs++;
			return (int64_t)fd;
		}
	return -LX_EMFILE;
}

static void drop(struct ofile *f)
{
	if (--f->refs)
		return;
	lock_file_gone(f);
	epoll_file_gone(f);
	if (kind(f->node) == LX_S_IFIFO)
		pipe_end_closed(f);
	else if (kind(f->node) == S_IFANON_ && f->node->dev == ANON_EVENTFD)
		eventfd_closed(f->node);
	else if (kind(f->node) == S_IFANON_ && f->node->dev == ANON_TIMERFD)
		timerfd_closed(f->node);
	else if (kind(f->node) == S_IFANON_ && f->node->dev == ANON_SOCKET)
		sock_closed(f->node);
	else if (kind(f->node) == S_IFANON_)
		epoll_closed(f->node);
	ramfs_release(f->node);
	ax_free(f);
}

void vfs_put(struct ofile *f) { drop(f); }

void vfs_drop(struct ofile *f)
{
	f->refs++; /* not yet in a descriptor: take the reference drop() gives back */
	drop(f);
}

int64_t vfs_anon_fd(struct client *c, uint32_t dev, void *priv, uint32_t flags, bool cloexec, struct rnode **node)
{
	struct rnode *n = priv ? ramfs_anon(S_IFANON_ | 0600) : NULL;
	struct ofile *f = n ? ax_calloc(1, sizeof(*f)) : NULL;
	if (!f) {
		ax_free(priv);
		if (n)
			ramfs_release(n);
		return -LX_ENOMEM;
	}
	n->dev = dev;
	n->priv = priv;
	n->opens = 1;
	if (node)
		*node = n;
	*f = (struct ofile){ n, 0, flags, 0 };
	int64_t fd = vfs_new_fd(c, f, cloexec);
	if (fd < 0)
		vfs_drop(f); /* closes the node, which frees priv through its kind's close */
	return fd;
}

int64_t vfs_new_fd(struct client *c, struct ofile *f, bool cloexec) { return new_fd(c, f, 0, cloexec); }

static int64_t close_fd(struct client *c, uint64_t fd)
{
	struct ofile *f = file_of(c, fd);
	if (!f)
		return -LX_EBADF;
	c->fd[fd] = NULL;
	lock_closed(c, f); /* POSIX: any close of the file drops the process's record locks */
	drop(f);
	return 0;
}

int64_t vfs_close_fd(struct client *c, uint64_t fd) { return close_fd(c, fd); }

void vfs_close_all(struct client *c)
{
	for (uint64_t fd = 0; fd < MAX_FDS; fd++)
		if (c->fd[fd])
			close_fd(c, fd);
}

/* Moves up to len bytes between the file and the caller's buffer at off (or the file's
 * position when pos is NULL). */
static int64_t transfer(struct client *c, struct ofile *f, uint64_t ubuf, uint64_t len, uint64_t *pos, bool write)
{
	struct rnode *n = f->node;
	if (write ? !writable(f) : !readable(f))
		return -LX_EBADF;
	if (len > IO_MAX)
		len = IO_MAX;
	if (kind(n) == LX_S_IFDIR)
		return -LX_EISDIR;
	if (kind(n) == LX_S_IFIFO)
		return pos != &f->off ? -LX_ESPIPE : pipe_transfer(c, f, ubuf, len, write);
	if (kind(n) == LX_S_IFCHR && n->dev >= DEV_FULL)
		return pos != &f->off ? -LX_ESPIPE : dev_transfer(c, n, ubuf, len, write);
	if (kind(n) == S_IFANON_ && n->dev == ANON_SOCKET)
		return pos != &f->off ? -LX_ESPIPE : sock_transfer(c, f, ubuf, len, write);
	if (kind(n) == S_IFANON_ && n->dev == ANON_TIMERFD)
		return pos != &f->off ? -LX_ESPIPE : timerfd_read(c, f, ubuf, len, write);
	if (kind(n) == S_IFANON_) /* an eventfd; an epoll file has no bytes */
		return pos != &f->off ? -LX_ESPIPE : n->dev == ANON_EVENTFD ? eventfd_transfer(c, f, ubuf, len, write) : -LX_EINVAL;
	if (kind(n) == LX_S_IFCHR) {
		if (pos != &f->off)
			return -LX_ESPIPE;
		if (n->dev == DEV_CONSOLE)
			return write ? tty_write(c, f, ubuf, len) : tty_read(c, f, ubuf, len);
		if (!write && n->dev != DEV_ZERO)
			return 0; /* null is empty */
		for (uint64_t done = 0; done < len;) {
			uint64_t k = len - done < sizeof(iobuf) ? len - done : sizeof(iobuf);
			if (!write) {
				memset(iobuf, 0, k);
				if (ax_vcopy(EP_NONE, iobuf, c->ep, (void *)(ubuf + done), k) < 0)
					return done ? (int64_t)done : -LX_EFAULT;
			}
			done += k;
		}
		return (int64_t)len;
	}
	if (write && (f->flags & LX_O_APPEND) && pos == &f->off)
		f->off = n->size;
	uint64_t done = 0;
	while (done < len) {
		uint64_t k = len - done < sizeof(iobuf) ? len - done : sizeof(iobuf);
		int64_t r;
		if (write) {
			if (ax_vcopy(c->ep, (const void *)(ubuf + done), EP_NONE, iobuf, k) < 0)
				return done ? (int64_t)done : -LX_EFAULT;
			r = ramfs_write(n, *pos, iobuf, k);
		} else {
			r = ramfs_read(n, *pos, iobuf, k);
			if (r > 0 && ax_vcopy(EP_NONE, iobuf, c->ep, (void *)(ubuf + done), (uint64_t)r) < 0)
				return done ? (int64_t)done : -LX_EFAULT;
		}
		if (r < 0)
			return done ? (int64_t)done : r;
		*pos += (uint64_t)r;
		done += (uint64_t)r;
		if ((uint64_t)r < k)
			break;
	}
	return (int64_t)done;
}

static int64_t vector(struct client *c, struct ofile *f, uint64_t iov, uint64_t cnt, bool write)
{
	if (cnt > IOV_MAX)
		return -LX_EINVAL;
	if (kind(f->node) == S_IFANON_ && f->node->dev == ANON_SOCKET && (write ? writable(f) : readable(f))) {
		int64_t r = sock_vector(c, f, iov, cnt, write);
		if (r != VFS_NOT_MINE)
			return r;
	}
	int64_t total = 0;
	for (uint64_t i = 0; i < cnt; i++) {
		uint64_t v[2];
		if (ax_vcopy(c->ep, (const void *)(iov + i * 16), EP_NONE, v, sizeof(v)) < 0)
			return total ? total : -LX_EFAULT;
		int64_t r = transfer(c, f, v[0], v[1], &f->off, write);
		if (r < 0)
			return total ? total : r;
		total += r;
		if ((uint64_t)r < v[1])
			break;
	}
	return total;
}

/* getdents64: the position counts entries, "." and ".." first. */
static int64_t getdents(struct client *c, struct ofile *f, uint64_t ubuf, uint64_t count)
{
	struct rnode *d = f->node;
	if (kind(d) != LX_S_IFDIR)
		return -LX_ENOTDIR;
	if (d->ro) /* listing /proc or below: its PID directories (and an fd/ directory) as they are now */
		procfs_sync(!d->magic && !strcmp(d->name, "fd"));
	uint64_t used = 0, index = 0;
	uint8_t rec[8 + 8 + 2 + 1 + RAMFS_NAME_MAX + 1 + 8];
	struct rnode *child = d->child;
	for (;; index++) {
		const char *name;
		const struct rnode *n;
		if (index == 0)
			name = ".", n = d;
		else if (index == 1)
			name = "..", n = d->parent;
		else if (child && child->magic && ramfs_hooks.hidden && ramfs_hooks.hidden(child)) {
			child = child->next; /* a closed descriptor's /proc/self/fd entry */
			index--;
			continue;
		} else if (child)
			name = child->name, n = ramfs_node(child), child = child->next; /* a hard link: its file's */
		else
			break;
		if (index < f->off)
			continue;
		size_t nl = strlen(name), reclen = (8 + 8 + 2 + 1 + nl + 1 + 7) & ~(size_t)7;
		if (used + reclen > count)
			return used ? (int64_t)used : -LX_EINVAL;
		memset(rec, 0, reclen);
		uint64_t ino = n->ino, next = index + 1;
		uint16_t rl = (uint16_t)reclen;
		uint8_t type = kind(n) == LX_S_IFDIR ? 4 : kind(n) == LX_S_IFCHR ? 2 : kind(n) == LX_S_IFLNK ? 10 : kind(n) == LX_S_IFIFO ? 1 : kind(n) == 0140000 ? 12 : kind(n) == 0060000 ? 6 : 8;
		memcpy(rec, &ino, 8);
		memcpy(rec + 8, &next, 8);
		memcpy(rec + 16, &rl, 2);
		rec[18] = type;
		memcpy(rec + 19, name, nl);
		if (ax_vcopy(EP_NONE, rec, c->ep, (void *)(ubuf + used), reclen) < 0)
			return used ? (int64_t)used : -LX_EFAULT;
		used += reclen;
		f->off = index + 1;
	}
	return (int64_t)used;
}

static int64_t fcntl_call(struct client *c, uint64_t fd, uint64_t cmd, uint64_t arg)
{
	struct ofile *f = file_of(c, fd);
	if (!f)
		return -LX_EBADF;
	switch (cmd) {
	case 0: /* F_DUPFD */
	case 1030: /* F_DUPFD_CLOEXEC */
		return arg >= MAX_FDS ? -LX_EINVAL : new_fd(c, f, arg, cmd == 1030);
	case 1: /* F_GETFD */
		return c->cloexec[fd];
	case 2: /* F_SETFD */
		c->cloexec[fd] = arg & 1;
		return 0;
	case 3: /* F_GETFL */
		return f->flags;
	case 4: /* F_SETFL: only LX_O_APPEND and LX_O_NONBLOCK change */
		f->flags = (f->flags & ~(uint32_t)(LX_O_APPEND | 04000)) | ((uint32_t)arg & (LX_O_APPEND | 04000));
		return 0;
	case 1031: /* F_SETPIPE_SZ */
	case 1032: /* F_GETPIPE_SZ */
		return kind(f->node) == LX_S_IFIFO && f->node->priv ? pipe_size(f, arg, cmd == 1031) : -LX_EBADF;
	case LX_F_GETLK:
	case LX_F_SETLK:
	case LX_F_SETLKW:
	case LX_F_OFD_GETLK:
	case LX_F_OFD_SETLK:
	case LX_F_OFD_SETLKW:
		return lock_fcntl(c, f, cmd, arg);
	}
	return -LX_EINVAL;
}

/* fallocate: the RAM file system has no blocks to reserve, so mode 0 makes the file at least
 * off + len long (zeros) and FALLOC_FL_KEEP_SIZE changes nothing; hole punching and the
 * other modes are EOPNOTSUPP, as on a file system without them. */
static int64_t fallocate(struct ofile *f, uint64_t mode, int64_t off, int64_t len)
{
	if (off < 0 || len <= 0)
		return -LX_EINVAL;
	if (!writable(f))
		return -LX_EBADF;
	if (kind(f->node) == LX_S_IFIFO)
		return -LX_ESPIPE;
	if (kind(f->node) == LX_S_IFDIR)
		return -21; /* EISDIR */
	if (kind(f->node) != LX_S_IFREG)
		return -19; /* ENODEV */
	if (mode & ~(uint64_t)1)
		return -95; /* EOPNOTSUPP */
	if ((uint64_t)off > RAMFS_MAX_FILE || (uint64_t)len > RAMFS_MAX_FILE - (uint64_t)off)
		return -LX_EFBIG;
	uint64_t end = (uint64_t)off + (uint64_t)len;
	return (mode & 1) || end <= f->node->size ? 0 : ramfs_truncate(f->node, end);
}

/* The ioctls every kind of file has; VFS_NOT_MINE for the others. */
static int64_t generic_ioctl(struct client *c, uint64_t fd, struct ofile *f, uint64_t req, uint64_t arg)
{
	int32_t on;
	int64_t unread = -1;
	switch (req) {
	case 0x5421: /* LX_FIONBIO: the open file's LX_O_NONBLOCK, as fcntl sets it */
		if (ax_vcopy(c->ep, (const void *)arg, EP_NONE, &on, sizeof(on)) < 0)
			return -LX_EFAULT;
		f->flags = on ? f->flags | LX_O_NONBLOCK : f->flags & ~(uint32_t)LX_O_NONBLOCK;
		return 0;
	case 0x5451: /* FIOCLEX */
	case 0x5450: /* FIONCLEX */
		c->cloexec[fd] = req == 0x5451;
		return 0;
	case 0x541b: /* LX_FIONREAD of pipes and files (the terminal answers for the console) */
		if (kind(f->node) == LX_S_IFIFO)
			unread = (int64_t)pipe_unread(f);
		else if (kind(f->node) == LX_S_IFREG)
			unread = f->off < f->node->size ? (int64_t)(f->node->size - f->off) : 0;
		if (unread < 0)
			return VFS_NOT_MINE;
		on = unread > INT32_MAX ? INT32_MAX : (int32_t)unread;
		return ax_vcopy(EP_NONE, &on, c->ep, (void *)arg, sizeof(on)) < 0 ? -LX_EFAULT : 0;
	}
	return VFS_NOT_MINE;
}

static int64_t dup_to(struct client *c, uint64_t old, uint64_t newfd, uint64_t flags, bool dup3)
{
	struct ofile *f = file_of(c, old);
	if (!f || newfd >= MAX_FDS)
		return -LX_EBADF;
	if (old == newfd)
		return dup3 ? -LX_EINVAL : (int64_t)newfd;
	if (dup3 && (flags & ~(uint64_t)LX_O_CLOEXEC))
		return -LX_EINVAL;
	if (c->fd[newfd])
		close_fd(c, newfd);
	c->fd[newfd] = f;
	c->cloexec[newfd] = flags & LX_O_CLOEXEC;
	f->refs++;
	return (int64_t)newfd;
}

static int64_t call(struct client *c, struct vcall *v);

int64_t vfs_call(struct client *c, struct vcall *v)
{
	int64_t r = call(c, v);
	tty_flush(); /* a call's console output reaches the console in one piece (up to 4 KiB) */
	return r;
}

static int64_t call(struct client *c, struct vcall *v)
{
	const uint32_t nr = v->nr;
	const uint64_t *a = v->a;
	struct ofile *f = file_of(c, a[0]);
	int64_t r;
	switch (nr) {
	case LX_SYS_read:
	case LX_SYS_write:
		return f ? transfer(c, f, a[1], a[2], &f->off, nr == LX_SYS_write) : -LX_EBADF;
	case LX_SYS_pread64:
	case LX_SYS_pwrite64: {
		if (!f)
			return -LX_EBADF;
		if ((int64_t)a[3] < 0)
			return -LX_EINVAL;
		uint64_t pos = a[3];
		return transfer(c, f, a[1], a[2], &pos, nr == LX_SYS_pwrite64);
	}
	case LX_SYS_readv:
	case LX_SYS_writev:
		return f ? vector(c, f, a[1], a[2], nr == LX_SYS_writev) : -LX_EBADF;
	case LX_SYS_sendfile:
		return f ? sock_sendfile(c, f, file_of(c, a[1])) : -LX_EBADF;
	case LX_SYS_close:
		return close_fd(c, a[0]);
	case LX_SYS_lseek: {
		if (!f)
			return -LX_EBADF;
		if (kind(f->node) == LX_S_IFIFO || kind(f->node) == S_IFANON_)
			return -LX_ESPIPE;
		if (kind(f->node) == LX_S_IFCHR)
			return f->node->dev == DEV_CONSOLE ? -LX_ESPIPE : 0;
		int64_t base = a[2] == 0 ? 0 : a[2] == 1 ? (int64_t)f->off : a[2] == 2 ? (int64_t)f->node->size : -1;
		if (base < 0 || (kind(f->node) == LX_S_IFDIR && a[2] != 0))
			return -LX_EINVAL;
		int64_t to = base + (int64_t)a[1];
		if (to < 0 || ((int64_t)a[1] > 0 && to < base))
			return -LX_EINVAL;
		f->off = (uint64_t)to;
		return to;
	}
	case LX_SYS_getdents64:
		return f ? getdents(c, f, a[1], a[2]) : -LX_EBADF;
	case LX_SYS_ftruncate:
		if (!f)
			return -LX_EBADF;
		if ((int64_t)a[1] < 0 || kind(f->node) != LX_S_IFREG || !writable(f))
			return -LX_EINVAL;
		return ramfs_truncate(f->node, a[1]);
	case LX_SYS_fallocate:
		return f ? fallocate(f, a[1], (int64_t)a[2], (int64_t)a[3]) : -LX_EBADF;
	case LX_SYS_ioctl:
		if (!f)
			return -LX_EBADF;
		if ((r = generic_ioctl(c, a[0], f, a[1], a[2])) != VFS_NOT_MINE)
			return r;
		if (kind(f->node) == LX_S_IFCHR && f->node->dev == DEV_CONSOLE)
			return tty_ioctl(c, f, a[1], a[2]);
		return -LX_ENOTTY;
	case LX_SYS_dup:
		return f ? new_fd(c, f, 0, false) : -LX_EBADF;
	case LX_SYS_dup2:
		return dup_to(c, a[0], a[1], 0, false);
	case LX_SYS_dup3:
		return dup_to(c, a[0], a[1], a[2], true);
	case LX_SYS_fcntl:
		return a[1] == AX_F_VIEW ? fview_map(c, v, f) : fcntl_call(c, a[0], a[1], a[2]);
	case LX_SYS_flock:
		return f ? lock_flock(c, f, a[1]) : -LX_EBADF;
	case LX_SYS_pipe:
		return pipe_create(c, a[0], 0);
	case LX_SYS_pipe2:
		return pipe_create(c, a[0], a[1]);
	case LX_SYS_eventfd:
		return eventfd_create(c, a[0], 0);
	case 9: /* mmap: only file mappings come here */
		return file_mmap(c, v);
	case LX_SYS_eventfd2:
		return eventfd_create(c, a[0], a[1]);
	case LX_SYS_timerfd_create:
		return timerfd_create(c, a[0], a[1]);
	case LX_SYS_timerfd_settime:
		return timerfd_settime(c, a[0], a[1], a[2], a[3]);
	case LX_SYS_timerfd_gettime:
		return timerfd_gettime(c, a[0], a[1]);
	}
	/* The calls of the other files, each answering VFS_NOT_MINE for the others'. */
	static int64_t (*const more[])(struct client *c, struct vcall *v) = { path_call, meta_call, poll_call, epoll_call,
										       sock_call, sysv_call };
	for (size_t i = 0; i < sizeof(more) / sizeof(more[0]); i++)
		if ((r = more[i](c, v)) != VFS_NOT_MINE)
			return r;
	return -LX_ENOSYS; /* not one of ours (pm routes only vfs_calls here) */
}
