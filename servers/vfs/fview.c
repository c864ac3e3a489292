/* File views (lib/posix/fview.h): a read-only copy of a regular file's bytes, mapped shared
 * into the processes that ask (fcntl AX_F_VIEW), from which their socket library answers
 * pread without a system call. One view per file, made on the first request and handed to
 * every later one; marked dead (never changed) before the file's bytes change or when the
 * table needs its slot, so a reader never returns bytes older than a write that was
 * answered before its pread began. A dead view's pages live until its last mapper unmaps
 * them (KC_LX_MMAP LXM_SHARE mappings hold the object); vfs closes its own handle at once. */
#include "vfs.h"
#include "lx_abi.h"
#include "fview.h"

#define PAGE 4096ull
#define VIEW_SLOTS 32
#define VIEW_MAX_FILE (4ull << 20)   /* bigger files are read through vfs */
#define VIEW_MAX_BYTES (32ull << 20) /* all live views together */

static struct view {
	struct rnode *node; /* NULL: free */
	int64_t mo;         /* our handle (the creator's) */
	uint64_t bytes;     /* the object's length */
	uint64_t used;      /* when last handed out: the least recent goes first */
} views[VIEW_SLOTS] VFS_KEPT;
static VFS_KEPT uint64_t ticks, live_bytes;

/* Sets the header's dead flag (through a short mapping of its page) and lets the object go. */
static void kill(struct view *v)
{
	int64_t va = ax_mo_map(v->mo, 0, 0, 1, KP_R | KP_W);
	if (va > 0) {
		__atomic_store_n(&((struct ax_fview *)va)->dead, 1, __ATOMIC_RELEASE);
		ax_mo_unmap((uint64_t)va);
	} else {
		/* Cannot happen with a handle of our own; if it did, readers would keep a view
		 * that no longer says the file's bytes: say so loudly. */
		ax_printf("vfs: file view of inode %llu not marked dead (error %lld)\n",
			  (unsigned long long)v->node->ino, (long long)va);
	}
	ax_mo_destroy(v->mo);
	live_bytes -= v->bytes;
	v->node = NULL;
}

void fview_node_changed(struct rnode *n)
{
	for (int i = 0; i < VIEW_SLOTS; i++)
		if (views[i].node == n)
			kill(&views[i]);
}

/* adopted: the table is a predecessor's, its objects ours again (handed on by rs). */
void fview_init(bool adopted)
{
	for (int i = 0; adopted && i < VIEW_SLOTS; i++)
		if (views[i].node)
			ax_keep_claim(views[i].mo);
}

/* A new view of n: our handle, or -errno. */
static int64_t make(struct rnode *n, uint64_t bytes)
{
	uint64_t va;
	int64_t h = vfs_mo_make(bytes / PAGE, &va);
	if (h < 0)
		return h;
	struct ax_fview *hd = (struct ax_fview *)va;
	*hd = (struct ax_fview){ .magic = AX_FVIEW_MAGIC, .size = n->size, .bytes = bytes };
	if (n->size)
		memcpy((char *)va + AX_FVIEW_DATA, n->data, n->size);
	ax_mo_unmap((uint64_t)va);
	return h;
}

/* The slot for a new view of `bytes`: the least recently used go until it fits. */
static struct view *room_for(uint64_t bytes)
{
	for (;;) {
		struct view *free = NULL, *lru = NULL;
		for (int i = 0; i < VIEW_SLOTS; i++) {
			struct view *v = &views[i];
			if (!v->node)
				free = free ? free : v;
			else if (!lru || v->used < lru->used)
				lru = v;
		}
		if (free && live_bytes + bytes <= VIEW_MAX_BYTES)
			return free;
		if (!lru)
			return NULL;
		kill(lru);
	}
}

int64_t fview_map(struct client *c, struct vcall *call, struct ofile *f)
{
	if (!f)
		return -LX_EBADF;
	if ((f->flags & LX_O_ACCMODE) == LX_O_WRONLY)
		return -LX_EBADF;
	struct rnode *n = f->node;
	if ((n->mode & LX_S_IFMT) != LX_S_IFREG || n->magic || n->size > VIEW_MAX_FILE || n->backed)
		return -19; /* ENODEV: pread goes to vfs (a shared-mapped file changes without a write) */
	uint64_t bytes = (AX_FVIEW_DATA + n->size + PAGE - 1) & ~(PAGE - 1);
	struct view *v = NULL;
	for (int i = 0; i < VIEW_SLOTS && !v; i++)
		if (views[i].node == n)
			v = &views[i];
	if (!v) {
		struct view *slot = room_for(bytes);
		int64_t h = slot ? make(n, bytes) : -LX_ENOMEM;
		if (h < 0)
			return h;
		v = slot;
		*v = (struct view){ .node = n, .mo = h, .bytes = bytes };
		live_bytes += bytes;
	}
	v->used = ++ticks;
	(void)c;
	uint64_t pf = LX_PROT_READ | (uint64_t)(LX_MAP_SHARED | LXM_SHARE) << 32;
	return kcall6(KC_LX_MMAP, call->thread, (uint64_t)v->mo, 0, v->bytes, pf, 0);
}
