/* execve's file (VFS_EXEC_OPEN): pm gets a read-only memory object holding an executable's
 * bytes. The object stays cached for the next exec of the same file (a shell runs the same
 * binary over and over), and is destroyed, which revokes pm's handle too, as soon as the
 * file's bytes change or the file is freed. A few files at most: each object takes one of
 * our 64 memory-object handles, which the heap needs too. */
#include "vfs.h"
#include "lx_abi.h"
#include "heap.h"

#define EXEC_CACHE 4
#define PAGE 4096ull

static struct image {
	struct rnode *node; /* NULL: free */
	int64_t mo;
	uint64_t used;      /* when last handed out: the least recent goes first */
} cache[EXEC_CACHE] VFS_KEPT;
static VFS_KEPT uint64_t ticks;

static void drop(struct image *im)
{
	ax_mo_destroy(im->mo);
	im->node = NULL;
}

void exec_node_changed(struct rnode *n)
{
	for (int i = 0; i < EXEC_CACHE; i++)
		if (cache[i].node == n)
			drop(&cache[i]);
}

/* adopted: the cache is a predecessor's, its objects ours again (handed on by rs). */
void exec_init(bool adopted)
{
	for (int i = 0; adopted && i < EXEC_CACHE; i++)
		if (cache[i].node)
			ax_keep_claim(cache[i].mo);
}

/* Our handle of an object holding n's bytes, made if not cached; or -errno. */
static int64_t image_of(struct rnode *n)
{
	if (n->backed)
		return fmap_handle(n); /* the file's own object holds its bytes, always current */
	struct image *im = &cache[0];
	for (int i = 0; i < EXEC_CACHE; i++) {
		if (cache[i].node == n) {
			cache[i].used = ++ticks;
			return cache[i].mo;
		}
		if (!cache[i].node || (im->node && cache[i].used < im->used))
			im = &cache[i];
	}
	if (im->node)
		drop(im);
	uint64_t va;
	int64_t h = vfs_mo_make(n->size ? (n->size + PAGE - 1) / PAGE : 1, &va);
	if (h < 0)
		return h;
	if (n->size)
		memcpy((void *)va, n->data, n->size);
	ax_mo_unmap((uint64_t)va);
	*im = (struct image){ n, h, ++ticks };
	return h;
}

int64_t exec_open(struct client *c, endpoint_t mem, uint64_t upath, endpoint_t pm, int64_t *handle, uint64_t setid[2])
{
	static char path[RAMFS_PATH_MAX];
	struct rnode *n;
	int64_t r = vfs_get_path(mem, upath, path);
	if (r == 0)
		r = ramfs_resolve(vfs_root, c ? c->cwd : vfs_root, path, RAMFS_FOLLOW, &n, NULL, NULL);
	if (r)
		return r;
	if ((n->mode & LX_S_IFMT) != LX_S_IFREG || vfs_permit(c, n, 1, false))
		return -LX_EACCES;
	int64_t h = image_of(n);
	if (h < 0)
		return h;
	int64_t g = ax_mo_grant(h, pm, KP_R);
	if (g < 0)
		return -LX_ENOMEM;
	*handle = g;
	setid[0] = n->mode & 04000 ? n->uid | 1ull << 32 : 0; /* set-user-ID: its owner's */
	setid[1] = n->mode & 02000 ? n->gid | 1ull << 32 : 0; /* set-group-ID: its group's */
	if (c) /* the command's name, as Linux takes it: from the name given, not the link's target */
		ksnprintf(c->comm_next, sizeof(c->comm_next), "%s", vfs_last_name(path));
	if (c && vfs_node_path(n, path, sizeof(path)) > 0) { /* /proc/self/exe once exec is done */
		ax_free(c->exe_next);
		c->exe_next = vfs_strdup(path);
	}
	return (int64_t)n->size;
}

/* mmap of a file (the kernel serves anonymous mmap itself). MAP_PRIVATE: a private copy of
 * the file's pages, made by the kernel from the same cached object execve uses. MAP_SHARED:
 * the file's own object (fmap.c), so stores reach the file and every mapper. /dev/zero maps
 * zeros. */
int64_t file_mmap(struct client *c, struct vcall *v)
{
	const uint64_t *a = v->a;
	uint64_t prot = a[2], flags = a[3], type = flags & 3;
	struct ofile *f = vfs_file(c, a[4]);
	if (!f)
		return -LX_EBADF;
	if (a[5] & (PAGE - 1))
		return -LX_EINVAL;
	if ((f->flags & LX_O_ACCMODE) == LX_O_WRONLY)
		return -LX_EACCES;
	struct rnode *n = f->node;
	int64_t h = 0;
	if (vfs_kind(n) == LX_S_IFCHR && n->dev == DEV_ZERO)
		h = 0;
	else if (vfs_kind(n) != LX_S_IFREG)
		return -19; /* ENODEV: pipes, terminals, directories cannot be mapped */
	else if (type == 1 /* MAP_SHARED */ || type == 3 /* MAP_SHARED_VALIDATE */) {
		if ((prot & 2 /* PROT_WRITE */) && (f->flags & LX_O_ACCMODE) != LX_O_RDWR)
			return -LX_EACCES;
		if ((h = fmap_handle(n)) < 0)
			return h;
		flags = (flags & ~(uint64_t)3) | 1 | LXM_SHARE; /* the object itself */
	} else if (n->size && (h = image_of(n)) < 0)
		return h;
	return kcall6(KC_LX_MMAP, v->thread, (uint64_t)h, a[0], a[1], (prot & 0xffffffff) | (flags << 32), a[5]);
}
