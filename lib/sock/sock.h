/* lib/sock: the user-space socket library (docs/sockets.md), first slice. A program takes a
 * socket over with axsock_take and then moves its data through the socket's buffers itself:
 * a non-blocking receive on an empty socket makes no system call. Not yet linked ahead of
 * musl (the calls are explicit), one thread per socket; a fork gives every socket back to
 * syscall first (both processes use system calls on them afterwards); datagrams and streams (MSG_PEEK, MSG_TRUNC, MSG_WAITALL,
 * MSG_DONTWAIT; a stream's end reads 0, a reset returns its errno); a send or a
 * receive that moved data tells the stack with one system call (AX_KICK) until the activity
 * page replaces it. Counters say how many calls were resolved without a system call. */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

/* Takes fd over (getsockopt AX_SOCKBUF): 0, or -errno (the socket stays with syscall). */
int axsock_take(int fd);
/* Takes fd over from what syscall already answered (an accept taken over: activity.h's
 * axsock_accepted), with no system call: 0, or -errno. */
struct ax_sockbuf;
int axsock_adopt(int fd, const struct ax_sockbuf *b);
/* fd's bit in the activity page (its status: axsock_status), AX_ACT_SOCKS if not taken. */
uint32_t axsock_bit(int fd);
/* shutdown on a stream the library has, in user space: SHUT_WR queues the FIN piece after
 * the data (the engine sends FIN when it gets there), SHUT_RD makes reads return 0. 0, or
 * -errno: -EBADF (not the library's), -EOPNOTSUPP (a datagram socket), -EAGAIN (TX's
 * descriptor queue is full: the socket was given back): then the caller makes the real
 * call. (syscall never writes the FIN of a socket the library has: one producer per ring.) */
int axsock_shutdown(int fd, int how);
/* Closes fd (a system call) and, if the library had it, unmaps its buffer: 0 or -errno. */
int axsock_close(int fd);
/* Gives it back to syscall: 0 or -errno. */
int axsock_give_back(int fd);
/* recvfrom / sendto on a socket taken over: the byte count, or -errno. Blocking calls wait
 * in poll(2) when the buffer is empty or full. */
ssize_t axsock_recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *from, socklen_t *fromlen);
ssize_t axsock_sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *to, socklen_t tolen);

struct axsock_counts {
	uint64_t user;     /* calls answered from the buffers alone */
	uint64_t syscalls; /* system calls the library made (kicks, polls, take-overs) */
};
extern struct axsock_counts axsock_counts;
