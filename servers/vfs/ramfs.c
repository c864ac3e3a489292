#include "ramfs.h"
#include "vfs_alloc.h"

static uint64_t next_ino = 1;
struct ramfs_hooks ramfs_hooks;

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
	n->ino = next_ino++;
	return n;
}

struct rnode *ramfs_init(void)
{
	struct rnode *root = node_new("", 0, S_IFDIR_ | 0755);
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
			return c;
	return NULL;
}

int ramfs_resolve(struct rnode *root, struct rnode *cwd, const char *path, struct rnode **out,
		  struct rnode **parent, const char **last)
{
	if (!path[0])
		return -E_NOENT;
	struct rnode *cur = path[0] == '/' ? root : cwd;
	const char *p = path;
	*out = NULL;
	if (parent)
		*parent = NULL;
	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		const char *e = p;
		while (*e && *e != '/')
			e++;
		size_t len = (size_t)(e - p);
		if (len > RAMFS_NAME_MAX)
			return -E_NAMETOOLONG;
		if ((cur->mode & S_IFMT_) != S_IFDIR_)
			return -E_NOTDIR;
		if (cur->unlinked)
			return -E_NOENT; /* a removed directory (someone's cwd) has no entries */
		struct rnode *next;
		if (len == 1 && p[0] == '.')
			next = cur;
		else if (len == 2 && p[0] == '.' && p[1] == '.')
			next = cur->parent;
		else
			next = child_named(cur, p, len);
		if (!next) {
			const char *rest = e;
			while (*rest == '/')
				rest++;
			if (!*rest && parent) { /* only the last component is missing */
				*parent = cur;
				*last = p;
			}
			return -E_NOENT;
		}
		cur = next;
		p = e;
	}
	*out = cur;
	return 0;
}

int ramfs_create(struct rnode *dir, const char *name, size_t len, uint32_t mode, struct rnode **out)
{
	if ((dir->mode & S_IFMT_) != S_IFDIR_)
		return -E_NOTDIR;
	if (!len || len > RAMFS_NAME_MAX)
		return len ? -E_NAMETOOLONG : -E_NOENT;
	if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
		return -E_EXIST;
	if (child_named(dir, name, len))
		return -E_EXIST;
	struct rnode *n = node_new(name, len, mode);
	if (!n)
		return -E_NOMEM;
	n->parent = dir;
	n->next = dir->child;
	dir->child = n;
	*out = n;
	return 0;
}

static void node_free(struct rnode *n)
{
	changed(n);
	vfs_free(n->data);
	vfs_free(n->name);
	vfs_free(n);
}

int ramfs_remove(struct rnode *n)
{
	if ((n->mode & S_IFMT_) == S_IFDIR_ && n->child)
		return -E_NOTEMPTY;
	struct rnode **pp = &n->parent->child;
	while (*pp && *pp != n)
		pp = &(*pp)->next;
	if (!*pp)
		return -E_NOENT; /* the root, or already gone */
	*pp = n->next;
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

int64_t ramfs_read(const struct rnode *n, uint64_t off, void *buf, uint64_t len)
{
	if ((n->mode & S_IFMT_) == S_IFDIR_)
		return -E_ISDIR;
	if (off >= n->size)
		return 0;
	uint64_t k = n->size - off < len ? n->size - off : len;
	memcpy(buf, n->data + off, k);
	return (int64_t)k;
}

static int reserve(struct rnode *n, uint64_t size)
{
	if (size > RAMFS_MAX_FILE)
		return -E_FBIG;
	if (size <= n->cap)
		return 0;
	uint64_t cap = n->cap ? n->cap : 64;
	while (cap < size)
		cap *= 2;
	uint8_t *d = vfs_realloc(n->data, cap);
	if (!d)
		return -E_NOMEM;
	n->data = d;
	n->cap = cap;
	return 0;
}

int64_t ramfs_write(struct rnode *n, uint64_t off, const void *buf, uint64_t len)
{
	if ((n->mode & S_IFMT_) == S_IFDIR_)
		return -E_ISDIR;
	if (off > RAMFS_MAX_FILE || len > RAMFS_MAX_FILE - off)
		return -E_FBIG;
	changed(n);
	int r = reserve(n, off + len);
	if (r)
		return r;
	if (off > n->size)
		memset(n->data + n->size, 0, off - n->size); /* a hole reads as zeros */
	memcpy(n->data + off, buf, len);
	if (off + len > n->size)
		n->size = off + len;
	return (int64_t)len;
}

int ramfs_truncate(struct rnode *n, uint64_t size)
{
	if ((n->mode & S_IFMT_) == S_IFDIR_)
		return -E_ISDIR;
	changed(n);
	int r = reserve(n, size);
	if (r)
		return r;
	if (size > n->size)
		memset(n->data + n->size, 0, size - n->size);
	n->size = size;
	return 0;
}

void ramfs_free_tree(struct rnode *n)
{
	while (n->child) {
		struct rnode *c = n->child;
		n->child = c->next;
		ramfs_free_tree(c);
	}
	node_free(n);
}

int ramfs_rename(struct rnode *n, struct rnode *dir, const char *name, size_t len)
{
	if ((dir->mode & S_IFMT_) != S_IFDIR_)
		return -E_NOTDIR;
	if (!len || len > RAMFS_NAME_MAX)
		return len ? -E_NAMETOOLONG : -E_NOENT;
	if (n->parent == n || n->unlinked)
		return -E_INVAL; /* the root, or a node no longer in the tree */
	for (const struct rnode *d = dir; ; d = d->parent) {
		if (d == n)
			return -E_INVAL; /* into itself or below */
		if (d->parent == d)
			break;
	}
	struct rnode *old = child_named(dir, name, len);
	if (old == n)
		return 0;
	/* The name first: it may be the replaced node's own, freed below. */
	char *nm = vfs_malloc(len + 1);
	if (!nm)
		return -E_NOMEM;
	memcpy(nm, name, len);
	nm[len] = 0;
	if (old) {
		bool n_dir = (n->mode & S_IFMT_) == S_IFDIR_, old_dir = (old->mode & S_IFMT_) == S_IFDIR_;
		int r = n_dir != old_dir ? (n_dir ? -E_NOTDIR : -E_ISDIR) : ramfs_remove(old); /* -E_NOTEMPTY */
		if (r) {
			vfs_free(nm);
			return r;
		}
	}
	struct rnode **pp = &n->parent->child;
	while (*pp != n)
		pp = &(*pp)->next;
	*pp = n->next;
	vfs_free(n->name);
	n->name = nm;
	n->parent = dir;
	n->next = dir->child;
	dir->child = n;
	return 0;
}
