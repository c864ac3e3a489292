/* vfs <-> syscall (servers/syscall/README.md).
 *
 * vfs keeps the file descriptors. A Linux call on an AF_INET SOCK_DGRAM socket reaches vfs
 * (the kernel routes socket calls there) and vfs passes it on with KC_LX_PASS: syscall
 * receives KMSG_LINUX_PASSED | nr from the calling thread, w[1..5] the call's arguments and
 * w[0] = vfs's socket id (low 32 bits, never 0, never reused) | SYSP_* flags << 32 in place
 * of the descriptor; w[6] = process id | passer << 32 (set by the kernel). read (0) and
 * write (1) on such a socket are passed with their own numbers.
 *
 * When the last descriptor of a passed socket goes, vfs sends SYSCALL_CLOSE {w[0] = id}
 * with KC_SENDNB (never blocking; retried from its loop while syscall is busy). */
#pragma once

#define SYSP_NONBLOCK 1u      /* the open file has O_NONBLOCK */
#define SYSP_NEW 2u           /* the socket's first passed call: syscall makes the socket
                                 (an unknown id without it: a socket of a dead syscall, EBADF) */
#define SYSP_STREAM 4u        /* a SOCK_STREAM socket (tcp's), else SOCK_DGRAM (udp's) */
#define SYSCALL_CLOSE 0x5300u /* vfs -> syscall: socket w[0] has no descriptor left */
#define SYSCALL_EXEC 0x5301u  /* vfs -> syscall: process w[0] has a new image (execve): its
                                 socket library is gone (queued with the closes, in order) */
/* vfs -> syscall, KC_NOTIFY: a SYSCALL_CLOSE found syscall busy (not in receive): its next
 * sleep is a plain receive, so vfs's retry (2 ms later) gets through. */
#define SYSCALL_VFS_BIT (1ull << 43)
/* accept and accept4 are passed with w[4] = the id vfs gives the accepted socket (fresh,
 * never used). syscall makes the socket when a connection is there, writes the peer's
 * address, and passes the call BACK to vfs (KC_LX_PASS; vfs accepts such calls only from
 * syscall): KMSG_LINUX_PASSED | 288 (accept4, also for accept) with w[0] = the new id,
 * w[1] = the accept4 flags (SOCK_NONBLOCK | SOCK_CLOEXEC); vfs makes the descriptor and
 * answers the application (a failure there: vfs answers the error and closes the socket).
 *
 * sendfile(out = a passed socket, in = a vfs file) is passed with w[1] = the in file's
 * bytes staged by vfs: w[1] = address in vfs's memory (read with KC_VCOPY from the passer),
 * w[2] = their count (at most SYSP_SENDFILE_MAX), w[3] = the user's offset pointer or 0,
 * w[4] = the starting offset. syscall queues what fits, writes *offset itself when given,
 * and passes the call back: KMSG_LINUX_PASSED | 40 with w[0] = the result (bytes or
 * -errno), w[1] = the staged address (vfs frees it), w[2] = 1 if vfs must advance the
 * file's position by the result (no offset pointer).
 *
 * Readiness: syscall exports syscall/vfs.ev (spsc of struct sysp_ready, SYSP_READY_SLOTS),
 * imported by vfs; a pushed record says socket id's POLL* bits are now `bits`; syscall
 * notifies SYSCALL_READY_BIT after pushing. vfs keeps the bits for poll/select/epoll. When
 * the channel was full, syscall pushes the change later (bits are states, not edges). */
struct sysp_ready {
	uint32_t id;
	uint32_t bits;
};
#define SYSP_READY_SLOTS 4096
#define SYSP_SENDFILE_MAX (60 * 1024) /* vfs stages it in one 64 KiB heap block */
#define SYSCALL_READY_BIT (1ull << 44)
/* syscall -> udp (and tcp): the notification bit that rings udp after pushing on
 * syscall/udp.req while udp sleeps (any bit would wake it; this one says why). */
#define SYSCALL_WAKE_BIT (1ull << 41)
