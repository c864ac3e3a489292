/* The Linux file calls vfs serves. The caller's memory is reached with KC_VCOPY only, every
 * length and descriptor is checked, and errors are Linux errno values. */
#include "vfs.h"
#include "heap.h"
#include "vfs_proto.h"

#define NR_READ 0
#define NR_WRITE 1
#define NR_OPEN 2
#define NR_CLOSE 3
#define NR_STAT 4
#define NR_FSTAT 5
#define NR_LSTAT 6
#define NR_LSEEK 8
#define NR_IOCTL 16
#define NR_PREAD64 17
#define NR_PWRITE64 18
#define NR_READV 19
#define NR_WRITEV 20
#define NR_ACCESS 21
#define NR_DUP 32
#define NR_DUP2 33
#define NR_FCNTL 72
#define NR_FTRUNCATE 77
#define NR_GETCWD 79
#define NR_CHDIR 80
#define NR_MKDIR 83
#define NR_RMDIR 84
#define NR_UNLINK 87
#define NR_GETDENTS64 217
#define NR_OPENAT 257
#define NR_MKDIRAT 258
#define NR_NEWFSTATAT 262
#define NR_UNLINKAT 263
#define NR_FACCESSAT 269
#define NR_DUP3 292
#define NR_PIPE 22
#define NR_RENAME 82
#define NR_RENAMEAT 264
#define NR_RENAMEAT2 316
#define NR_PIPE2 293




#define O_ACCMODE 3
#define O_WRONLY 1
#define O_RDWR 2
#define O_CREAT 0100
#define O_EXCL 0200
#define O_TRUNC 01000
#define O_APPEND 02000
#define O_DIRECTORY 0200000
#define O_CLOEXEC 02000000
#define AT_FDCWD (-100)
#define AT_REMOVEDIR 0x200
#define AT_EMPTY_PATH 0x1000
#define IO_MAX (1u << 20)  /* bytes one call moves at most */
#define IOV_MAX 1024

static char iobuf[65536];

/* Console output is gathered per call, so one write or writev (up to 4 KiB) reaches the
 * console in one piece, not interleaved with other output. */
static char con_buf[4096];
static struct ax_outbuf con = { con_buf, sizeof(con_buf), 0 };

static bool readable(const struct ofile *f) { return (f->flags & O_ACCMODE) != O_WRONLY; }
static bool writable(const struct ofile *f) { return (f->flags & O_ACCMODE) != 0; }
static uint32_t kind(const struct rnode *n) { return n->mode & S_IFMT_; }

static struct ofile *file_of(struct client *c, uint64_t fd)
{
	return fd < MAX_FDS ? c->fd[fd] : NULL;
}

int64_t vfs_get_path(endpoint_t ep, uint64_t uptr, char *buf)
{
	for (size_t off = 0; off < RAMFS_PATH_MAX; off += 64) {
		if (ax_vcopy(ep, (const void *)(uptr + off), EP_NONE, buf + off, 64) < 0) {
			/* The string may end just before an unmapped page: go byte by byte. */
			for (size_t i = off; i < off + 64; i++) {
				if (ax_vcopy(ep, (const void *)(uptr + i), EP_NONE, buf + i, 1) < 0)
					return -E_FAULT;
				if (!buf[i])
					return 0;
			}
		}
		for (size_t i = off; i < off + 64; i++)
			if (!buf[i])
				return 0;
	}
	return -E_NAMETOOLONG;
}

/* A NUL-terminated path from the caller, into buf (RAMFS_PATH_MAX bytes). */
static int64_t get_path(struct client *c, uint64_t uptr, char *buf) { return vfs_get_path(c->ep, uptr, buf); }

static struct rnode *base_dir(struct client *c, int64_t dirfd, int64_t *err)
{
	if ((int32_t)dirfd == AT_FDCWD)
		return c->cwd;
	struct ofile *f = file_of(c, (uint64_t)dirfd);
	*err = !f ? -E_BADF : kind(f->node) != S_IFDIR_ ? -E_NOTDIR : 0;
	return *err ? NULL : f->node;
}

/* Resolves a path already copied from the caller, relative to dirfd. */
static int64_t resolve_at(struct client *c, int64_t dirfd, const char *path, struct rnode **out,
			  struct rnode **parent, const char **last)
{
	int64_t r = 0;
	struct rnode *dir = base_dir(c, dirfd, &r);
	return dir ? ramfs_resolve(vfs_root, dir, path, out, parent, last) : r;
}

/* Copies the caller's path into buf and resolves it. */
static int64_t lookup(struct client *c, int64_t dirfd, uint64_t upath, struct rnode **out, struct rnode **parent,
		      const char **last, char *buf)
{
	int64_t r = get_path(c, upath, buf);
	return r ? r : resolve_at(c, dirfd, buf, out, parent, last);
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
	return -E_MFILE;
}

static void drop(struct ofile *f)
{
	if (--f->refs)
		return;
	if (kind(f->node) == S_IFIFO_)
		pipe_end_closed(f);
	ramfs_release(f->node);
	ax_free(f);
}

void vfs_drop(struct ofile *f)
{
	f->refs++; /* not yet in a descriptor: take the reference drop() gives back */
	drop(f);
}

int64_t vfs_new_fd(struct client *c, struct ofile *f, bool cloexec) { return new_fd(c, f, 0, cloexec); }

static int64_t close_fd(struct client *c, uint64_t fd)
{
	struct ofile *f = file_of(c, fd);
	if (!f)
		return -E_BADF;
	c->fd[fd] = NULL;
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

static int64_t do_open(struct client *c, int64_t dirfd, uint64_t upath, uint64_t flags, uint64_t mode)
{
	static char path[RAMFS_PATH_MAX];
	struct rnode *n, *parent;
	const char *last;
	int64_t r = lookup(c, dirfd, upath, &n, &parent, &last, path);
	if (r == -E_NOENT && (flags & O_CREAT) && parent) {
		size_t len = 0;
		while (last[len] && last[len] != '/')
			len++;
		if (last[len] == '/')
			return -E_ISDIR; /* "name/" cannot be created as a file */
		r = ramfs_create(parent, last, len, S_IFREG_ | ((uint32_t)mode & 07777), &n);
	} else if (r == 0 && (flags & O_CREAT) && (flags & O_EXCL)) {
		r = -E_EXIST;
	}
	if (r)
		return r;
	if ((flags & O_DIRECTORY) && kind(n) != S_IFDIR_)
		return -E_NOTDIR;
	if (kind(n) == S_IFDIR_ && (flags & O_ACCMODE))
		return -E_ISDIR;
	if ((flags & O_TRUNC) && (flags & O_ACCMODE) && kind(n) == S_IFREG_ && (r = ramfs_truncate(n, 0)))
		return r;
	struct ofile *f = ax_calloc(1, sizeof(*f));
	if (!f)
		return -E_NOMEM;
	*f = (struct ofile){ n, 0, (uint32_t)flags & ~(uint32_t)(O_CREAT | O_EXCL | O_TRUNC | O_CLOEXEC), 0 };
	n->opens++;
	r = new_fd(c, f, 0, flags & O_CLOEXEC);
	if (r < 0) {
		n->opens--;
		ax_free(f);
	}
	return r;
}

/* Moves up to len bytes between the file and the caller's buffer at off (or the file's
 * position when pos is NULL). */
static int64_t transfer(struct client *c, struct ofile *f, uint64_t ubuf, uint64_t len, uint64_t *pos, bool write)
{
	struct rnode *n = f->node;
	if (write ? !writable(f) : !readable(f))
		return -E_BADF;
	if (len > IO_MAX)
		len = IO_MAX;
	if (kind(n) == S_IFDIR_)
		return -E_ISDIR;
	if (kind(n) == S_IFIFO_)
		return pos != &f->off ? -E_SPIPE : pipe_transfer(c, f, ubuf, len, write);
	if (kind(n) == S_IFCHR_) {
		if (pos != &f->off)
			return -E_SPIPE;
		if (!write && n->dev != DEV_ZERO)
			return 0; /* console input is not here yet; null is empty */
		for (uint64_t done = 0; done < len;) {
			uint64_t k = len - done < sizeof(iobuf) ? len - done : sizeof(iobuf);
			if (write && n->dev == DEV_CONSOLE) {
				if (ax_vcopy(c->ep, (const void *)(ubuf + done), EP_NONE, iobuf, k) < 0)
					return done ? (int64_t)done : -E_FAULT;
				ax_out_put(&con, iobuf, k);
			} else if (!write) {
				memset(iobuf, 0, k);
				if (ax_vcopy(EP_NONE, iobuf, c->ep, (void *)(ubuf + done), k) < 0)
					return done ? (int64_t)done : -E_FAULT;
			}
			done += k;
		}
		return (int64_t)len;
	}
	if (write && (f->flags & O_APPEND) && pos == &f->off)
		f->off = n->size;
	uint64_t done = 0;
	while (done < len) {
		uint64_t k = len - done < sizeof(iobuf) ? len - done : sizeof(iobuf);
		int64_t r;
		if (write) {
			if (ax_vcopy(c->ep, (const void *)(ubuf + done), EP_NONE, iobuf, k) < 0)
				return done ? (int64_t)done : -E_FAULT;
			r = ramfs_write(n, *pos, iobuf, k);
		} else {
			r = ramfs_read(n, *pos, iobuf, k);
			if (r > 0 && ax_vcopy(EP_NONE, iobuf, c->ep, (void *)(ubuf + done), (uint64_t)r) < 0)
				return done ? (int64_t)done : -E_FAULT;
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
		return -E_INVAL;
	int64_t total = 0;
	for (uint64_t i = 0; i < cnt; i++) {
		uint64_t v[2];
		if (ax_vcopy(c->ep, (const void *)(iov + i * 16), EP_NONE, v, sizeof(v)) < 0)
			return total ? total : -E_FAULT;
		int64_t r = transfer(c, f, v[0], v[1], &f->off, write);
		if (r < 0)
			return total ? total : r;
		total += r;
		if ((uint64_t)r < v[1])
			break;
	}
	return total;
}

struct lx_stat {
	uint64_t dev, ino, nlink;
	uint32_t mode, uid, gid, pad0;
	uint64_t rdev;
	int64_t size, blksize, blocks;
	int64_t atime[2], mtime[2], ctime[2];
	int64_t reserved[3];
};

static int64_t put_stat(struct client *c, const struct rnode *n, uint64_t ubuf)
{
	struct lx_stat st;
	memset(&st, 0, sizeof(st));
	st.dev = 1;
	st.ino = n->ino;
	st.nlink = kind(n) == S_IFDIR_ ? 2 : 1;
	st.mode = n->mode;
	st.rdev = kind(n) == S_IFCHR_ ? (1u << 8 | n->dev) : 0;
	st.size = (int64_t)n->size;
	st.blksize = 4096;
	st.blocks = (int64_t)((n->size + 511) / 512);
	return ax_vcopy(EP_NONE, &st, c->ep, (void *)ubuf, sizeof(st)) < 0 ? -E_FAULT : 0;
}

static int64_t stat_at(struct client *c, int64_t dirfd, uint64_t upath, uint64_t ubuf, uint64_t flags)
{
	static char path[RAMFS_PATH_MAX];
	struct rnode *n;
	int64_t r = get_path(c, upath, path);
	if (r == 0 && !path[0] && (flags & AT_EMPTY_PATH)) {
		struct ofile *f = (int32_t)dirfd == AT_FDCWD ? NULL : file_of(c, (uint64_t)dirfd);
		return (int32_t)dirfd == AT_FDCWD ? put_stat(c, c->cwd, ubuf) : f ? put_stat(c, f->node, ubuf) : -E_BADF;
	}
	if (r == 0)
		r = resolve_at(c, dirfd, path, &n, NULL, NULL);
	return r ? r : put_stat(c, n, ubuf);
}

/* getdents64: the position counts entries, "." and ".." first. */
static int64_t getdents(struct client *c, struct ofile *f, uint64_t ubuf, uint64_t count)
{
	struct rnode *d = f->node;
	if (kind(d) != S_IFDIR_)
		return -E_NOTDIR;
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
		else if (child)
			name = child->name, n = child, child = child->next;
		else
			break;
		if (index < f->off)
			continue;
		size_t nl = strlen(name), reclen = (8 + 8 + 2 + 1 + nl + 1 + 7) & ~(size_t)7;
		if (used + reclen > count)
			return used ? (int64_t)used : -E_INVAL;
		memset(rec, 0, reclen);
		uint64_t ino = n->ino, next = index + 1;
		uint16_t rl = (uint16_t)reclen;
		uint8_t type = kind(n) == S_IFDIR_ ? 4 : kind(n) == S_IFCHR_ ? 2 : 8;
		memcpy(rec, &ino, 8);
		memcpy(rec + 8, &next, 8);
		memcpy(rec + 16, &rl, 2);
		rec[18] = type;
		memcpy(rec + 19, name, nl);
		if (ax_vcopy(EP_NONE, rec, c->ep, (void *)(ubuf + used), reclen) < 0)
			return used ? (int64_t)used : -E_FAULT;
		used += reclen;
		f->off = index + 1;
	}
	return (int64_t)used;
}

static int64_t make_dir(struct client *c, int64_t dirfd, uint64_t upath, uint64_t mode)
{
	static char path[RAMFS_PATH_MAX];
	struct rnode *n, *parent;
	const char *last;
	int64_t r = lookup(c, dirfd, upath, &n, &parent, &last, path);
	if (r == 0)
		return -E_EXIST;
	if (r != -E_NOENT || !parent)
		return r;
	size_t len = 0;
	while (last[len] && last[len] != '/')
		len++;
	return ramfs_create(parent, last, len, S_IFDIR_ | ((uint32_t)mode & 07777), &n);
}

static int64_t remove_at(struct client *c, int64_t dirfd, uint64_t upath, bool dir)
{
	static char path[RAMFS_PATH_MAX];
	struct rnode *n;
	int64_t r = lookup(c, dirfd, upath, &n, NULL, NULL, path);
	if (r)
		return r;
	if (dir && kind(n) != S_IFDIR_)
		return -E_NOTDIR;
	if (!dir && kind(n) == S_IFDIR_)
		return -E_ISDIR;
	if (n == vfs_root)
		return -16; /* EBUSY */
	return ramfs_remove(n);
}

static int64_t rename_at(struct client *c, int64_t olddir, uint64_t oldp, int64_t newdir, uint64_t newp, uint64_t flags)
{
	static char from[RAMFS_PATH_MAX], to[RAMFS_PATH_MAX];
	if (flags)
		return -E_INVAL; /* RENAME_NOREPLACE and friends: not yet */
	struct rnode *n, *target, *parent;
	const char *last;
	int64_t r = lookup(c, olddir, oldp, &n, NULL, NULL, from);
	if (r)
		return r;
	r = lookup(c, newdir, newp, &target, &parent, &last, to);
	if (r == 0) { /* replacing: the new name's directory and last component */
		parent = target->parent;
		last = target->name;
	} else if (r != -E_NOENT || !parent) {
		return r;
	}
	size_t len = 0;
	while (last[len] && last[len] != '/')
		len++;
	return ramfs_rename(n, parent, last, len);
}

static int64_t getcwd_call(struct client *c, uint64_t ubuf, uint64_t size)
{
	static char path[RAMFS_PATH_MAX];
	size_t pos = sizeof(path) - 1;
	path[pos] = 0;
	for (const struct rnode *n = c->cwd; n != vfs_root; n = n->parent) {
		size_t nl = strlen(n->name);
		if (nl + 1 > pos)
			return -E_NAMETOOLONG;
		pos -= nl;
		memcpy(path + pos, n->name, nl);
		path[--pos] = '/';
	}
	if (pos == sizeof(path) - 1)
		path[--pos] = '/';
	size_t len = sizeof(path) - pos; /* with the NUL */
	if (len > size)
		return -E_RANGE;
	return ax_vcopy(EP_NONE, path + pos, c->ep, (void *)ubuf, len) < 0 ? -E_FAULT : (int64_t)len;
}

static int64_t fcntl_call(struct client *c, uint64_t fd, uint64_t cmd, uint64_t arg)
{
	struct ofile *f = file_of(c, fd);
	if (!f)
		return -E_BADF;
	switch (cmd) {
	case 0: /* F_DUPFD */
	case 1030: /* F_DUPFD_CLOEXEC */
		return arg >= MAX_FDS ? -E_INVAL : new_fd(c, f, arg, cmd == 1030);
	case 1: /* F_GETFD */
		return c->cloexec[fd];
	case 2: /* F_SETFD */
		c->cloexec[fd] = arg & 1;
		return 0;
	case 3: /* F_GETFL */
		return f->flags;
	case 4: /* F_SETFL: only O_APPEND and O_NONBLOCK change */
		f->flags = (f->flags & ~(uint32_t)(O_APPEND | 04000)) | ((uint32_t)arg & (O_APPEND | 04000));
		return 0;
	}
	return -E_INVAL;
}

static int64_t dup_to(struct client *c, uint64_t old, uint64_t newfd, uint64_t flags, bool dup3)
{
	struct ofile *f = file_of(c, old);
	if (!f || newfd >= MAX_FDS)
		return -E_BADF;
	if (old == newfd)
		return dup3 ? -E_INVAL : (int64_t)newfd;
	if (dup3 && (flags & ~(uint64_t)O_CLOEXEC))
		return -E_INVAL;
	if (c->fd[newfd])
		close_fd(c, newfd);
	c->fd[newfd] = f;
	c->cloexec[newfd] = flags & O_CLOEXEC;
	f->refs++;
	return (int64_t)newfd;
}

static int64_t call(struct client *c, struct vcall *v);

int64_t vfs_call(struct client *c, struct vcall *v)
{
	int64_t r = call(c, v);
	ax_out_flush(&con);
	return r;
}

static int64_t call(struct client *c, struct vcall *v)
{
	static char path[RAMFS_PATH_MAX];
	const uint32_t nr = v->nr;
	const uint64_t *a = v->a;
	struct ofile *f = file_of(c, a[0]);
	struct rnode *n;
	int64_t r;
	switch (nr) {
	case NR_READ:
	case NR_WRITE:
		return f ? transfer(c, f, a[1], a[2], &f->off, nr == NR_WRITE) : -E_BADF;
	case NR_PREAD64:
	case NR_PWRITE64: {
		if (!f)
			return -E_BADF;
		if ((int64_t)a[3] < 0)
			return -E_INVAL;
		uint64_t pos = a[3];
		return transfer(c, f, a[1], a[2], &pos, nr == NR_PWRITE64);
	}
	case NR_READV:
	case NR_WRITEV:
		return f ? vector(c, f, a[1], a[2], nr == NR_WRITEV) : -E_BADF;
	case NR_OPEN:
		return do_open(c, AT_FDCWD, a[0], a[1], a[2]);
	case NR_OPENAT:
		return do_open(c, (int64_t)a[0], a[1], a[2], a[3]);
	case NR_CLOSE:
		return close_fd(c, a[0]);
	case NR_LSEEK: {
		if (!f)
			return -E_BADF;
		if (kind(f->node) == S_IFIFO_)
			return -E_SPIPE;
		if (kind(f->node) == S_IFCHR_)
			return f->node->dev == DEV_CONSOLE ? -E_SPIPE : 0;
		int64_t base = a[2] == 0 ? 0 : a[2] == 1 ? (int64_t)f->off : a[2] == 2 ? (int64_t)f->node->size : -1;
		if (base < 0 || (kind(f->node) == S_IFDIR_ && a[2] != 0))
			return -E_INVAL;
		int64_t to = base + (int64_t)a[1];
		if (to < 0 || ((int64_t)a[1] > 0 && to < base))
			return -E_INVAL;
		f->off = (uint64_t)to;
		return to;
	}
	case NR_FSTAT:
		return f ? put_stat(c, f->node, a[1]) : -E_BADF;
	case NR_STAT:
	case NR_LSTAT: /* no symbolic links: the same */
		return stat_at(c, AT_FDCWD, a[0], a[1], 0);
	case NR_NEWFSTATAT:
		return stat_at(c, (int64_t)a[0], a[1], a[2], a[3]);
	case NR_ACCESS:
		return lookup(c, AT_FDCWD, a[0], &n, NULL, NULL, path);
	case NR_FACCESSAT:
		return lookup(c, (int64_t)a[0], a[1], &n, NULL, NULL, path);
	case NR_GETDENTS64:
		return f ? getdents(c, f, a[1], a[2]) : -E_BADF;
	case NR_MKDIR:
		return make_dir(c, AT_FDCWD, a[0], a[1]);
	case NR_MKDIRAT:
		return make_dir(c, (int64_t)a[0], a[1], a[2]);
	case NR_UNLINK:
		return remove_at(c, AT_FDCWD, a[0], false);
	case NR_RMDIR:
		return remove_at(c, AT_FDCWD, a[0], true);
	case NR_UNLINKAT:
		if (a[2] & ~(uint64_t)AT_REMOVEDIR)
			return -E_INVAL;
		return remove_at(c, (int64_t)a[0], a[1], a[2] & AT_REMOVEDIR);
	case NR_GETCWD:
		return getcwd_call(c, a[0], a[1]);
	case NR_CHDIR:
		if ((r = lookup(c, AT_FDCWD, a[0], &n, NULL, NULL, path)))
			return r;
		if (kind(n) != S_IFDIR_)
			return -E_NOTDIR;
		n->opens++; /* a working directory keeps its node alive, even if removed */
		ramfs_release(c->cwd);
		c->cwd = n;
		return 0;
	case NR_FTRUNCATE:
		if (!f)
			return -E_BADF;
		if ((int64_t)a[1] < 0 || kind(f->node) != S_IFREG_ || !writable(f))
			return -E_INVAL;
		return ramfs_truncate(f->node, a[1]);
	case NR_IOCTL:
		return f ? -E_NOTTY : -E_BADF; /* no terminals yet */
	case NR_DUP:
		return f ? new_fd(c, f, 0, false) : -E_BADF;
	case NR_DUP2:
		return dup_to(c, a[0], a[1], 0, false);
	case NR_DUP3:
		return dup_to(c, a[0], a[1], a[2], true);
	case NR_FCNTL:
		return fcntl_call(c, a[0], a[1], a[2]);
	case NR_RENAME:
		return rename_at(c, AT_FDCWD, a[0], AT_FDCWD, a[1], 0);
	case NR_RENAMEAT:
		return rename_at(c, (int64_t)a[0], a[1], (int64_t)a[2], a[3], 0);
	case NR_RENAMEAT2:
		return rename_at(c, (int64_t)a[0], a[1], (int64_t)a[2], a[3], a[4]);
	case NR_PIPE:
		return pipe_create(c, a[0], 0);
	case NR_PIPE2:
		return pipe_create(c, a[0], a[1]);
	}
	return -38; /* ENOSYS: not one of ours (pm routes only vfs_calls here) */
}
