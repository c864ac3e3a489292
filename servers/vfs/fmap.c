/* Shared file mappings (mmap MAP_SHARED of a regular file): the file's bytes move into a
 * memory object of ours, mapped into vfs where the node's data was (ramfs `backed`: the area
 * never moves), and the kernel maps that same object into every process that maps the file
 * shared (KC_LX_MMAP LXM_SHARE). So a store through a mapping is the file's byte at once for
 * read(2), for other mappers and for the next open, and a write(2) is seen by every mapping;
 * msync has nothing to do. The object is RAMFS_MAX_FILE long, made page by page as pages are
 * touched, so the file can grow under its mappings. The node keeps the object until it is
 * freed; the processes' mappings hold it past that (as Linux's pages outlive an unlinked
 * file while mapped). A restarted vfs maps the objects again where they were (keep.h). */
#include "vfs.h"
#include "lx_abi.h"
#include "keep.h"

#define PAGE 4096ull
#define FMAP_MAX 16 /* backed files at once: each is one of our memory-object handles */

static struct backing {
	struct rnode *node; /* NULL: free */
	int64_t mo;
	uint64_t va;        /* our mapping, the node's data */
} backs[FMAP_MAX] VFS_KEPT;

static struct backing *backing_of(const struct rnode *n)
{
	for (int i = 0; i < FMAP_MAX; i++)
		if (backs[i].node == n)
			return &backs[i];
	return NULL;
}

int64_t fmap_handle(struct rnode *n)
{
	struct backing *b = backing_of(n);
	if (b)
		return b->mo;
	for (int i = 0; i < FMAP_MAX && !b; i++)
		if (!backs[i].node)
			b = &backs[i];
	if (!b)
		return -LX_ENOMEM; /* (ENOMEM, as Linux's out of mappings) */
	uint64_t va;
	int64_t h = vfs_mo_make(RAMFS_MAX_FILE / PAGE, &va);
	if (h < 0)
		return h;
	/* What was copied of the old bytes goes (the exec cache, file views): from now on
	 * stores through mappings change the file without a write(2) telling us, and execve and
	 * private mappings copy from this object (exec.c image_of). */
	exec_node_changed(n);
	fview_node_changed(n);
	if (n->size)
		memcpy((void *)va, n->data, n->size);
	ramfs_bytes -= n->cap;
	ramfs_bytes += n->size;
	ax_free(n->data);
	n->data = (uint8_t *)va;
	n->cap = RAMFS_MAX_FILE;
	n->backed = true;
	*b = (struct backing){ n, h, (uint64_t)va };
	return h;
}

void fmap_unback(struct rnode *n)
{
	struct backing *b = backing_of(n);
	if (!b)
		return;
	ax_mo_unmap(b->va);
	ax_mo_destroy(b->mo); /* the processes' mappings keep the pages while they last */
	b->node = NULL;
	n->data = NULL;
}

void fmap_init(bool adopted)
{
	for (int i = 0; adopted && i < FMAP_MAX; i++) {
		struct backing *b = &backs[i];
		if (!b->node)
			continue;
		void *va = ax_keep_remap(b->mo, (void *)b->va, RAMFS_MAX_FILE);
		if (!va) {
			/* Cannot happen with a handle rs handed us; if it did, the file's bytes are
			 * gone: it reads as empty rather than through a stale pointer. */
			ax_printf("vfs: a shared-mapped file (inode %llu) could not be mapped again\n",
				  (unsigned long long)b->node->ino);
			b->node->data = NULL, b->node->size = 0, b->node->cap = 0, b->node->backed = false;
			b->node = NULL;
			continue;
		}
		b->va = (uint64_t)va;
		b->node->data = va;
	}
}
