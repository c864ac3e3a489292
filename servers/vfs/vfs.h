/* vfs: the file server of the POSIX personality (README.md). Shared between its files. */
#pragma once
#include "axrt.h"
#include "ramfs.h"

#define MAX_FDS 64
#include "vfs_proto.h"

/* Character devices (rnode.dev). */
enum { DEV_CONSOLE = 1, DEV_NULL, DEV_ZERO };

struct ofile {               /* an open file, shared by dup'ed descriptors */
	struct rnode *node;
	uint64_t off;
	uint32_t flags;          /* O_ACCMODE | O_APPEND | ... */
	uint32_t refs;
};

struct client {
	endpoint_t ep;
	struct ofile *fd[MAX_FDS];
	bool cloexec[MAX_FDS];
	struct rnode *cwd;
	bool used;
};

extern struct rnode *vfs_root;

/* A call that must wait (an empty or full pipe): vfs keeps the caller blocked and tries
 * again later (vfs.c). */
#define VFS_BLOCK INT64_MIN

/* Descriptors (calls.c). */
int64_t vfs_new_fd(struct client *c, struct ofile *f, bool cloexec);
int64_t vfs_close_fd(struct client *c, uint64_t fd);
void vfs_drop(struct ofile *f); /* one reference less; the last closes the file */

/* Pipes (pipe.c). */
int64_t pipe_create(struct client *c, uint64_t ufds, uint64_t flags);
int64_t pipe_transfer(struct client *c, struct ofile *f, uint64_t ubuf, uint64_t len, bool write);
void pipe_end_closed(struct ofile *f);

/* The terminal (tty.c, tty.h): what a poll of a console file sees now, POLLIN 0x1 and
 * POLLOUT 0x4. */
uint32_t tty_poll(struct ofile *f);

/* Tries every held call again, answering those that can finish now (vfs.c): after input
 * arrived, a timer ran out. */
void vfs_kick(void);

/* The Linux file calls vfs serves (calls.c); the result for the caller's rax. */
int64_t vfs_call(struct client *c, uint32_t nr, const uint64_t a[6]);
void vfs_close_all(struct client *c);
