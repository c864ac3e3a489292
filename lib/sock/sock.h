/* lib/sock: the user-space socket library (docs/sockets.md, README.md). A program takes a
 * socket over with axsock_take (done lazily by the interposed C library calls, posix.c) and
 * then moves its data through the socket's buffers itself: a non-blocking receive on an
 * empty socket makes no system call. Threads sharing a socket are serialised by a spin lock
 * around ring operations; a fork gives every socket back to syscall first (both processes
 * use system calls on them afterwards); datagrams and streams (MSG_PEEK, MSG_TRUNC,
 * MSG_WAITALL, MSG_DONTWAIT; a stream's end reads 0, a reset returns its errno); a send or
 * a receive that moved data tells the stack (activity.h). Counters say how many calls were
 * resolved without a system call. */
#pragma once
#include <stdbool.h>
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
/* The buffer's mapping of fd (0 if the library never had it), forgotten: the caller unmaps
 * it once fd is closed (nothing else does; each would keep its memory). */
void axsock_mapping(int fd, uint64_t *va, uint64_t *bytes);
/* shutdown's SHUT_WR on a stream the library owns, in user space: the FIN piece after the
 * data (the engine sends FIN when it gets there); syscall never writes the TX of a socket
 * the library has. 0, or -EAGAIN (TX's descriptor queue is full) / -EBADF. */
int axsock_queue_fin(int fd);
/* Closes fd (a system call) and unmaps the buffer of a socket the library had: 0, -errno. */
int axsock_close(int fd);
/* A non-blocking connect of stream fd to a (AF_INET) by a connect descriptor: the socket is
 * taken over (its one system call, plus a kick if tcp sleeps) and SBD_CONNECT queued at the
 * head of its TX; tcp connects and tells syscall (EV_CONN), which shows AXS_CONNECTED or the
 * error in the socket's status: axsock_ready reports POLLOUT then (with POLLERR if it
 * failed). -EINPROGRESS, or -errno: then nothing was queued (the caller makes the real call;
 * the socket may be given back first). */
struct sockaddr_in;
int axsock_connect(int fd, const struct sockaddr_in *a);
/* shutdown on a stream the library owns, in user space (SHUT_WR: axsock_queue_fin; SHUT_RD:
 * reads return 0): 0, or -errno: -EBADF (not the library's stream), -EAGAIN (no room for
 * the FIN piece): then the caller gives the socket back and makes the real call. */
int axsock_shutdown(int fd, int how);
/* Gives it back to syscall: 0 or -errno. */
int axsock_give_back(int fd);
/* recvfrom / sendto on a socket taken over: the byte count, or -errno. Blocking calls (not
 * MSG_DONTWAIT, not O_NONBLOCK as posix.c tracked it) wait in poll(2) when the buffer is
 * empty or full, at most SO_RCVTIMEO/SO_SNDTIMEO (each wait) when set. */
ssize_t axsock_recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *from, socklen_t *fromlen);
ssize_t axsock_sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *to, socklen_t tolen);
/* The same with iovecs (readv/writev/recvmsg/sendmsg): msg_flags gets MSG_TRUNC for a
 * datagram cut short; no control messages. */
ssize_t axsock_recvmsg(int fd, struct msghdr *m, int flags);
ssize_t axsock_sendmsg(int fd, const struct msghdr *m, int flags);
/* sendfile(2) onto a stream taken over: the file's bytes are read (pread at *off, or read
 * from the file's position when off is NULL) straight into TX. */
ssize_t axsock_sendfile(int out, int in, off_t *off, size_t count);
/* Readiness from the rings (POLLIN: data, the peer's FIN or SHUT_RD; POLLOUT: TX room) and
 * from syscall's status in the activity page (POLLERR, POLLHUP: a reset, a hang-up), masked
 * by events; 0 for a socket not taken over. */
short axsock_ready(int fd, short events);
/* How many pieces the stack has put into fd's RX so far (EPOLLET: new data since the last
 * report is reported again, as Linux does for every arrival); 0 if not owned. */
uint64_t axsock_rx_seq(int fd);
/* FIONREAD: the next datagram's size, or a stream's bytes in its oldest RX piece (a lower
 * bound of what is buffered, 0 only when nothing is). */
int axsock_nread(int fd);

/* pread of a file from its view (file.c, lib/posix/fview.h): the byte count or -errno,
 * as the system call, which it makes when the view cannot answer or views is false (the
 * library is off, fd is a socket). */
ssize_t axfile_pread(int fd, void *buf, size_t n, off_t off, bool views);
/* fd is closed or replaced: its view goes. */
void axfile_forget(int fd);
struct axfile_counts {
	_Atomic uint64_t user;  /* preads answered from a view */
	_Atomic uint64_t vfs;   /* preads that went to vfs */
	_Atomic uint64_t views; /* views mapped */
};
extern struct axfile_counts axfile_counts;
/* Whether [p, p+len) can be user memory at all (not the first page, not past the canonical
 * lower half): the calls give EFAULT otherwise, as the system call would. */
bool axsock_user_range(const void *p, size_t len);

struct axsock_counts {
	uint64_t user;     /* calls answered from the buffers alone */
	uint64_t syscalls; /* system calls the library made (kicks, polls, take-overs) */
};
extern struct axsock_counts axsock_counts;
