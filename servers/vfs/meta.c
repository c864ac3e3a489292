/* What vfs tells about files and lets change of them: stat and its relatives. */
#include "vfs.h"
#include "lxnr.h"

static char path[RAMFS_PATH_MAX];

struct lx_stat {
	uint64_t dev, ino, nlink;
	uint32_t mode, uid, gid, pad0;
	uint64_t rdev;
	int64_t size, blksize, blocks;
	int64_t atime[2], mtime[2], ctime[2];
	int64_t reserved[3];
};

/* Linux's device numbers (major << 8 | minor) of our character devices. */
static uint64_t rdev_of(const struct rnode *n)
{
	static const uint16_t numbers[] = { [DEV_CONSOLE] = 5 << 8 | 1, [DEV_NULL] = 1 << 8 | 3, [DEV_ZERO] = 1 << 8 | 5 };
	if (vfs_kind(n) != S_IFCHR_ || n->dev >= sizeof(numbers) / sizeof(numbers[0]))
		return 0;
	return numbers[n->dev];
}

static int64_t put_stat(struct client *c, const struct rnode *n, uint64_t ubuf)
{
	struct lx_stat st;
	memset(&st, 0, sizeof(st));
	st.dev = 1;
	st.ino = n->ino;
	st.nlink = vfs_kind(n) == S_IFDIR_ ? 2 : 1;
	st.mode = n->mode;
	st.rdev = rdev_of(n);
	st.size = (int64_t)n->size;
	st.blksize = 4096;
	st.blocks = vfs_kind(n) == S_IFLNK_ ? 0 : (int64_t)((n->size + 511) / 512);
	return ax_vcopy(EP_NONE, &st, c->ep, (void *)ubuf, sizeof(st)) < 0 ? -E_FAULT : 0;
}

/* The node a *at call means: path relative to dirfd, or with AT_EMPTY_PATH and an empty
 * path the descriptor's own file. */
static int64_t node_at(struct client *c, int64_t dirfd, uint64_t upath, uint64_t flags, struct rnode **n)
{
	int64_t r = vfs_get_path(c->ep, upath, path);
	if (r == 0 && !path[0] && (flags & AT_EMPTY_PATH)) {
		if ((int32_t)dirfd == AT_FDCWD) {
			*n = c->cwd;
			return 0;
		}
		struct ofile *f = vfs_file(c, (uint64_t)dirfd);
		*n = f ? f->node : NULL;
		return f ? 0 : -E_BADF;
	}
	int follow = flags & AT_SYMLINK_NOFOLLOW ? 0 : RAMFS_FOLLOW;
	return r ? r : vfs_resolve_at(c, dirfd, path, follow, n, NULL, NULL);
}

static int64_t stat_at(struct client *c, int64_t dirfd, uint64_t upath, uint64_t ubuf, uint64_t flags)
{
	struct rnode *n;
	if (flags & ~(uint64_t)(AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_EMPTY_PATH))
		return -E_INVAL;
	int64_t r = node_at(c, dirfd, upath, flags, &n);
	return r ? r : put_stat(c, n, ubuf);
}

int64_t meta_call(struct client *c, struct vcall *v)
{
	const uint64_t *a = v->a;
	struct ofile *f = vfs_file(c, a[0]);
	switch (v->nr) {
	case NR_FSTAT:
		return f ? put_stat(c, f->node, a[1]) : -E_BADF;
	case NR_STAT:
		return stat_at(c, AT_FDCWD, a[0], a[1], 0);
	case NR_LSTAT:
		return stat_at(c, AT_FDCWD, a[0], a[1], AT_SYMLINK_NOFOLLOW);
	case NR_NEWFSTATAT:
		return stat_at(c, (int64_t)a[0], a[1], a[2], a[3]);
	}
	return VFS_NOT_MINE;
}
