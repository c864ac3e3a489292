/* The calls that name files by path: open, mkdir, unlink/rmdir, rename, symbolic links,
 * access, truncate, the working directory. Paths are copied from the caller once, resolved
 * relative to a directory descriptor or the working directory (ramfs_resolve follows
 * symbolic links), and every failure is a Linux errno. */
#include "vfs.h"
#include "lx_abi.h"
#include "heap.h"

static char path[RAMFS_PATH_MAX], path2[RAMFS_PATH_MAX];

int64_t vfs_get_path(endpoint_t ep, uint64_t uptr, char *buf)
{
	for (size_t off = 0; off < RAMFS_PATH_MAX; off += 64) {
		if (ax_vcopy(ep, (const void *)(uptr + off), EP_NONE, buf + off, 64) < 0) {
			/* The string may end just before an unmapped page: go byte by byte. */
			for (size_t i = off; i < off + 64; i++) {
				if (ax_vcopy(ep, (const void *)(uptr + i), EP_NONE, buf + i, 1) < 0)
					return -LX_EFAULT;
				if (!buf[i])
					return 0;
			}
		}
		for (size_t i = off; i < off + 64; i++)
			if (!buf[i])
				return 0;
	}
	return -LX_ENAMETOOLONG;
}

static struct rnode *base_dir(struct client *c, int64_t dirfd, int64_t *err)
{
	if ((int32_t)dirfd == LX_AT_FDCWD)
		return c->cwd;
	struct ofile *f = vfs_file(c, (uint64_t)dirfd);
	*err = !f ? -LX_EBADF : vfs_kind(f->node) != LX_S_IFDIR ? -LX_ENOTDIR : 0;
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
		return v->fifo_fd = 0, -LX_EBADF; /* (closed by another thread meanwhile) */
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
	bool excl = (flags & LX_O_CREAT) && (flags & LX_O_EXCL), created = false;
	int follow = (flags & LX_O_NOFOLLOW) || excl ? 0 : RAMFS_FOLLOW;
	int64_t r = vfs_lookup(c, dirfd, upath, follow, &n, &parent, &last, path);
	if (r == -LX_ENOENT && (flags & LX_O_CREAT) && parent) {
		size_t len = name_len(last);
		if (last[len] == '/')
			return -LX_EISDIR; /* "name/" cannot be created as a file */
		if (!(r = vfs_permit_entry(c, parent, NULL)) &&
		    !(r = ramfs_create(parent, last, len, LX_S_IFREG | ((uint32_t)mode & 07777 & ~c->umask), &n)))
			vfs_own(c, n);
		created = r == 0;
	} else if (r == 0 && excl) {
		r = -LX_EEXIST;
	} else if (r == 0 && vfs_kind(n) == LX_S_IFLNK) {
		r = -LX_ELOOP; /* LX_O_NOFOLLOW */
	}
	if (r)
		return r;
	if (n->ro && (flags & (LX_O_ACCMODE | LX_O_TRUNC)))
		return -LX_EACCES; /* /proc */
	uint32_t want = ((flags & LX_O_ACCMODE) != LX_O_WRONLY ? 4 : 0) | ((flags & LX_O_ACCMODE) || (flags & LX_O_TRUNC) ? 2 : 0);
	if (!created && !n->magic && (r = vfs_permit(c, n, want & 6, false)))
		return r; /* (a file just made is opened as asked, whatever its mode) */
	bool named_fifo = vfs_kind(n) == LX_S_IFIFO && n->name[0];
	if (named_fifo && (r = fifo_prepare(n, flags)))
		return r;
	if (vfs_kind(n) == S_IFANON_ || (vfs_kind(n) == LX_S_IFIFO && !n->priv) || vfs_kind(n) == 0140000 /* S_IFSOCK */ ||
	    (vfs_kind(n) == LX_S_IFCHR && !n->dev) || vfs_kind(n) == 0060000 /* S_IFBLK */)
		return -LX_ENXIO; /* an eventfd or epoll through /proc/self/fd; a pipe both ends closed; a
				 * unix socket's path (connect, not open) */
	if ((flags & LX_O_DIRECTORY) && vfs_kind(n) != LX_S_IFDIR)
		return -LX_ENOTDIR;
	if (vfs_kind(n) == LX_S_IFDIR && (flags & LX_O_ACCMODE))
		return -LX_EISDIR;
	if ((flags & LX_O_TRUNC) && (flags & LX_O_ACCMODE) && vfs_kind(n) == LX_S_IFREG && (r = ramfs_truncate(n, 0)))
		return r;
	struct ofile *f = ax_calloc(1, sizeof(*f));
	if (!f)
		return -LX_ENOMEM;
	*f = (struct ofile){ n, 0, (uint32_t)flags & ~(uint32_t)(LX_O_CREAT | LX_O_EXCL | LX_O_TRUNC | LX_O_CLOEXEC | LX_O_NOFOLLOW), 0 };
	n->opens++;
	r = vfs_new_fd(c, f, flags & LX_O_CLOEXEC);
	if (r < 0) {
		n->opens--;
		ax_free(f);
		return r;
	}
	if (vfs_kind(n) == LX_S_IFIFO)
		pipe_end_opened(f);
	if (n->magic)
		procfs_refresh(n);
	if (named_fifo && !(flags & LX_O_NONBLOCK))
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
		return -LX_EEXIST;
	if (r != -LX_ENOENT || !parent)
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
	uint32_t type = (uint32_t)mode & LX_S_IFMT;
	if (!type)
		type = LX_S_IFREG;
	bool device = type == LX_S_IFCHR || type == 0060000 /* S_IFBLK */;
	if (device && c->fsuid)
		return -LX_EPERM; /* CAP_MKNOD */
	if (type != LX_S_IFREG && type != LX_S_IFIFO && type != 0140000 /* S_IFSOCK */ && !device)
		return -LX_EINVAL;
	struct rnode *n = NULL;
	int64_t r = create_node(c, dirfd, upath, type, mode, &n);
	if (!r && device) {
		n->rdev = rdev;
		n->dev = type == LX_S_IFCHR ? device_of(rdev) : 0;
	}
	return r;
}

static int64_t make_dir(struct client *c, int64_t dirfd, uint64_t upath, uint64_t mode)
{
	return create_at(c, dirfd, upath, LX_S_IFDIR, mode);
}

static int64_t remove_at(struct client *c, int64_t dirfd, uint64_t upath, bool dir)
{
	struct rnode *n;
	int64_t r = vfs_lookup(c, dirfd, upath, RAMFS_ENTRY, &n, NULL, NULL, path); /* the name, not its node */
	if (r)
		return r;
	if (dir && vfs_kind(n) != LX_S_IFDIR)
		return -LX_ENOTDIR;
	if (!dir && vfs_kind(n) == LX_S_IFDIR)
		return -LX_EISDIR;
	if (dir && dot_last(path))
		return dot_last(path) == 1 ? -LX_EINVAL : -LX_ENOTEMPTY;
	if (n == vfs_root)
		return -LX_EBUSY;
	if ((r = vfs_permit_entry(c, n->parent, n)))
		return r;
	return ramfs_remove(n);
}

static int64_t rename_at(struct client *c, int64_t olddir, uint64_t oldp, int64_t newdir, uint64_t newp, uint64_t flags)
{
	if (flags)
		return -LX_EINVAL; /* RENAME_NOREPLACE and friends: not yet */
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
	} else if (r != -LX_ENOENT || !parent) {
		return r;
	}
	if (dot_last(path) || dot_last(path2))
		return -LX_EBUSY;
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
		return -LX_EEXIST;
	if (r != -LX_ENOENT || !parent)
		return r;
	size_t len = name_len(last);
	if (last[len] == '/')
		return -LX_ENOENT;
	if ((r = vfs_permit_entry(c, parent, NULL)) || (r = ramfs_symlink(parent, last, len, path, strlen(path), &n)))
		return r;
	vfs_own(c, n);
	return 0;
}

static int64_t readlink_at(struct client *c, int64_t dirfd, uint64_t upath, uint64_t ubuf, uint64_t size)
{
	struct rnode *n;
	if ((int32_t)size <= 0)
		return -LX_EINVAL;
	int64_t r = vfs_lookup(c, dirfd, upath, 0, &n, NULL, NULL, path);
	if (r)
		return r;
	if (vfs_kind(n) != LX_S_IFLNK)
		return -LX_EINVAL;
	const char *text = (const char *)n->data;
	int64_t tlen = (int64_t)n->size;
	if (n->magic && (tlen = procfs_readlink(c, n, path2, sizeof(path2))) < 0)
		return tlen;
	if (n->magic)
		text = path2;
	uint64_t len = (uint64_t)tlen < size ? (uint64_t)tlen : size;
	return ax_vcopy(EP_NONE, text, c->ep, (void *)ubuf, len) < 0 ? -LX_EFAULT : (int64_t)len;
}

/* Hard links (ramfs_link): a further name for a file; directories EPERM, as Linux. */
static int64_t link_at(struct client *c, int64_t olddir, uint64_t oldp, int64_t newdir, uint64_t newp, uint64_t flags)
{
	struct rnode *n, *t, *parent;
	const char *last;
	if (flags & ~(uint64_t)(LX_AT_SYMLINK_FOLLOW | LX_AT_EMPTY_PATH))
		return -LX_EINVAL;
	int64_t r = vfs_lookup(c, olddir, oldp, flags & LX_AT_SYMLINK_FOLLOW ? RAMFS_FOLLOW : 0, &n, NULL, NULL, path);
	if (r)
		return r;
	r = vfs_lookup(c, newdir, newp, 0, &t, &parent, &last, path2);
	if (r == 0)
		return -LX_EEXIST;
	if (r != -LX_ENOENT || !parent)
		return r;
	size_t len = name_len(last);
	if (last[len] == '/')
		return -LX_ENOENT; /* "name/" cannot be a file's */
	if (vfs_kind(n) == LX_S_IFDIR || vfs_kind(n) == S_IFANON_)
		return -LX_EPERM;
	if ((r = vfs_permit_entry(c, parent, NULL)))
		return r;
	return ramfs_link(parent, last, len, n);
}

static int64_t access_at(struct client *c, int64_t dirfd, uint64_t upath, uint64_t mode, uint64_t flags)
{
	struct rnode *n;
	if (mode & ~(uint64_t)7 || flags & ~(uint64_t)(LX_AT_SYMLINK_NOFOLLOW | LX_AT_EACCESS | LX_AT_EMPTY_PATH))
		return -LX_EINVAL;
	int64_t r = vfs_lookup(c, dirfd, upath, flags & LX_AT_SYMLINK_NOFOLLOW ? 0 : RAMFS_FOLLOW, &n, NULL, NULL, path);
	if (r)
		return r;
	/* The real ids (LX_AT_EACCESS: the effective ones), as set-user-ID programs ask. */
	if (mode && (r = vfs_permit(c, n, (uint32_t)mode, !(flags & LX_AT_EACCESS))))
		return r;
	return (mode & 2) && n->ro ? -LX_EROFS : 0;
}

/* The absolute path of a node in the tree into buf (size bytes, NUL-terminated); its length,
 * or -ENOENT for a node no longer in the tree, -ENAMETOOLONG. */
int64_t vfs_node_path(const struct rnode *n, char *buf, size_t size)
{
	if (n->unlinked)
		return -LX_ENOENT;
	size_t pos = size - 1;
	buf[pos] = 0;
	for (; n != vfs_root; n = n->parent) {
		size_t nl = strlen(n->name);
		if (nl + 1 > pos)
			return -LX_ENAMETOOLONG;
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
		return -LX_ERANGE;
	return ax_vcopy(EP_NONE, path, c->ep, (void *)ubuf, (uint64_t)len + 1) < 0 ? -LX_EFAULT : len + 1;
}

static int64_t set_cwd(struct client *c, struct rnode *n)
{
	if (vfs_kind(n) != LX_S_IFDIR)
		return -LX_ENOTDIR;
	n->opens++; /* a working directory keeps its node alive, even if removed */
	ramfs_release(c->cwd);
	c->cwd = n;
	return 0;
}

static int64_t truncate_path(struct client *c, uint64_t upath, int64_t size)
{
	struct rnode *n;
	int64_t r = vfs_lookup(c, LX_AT_FDCWD, upath, RAMFS_FOLLOW, &n, NULL, NULL, path);
	if (r)
		return r;
	if (vfs_kind(n) == LX_S_IFDIR)
		return -LX_EISDIR;
	if (size < 0 || vfs_kind(n) != LX_S_IFREG)
		return -LX_EINVAL;
	if (n->ro)
		return -LX_EROFS;
	return (r = vfs_permit(c, n, 2, false)) ? r : ramfs_truncate(n, (uint64_t)size);
}

int64_t path_call(struct client *c, struct vcall *v)
{
	const uint64_t *a = v->a;
	struct rnode *n;
	struct ofile *f;
	int64_t r;
	switch (v->nr) {
	case LX_SYS_open:
		return do_open(c, v, LX_AT_FDCWD, a[0], a[1], a[2]);
	case LX_SYS_openat:
		return do_open(c, v, (int64_t)a[0], a[1], a[2], a[3]);
	case LX_SYS_mknod:
		return make_node(c, LX_AT_FDCWD, a[0], a[1], a[2]);
	case LX_SYS_mknodat:
		return make_node(c, (int64_t)a[0], a[1], a[2], a[3]);
	case LX_SYS_access:
		return access_at(c, LX_AT_FDCWD, a[0], a[1], 0);
	case LX_SYS_faccessat:
		return access_at(c, (int64_t)a[0], a[1], a[2], 0);
	case LX_SYS_faccessat2:
		return access_at(c, (int64_t)a[0], a[1], a[2], a[3]);
	case LX_SYS_mkdir:
		return make_dir(c, LX_AT_FDCWD, a[0], a[1]);
	case LX_SYS_mkdirat:
		return make_dir(c, (int64_t)a[0], a[1], a[2]);
	case LX_SYS_unlink:
		return remove_at(c, LX_AT_FDCWD, a[0], false);
	case LX_SYS_rmdir:
		return remove_at(c, LX_AT_FDCWD, a[0], true);
	case LX_SYS_unlinkat:
		if (a[2] & ~(uint64_t)LX_AT_REMOVEDIR)
			return -LX_EINVAL;
		return remove_at(c, (int64_t)a[0], a[1], a[2] & LX_AT_REMOVEDIR);
	case LX_SYS_rename:
		return rename_at(c, LX_AT_FDCWD, a[0], LX_AT_FDCWD, a[1], 0);
	case LX_SYS_renameat:
		return rename_at(c, (int64_t)a[0], a[1], (int64_t)a[2], a[3], 0);
	case LX_SYS_renameat2:
		return rename_at(c, (int64_t)a[0], a[1], (int64_t)a[2], a[3], a[4]);
	case LX_SYS_symlink:
		return symlink_at(c, a[0], LX_AT_FDCWD, a[1]);
	case LX_SYS_symlinkat:
		return symlink_at(c, a[0], (int64_t)a[1], a[2]);
	case LX_SYS_readlink:
		return readlink_at(c, LX_AT_FDCWD, a[0], a[1], a[2]);
	case LX_SYS_readlinkat:
		return readlink_at(c, (int64_t)a[0], a[1], a[2], a[3]);
	case LX_SYS_link:
		return link_at(c, LX_AT_FDCWD, a[0], LX_AT_FDCWD, a[1], 0);
	case LX_SYS_linkat:
		return link_at(c, (int64_t)a[0], a[1], (int64_t)a[2], a[3], a[4]);
	case LX_SYS_getcwd:
		return getcwd_call(c, a[0], a[1]);
	case LX_SYS_chdir:
		r = vfs_lookup(c, LX_AT_FDCWD, a[0], RAMFS_FOLLOW, &n, NULL, NULL, path);
		return r ? r : vfs_kind(n) == LX_S_IFDIR && (r = vfs_permit(c, n, 1, false)) ? r : set_cwd(c, n);
	case LX_SYS_fchdir:
		if (!(f = vfs_file(c, a[0])))
			return -LX_EBADF;
		return vfs_kind(f->node) == LX_S_IFDIR && (r = vfs_permit(c, f->node, 1, false)) ? r : set_cwd(c, f->node);
	case LX_SYS_truncate:
		return truncate_path(c, a[0], (int64_t)a[1]);
	}
	return VFS_NOT_MINE;
}
