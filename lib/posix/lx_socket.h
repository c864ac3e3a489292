/* Linux x86-64 socket system call numbers and message flags, for the servers that serve
 * socket calls (vfs, syscall): one list, not one per server. */
#pragma once

#define NR_SOCKET 41
#define NR_CONNECT 42
#define NR_ACCEPT 43
#define NR_SENDTO 44
#define NR_RECVFROM 45
#define NR_SENDMSG 46
#define NR_RECVMSG 47
#define NR_SHUTDOWN 48
#define NR_BIND 49
#define NR_LISTEN 50
#define NR_GETSOCKNAME 51
#define NR_GETPEERNAME 52
#define NR_SOCKETPAIR 53
#define NR_SETSOCKOPT 54
#define NR_GETSOCKOPT 55
#define NR_ACCEPT4 288
#define NR_RECVMMSG 299
#define NR_SENDMMSG 307

#define MSG_PEEK 2
#define MSG_TRUNC 0x20
#define MSG_DONTWAIT 0x40
