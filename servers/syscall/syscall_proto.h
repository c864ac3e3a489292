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
#define SYSCALL_CLOSE 0x5300u /* vfs -> syscall: socket w[0] has no descriptor left */
/* vfs -> syscall, KC_NOTIFY: a SYSCALL_CLOSE found syscall busy (not in receive): its next
 * sleep is a plain receive, so vfs's retry (2 ms later) gets through. */
#define SYSCALL_VFS_BIT (1ull << 43)
/* syscall -> udp (and tcp): the notification bit that rings udp after pushing on
 * syscall/udp.req while udp sleeps (any bit would wake it; this one says why). */
#define SYSCALL_WAKE_BIT (1ull << 41)
