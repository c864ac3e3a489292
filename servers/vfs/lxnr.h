/* Linux x86-64 system call numbers and flag values vfs's calls use (the values are Linux's
 * ABI; calls.c has the first ones it served under the same names). */
#pragma once

#define NR_READV 19
#define NR_WRITEV 20
#define NR_SENDFILE 40
#define NR_POLL 7
#define NR_SELECT 23
#define NR_LINK 86
#define NR_SYMLINK 88
#define NR_READLINK 89
#define NR_TRUNCATE 76
#define NR_FCHDIR 81
#define NR_LINKAT 265
#define NR_SYMLINKAT 266
#define NR_READLINKAT 267
#define NR_FACCESSAT2 439

#define O_NONBLOCK 04000
#define O_NOFOLLOW 0400000
#define AT_SYMLINK_NOFOLLOW 0x100
#define AT_EACCESS 0x200
#define AT_SYMLINK_FOLLOW 0x400
#define AT_NO_AUTOMOUNT 0x800

/* The first calls vfs served, and the flags of open. */
#define NR_OPEN 2
#define NR_STAT 4
#define NR_FSTAT 5
#define NR_LSTAT 6
#define NR_ACCESS 21
#define NR_GETCWD 79
#define NR_CHDIR 80
#define NR_MKDIR 83
#define NR_RMDIR 84
#define NR_UNLINK 87
#define NR_OPENAT 257
#define NR_MKDIRAT 258
#define NR_MKNOD 133
#define NR_MKNODAT 259
#define NR_NEWFSTATAT 262
#define NR_UNLINKAT 263
#define NR_FACCESSAT 269
#define NR_RENAME 82
#define NR_RENAMEAT 264
#define NR_RENAMEAT2 316
#define O_ACCMODE 3
#define O_WRONLY 1
#define O_RDWR 2
#define O_CREAT 0100
#define O_EXCL 0200
#define O_TRUNC 01000
#define O_APPEND 02000
#define O_DIRECTORY 0200000
#define O_CLOEXEC 02000000
#define AT_FDCWD (-100)
#define AT_REMOVEDIR 0x200
#define AT_EMPTY_PATH 0x1000

#define NR_FSYNC 74
#define NR_FDATASYNC 75
#define NR_CHMOD 90
#define NR_FCHMOD 91
#define NR_CHOWN 92
#define NR_FCHOWN 93
#define NR_LCHOWN 94
#define NR_UMASK 95
#define NR_UTIME 132
#define NR_STATFS 137
#define NR_FSTATFS 138
#define NR_SYNC 162
#define NR_UTIMES 235
#define NR_FCHOWNAT 260
#define NR_FUTIMESAT 261
#define NR_FCHMODAT 268
#define NR_UTIMENSAT 280
#define NR_SYNCFS 306
#define NR_STATX 332

#define NR_EPOLL_CREATE 213
#define NR_EPOLL_WAIT 232
#define NR_EPOLL_CTL 233
#define NR_PSELECT6 270
#define NR_PPOLL 271
#define NR_EPOLL_PWAIT 281
#define NR_EVENTFD 284
#define NR_EVENTFD2 290
#define NR_TIMERFD_CREATE 283
#define NR_TIMERFD_SETTIME 286
#define NR_TIMERFD_GETTIME 287
#define NR_EPOLL_CREATE1 291
#define NR_EPOLL_PWAIT2 441
#define NR_FCNTL 72
/* fcntl's lock commands (x86-64: the 64-bit struct flock is the only one) */
#define LX_F_GETLK 5
#define LX_F_SETLK 6
#define LX_F_SETLKW 7
#define LX_F_OFD_GETLK 36
#define LX_F_OFD_SETLK 37
#define LX_F_OFD_SETLKW 38
