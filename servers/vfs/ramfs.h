/* The RAM file system behind vfs: a tree of directories, regular files and character
 * devices in server memory, loaded from the initrd (cpio.c) and writable. Portable C: the
 * allocator comes from vfs_alloc.h (ax_malloc in Axolotl, libc in host tests). Results are
 * 0 or -errno (Linux numbers). */
#pragma once
#include <stdbool.h>
#include "lx_abi.h"
#include <stddef.h>
#include <stdint.h>

#define RAMFS_NAME_MAX 255
#define RAMFS_PATH_MAX 4096

#define RAMFS_MAX_FILE (64ull << 20) /* one file at most 64 MiB */
#define RAMFS_MAX_LINKS 40           /* symbolic links followed in one path, as in Linux */

struct rnode {
	char *name;
	uint32_t mode;    /* S_IF* | permissions */
	uint32_t dev;     /* character devices: which one (vfs.c); 0 for a node with no device */
	uint64_t rdev;    /* a device node mknod made: the Linux device number it was given */
	uint64_t ino;
	struct rnode *parent, *child, *next; /* directory tree; next = sibling */
	uint8_t *data;    /* a symbolic link: its target, NUL-terminated */
	uint64_t size, cap;
	uint32_t uid, gid;
	uint64_t atime_ns, mtime_ns, ctime_ns; /* wall-clock time (ramfs_hooks.now) */
	uint32_t opens;   /* open files on it: an unlinked node lives until the last close */
	uint32_t events;  /* vfs bumps it when what a poll sees may have changed (epoll's EPOLLET) */
	void *priv;       /* nodes outside the tree (pipes): their owner's state */
	uint16_t magic;   /* the server's generated nodes (vfs's /proc): what they show; 0 */
	bool ro;          /* no names made, removed or moved in or out of it (-LX_EROFS) */
	bool unlinked;
	bool backed;      /* data is the server's mapping of cap bytes (a shared file mapping's
	                     object, vfs fmap.c): never moved or grown; let go by hooks.unback */
	/* Hard links: a further name of a node is an entry of its own whose `target` is the node
	 * (the first name, never another link); the node counts them (`links`) and chains them
	 * through `alias_next` from `aliases`. A path resolves through an entry to its node. */
	struct rnode *target;
	struct rnode *aliases, *alias_next;
	uint32_t links;
};

/* What the server adds (NULL in host tests): told before a node's bytes change and before it
 * is freed (vfs drops what it cached of the node, e.g. its execve image). */
struct ramfs_hooks {
	void (*changed)(struct rnode *n);
	uint64_t (*now)(void); /* the wall clock in ns since 1970, for timestamps */
	/* For nodes with a magic number: whether a name is absent for now (a closed /proc fd),
	 * and where a link leads: 0 with *direct set to a node, or *target to another path
	 * (left alone: the link's own target), or -errno. */
	bool (*hidden)(const struct rnode *n);
	int (*follow)(const struct rnode *link, struct rnode **direct, const char **target);
	/* May the walk look names up in directory dir (search permission)? NULL: yes. */
	bool (*search)(const struct rnode *dir);
	/* A backed node is freed: its data area goes (instead of the allocator's free). */
	void (*unback)(struct rnode *n);
};
extern struct ramfs_hooks ramfs_hooks;
/* Bytes of file data held and nodes alive (statfs). */
extern uint64_t ramfs_bytes, ramfs_nodes;
/* Sets n's modification and change times to now (mtime too only if data is set). */
void ramfs_touch(struct rnode *n, bool data);

struct rnode *ramfs_init(void);
/* Resolves path (absolute, or relative to cwd), following symbolic links on the way (and in
 * the last component with RAMFS_FOLLOW, or when a slash follows it), at most
 * RAMFS_MAX_LINKS of them (-LX_ELOOP): *out the node, or -LX_ENOENT with *parent and *last (the
 * final name, pointing into path or a link's target) set when only the last component is
 * missing. */
#define RAMFS_FOLLOW 1
#define RAMFS_ENTRY 2 /* the last component's own entry, not the node a hard link names */
int ramfs_resolve(struct rnode *root, struct rnode *cwd, const char *path, int flags, struct rnode **out,
		  struct rnode **parent, const char **last);
int ramfs_create(struct rnode *dir, const char *name, size_t len, uint32_t mode, struct rnode **out);
/* A symbolic link to target (1 to RAMFS_PATH_MAX - 1 bytes, no NUL). */
int ramfs_symlink(struct rnode *dir, const char *name, size_t len, const char *target, size_t tlen,
		  struct rnode **out);
/* unlink or rmdir (checked by the caller) of a name: a hard link's entry, or the node's own
 * name (then another of its names takes its place). */
int ramfs_remove(struct rnode *node);
/* A further name for node n (not a directory) in dir: link(2). */
int ramfs_link(struct rnode *dir, const char *name, size_t len, struct rnode *n);
/* The node a name stands for (itself, or a hard link's node); its number of names. */
static inline struct rnode *ramfs_node(struct rnode *e) { return e->target ? e->target : e; }
static inline uint32_t ramfs_nlink(const struct rnode *n) { return n->unlinked ? 0 : 1 + n->links; }
/* Moves n into dir under name (replacing a node of the same kind there, an empty directory
 * for a directory); refuses to move a directory into itself. */
int ramfs_rename(struct rnode *n, struct rnode *dir, const char *name, size_t len);
/* A node in no directory (a pipe): freed at its last release. */
struct rnode *ramfs_anon(uint32_t mode);
/* Returns bytes read or written, or -errno. A read sets the access time if it is not
 * newer than the last change (Linux's relatime). */
int64_t ramfs_read(struct rnode *n, uint64_t off, void *buf, uint64_t len);
int64_t ramfs_write(struct rnode *n, uint64_t off, const void *buf, uint64_t len);
int ramfs_truncate(struct rnode *n, uint64_t size);
void ramfs_release(struct rnode *n); /* last close of an unlinked node frees it */
void ramfs_free_tree(struct rnode *n); /* a whole (sub)tree, open or not: tests */
/* Loads a newc cpio archive into the tree; the number of entries, or -errno for a
 * malformed archive (what was loaded before the error stays). */
long cpio_load(struct rnode *root, const uint8_t *img, size_t len);
