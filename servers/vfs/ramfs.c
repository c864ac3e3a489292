#include "ramfs.h"
#include "lx_abi.h"
#include "vfs_alloc.h"

static VFS_KEPT uint64_t next_ino; /* the last one given */
struct ramfs_hooks ramfs_hooks;
VFS_KEPT uint64_t ramfs_bytes, ramfs_nodes;

static uint64_t now(void) { return ramfs_hooks.now ? ramfs_hooks.now() : 0; }

void ramfs_touch(struct rnode *n, bool data)
{
	n->ctime_ns = now();
	if (data)
		n->mtime_ns = n->ctime_ns;
}

static void changed(struct rnode *n)
{
	if (ramfs_hooks.changed)
		ramfs_hooks.changed(n);
}

static struct rnode *node_new(const char *name, size_t len, uint32_t mode)
{
	struct rnode *n = vfs_calloc(1, sizeof(*n));
	char *nm = vfs_malloc(len + 1);
	if (!n || !nm) {
		vfs_free(n);
		vfs_free(nm);
		return NULL;
	}
	memcpy(nm, name, len);
	nm[len] = 0;
	n->name = nm;
	n->mode = mode;
	n->ino = ++next_ino;
	n->atime_ns = n->mtime_ns = n->ctime_ns = now();
	ramfs_nodes++;
	return n;
}

struct rnode *ramfs_init(void)
{
	struct rnode *root = node_new("", 0, LX_S_IFDIR | 0755);
	if (root)
		root->parent = root;
	return root;
}

struct rnode *ramfs_anon(uint32_t mode)
{
	struct rnode *n = node_new("", 0, mode);
	if (n)
		n->unlinked = true;
	return n;
}

static struct rnode *child_named(const struct rnode *dir, const char *name, size_t len)
{
	for (struct rnode *c = dir->child; c; c = c->next)
		if (strlen(c->name) == len && !memcmp(c->name, name, len))
			return c->magic && ramfs_hooks.hidden && ramfs_hooks.hidden(c) ? NULL : c;
	return NULL;
}

static bool is_dot(const char *p, size_t len) { return len == 1 && p[0] == '.'; }
static bool is_dotdot(const char *p, size_t len) { return len == 2 && p[0] == '.' && p[1] == '.'; }

/* One path walk: the root, and how many links it has followed so far. */
struct walk {
	struct rnode *root;
	int links;
};

static int walk(struct walk *w, struct rnode *cur, const char *path, bool follow, bool entry, struct rnode **out,
		struct rnode **parent, const char **last)
{
	*out = NULL;
	if (parent)
		*parent = NULL;
	if (!path[0])
		return -LX_ENOENT;
	if (path[0] == '/')
		cur = w->root;
	const char *p = path;
	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		const char *e = p, *rest;
		while (*e && *e != '/')
			e++;
		for (rest = e; *rest == '/'; rest++)
			;
		size_t len = (size_t)(e - p);
		bool is_last = !*rest;
		if (len > RAMFS_NAME_MAX)
			return -LX_ENAMETOOLONG;
		if ((cur->mode & LX_S_IFMT) != LX_S_IFDIR)
			return -LX_ENOTDIR;
		if (cur->unlinked)
			return -LX_ENOENT; /* a removed directory (someone's cwd) has no entries */
		if (ramfs_hooks.search && !ramfs_hooks.search(cur))
			return -LX_EACCES;
		struct rnode *next = is_dot(p, len) ? cur : is_dotdot(p, len) ? cur->parent : child_named(cur, p, len);
		if (next && next->target && !(is_last && entry))
			next = next->target; /* a hard link: the node it names */
		if (!next) {
			if (is_last && parent) { /* only the last component is missing */
				*parent = cur;
				*last = p;
			}
			return -LX_ENOENT;
		}
		if ((next->mode & LX_S_IFMT) == LX_S_IFLNK && (!is_last || follow || *e == '/')) {
			if (++w->links > RAMFS_MAX_LINKS)
				return -LX_ELOOP;
			/* Relative targets start in the link's directory; a missing last component
			 * of the target is what a create through the link makes. */
			const char *target = (const char *)next->data;
			struct rnode *direct = NULL;
			int r = next->magic && ramfs_hooks.follow ? ramfs_hooks.follow(next, &direct, &target) : 0;
			if (!r && direct)
				next = direct;
			else if (!r)
				r = walk(w, cur, target, true, false, &next, is_last ? parent : NULL, last);
			if (r)
				return r;
		}
		if (*e == '/' && (next->mode & LX_S_IFMT) != LX_S_IFDIR)
			return -LX_ENOTDIR; /* "file/" */
		cur = next;
		p = e;
	}
	*out = cur;
	return 0;
}

int ramfs_resolve(struct rnode *root, struct rnode *cwd, const char *path, int flags, struct rnode **out,
		  struct rnode **parent, const char **last)
{
	struct walk w = { root, 0 };
	return walk(&w, cwd, path, flags & RAMFS_FOLLOW, flags & RAMFS_ENTRY, out, parent, last);
}

int ramfs_create(struct rnode *dir, const char *name, size_t len, uint32_t mode, struct rnode **out)
{
	if ((dir->mode & LX_S_IFMT) != LX_S_IFDIR)
		return -LX_ENOTDIR;
	if (!len || len > RAMFS_NAME_MAX)
		return len ? -LX_ENAMETOOLONG : -LX_ENOENT;
	if (is_dot(name, len) || is_dotdot(name, len))
		return -LX_EEXIST;
	if (dir->ro)
		return -LX_EROFS;
	if (child_named(dir, name, len))
		return -LX_EEXIST;
	struct rnode *n = node_new(name, len, mode);
	if (!n)
		return -LX_ENOMEM;
	n->parent = dir;
	n->next = dir->child;
	dir->child = n;
	ramfs_touch(dir, true);
	*out = n;
	return 0;
}

int ramfs_link(struct rnode *dir, const char *name, size_t len, struct rnode *n)
{
	n = ramfs_node(n);
	if ((n->mode & LX_S_IFMT) == LX_S_IFDIR)
		return -LX_EPERM;
	if (n->unlinked)
		return -LX_ENOENT; /* (a removed file has no name to add to) */
	if (n->ro || n->magic)
		return -LX_EPERM; /* /proc's */
	struct rnode *e;
	int r = ramfs_create(dir, name, len, n->mode, &e);
	if (r)
		return r;
	e->target = n;
	e->alias_next = n->aliases;
	n->aliases = e;
	n->links++;
	ramfs_touch(n, false);
	return 0;
}

int ramfs_symlink(struct rnode *dir, const char *name, size_t len, const char *target, size_t tlen,
		  struct rnode **out)
{
	if (!tlen || tlen >= RAMFS_PATH_MAX)
		return tlen ? -LX_ENAMETOOLONG : -LX_ENOENT;
	for (size_t i = 0; i < tlen; i++)
		if (!target[i])
			return -LX_EINVAL;
	char *data = vfs_malloc(tlen + 1);
	if (!data)
		return -LX_ENOMEM;
	int r = ramfs_create(dir, name, len, LX_S_IFLNK | 0777, out);
	if (r) {
		vfs_free(data);
		return r;
	}
	memcpy(data, target, tlen);
	data[tlen] = 0;
	(*out)->data = (uint8_t *)data;
	(*out)->size = (*out)->cap = tlen;
	ramfs_bytes += tlen;
	return 0;
}

static void node_free(struct rnode *n)
{
	if (!n->target)
		changed(n);
	ramfs_nodes--;
	if (n->backed) {
		ramfs_bytes -= n->size;
		if (ramfs_hooks.unback)
			ramfs_hooks.unback(n);
	} else {
		ramfs_bytes -= n->cap;
		vfs_free(n->data);
	}
	vfs_free(n->name);
	vfs_free(n);
}

/* Takes entry e out of its directory's list; false if it is not there (the root, or gone). */
static bool unhook(struct rnode *e)
{
	struct rnode **pp = &e->parent->child;
	while (*pp && *pp != e)
		pp = &(*pp)->next;
	if (!*pp)
		return false;
	*pp = e->next;
	ramfs_touch(e->parent, true);
	return true;
}

/* Hard link entry a leaves its node's chain. */
static void alias_drop(struct rnode *a)
{
	struct rnode *n = a->target, **pp = &n->aliases;
	while (*pp != a)
		pp = &(*pp)->alias_next;
	*pp = a->alias_next;
	n->links--;
	ramfs_touch(n, false);
}

int ramfs_remove(struct rnode *n)
{
	if (n->ro)
		return -LX_EROFS;
	if ((n->mode & LX_S_IFMT) == LX_S_IFDIR && n->child)
		return -LX_ENOTEMPTY;
	if (n->target) { /* a hard link's own entry */
		if (!unhook(n))
			return -LX_ENOENT;
		alias_drop(n);
		n->target = NULL;
		node_free(n);
		return 0;
	}
	if (n->links) {
		/* The node's own name goes: one of its other names takes its place (the node keeps
		 * its identity: open files, inode number, data). */
		struct rnode *a = n->aliases;
		if (!unhook(n))
			return -LX_ENOENT;
		alias_drop(a);
		struct rnode **pp = &a->parent->child;
		while (*pp != a)
			pp = &(*pp)->next;
		*pp = n;
		n->next = a->next;
		n->parent = a->parent;
		char *nm = n->name;
		n->name = a->name;
		a->name = nm;
		a->target = NULL;
		node_free(a);
		return 0;
	}
	if (!unhook(n))
		return -LX_ENOENT; /* the root, or already gone */
	n->unlinked = true;
	if (!n->opens)
		node_free(n);
	return 0;
}

void ramfs_release(struct rnode *n)
{
	if (n->opens)
		n->opens--;
	if (!n->opens && n->unlinked)
		node_free(n);
}

int64_t ramfs_read(struct rnode *n, uint64_t off, void *buf, uint64_t len)
{
	if ((n->mode & LX_S_IFMT) == LX_S_IFDIR)
		return -LX_EISDIR;
	if (n->atime_ns <= n->mtime_ns || n->atime_ns <= n->ctime_ns)
		n->atime_ns = now();
	if (off >= n->size)
		return 0;
	uint64_t k = n->size - off < len ? n->size - off : len;
	memcpy(buf, n->data + off, k);
	return (int64_t)k;
}

static int reserve(struct rnode *n, uint64_t size)
{
	if (size > RAMFS_MAX_FILE || (n->backed && size > n->cap))
		return -LX_EFBIG;
	if (n->backed) { /* (its bytes are counted by size: the area is mostly untouched) */
		if (size > n->size)
			ramfs_bytes += size - n->size;
		return 0;
	}
	if (size <= n->cap)
		return 0;
	uint64_t cap = n->cap ? n->cap : 64;
	while (cap < size)
		cap *= 2;
	uint8_t *d = vfs_realloc(n->data, cap);
	if (!d)
		return -LX_ENOMEM;
	ramfs_bytes += cap - n->cap;
	n->data = d;
	n->cap = cap;
	return 0;
}

int64_t ramfs_write(struct rnode *n, uint64_t off, const void *buf, uint64_t len)
{
	if ((n->mode & LX_S_IFMT) == LX_S_IFDIR)
		return -LX_EISDIR;
	if (off > RAMFS_MAX_FILE || len > RAMFS_MAX_FILE - off)
		return -LX_EFBIG;
	changed(n);
	int r = reserve(n, off + len);
	if (r)
		return r;
	if (off > n->size)
		memset(n->data + n->size, 0, off - n->size); /* a hole reads as zeros */
	memcpy(n->data + off, buf, len);
	if (off + len > n->size)
		n->size = off + len;
	ramfs_touch(n, true);
	return (int64_t)len;
}

int ramfs_truncate(struct rnode *n, uint64_t size)
{
	if ((n->mode & LX_S_IFMT) == LX_S_IFDIR)
		return -LX_EISDIR;
	changed(n);
	int r = reserve(n, size);
	if (r)
		return r;
	if (size > n->size)
		memset(n->data + n->size, 0, size - n->size);
	if (n->backed && size < n->size)
		ramfs_bytes -= n->size - size;
	n->size = size;
	ramfs_touch(n, true);
	return 0;
}

void ramfs_free_tree(struct rnode *n)
{
	while (n->child) {
		struct rnode *c = n->child;
		n->child = c->next;
		ramfs_free_tree(c);
	}
	if (n->target) {
		alias_drop(n);
		n->target = NULL;
	} else {
		for (struct rnode *a = n->aliases; a; a = a->alias_next)
			a->target = NULL; /* (freed with their own directories) */
	}
	node_free(n);
}

int ramfs_rename(struct rnode *n, struct rnode *dir, const char *name, size_t len)
{
	if ((dir->mode & LX_S_IFMT) != LX_S_IFDIR)
		return -LX_ENOTDIR;
	if (!len || len > RAMFS_NAME_MAX)
		return len ? -LX_ENAMETOOLONG : -LX_ENOENT;
	if (n->parent == n || n->unlinked)
		return -LX_EINVAL; /* the root, or a node no longer in the tree */
	if (n->ro || dir->ro)
		return -LX_EROFS;
	for (const struct rnode *d = dir; ; d = d->parent) {
		if (d == n)
			return -LX_EINVAL; /* into itself or below */
		if (d->parent == d)
			break;
	}
	struct rnode *old = child_named(dir, name, len);
	if (old == n || (old && ramfs_node(old) == ramfs_node(n)))
		return 0; /* the same file under both names: nothing happens (POSIX) */
	/* The name first: it may be the replaced node's own, freed below. */
	char *nm = vfs_malloc(len + 1);
	if (!nm)
		return -LX_ENOMEM;
	memcpy(nm, name, len);
	nm[len] = 0;
	if (old) {
		bool n_dir = (n->mode & LX_S_IFMT) == LX_S_IFDIR, old_dir = (old->mode & LX_S_IFMT) == LX_S_IFDIR;
		int r = n_dir != old_dir ? (n_dir ? -LX_ENOTDIR : -LX_EISDIR) : ramfs_remove(old); /* -LX_ENOTEMPTY */
		if (r) {
			vfs_free(nm);
			return r;
		}
	}
	struct rnode **pp = &n->parent->child;
	while (*pp != n)
		pp = &(*pp)->next;
	*pp = n->next;
	ramfs_touch(n->parent, true);
	vfs_free(n->name);
	n->name = nm;
	n->parent = dir;
	n->next = dir->child;
	dir->child = n;
	ramfs_touch(dir, true);
	ramfs_touch(n, false);
	return 0;
}
