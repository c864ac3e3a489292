/* File views: what vfs and the socket library (lib/sock/file.c) agree on so that pread of
 * a regular file needs no system call (docs/sockets.md, "Reading files without vfs").
 *
 *   fcntl(fd, AX_F_VIEW, 0), served by vfs: maps a read-only view of fd's file into the
 *   caller (shared: the same pages in every process that asked) and returns its address,
 *   or -errno: EBADF (not open for reading), ENODEV (not a regular file, or too big for a
 *   view), ENOMEM. The view is one header page (struct ax_fview) followed by the file's
 *   bytes as they were when the view was made.
 *
 * A view never changes after it is made. Before the file's bytes change (a write, a
 * truncate), and when vfs lets the view go, vfs sets `dead`: a reader checks it before it
 * copies, and once set the view says nothing about the file any more (the reader unmaps it
 * and asks vfs). A pread that read `dead` clear before the write's answer left vfs returns
 * the bytes from before the write, as a pread that ran just before it would have. */
#pragma once
#include <stdint.h>

#define AX_F_VIEW 0x4158 /* (fcntl commands of Linux are below 0x500 or in 1024..1100) */
#define AX_FVIEW_MAGIC 0x57454956u /* "VIEW" */
#define AX_FVIEW_DATA 4096u        /* the file's first byte, from the view's start */

struct ax_fview {
	uint32_t magic;   /* AX_FVIEW_MAGIC */
	uint32_t dead;    /* set by vfs, never cleared (read with acquire) */
	uint64_t size;    /* the file's size when the view was made */
	uint64_t bytes;   /* the mapping's length: AX_FVIEW_DATA + size, rounded up to pages */
};
