/* What vfs tells about files and lets change of them: stat and statx, statfs, modes,
 * owners, timestamps, the umask, and the sync calls (all data is in memory: nothing to do).
 * Everything runs as root for now, so any owner may be set and no permission is checked. */
#include "vfs.h"
#include "lx_abi.h"

#define NS 1000000000ll
#define UTIME_NOW ((1l << 30) - 1)
#define UTIME_OMIT ((1l << 30) - 2)
#define RAMFS_MAGIC 0x858458f6
#define PROC_SUPER_MAGIC 0x9fa0
#define CAPACITY (14ull << 20) /* about what the server heap can hold (heap.h) */

static char path[RAMFS_PATH_MAX];

struct lx_stat {
	uint64_t dev, ino, nlink;
	uint32_t mode, uid, gid, pad0;
	uint64_t rdev;
	int64_t size, blksize, blocks;
	int64_t atime[2], mtime[2], ctime[2];
	int64_t reserved[3];
};

struct lx_statx_ts {
	int64_t sec;
	uint32_t nsec, pad;
};
struct lx_statx {
	uint32_t mask, blksize;
	uint64_t attributes;
	uint32_t nlink, uid, gid;
	uint16_t mode, pad0;
	uint64_t ino, size, blocks, attributes_mask;
	struct lx_statx_ts atime, btime, ctime, mtime;
	uint32_t rdev_major, rdev_minor, dev_major, dev_minor;
	uint64_t spare[14];
};
_Static_assert(sizeof(struct lx_statx) == 256, "Linux's struct statx");

struct lx_statfs {
	int64_t type, bsize;
	uint64_t blocks, bfree, bavail, files, ffree;
	int32_t fsid[2];
	int64_t namelen, frsize, flags;
	int64_t spare[4];
};

/* Linux's device numbers (major << 8 | minor) of our character devices. */
static uint64_t rdev_of(const struct rnode *n)
{
	static const uint16_t numbers[] = { [DEV_CONSOLE] = 5 << 8 | 1, [DEV_NULL] = 1 << 8 | 3, [DEV_ZERO] = 1 << 8 | 5,
					    [DEV_FULL] = 1 << 8 | 7, [DEV_RANDOM] = 1 << 8 | 8, [DEV_URANDOM] = 1 << 8 | 9 };
	if (n->rdev)
		return n->rdev; /* a node mknod made: the number it was given */
	if (vfs_kind(n) != LX_S_IFCHR || n->dev >= sizeof(numbers) / sizeof(numbers[0]))
		return 0;
	return numbers[n->dev];
}

static uint64_t nlink_of(const struct rnode *n) { return vfs_kind(n) == LX_S_IFDIR ? 2 : ramfs_nlink(n); }
static int64_t blocks_of(const struct rnode *n) { return vfs_kind(n) == LX_S_IFLNK ? 0 : (int64_t)((n->size + 511) / 512); }

static int64_t put_stat(struct client *c, const struct rnode *n, uint64_t ubuf)
{
	struct lx_stat st;
	memset(&st, 0, sizeof(st));
	st.dev = 1;
	st.ino = n->ino;
	st.nlink = nlink_of(n);
	st.mode = vfs_kind(n) == S_IFANON_ && n->dev == ANON_SOCKET ? 0140000 | (n->mode & 07777) : n->mode;
	st.uid = n->uid;
	st.gid = n->gid;
	st.rdev = rdev_of(n);
	st.size = (int64_t)n->size;
	st.blksize = 4096;
	st.blocks = blocks_of(n);
	st.atime[0] = (int64_t)(n->atime_ns / NS), st.atime[1] = (int64_t)(n->atime_ns % NS);
	st.mtime[0] = (int64_t)(n->mtime_ns / NS), st.mtime[1] = (int64_t)(n->mtime_ns % NS);
	st.ctime[0] = (int64_t)(n->ctime_ns / NS), st.ctime[1] = (int64_t)(n->ctime_ns % NS);
	return ax_vcopy(EP_NONE, &st, c->ep, (void *)ubuf, sizeof(st)) < 0 ? -LX_EFAULT : 0;
}

static struct lx_statx_ts statx_ts(uint64_t ns) { return (struct lx_statx_ts){ (int64_t)(ns / NS), (uint32_t)(ns % NS), 0 }; }

/* statx: everything of the basic stats (STATX_BASIC_STATS), whatever the mask asks. */
static int64_t put_statx(struct client *c, const struct rnode *n, uint64_t ubuf)
{
	struct lx_statx st;
	memset(&st, 0, sizeof(st));
	st.mask = 0x7ff;
	st.blksize = 4096;
	st.nlink = (uint32_t)nlink_of(n);
	st.uid = n->uid;
	st.gid = n->gid;
	st.mode = (uint16_t)n->mode;
	st.ino = n->ino;
	st.size = n->size;
	st.blocks = (uint64_t)blocks_of(n);
	st.atime = statx_ts(n->atime_ns);
	st.mtime = statx_ts(n->mtime_ns);
	st.ctime = statx_ts(n->ctime_ns);
	st.rdev_major = (uint32_t)(rdev_of(n) >> 8);
	st.rdev_minor = (uint32_t)(rdev_of(n) & 0xff);
	st.dev_minor = 1;
	return ax_vcopy(EP_NONE, &st, c->ep, (void *)ubuf, sizeof(st)) < 0 ? -LX_EFAULT : 0;
}

/* The node a *at call means: path relative to dirfd, or with LX_AT_EMPTY_PATH and an empty
 * path the descriptor's own file; a NULL path (utimensat) is the descriptor's file too. */
static int64_t node_at(struct client *c, int64_t dirfd, uint64_t upath, uint64_t flags, struct rnode **n)
{
	int64_t r = upath ? vfs_get_path(c->ep, upath, path) : 0;
	if (r == 0 && (!upath || (!path[0] && (flags & LX_AT_EMPTY_PATH)))) {
		if ((int32_t)dirfd == LX_AT_FDCWD && !upath)
			return -LX_EFAULT;
		if ((int32_t)dirfd == LX_AT_FDCWD) {
			*n = c->cwd;
			return 0;
		}
		struct ofile *f = vfs_file(c, (uint64_t)dirfd);
		*n = f ? f->node : NULL;
		return f ? 0 : -LX_EBADF;
	}
	int follow = flags & LX_AT_SYMLINK_NOFOLLOW ? 0 : RAMFS_FOLLOW;
	return r ? r : vfs_resolve_at(c, dirfd, path, follow, n, NULL, NULL);
}

static int64_t stat_at(struct client *c, int64_t dirfd, uint64_t upath, uint64_t ubuf, uint64_t flags, bool x)
{
	struct rnode *n;
	/* statx's AT_STATX_* sync flags (0x6000) ask nothing of a memory file system. */
	if (flags & ~(uint64_t)(LX_AT_SYMLINK_NOFOLLOW | LX_AT_NO_AUTOMOUNT | LX_AT_EMPTY_PATH | (x ? 0x6000 : 0)))
		return -LX_EINVAL;
	int64_t r = upath ? node_at(c, dirfd, upath, flags, &n) : -LX_EFAULT;
	return r ? r : x ? put_statx(c, n, ubuf) : put_stat(c, n, ubuf);
}

static int64_t statfs_of(struct client *c, const struct rnode *n, uint64_t ubuf)
{
	struct lx_statfs st;
	memset(&st, 0, sizeof(st));
	if (n->ro) { /* /proc: no blocks, read-only */
		st.type = PROC_SUPER_MAGIC;
		st.bsize = st.frsize = 4096;
		st.namelen = RAMFS_NAME_MAX;
		st.flags = 0x20 | 1; /* ST_VALID | ST_RDONLY */
		return ax_vcopy(EP_NONE, &st, c->ep, (void *)ubuf, sizeof(st)) < 0 ? -LX_EFAULT : 0;
	}
	uint64_t blocks = CAPACITY / 4096, used = (ramfs_bytes + 4095) / 4096;
	st.type = RAMFS_MAGIC;
	st.bsize = st.frsize = 4096;
	st.blocks = blocks;
	st.bfree = st.bavail = used < blocks ? blocks - used : 0;
	st.files = 65536;
	st.ffree = ramfs_nodes < st.files ? st.files - ramfs_nodes : 0;
	st.namelen = RAMFS_NAME_MAX;
	st.flags = 0x20; /* ST_VALID */
	return ax_vcopy(EP_NONE, &st, c->ep, (void *)ubuf, sizeof(st)) < 0 ? -LX_EFAULT : 0;
}

static int64_t set_mode(struct client *c, struct rnode *n, uint64_t mode)
{
	if (n->ro)
		return -LX_EROFS;
	if (!vfs_owner(c, n))
		return -LX_EPERM;
	if (c->fsuid && !vfs_in_group(c, n->gid))
		mode &= ~(uint64_t)02000; /* set-group-ID only in one's own group (Linux clears it) */
	if (vfs_kind(n) == LX_S_IFLNK)
		return -95; /* EOPNOTSUPP: a link's mode is always 0777 */
	n->mode = (n->mode & LX_S_IFMT) | ((uint32_t)mode & 07777);
	ramfs_touch(n, false);
	return 0;
}

static int64_t set_owner(struct client *c, struct rnode *n, uint64_t uid, uint64_t gid)
{
	if (n->ro)
		return -LX_EROFS;
	/* Root changes both; the owner may give the file to a group it is in, nothing else. */
	if (c->fsuid && (((uint32_t)uid != UINT32_MAX && (uint32_t)uid != n->uid) || !vfs_owner(c, n) ||
			 ((uint32_t)gid != UINT32_MAX && (uint32_t)gid != n->gid && !vfs_in_group(c, (uint32_t)gid))))
		return -LX_EPERM;
	if ((uint32_t)uid != UINT32_MAX)
		n->uid = (uint32_t)uid;
	if ((uint32_t)gid != UINT32_MAX)
		n->gid = (uint32_t)gid;
	ramfs_touch(n, false);
	return 0;
}

/* sec.nsec (both checked non-negative) in ns, at most UINT64_MAX. */
static uint64_t to_ns(int64_t sec, int64_t nsec)
{
	return (uint64_t)sec >= UINT64_MAX / NS - 1 ? UINT64_MAX : (uint64_t)sec * NS + (uint64_t)nsec;
}

/* Access and modification times from two timespecs at ut (NULL: now), as utimensat. */
static int64_t set_times(struct client *c, struct rnode *n, uint64_t ut)
{
	int64_t ts[4] = { 0, UTIME_NOW, 0, UTIME_NOW };
	if (n->ro)
		return -LX_EROFS;
	if (ut && ax_vcopy(c->ep, (const void *)ut, EP_NONE, ts, sizeof(ts)) < 0)
		return -LX_EFAULT;
	for (int i = 0; i < 2; i++) {
		int64_t sec = ts[2 * i], nsec = ts[2 * i + 1];
		if (nsec != UTIME_NOW && nsec != UTIME_OMIT && (nsec < 0 || nsec >= NS || sec < 0))
			return -LX_EINVAL;
	}
	if (ts[1] == UTIME_OMIT && ts[3] == UTIME_OMIT)
		return 0;
	bool to_now = (ts[1] == UTIME_NOW || ts[1] == UTIME_OMIT) && (ts[3] == UTIME_NOW || ts[3] == UTIME_OMIT);
	if (!vfs_owner(c, n) && (!to_now || vfs_permit(c, n, 2, false)))
		return to_now ? -LX_EACCES : -LX_EPERM; /* others may only touch it to now, and need write */
	uint64_t now = vfs_now();
	uint64_t *dst[2] = { &n->atime_ns, &n->mtime_ns };
	for (int i = 0; i < 2; i++) {
		int64_t sec = ts[2 * i], nsec = ts[2 * i + 1];
		if (nsec == UTIME_NOW)
			*dst[i] = now;
		else if (nsec != UTIME_OMIT)
			*dst[i] = to_ns(sec, nsec);
	}
	n->ctime_ns = now;
	return 0;
}

/* utimes/futimesat (two timevals) and utime (two seconds) as utimensat's timespecs. */
static int64_t set_times_old(struct client *c, struct rnode *n, uint64_t ut, bool seconds_only)
{
	if (!ut || n->ro)
		return set_times(c, n, 0);
	if (!vfs_owner(c, n))
		return -LX_EPERM;
	int64_t v[4] = { 0, 0, 0, 0 };
	if (ax_vcopy(c->ep, (const void *)ut, EP_NONE, v, seconds_only ? 16 : 32) < 0)
		return -LX_EFAULT;
	if (seconds_only) {
		v[2] = v[1];
		v[1] = v[3] = 0;
	} else {
		for (int i = 1; i < 4; i += 2) {
			if (v[i] < 0 || v[i] >= 1000000)
				return -LX_EINVAL;
			v[i] *= 1000;
		}
	}
	if (v[0] < 0 || v[2] < 0)
		return -LX_EINVAL;
	n->atime_ns = to_ns(v[0], v[1]);
	n->mtime_ns = to_ns(v[2], v[3]);
	n->ctime_ns = vfs_now();
	return 0;
}

/* Resolves a path call's file (following links unless nofollow) into *n. */
static int64_t path_node(struct client *c, int64_t dirfd, uint64_t upath, bool nofollow, struct rnode **n)
{
	return vfs_lookup(c, dirfd, upath, nofollow ? 0 : RAMFS_FOLLOW, n, NULL, NULL, path);
}

static int64_t sync_fd(struct ofile *f)
{
	if (!f)
		return -LX_EBADF;
	uint32_t k = vfs_kind(f->node);
	return k == LX_S_IFREG || k == LX_S_IFDIR ? 0 : -LX_EINVAL;
}

int64_t meta_call(struct client *c, struct vcall *v)
{
	const uint64_t *a = v->a;
	struct ofile *f = vfs_file(c, a[0]);
	struct rnode *n;
	int64_t r;
	uint32_t old;
	switch (v->nr) {
	case LX_SYS_fstat:
		return f ? put_stat(c, f->node, a[1]) : -LX_EBADF;
	case LX_SYS_stat:
		return stat_at(c, LX_AT_FDCWD, a[0], a[1], 0, false);
	case LX_SYS_lstat:
		return stat_at(c, LX_AT_FDCWD, a[0], a[1], LX_AT_SYMLINK_NOFOLLOW, false);
	case LX_SYS_newfstatat:
		return stat_at(c, (int64_t)a[0], a[1], a[2], a[3], false);
	case LX_SYS_statx:
		return stat_at(c, (int64_t)a[0], a[1], a[4], a[2], true);
	case LX_SYS_statfs:
		return (r = path_node(c, LX_AT_FDCWD, a[0], false, &n)) ? r : statfs_of(c, n, a[1]);
	case LX_SYS_fstatfs:
		return f ? statfs_of(c, f->node, a[1]) : -LX_EBADF;
	case LX_SYS_chmod:
		return (r = path_node(c, LX_AT_FDCWD, a[0], false, &n)) ? r : set_mode(c, n, a[1]);
	case LX_SYS_fchmod:
		return f ? set_mode(c, f->node, a[1]) : -LX_EBADF;
	case LX_SYS_fchmodat:
		return (r = path_node(c, (int64_t)a[0], a[1], false, &n)) ? r : set_mode(c, n, a[2]);
	case LX_SYS_chown:
	case LX_SYS_lchown:
		return (r = path_node(c, LX_AT_FDCWD, a[0], v->nr == LX_SYS_lchown, &n)) ? r : set_owner(c, n, a[1], a[2]);
	case LX_SYS_fchown:
		return f ? set_owner(c, f->node, a[1], a[2]) : -LX_EBADF;
	case LX_SYS_fchownat:
		if (a[4] & ~(uint64_t)(LX_AT_SYMLINK_NOFOLLOW | LX_AT_EMPTY_PATH))
			return -LX_EINVAL;
		if (!a[1])
			return -LX_EFAULT;
		return (r = node_at(c, (int64_t)a[0], a[1], a[4], &n)) ? r : set_owner(c, n, a[2], a[3]);
	case LX_SYS_utimensat:
		if (a[3] & ~(uint64_t)(LX_AT_SYMLINK_NOFOLLOW | LX_AT_EMPTY_PATH))
			return -LX_EINVAL;
		return (r = node_at(c, (int64_t)a[0], a[1], a[3], &n)) ? r : set_times(c, n, a[2]);
	case LX_SYS_futimesat:
		return (r = path_node(c, (int64_t)a[0], a[1], false, &n)) ? r : set_times_old(c, n, a[2], false);
	case LX_SYS_utimes:
		return (r = path_node(c, LX_AT_FDCWD, a[0], false, &n)) ? r : set_times_old(c, n, a[1], false);
	case LX_SYS_utime:
		return (r = path_node(c, LX_AT_FDCWD, a[0], false, &n)) ? r : set_times_old(c, n, a[1], true);
	case LX_SYS_umask:
		old = c->umask;
		c->umask = (uint32_t)a[0] & 0777;
		return old;
	case LX_SYS_sync:
		return 0;
	case LX_SYS_syncfs:
		return f ? 0 : -LX_EBADF;
	case LX_SYS_fsync:
	case LX_SYS_fdatasync:
		return sync_fd(f);
	}
	return VFS_NOT_MINE;
}
