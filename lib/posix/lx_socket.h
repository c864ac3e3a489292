/* Linux x86-64 socket system call numbers, message flags, socket types and options and the
 * socket errors, for the servers that serve socket calls (vfs socket.c and unix.c, syscall):
 * one list, not one per server. */
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
#define MSG_CTRUNC 8
#define MSG_WAITALL 0x100
#define MSG_NOSIGNAL 0x4000
#define MSG_CMSG_CLOEXEC 0x40000000

#define SOCK_STREAM 1
#define SOCK_DGRAM 2
#define SOCK_SEQPACKET 5
#define SOCK_NONBLOCK 04000
#define SOCK_CLOEXEC 02000000

#define SOL_SOCKET 1
#define SO_REUSEADDR 2
#define SO_TYPE 3
#define SO_ERROR 4
#define SO_BROADCAST 6
#define SO_SNDBUF 7
#define SO_RCVBUF 8
#define SO_KEEPALIVE 9
#define SO_LINGER 13
#define SO_REUSEPORT 15
#define SO_PASSCRED 16
#define SO_PEERCRED 17
#define SO_RCVTIMEO 20
#define SO_SNDTIMEO 21
#define SO_ACCEPTCONN 30
#define SO_PROTOCOL 38
#define SO_DOMAIN 39

/* The errors socket calls answer with (positive; the servers answer their negation). */
#define E_PIPE 32
#define E_NOTSOCK 88
#define E_DESTADDRREQ 89
#define E_MSGSIZE 90
#define E_PROTOTYPE 91
#define E_NOPROTOOPT 92
#define E_PROTONOSUPPORT 93
#define E_SOCKTNOSUPPORT 94
#define E_OPNOTSUPP 95
#define E_AFNOSUPPORT 97
#define E_ADDRINUSE 98
#define E_ADDRNOTAVAIL 99
#define E_NETDOWN 100
#define E_NETUNREACH 101
#define E_CONNABORTED 103
#define E_CONNRESET 104
#define E_ISCONN 106
#define E_NOTCONN 107
#define E_CONNREFUSED 111
#define E_ALREADY 114
#define E_INPROGRESS 115
