/* What pm and vfs agree on (servers/vfs/README.md): which Linux calls pm routes to vfs,
 * and the message by which pm tells vfs a process has ended. */
#pragma once
#include <stdint.h>

/* Processes are named by their process id (kcall.h: KMSG_LINUX's w[6]). Messages from pm
 * only (vfs checks the sender); the answer is w[0] = 0 or -errno unless said otherwise. */
#define VFS_FORGET 0x7601    /* w[0] = a process that ended; its descriptors go */
#define VFS_FORK 0x7602      /* w[0] = parent, w[1] = child: the child gets the parent's
                                descriptors (sharing the open files) and working directory */
#define VFS_EXEC 0x7603      /* w[0] = a process that completed execve: close its
                                close-on-exec descriptors */
#define VFS_SESSION 0x7605   /* w[0] = a new process pm starts as a session leader (no
                                parent), w[1] = its pid: it gets 0, 1, 2 on the console, which
                                becomes its controlling terminal with group w[1] in front */
#define VFS_CREDS 0x7606     /* w[0] = process whose credentials changed (servers/pm/creds.c):
                                w[1] = file-system uid | gid << 32 (what files are checked
                                against and made with), w[2] = real uid | gid << 32 (access),
                                w[3] = number of supplementary groups (at most
                                VFS_CREDS_GROUPS), w[4..6] = the groups, two to a word */
#define VFS_CREDS_GROUPS 6
#define VFS_COMM 0x7607      /* w[0] = process whose main thread set its name (prctl
                                PR_SET_NAME): w[1..2] = the name, NUL-padded, 16 bytes */
#define VFS_EXEC_OPEN 0x7604 /* w[0] = process (for its working directory), w[1] = endpoint
                                whose memory holds the path, w[2] = its address: an executable
                                regular file's bytes for execve. Answer: w[0] = size or -errno
                                (ENOENT, ENOTDIR, EACCES: no x bit or not a regular file, ELOOP,
                                EFAULT, ENAMETOOLONG), w[1] = pm's handle to a read-only memory
                                object holding the bytes (pm destroys the handle when done),
                                w[2] = set-user-ID file: its owner | 1 << 32 (0: not), w[3] =
                                set-group-ID file: its group | 1 << 32 */

/* The Linux calls vfs serves (x86-64 numbers): read, write, open, close, stat, fstat,
 * lstat, lseek, ioctl, pread64, pwrite64, readv, writev, access, dup, dup2, fcntl,
 * ftruncate, getcwd, chdir, mkdir, rmdir, unlink, getdents64, openat, mkdirat, newfstatat,
 * unlinkat, faccessat, dup3, pipe, pipe2, rename, renameat, renameat2;
 * truncate, fchdir, link, symlink, readlink, linkat, symlinkat, readlinkat, faccessat2;
 * fsync, fdatasync, chmod, fchmod, chown, fchown, lchown, umask (Linux applies it where
 * files are made, so vfs keeps it per process; inherited with VFS_FORK), utime, statfs,
 * fstatfs, sync, utimes, fchownat, futimesat, fchmodat, utimensat, syncfs, statx;
 * poll, select, epoll_create, epoll_wait, epoll_ctl, pselect6, ppoll, epoll_pwait, eventfd,
 * eventfd2, epoll_create1, epoll_pwait2;
 * socket, connect, accept, sendto, recvfrom, sendmsg, recvmsg, shutdown, bind, listen,
 * getsockname, getpeername, socketpair, setsockopt, getsockopt, accept4, recvmmsg,
 * sendmmsg (sockets with no network yet: servers/vfs/socket.c), sendfile; mmap of files
 * (the kernel serves anonymous mmap itself); semget, semop, semctl, msgget, msgsnd, msgrcv,
 * msgctl, semtimedop, shmget, shmat, shmctl, shmdt (System V IPC: servers/vfs/sysv.c). */
static const uint16_t vfs_calls[] = { 0, 1, 2, 3, 4, 5, 6, 8, 16, 17, 18, 19, 20, 21, 32, 33, 72, 73, 77, 79, 80,
				      83, 84, 87, 217, 257, 258, 262, 263, 269, 292, 22, 293, 82, 264, 316,
				      76, 81, 86, 88, 89, 265, 266, 267, 439,
				      74, 75, 90, 91, 92, 93, 94, 95, 132, 133, 137, 138, 162, 235, 259, 260, 261, 268, 280, 285, 306, 332,
				      7, 23, 213, 232, 233, 270, 271, 281, 283, 284, 286, 287, 290, 291, 441,
				      41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 288, 299, 307, 9, 40,
				      64, 65, 66, 68, 69, 70, 71, 220, 29, 30, 31, 67 };
