/* What pm and vfs agree on (servers/vfs/README.md): which Linux calls pm routes to vfs,
 * and the message by which pm tells vfs a process has ended. */
#pragma once
#include <stdint.h>

#define VFS_FORGET 0x7601 /* pm -> vfs, call: w[0] = a process that ended; its descriptors go */

/* The Linux calls vfs serves (x86-64 numbers): read, write, open, close, stat, fstat,
 * lstat, lseek, ioctl, pread64, pwrite64, readv, writev, access, dup, dup2, fcntl,
 * ftruncate, getcwd, chdir, mkdir, rmdir, unlink, getdents64, openat, mkdirat, newfstatat,
 * unlinkat, faccessat, dup3, pipe, pipe2, rename, renameat, renameat2. */
static const uint16_t vfs_calls[] = { 0, 1, 2, 3, 4, 5, 6, 8, 16, 17, 18, 19, 20, 21, 32, 33, 72, 77, 79, 80,
				      83, 84, 87, 217, 257, 258, 262, 263, 269, 292, 22, 293, 82, 264, 316 };
