/* The calls that name files by path: open, mkdir, unlink/rmdir, rename, symbolic links,
 * access, truncate, the working directory. Paths are copied from the caller once, resolved
 * relative to a directory descriptor or the working directory (ramfs_resolve follows
 * symbolic links), and every failure is a Linux errno. */
#include "vfs.h"
#include "heap.h"
#include "lxnr.h"

#define E_BUSY 16

static char path[RAMFS_PATH_MAX], path2[RAMFS_PATH_MAX];

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

static struct rnode *base_dir(struct client *c, int64_t dirfd, int64_t *err)
{
	if ((int32_t)dirfd == AT_FDCWD)
		return c->cwd;
	struct ofile *f = vfs_file(c, (uint64_t)dirfd);
	*err = !f ? -E_BADF : vfs_kind(f->node) != S_IFDIR_ ? -E_NOTDIR : 0;
	return *err ? NULL : f->node;
}

int64_t vfs_resolve_at(struct client *c, int64_t dirfd, const char *p, int flags, struct rnode **out,
		       struct rnode **parent, const char **last)
{
	int64_t r = 0;
	struct rnode *dir = base_dir(c, dirfd, &r);
	return dir ? ramfs_resolve(vfs_root, dir, p, flags, out, parent, last) : r;
}

/* Whether a path below /proc names an fd/ directory on its way ("N/fd", "N/fd/3"). */
static bool reaches_fd(const char *p)
{
	for (; *p; p++)
		if (p[0] == '/' && p[1] == 'f' && p[2] == 'd' && (!p[3] || p[3] == '/'))
			return true;
	return false;
}

int64_t vfs_lookup(struct client *c, int64_t dirfd, uint64_t upath, int flags, struct rnode **out,
		   struct rnode **parent, const char **last, char *buf)
{
	int64_t r = vfs_get_path(c->ep, upath, buf);
	if (!r && !strncmp(buf, "/proc/", 6))
		procfs_sync(reaches_fd(buf + 6)); /* /proc/PID names follow the processes */
	return r ? r : vfs_resolve_at(c, dirfd, buf, flags, out, parent, last);
}

const char *vfs_last_name(const char *path)
{
	const char *b = path;
	for (const char *q = path; *q; q++)
		if (*q == '/' && q[1])
			b = q + 1;
	return b;
}

/* The length of the name at last (up to a slash or the end). */
static size_t name_len(const char *last)
{
	size_t len = 0;
	while (last[len] && last[len] != '/')
		len++;
	return len;
}

/* The final component of p is "." or ".." (which rmdir and rename refuse). */
static int dot_last(const char *p)
{
	size_t end = strlen(p);
	while (end > 1 && p[end - 1] == '/')
		end--;
	size_t start = end;
	while (start && p[start - 1] != '/')
		start--;
	if (end - start == 1 && p[start] == '.')
		return 1;
	return end - start == 2 && p[start] == '.' && p[start + 1] == '.' ? 2 : 0;
}

/* A named pipe's open that waits for its other side (fifo_partner) is held with the
 * descriptor made (v->fifo_fd), so the other side's open sees this end and goes on; the
 * retry answers with it once the other side is there. */
static int64_t fifo_wait(struct client *c, struct vcall *v, int64_t fd)
{
	struct ofile *f = fd >= 0 && fd < MAX_FDS ? c->fd[fd] : NULL;
	if (!f)
		return v->fifo_fd = 0, -E_BADF; /* (closed by another thread meanwhile) */
	if (fifo_partner(f))
		return v->fifo_fd = 0, fd;
	v->fifo_fd = fd + 1;
	return VFS_BLOCK;
}

static int64_t do_open(struct client *c, struct vcall *v, int64_t dirfd, uint64_t upath, uint64_t flags, uint64_t mode)
{
	if (v->fifo_fd)
		return fifo_wait(c, v, v->fifo_fd - 1);
	struct rnode *n, *parent;
	const char *last;
	bool excl = (flags & O_CREAT) && (flags & O_EXCL), created = false;
	int follow = (flags & O_NOFOLLOW) || excl ? 0 : RAMFS_FOLLOW;
	int64_t r = vfs_lookup(c, dirfd, upath, follow, &n, &parent, &last, path);
	if (r == -E_NOENT && (flags & O_CREAT) && parent) {
		size_t len = name_len(last);
		if (last[len] == '/')
			return -E_ISDIR; /* "name/" cannot be created as a file */
		if (!(r = vfs_permit_entry(c, parent, NULL)) &&
		    !(r = ramfs_create(parent, last, len, S_IFREG_ | ((uint32_t)mode & 07777 & ~c->umask), &n)))
			vfs_own(c, n);
		created = r == 0;
	} else if (r == 0 && excl) {
		r = -E_EXIST;
	} else if (r == 0 && vfs_kind(n) == S_IFLNK_) {
		r = -E_LOOP; /* O_NOFOLLOW */
	}
	if (r)
		return r;
	if (n->ro && (flags & (O_ACCMODE | O_TRUNC)))
		return -E_ACCES; /* /proc */
	uint32_t want = ((flags & O_ACCMODE) != O_WRONLY ? 4 : 0) | ((flags & O_ACCMODE) || (flags & O_TRUNC) ? 2 : 0);
	if (!created && !n->magic && (r = vfs_permit(c, n, want & 6, false)))
		return r; /* (a file just made is opened as asked, whatever its mode) */
	bool named_fifo = vfs_kind(n) == S_IFIFO_ && n->name[0];
	if (named_fifo && (r = fifo_prepare(n, flags)))
		return r;
	if (vfs_kind(n) == S_IFANON_ || (vfs_kind(n) == S_IFIFO_ && !n->priv) || vfs_kind(n) == 0140000 /* S_IFSOCK */ ||
	    (vfs_kind(n) == S_IFCHR_ && !n->dev) || vfs_kind(n) == 0060000 /* S_IFBLK */)
		return -E_NXIO; /* an eventfd or epoll through /proc/self/fd; a pipe both ends closed; a
				 * unix socket's path (connect, not open) */
	if ((flags & O_DIRECTORY) && vfs_kind(n) != S_IFDIR_)
		return -E_NOTDIR;
	if (vfs_kind(n) == S_IFDIR_ && (flags & O_ACCMODE))
		return -E_ISDIR;
	if ((flags & O_TRUNC) && (flags & O_ACCMODE) && vfs_kind(n) == S_IFREG_ && (r = ramfs_truncate(n, 0)))
		return r;
	struct ofile *f = ax_calloc(1, sizeof(*f));
	if (!f)
		return -E_NOMEM;
	*f = (struct ofile){ n, 0, (uint32_t)flags & ~(uint32_t)(O_CREAT | O_EXCL | O_TRUNC | O_CLOEXEC | O_NOFOLLOW), 0 };
	n->opens++;
	r = vfs_new_fd(c, f, flags & O_CLOEXEC);
	if (r < 0) {
		n->opens--;
		ax_free(f);
		return r;
	}
	if (vfs_kind(n) == S_IFIFO_)
		pipe_end_opened(f);
	if (n->magic)
		procfs_refresh(n);
	if (named_fifo && !(flags & O_NONBLOCK))
		return fifo_wait(c, v, r);
	return r;
}

/* Makes the node upath names, which must not exist yet: type, and mode less the umask;
 * *made the node (may be NULL). */
static int64_t create_node(struct client *c, int64_t dirfd, uint64_t upath, uint32_t type, uint64_t mode,
			   struct rnode **made)
{
	struct rnode *n, *parent;
	const char *last;
	int64_t r = vfs_lookup(c, dirfd, upath, 0, &n, &parent, &last, path);
	if (r == 0)
		return -E_EXIST;
	if (r != -E_NOENT || !parent)
		return r;
	if ((r = vfs_permit_entry(c, parent, NULL)) ||
	    (r = ramfs_create(parent, last, name_len(last), type | ((uint32_t)mode & 07777 & ~c->umask), &n)))
		return r;
	vfs_own(c, n);
	if (made)
		*made = n;
	return 0;
}

static int64_t create_at(struct client *c, int64_t dirfd, uint64_t upath, uint32_t type, uint64_t mode)
{
	return create_node(c, dirfd, upath, type, mode, NULL);
}

/* The device of ours a Linux device number names (0: none, opened as ENXIO). */
static uint32_t device_of(uint64_t rdev)
{
	uint32_t major = (uint32_t)(((rdev >> 8) & 0xfff) | ((rdev >> 32) & ~0xfffu));
	uint32_t minor = (uint32_t)((rdev & 0xff) | ((rdev >> 12) & ~0xffu));
	static const struct { uint32_t major, minor, dev; } known[] = {
		{ 1, 3, DEV_NULL }, { 1, 5, DEV_ZERO }, { 1, 7, DEV_FULL }, { 1, 8, DEV_RANDOM },
		{ 1, 9, DEV_URANDOM }, { 5, 0, DEV_CONSOLE }, { 5, 1, DEV_CONSOLE },
	};
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (known[i].major == major && known[i].minor == minor)
			return known[i].dev;
	return 0;
}

/* mknod: a named pipe or a regular file; device nodes EPERM (the devices are vfs's own). */
/* mknod: a regular file, a named pipe, a socket's name (no socket bound to it: connect
 * ECONNREFUSED) or, for root, a device node: one of vfs's devices when the number is one
 * of theirs (1:3 null ... 5:1 console), else a node that opens as ENXIO (block devices too). */
static int64_t make_node(struct client *c, int64_t dirfd, uint64_t upath, uint64_t mode, uint64_t rdev)
{
	uint32_t type = (uint32_t)mode & S_IFMT_;
	if (!type)
		type = S_IFREG_;
	bool device = type == S_IFCHR_ || type == 0060000 /* S_IFBLK */;
	if (device && c->fsuid)
		return -E_PERM; /* CAP_MKNOD */
	if (type != S_IFREG_ && type != S_IFIFO_ && type != 0140000 /* S_IFSOCK */ && !device)
		return -E_INVAL;
	struct rnode *n = NULL;
	int64_t r = create_node(c, dirfd, upath, type, mode, &n);
	if (!r && device) {
		n->rdev = rdev;
		n->dev = type == S_IFCHR_ ? device_of(rdev) : 0;
	}
	return r;
}

static int64_t make_dir(struct client *c, int64_t dirfd, uint64_t upath, uint64_t mode)
{
	return create_at(c, dirfd, upath, S_IFDIR_, mode);
}

static int64_t remove_at(struct client *c, int64_t dirfd, uint64_t upath, bool dir)
{
	struct rnode *n;
	int64_t r = vfs_lookup(c, dirfd, upath, RAMFS_ENTRY, &n, NULL, NULL, path); /* the name, not its node */
	if (r)
		return r;
	if (dir && vfs_kind(n) != S_IFDIR_)
		return -E_NOTDIR;
	if (!dir && vfs_kind(n) == S_IFDIR_)
		return -E_ISDIR;
	if (dir && dot_last(path))
		return dot_last(path) == 1 ? -E_INVAL : -E_NOTEMPTY;
	if (n == vfs_root)
		return -E_BUSY;
	if ((r = vfs_permit_entry(c, n->parent, n)))
		return r;
	return ramfs_remove(n);
}

static int64_t rename_at(struct client *c, int64_t olddir, uint64_t oldp, int64_t newdir, uint64_t newp, uint64_t flags)
{
	if (flags)
		return -E_INVAL; /* RENAME_NOREPLACE and friends: not yet */
	struct rnode *n, *target, *parent;
	const char *last;
	int64_t r = vfs_lookup(c, olddir, oldp, RAMFS_ENTRY, &n, NULL, NULL, path); /* names, not their nodes */
	if (r)
		return r;
	r = vfs_lookup(c, newdir, newp, RAMFS_ENTRY, &target, &parent, &last, path2);
	struct rnode *replaced = r == 0 ? target : NULL;
	if (r == 0) { /* replacing: the new name's directory and last component */
		parent = target->parent;
		last = target->name;
	} else if (r != -E_NOENT || !parent) {
		return r;
	}
	if (dot_last(path) || dot_last(path2))
		return -E_BUSY;
	if ((r = vfs_permit_entry(c, n->parent, n)) || (r = vfs_permit_entry(c, parent, replaced)))
		return r;
	return ramfs_rename(n, parent, last, name_len(last));
}

static int64_t symlink_at(struct client *c, uint64_t utarget, int64_t dirfd, uint64_t upath)
{
	struct rnode *n, *parent;
	const char *last;
	int64_t r = vfs_get_path(c->ep, utarget, path);
	if (r)
		return r;
	r = vfs_lookup(c, dirfd, upath, 0, &n, &parent, &last, path2);
	if (r == 0)
		return -E_EXIST;
	if (r != -E_NOENT || !parent)
		return r;
	size_t len = name_len(last);
	if (last[len] == '/')
		return -E_NOENT;
	if ((r = vfs_permit_entry(c, parent, NULL)) || (r = ramfs_symlink(parent, last, len, path, strlen(path), &n)))
		return r;
	vfs_own(c, n);
	return 0;
}

static int64_t readlink_at(struct client *c, int64_t dirfd, uint64_t upath, uint64_t ubuf, uint64_t size)
{
	struct rnode *n;
	if ((int32_t)size <= 0)
		return -E_INVAL;
	int64_t r = vfs_lookup(c, dirfd, upath, 0, &n, NULL, NULL, path);
	if (r)
		return r;
	if (vfs_kind(n) != S_IFLNK_)
		return -E_INVAL;
	const char *text = (const char *)n->data;
	int64_t tlen = (int64_t)n->size;
	if (n->magic && (tlen = procfs_readlink(c, n, path2, sizeof(path2))) < 0)
		return tlen;
	if (n->magic)
		text = path2;
	uint64_t len = (uint64_t)tlen < size ? (uint64_t)tlen : size;
	return ax_vcopy(EP_NONE, text, c->ep, (void *)ubuf, len) < 0 ? -E_FAULT : (int64_t)len;
}

/* Hard links (ramfs_link): a further name for a file; directories EPERM, as Linux. */
static int64_t link_at(struct client *c, int64_t olddir, uint64_t oldp, int64_t newdir, uint64_t newp, uint64_t flags)
{
	struct rnode *n, *t, *parent;
	const char *last;
	if (flags & ~(uint64_t)(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH))
		return -E_INVAL;
	int64_t r = vfs_lookup(c, olddir, oldp, flags & AT_SYMLINK_FOLLOW ? RAMFS_FOLLOW : 0, &n, NULL, NULL, path);
	if (r)
		return r;
	r = vfs_lookup(c, newdir, newp, 0, &t, &parent, &last, path2);
	if (r == 0)
		return -E_EXIST;
	if (r != -E_NOENT || !parent)
		return r;
	size_t len = name_len(last);
	if (last[len] == '/')
		return -E_NOENT; /* "name/" cannot be a file's */
	if (vfs_kind(n) == S_IFDIR_ || vfs_kind(n) == S_IFANON_)
		return -E_PERM;
	if ((r = vfs_permit_entry(c, parent, NULL)))
		return r;
	return ramfs_link(parent, last, len, n);
}

static int64_t access_at(struct client *c, int64_t dirfd, uint64_t upath, uint64_t mode, uint64_t flags)
{
	struct rnode *n;
	if (mode & ~(uint64_t)7 || flags & ~(uint64_t)(AT_SYMLINK_NOFOLLOW | AT_EACCESS | AT_EMPTY_PATH))
		return -E_INVAL;
	int64_t r = vfs_lookup(c, dirfd, upath, flags & AT_SYMLINK_NOFOLLOW ? 0 : RAMFS_FOLLOW, &n, NULL, NULL, path);
	if (r)
		return r;
	/* The real ids (AT_EACCESS: the effective ones), as set-user-ID programs ask. */
	if (mode && (r = vfs_permit(c, n, (uint32_t)mode, !(flags & AT_EACCESS))))
		return r;
	return (mode & 2) && n->ro ? -E_ROFS : 0;
}

/* The absolute path of a node in the tree into buf (size bytes, NUL-terminated); its length,
 * or -ENOENT for a node no longer in the tree, -ENAMETOOLONG. */
int64_t vfs_node_path(const struct rnode *n, char *buf, size_t size)
{
	if (n->unlinked)
		return -E_NOENT;
	size_t pos = size - 1;
	buf[pos] = 0;
	for (; n != vfs_root; n = n->parent) {
		size_t nl = strlen(n->name);
		if (nl + 1 > pos)
			return -E_NAMETOOLONG;
		pos -= nl;
		memcpy(buf + pos, n->name, nl);
		buf[--pos] = '/';
	}
	if (pos == size - 1)
		buf[--pos] = '/';
	for (size_t i = 0; i < size - pos; i++) /* to the front (overlapping, forwards) */
		buf[i] = buf[pos + i];
	return (int64_t)(size - 1 - pos);
}

static int64_t getcwd_call(struct client *c, uint64_t ubuf, uint64_t size)
{
	int64_t len = vfs_node_path(c->cwd, path, sizeof(path));
	if (len < 0)
		return len;
	if ((uint64_t)len + 1 > size)
		return -E_RANGE;
	return ax_vcopy(EP_NONE, path, c->ep, (void *)ubuf, (uint64_t)len + 1) < 0 ? -E_FAULT : len + 1;
}

static int64_t set_cwd(struct client *c, struct rnode *n)
{
	if (vfs_kind(n) != S_IFDIR_)
		return -E_NOTDIR;
	n->opens++; /* a working directory keeps its node alive, even if removed */
	ramfs_release(c->cwd);
	c->cwd = n;
	return 0;
}

static int64_t truncate_path(struct client *c, uint64_t upath, int64_t size)
{
	struct rnode *n;
	int64_t r = vfs_lookup(c, AT_FDCWD, upath, RAMFS_FOLLOW, &n, NULL, NULL, path);
	if (r)
		return r;
	if (vfs_kind(n) == S_IFDIR_)
		return -E_ISDIR;
	if (size < 0 || vfs_kind(n) != S_IFREG_)
		return -E_INVAL;
	if (n->ro)
		return -E_ROFS;
	return (r = vfs_permit(c, n, 2, false)) ? r : ramfs_truncate(n, (uint64_t)size);
}

int64_t path_call(struct client *c, struct vcall *v)
{
	const uint64_t *a = v->a;
	struct rnode *n;
	struct ofile *f;
	int64_t r;
	switch (v->nr) {
	case NR_OPEN:
		return do_open(c, v, AT_FDCWD, a[0], a[1], a[2]);
	case NR_OPENAT:
		return do_open(c, v, (int64_t)a[0], a[1], a[2], a[3]);
	case NR_MKNOD:
		return make_node(c, AT_FDCWD, a[0], a[1], a[2]);
	case NR_MKNODAT:
		return make_node(c, (int64_t)a[0], a[1], a[2], a[3]);
	case NR_ACCESS:
		return access_at(c, AT_FDCWD, a[0], a[1], 0);
	case NR_FACCESSAT:
		return access_at(c, (int64_t)a[0], a[1], a[2], 0);
	case NR_FACCESSAT2:
		return access_at(c, (int64_t)a[0], a[1], a[2], a[3]);
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
	case NR_RENAME:
		return rename_at(c, AT_FDCWD, a[0], AT_FDCWD, a[1], 0);
	case NR_RENAMEAT:
		return rename_at(c, (int64_t)a[0], a[1], (int64_t)a[2], a[3], 0);
	case NR_RENAMEAT2:
		return rename_at(c, (int64_t)a[0], a[1], (int64_t)a[2], a[3], a[4]);
	case NR_SYMLINK:
		return symlink_at(c, a[0], AT_FDCWD, a[1]);
	case NR_SYMLINKAT:
		return symlink_at(c, a[0], (int64_t)a[1], a[2]);
	case NR_READLINK:
		return readlink_at(c, AT_FDCWD, a[0], a[1], a[2]);
	case NR_READLINKAT:
		return readlink_at(c, (int64_t)a[0], a[1], a[2], a[3]);
	case NR_LINK:
		return link_at(c, AT_FDCWD, a[0], AT_FDCWD, a[1], 0);
	case NR_LINKAT:
		return link_at(c, (int64_t)a[0], a[1], (int64_t)a[2], a[3], a[4]);
	case NR_GETCWD:
		return getcwd_call(c, a[0], a[1]);
	case NR_CHDIR:
		r = vfs_lookup(c, AT_FDCWD, a[0], RAMFS_FOLLOW, &n, NULL, NULL, path);
		return r ? r : vfs_kind(n) == S_IFDIR_ && (r = vfs_permit(c, n, 1, false)) ? r : set_cwd(c, n);
	case NR_FCHDIR:
		if (!(f = vfs_file(c, a[0])))
			return -E_BADF;
		return vfs_kind(f->node) == S_IFDIR_ && (r = vfs_permit(c, f->node, 1, false)) ? r : set_cwd(c, f->node);
	case NR_TRUNCATE:
		return truncate_path(c, a[0], (int64_t)a[1]);
	}
	return VFS_NOT_MINE;
}
