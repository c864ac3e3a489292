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

/* The Linux file calls vfs serves (calls.c); the result for the caller's rax. */
int64_t vfs_call(struct client *c, uint32_t nr, const uint64_t a[6]);
void vfs_close_all(struct client *c);
