/* AF_UNIX sockets (unix.c): what socket.c, calls.c and path.c call. */
#pragma once
#include "vfs.h"
#include "lx_abi.h"

struct usock;
/* A socket of a type unix_type_ok accepts (stream, datagram, seqpacket), not yet bound or
 * connected; NULL: no memory. Its descriptor's node comes with unix_attach. */
struct usock *unix_new(int type);
bool unix_type_ok(int type);
int unix_sock_type(const struct usock *u);
void unix_attach(struct usock *u, struct rnode *node);
/* The descriptor's node closed: the socket goes (its peer sees the end, its backlog is
 * reset, its path's node forgets it). */
void unix_closed(struct usock *u);
/* socketpair(AF_UNIX, type, 0, sv). */
int64_t unix_pair(struct client *c, uint64_t type, uint64_t usv);
/* The socket calls on an AF_UNIX descriptor (VFS_NOT_MINE: socket.c's generic ones). */
int64_t unix_call(struct client *c, struct vcall *v, struct ofile *f, struct usock *u);
/* read/write and readv/writev on one. */
int64_t unix_transfer(struct client *c, struct ofile *f, struct usock *u, uint64_t ubuf, uint64_t len, bool write);
int64_t unix_vector(struct client *c, struct ofile *f, struct usock *u, uint64_t iov, uint64_t cnt, bool write);
uint32_t unix_poll(const struct usock *u);

/* socket.c: a descriptor for socket u (accept, socketpair); flags LX_SOCK_NONBLOCK and
 * LX_SOCK_CLOEXEC. The fd, or an error with u untouched. */
int64_t sock_unix_fd(struct client *c, struct usock *u, uint64_t flags);
