/* tcptest [calls] [conn] [data] [poll] [bulk]: the socket calls of AF_INET stream sockets
 * over 127.0.0.1 as Linux defines them (errno values included). Built with musl-gcc for
 * Axolotl's initrd and run on the Linux host too, where every check must pass: that is what
 * proves the expectations are Linux's. No argument runs every group.
 *   calls  no connection: socket, bind, listen, options, calls on unconnected sockets
 *   conn   accept/accept4, blocking and non-blocking connect, ECONNREFUSED, names
 *   data   the data calls and their flags, shutdown, close with unread data, SO_LINGER 0
 *   poll   poll/select/epoll on listeners and connections, edge-triggered epoll
 *   bulk   4 MiB both ways at once, 200 connections, fork, sendfile
 *   stall  (only when named) both directions of a connection filled and left unread until
 *          the file STALL_GO exists (at most 10 minutes), then every byte read and checked
 * Prints `TCPTEST PASS|FAIL name` per check and `tcptest: N passed, M failed`. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include "libcount.h"

static int passed, failed;

static void check(const char *name, int ok)
{
	printf("TCPTEST %s %s\n", ok ? "PASS" : "FAIL", name);
	if (ok)
		passed++;
	else
		failed++;
}
/* The call failed with exactly this errno. */
#define ERR(name, call, e) do { errno = 0; long r_ = (long)(call); int e_ = errno; \
	check(name, r_ == -1 && e_ == (e)); if (r_ != -1 || e_ != (e)) printf("  %s: got %ld errno %d, want %d\n", name, r_, e_, e); } while (0)
/* The call returned want. */
#define EQ(name, call, want) do { errno = 0; long r_ = (long)(call); int e_ = errno; \
	check(name, r_ == (long)(want)); if (r_ != (long)(want)) printf("  %s: got %ld errno %d, want %ld\n", name, r_, e_, (long)(want)); } while (0)

#define SA(a) ((struct sockaddr *)&(a))
#define BAD_PTR ((void *)16)

static struct sockaddr_in sin_of(uint32_t addr, uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(addr) };
	return a;
}

static int tcp(void) { return socket(AF_INET, SOCK_STREAM, 0); }

static uint16_t local_port(int fd)
{
	struct sockaddr_in a;
	socklen_t l = sizeof(a);
	return getsockname(fd, SA(a), &l) == 0 ? ntohs(a.sin_port) : 0;
}

static int intopt(int fd, int level, int name)
{
	int v = -12345;
	socklen_t l = sizeof(v);
	return getsockopt(fd, level, name, &v, &l) == 0 ? v : -12345;
}

/* A listener on 127.0.0.1 and an ephemeral port. */
static int listener(uint16_t *port, int backlog)
{
	int l = tcp();
	struct sockaddr_in a = sin_of(INADDR_LOOPBACK, 0);
	if (l < 0 || bind(l, SA(a), sizeof(a)) || listen(l, backlog))
		printf("  listener: %s\n", strerror(errno));
	*port = local_port(l);
	return l;
}

static int connect_to(uint16_t port)
{
	int c = tcp();
	struct sockaddr_in a = sin_of(INADDR_LOOPBACK, port);
	if (connect(c, SA(a), sizeof(a)))
		printf("  connect to %u: %s\n", port, strerror(errno));
	return c;
}

/* A connected pair over loopback: *c connected, *s accepted. */
static void pair(int *c, int *s)
{
	uint16_t port;
	int l = listener(&port, 4);
	*c = connect_to(port);
	*s = accept(l, NULL, NULL);
	close(l);
}

/* Reads exactly n bytes (or fewer at end of stream or on an error). */
static size_t read_full(int fd, void *buf, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(fd, (char *)buf + got, n - got);
		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			break;
		}
		got += (size_t)r;
	}
	return got;
}

static int readable(int fd, int ms)
{
	struct pollfd p = { fd, POLLIN, 0 };
	return poll(&p, 1, ms) == 1 ? p.revents : 0;
}

static long ms_since(const struct timeval *t0)
{
	struct timeval t1;
	gettimeofday(&t1, NULL);
	return (t1.tv_sec - t0->tv_sec) * 1000 + (t1.tv_usec - t0->tv_usec) / 1000;
}

static volatile sig_atomic_t sigpipes;
static void on_sigpipe(int sig) { (void)sig; sigpipes++; }

static void calls(void)
{
	struct sockaddr_in a = sin_of(INADDR_ANY, 0);
	socklen_t len;
	char buf[64];
	ERR("socket_udp_proto", socket(AF_INET, SOCK_STREAM, IPPROTO_UDP), EPROTONOSUPPORT);
	int p = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
	check("socket_ipproto_tcp", p >= 0);
	close(p);
	int s = tcp();
	check("socket", s >= 0);
	EQ("so_type", intopt(s, SOL_SOCKET, SO_TYPE), SOCK_STREAM);
	EQ("so_acceptconn_unbound", intopt(s, SOL_SOCKET, SO_ACCEPTCONN), 0);
	EQ("so_error_none", intopt(s, SOL_SOCKET, SO_ERROR), 0);
	ERR("bind_efault", bind(s, BAD_PTR, sizeof(a)), EFAULT);
	ERR("bind_short", bind(s, SA(a), 8), EINVAL);
	ERR("recv_unconnected", recv(s, buf, sizeof(buf), MSG_DONTWAIT), ENOTCONN);
	ERR("send_unconnected_epipe", send(s, "x", 1, MSG_NOSIGNAL), EPIPE);
	ERR("shutdown_unconnected", shutdown(s, SHUT_RDWR), ENOTCONN);
	len = sizeof(a);
	ERR("getpeername_unconnected", getpeername(s, SA(a), &len), ENOTCONN);
	len = sizeof(a);
	check("getsockname_unbound", getsockname(s, SA(a), &len) == 0 && a.sin_port == 0 && len == sizeof(a));
	ERR("accept_unbound", accept(s, NULL, NULL), EINVAL);
	a = sin_of(INADDR_LOOPBACK, 0);
	check("bind_ephemeral", bind(s, SA(a), sizeof(a)) == 0);
	uint16_t port = local_port(s);
	check("getsockname_after_bind", port != 0);
	ERR("bind_twice_einval", bind(s, SA(a), sizeof(a)), EINVAL);
	ERR("accept_not_listening", accept(s, NULL, NULL), EINVAL);
	check("listen", listen(s, 8) == 0);
	check("listen_again", listen(s, 16) == 0);
	EQ("so_acceptconn_listener", intopt(s, SOL_SOCKET, SO_ACCEPTCONN), 1);
	len = sizeof(a);
	ERR("getpeername_listener", getpeername(s, SA(a), &len), ENOTCONN);
	int t = tcp();
	struct sockaddr_in same = sin_of(INADDR_LOOPBACK, port);
	ERR("eaddrinuse", bind(t, SA(same), sizeof(same)), EADDRINUSE);
	struct sockaddr_in same_any = sin_of(INADDR_ANY, port);
	ERR("eaddrinuse_any", bind(t, SA(same_any), sizeof(same_any)), EADDRINUSE);
	int one = 1;
	/* SO_REUSEADDR does not let a second socket bind a listener's port. */
	check("so_reuseaddr_set", setsockopt(t, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == 0);
	check("so_reuseaddr_get", intopt(t, SOL_SOCKET, SO_REUSEADDR) != 0);
	ERR("eaddrinuse_reuseaddr_listener", bind(t, SA(same), sizeof(same)), EADDRINUSE);
	close(t);
	/* listen without bind: an ephemeral port. */
	int u = tcp();
	check("listen_unbound", listen(u, 4) == 0);
	check("listen_unbound_ephemeral_port", local_port(u) != 0);
	int nl = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	check("listen_nonblocking", listen(nl, 4) == 0);
	ERR("accept_nonblocking_eagain", accept(nl, NULL, NULL), EAGAIN);
	ERR("accept4_nonblocking_eagain", accept4(nl, NULL, NULL, SOCK_CLOEXEC), EAGAIN);
	/* (the system call itself: musl's accept4 retries an EINVAL as a plain accept) */
	ERR("accept4_bad_flag", syscall(SYS_accept4, nl, NULL, NULL, 0x4000000), EINVAL);
	fcntl(u, F_SETFL, O_NONBLOCK);
	ERR("accept_o_nonblock_eagain", accept(u, NULL, NULL), EAGAIN);
	close(nl);
	close(u);
	/* Options on a fresh socket. */
	int o = tcp(), v;
	check("so_keepalive_default", intopt(o, SOL_SOCKET, SO_KEEPALIVE) == 0);
	check("so_keepalive_set", setsockopt(o, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one)) == 0);
	EQ("so_keepalive_on", intopt(o, SOL_SOCKET, SO_KEEPALIVE), 1);
	struct linger lg = { 1, 5 }, lg2 = { 0, 0 };
	check("so_linger_set", setsockopt(o, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)) == 0);
	len = sizeof(lg2);
	check("so_linger_get", getsockopt(o, SOL_SOCKET, SO_LINGER, &lg2, &len) == 0 && len == sizeof(lg2) &&
	      lg2.l_onoff == 1 && lg2.l_linger == 5);
	check("so_sndbuf_default", intopt(o, SOL_SOCKET, SO_SNDBUF) > 0);
	check("so_rcvbuf_default", intopt(o, SOL_SOCKET, SO_RCVBUF) > 0);
	v = 65536;
	check("so_sndbuf_set", setsockopt(o, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v)) == 0);
	EQ("so_sndbuf_doubled", intopt(o, SOL_SOCKET, SO_SNDBUF), 131072);
	check("so_rcvbuf_set", setsockopt(o, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v)) == 0);
	EQ("so_rcvbuf_doubled", intopt(o, SOL_SOCKET, SO_RCVBUF), 131072);
	EQ("tcp_nodelay_default", intopt(o, IPPROTO_TCP, TCP_NODELAY), 0);
	check("tcp_nodelay_set", setsockopt(o, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) == 0);
	EQ("tcp_nodelay_on", intopt(o, IPPROTO_TCP, TCP_NODELAY), 1);
	v = 1000;
	check("tcp_maxseg_set", setsockopt(o, IPPROTO_TCP, TCP_MAXSEG, &v, sizeof(v)) == 0);
	check("tcp_maxseg_get", intopt(o, IPPROTO_TCP, TCP_MAXSEG) > 0);
	char cc[16] = "";
	len = sizeof(cc);
	check("tcp_congestion_get", getsockopt(o, IPPROTO_TCP, TCP_CONGESTION, cc, &len) == 0 && cc[0] != 0);
	check("tcp_congestion_set_reno", setsockopt(o, IPPROTO_TCP, TCP_CONGESTION, "reno", 4) == 0);
	ERR("tcp_congestion_unknown", setsockopt(o, IPPROTO_TCP, TCP_CONGESTION, "nosuchcc", 8), ENOENT);
	struct tcp_info ti;
	len = sizeof(ti);
	check("tcp_info_closed", getsockopt(o, IPPROTO_TCP, TCP_INFO, &ti, &len) == 0 && ti.tcpi_state == TCP_CLOSE);
	ERR("setsockopt_short", setsockopt(o, SOL_SOCKET, SO_KEEPALIVE, &one, 2), EINVAL);
	ERR("setsockopt_efault", setsockopt(o, SOL_SOCKET, SO_KEEPALIVE, BAD_PTR, 4), EFAULT);
	len = sizeof(v);
	ERR("getsockopt_unknown", getsockopt(o, SOL_SOCKET, 12345, &v, &len), ENOPROTOOPT);
	len = sizeof(v);
	ERR("getsockopt_tcp_unknown", getsockopt(o, IPPROTO_TCP, 12345, &v, &len), ENOPROTOOPT);
	close(o);
	close(s);
	ERR("closed_fd", send(s, "x", 1, 0), EBADF);
	/* The port is free again once its listener has gone. */
	int r = tcp();
	check("port_reusable_after_close", bind(r, SA(same), sizeof(same)) == 0);
	close(r);
}

static void conn(void)
{
	uint16_t port;
	int l = listener(&port, 8);
	/* Blocking connect; accept fills in the peer's address. */
	int c = connect_to(port);
	check("connect_blocking", c >= 0 && local_port(c) != 0);
	struct sockaddr_in peer, name;
	socklen_t pl = sizeof(peer), nl = sizeof(name);
	int s = accept(l, SA(peer), &pl);
	getsockname(c, SA(name), &nl);
	check("accept", s >= 0);
	check("accept_peer_address", pl == sizeof(peer) && peer.sin_family == AF_INET && peer.sin_port == name.sin_port &&
	      peer.sin_addr.s_addr == htonl(INADDR_LOOPBACK));
	pl = sizeof(peer);
	check("getpeername_client", getpeername(c, SA(peer), &pl) == 0 && ntohs(peer.sin_port) == port &&
	      peer.sin_addr.s_addr == htonl(INADDR_LOOPBACK));
	pl = sizeof(peer);
	check("getpeername_accepted", getpeername(s, SA(peer), &pl) == 0 && peer.sin_port == name.sin_port);
	check("getsockname_accepted", local_port(s) == port);
	EQ("so_acceptconn_connected", intopt(c, SOL_SOCKET, SO_ACCEPTCONN), 0);
	check("accepted_is_blocking", !(fcntl(s, F_GETFL) & O_NONBLOCK) && !(fcntl(s, F_GETFD) & FD_CLOEXEC));
	struct sockaddr_in to = sin_of(INADDR_LOOPBACK, port);
	ERR("connect_eisconn", connect(c, SA(to), sizeof(to)), EISCONN);
	ERR("listen_connected_einval", listen(c, 4), EINVAL);
	struct tcp_info ti;
	socklen_t tl = sizeof(ti);
	check("tcp_info_established", getsockopt(c, IPPROTO_TCP, TCP_INFO, &ti, &tl) == 0 && ti.tcpi_state == TCP_ESTABLISHED);
	check("tcp_info_numbers", tl >= 104 && ti.tcpi_snd_mss > 0 && ti.tcpi_rto > 0 && ti.tcpi_snd_cwnd > 0 &&
	      ti.tcpi_unacked == 0);
	check("tcp_maxseg_connected", intopt(c, IPPROTO_TCP, TCP_MAXSEG) > 0);
	EQ("so_error_connected", intopt(c, SOL_SOCKET, SO_ERROR), 0);
	close(c);
	close(s);
	/* An accepted socket starts with the listener's options; TCP_MAXSEG caps the MSS. */
	{
		uint16_t p2;
		int l2 = listener(&p2, 4), one = 1, idle = 77, mss = 1000;
		setsockopt(l2, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		setsockopt(l2, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
		setsockopt(l2, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
		int c2 = tcp();
		struct sockaddr_in t2 = sin_of(INADDR_LOOPBACK, p2);
		check("tcp_maxseg_before_connect", setsockopt(c2, IPPROTO_TCP, TCP_MAXSEG, &mss, sizeof(mss)) == 0);
		check("connect_with_maxseg", connect(c2, SA(t2), sizeof(t2)) == 0);
		int s2 = accept(l2, NULL, NULL);
		EQ("accepted_inherits_nodelay", intopt(s2, IPPROTO_TCP, TCP_NODELAY), 1);
		EQ("accepted_inherits_keepalive", intopt(s2, SOL_SOCKET, SO_KEEPALIVE), 1);
		EQ("accepted_inherits_keepidle", intopt(s2, IPPROTO_TCP, TCP_KEEPIDLE), 77);
		int m2 = intopt(c2, IPPROTO_TCP, TCP_MAXSEG);
		check("tcp_maxseg_capped", m2 > 0 && m2 <= 1000);
		char b2[3000];
		memset(b2, 'm', sizeof(b2));
		check("maxseg_data_flows", write(c2, b2, sizeof(b2)) == (ssize_t)sizeof(b2) && read_full(s2, b2, sizeof(b2)) == sizeof(b2));
		close(c2);
		close(s2);
		close(l2);
	}
	/* accept4 flags land on the new descriptor. */
	c = connect_to(port);
	s = accept4(l, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	check("accept4_flags", s >= 0 && (fcntl(s, F_GETFL) & O_NONBLOCK) && (fcntl(s, F_GETFD) & FD_CLOEXEC));
	check("accept4_listener_unchanged", !(fcntl(l, F_GETFL) & O_NONBLOCK));
	char buf[16];
	ERR("accept4_nonblock_recv_eagain", recv(s, buf, sizeof(buf), 0), EAGAIN);
	close(c);
	close(s);
	/* Non-blocking connect: EINPROGRESS, then writable with SO_ERROR 0. */
	c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	ERR("connect_einprogress", connect(c, SA(to), sizeof(to)), EINPROGRESS);
	/* Still in progress: EALREADY; already done: Linux says 0 once (it marks it connected). */
	errno = 0;
	int r = connect(c, SA(to), sizeof(to));
	check("connect_again_ealready", (r == -1 && errno == EALREADY) || r == 0);
	struct pollfd pf = { c, POLLOUT, 0 };
	check("connect_poll_writable", poll(&pf, 1, 5000) == 1 && (pf.revents & POLLOUT) && !(pf.revents & POLLERR));
	EQ("connect_so_error_0", intopt(c, SOL_SOCKET, SO_ERROR), 0);
	if (r == -1)
		connect(c, SA(to), sizeof(to)); /* the once that says 0 */
	ERR("connect_done_eisconn", connect(c, SA(to), sizeof(to)), EISCONN);
	s = accept(l, NULL, NULL);
	check("connect_nonblocking_accepted", s >= 0);
	close(c);
	close(s);
	/* select and epoll see the completion too. */
	c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	connect(c, SA(to), sizeof(to));
	fd_set w;
	FD_ZERO(&w);
	FD_SET(c, &w);
	struct timeval tv = { 5, 0 };
	check("connect_select_writable", select(c + 1, NULL, &w, NULL, &tv) == 1 && FD_ISSET(c, &w));
	close(c);
	close(accept(l, NULL, NULL));
	c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLOUT, .data.u32 = 7 }, got;
	connect(c, SA(to), sizeof(to));
	epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev);
	check("connect_epoll_writable", epoll_wait(ep, &got, 1, 5000) == 1 && (got.events & EPOLLOUT) && got.data.u32 == 7);
	close(ep);
	close(c);
	close(accept(l, NULL, NULL));
	close(l);
	/* Nobody listens: ECONNREFUSED, blocking and not. */
	int gone = tcp();
	struct sockaddr_in any = sin_of(INADDR_LOOPBACK, 0);
	bind(gone, SA(any), sizeof(any));
	struct sockaddr_in dead = sin_of(INADDR_LOOPBACK, local_port(gone));
	close(gone);
	c = tcp();
	ERR("connect_econnrefused", connect(c, SA(dead), sizeof(dead)), ECONNREFUSED);
	close(c);
	c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	r = connect(c, SA(dead), sizeof(dead));
	int e = errno;
	pf = (struct pollfd){ c, POLLOUT, 0 };
	int pr = poll(&pf, 1, 5000);
	check("connect_nonblocking_refused", r == -1 && (e == EINPROGRESS || e == ECONNREFUSED) && pr == 1 &&
	      (pf.revents & POLLERR));
	EQ("connect_refused_so_error", intopt(c, SOL_SOCKET, SO_ERROR), ECONNREFUSED);
	EQ("so_error_cleared", intopt(c, SOL_SOCKET, SO_ERROR), 0);
	close(c);
	ERR("connect_efault", connect(tcp(), BAD_PTR, sizeof(to)), EFAULT);
}

static void data(void)
{
	int c, s;
	char buf[256];
	pair(&c, &s);
	ERR("recv_dontwait_eagain", recv(s, buf, sizeof(buf), MSG_DONTWAIT), EAGAIN);
	EQ("send", send(c, "hello", 5, 0), 5);
	check("peek", readable(s, 5000) && recv(s, buf, sizeof(buf), MSG_PEEK) == 5 && !memcmp(buf, "hello", 5));
	check("recv_after_peek", recv(s, buf, sizeof(buf), 0) == 5 && !memcmp(buf, "hello", 5));
	EQ("write", write(c, "0123456789", 10), 10);
	check("read", read_full(s, buf, 10) == 10 && !memcmp(buf, "0123456789", 10));
	struct iovec out[3] = { { "ab", 2 }, { "cde", 3 }, { "fghij", 5 } };
	EQ("writev", writev(c, out, 3), 10);
	char p1[4], p2[6];
	struct iovec in[2] = { { p1, 4 }, { p2, 6 } };
	readable(s, 5000);
	usleep(20000);
	check("readv", readv(s, in, 2) == 10 && !memcmp(p1, "abcd", 4) && !memcmp(p2, "efghij", 6));
	struct msghdr mh = { .msg_iov = out, .msg_iovlen = 3 };
	EQ("sendmsg", sendmsg(c, &mh, MSG_NOSIGNAL), 10);
	/* A short buffer takes part of the stream: no MSG_TRUNC, the rest stays. */
	struct iovec one = { p1, 4 };
	struct msghdr rh = { .msg_iov = &one, .msg_iovlen = 1 };
	readable(s, 5000);
	usleep(20000);
	ssize_t n = recvmsg(s, &rh, 0);
	check("recvmsg_partial", n == 4 && !memcmp(p1, "abcd", 4));
	check("recvmsg_no_msg_trunc", !(rh.msg_flags & MSG_TRUNC));
	check("recvmsg_rest", recv(s, buf, sizeof(buf), 0) == 6 && !memcmp(buf, "efghij", 6));
	/* MSG_TRUNC on a stream (Linux): the bytes are taken and thrown away. */
	send(c, "ABCDEFGH", 8, 0);
	readable(s, 5000);
	usleep(20000);
	memset(buf, 0, sizeof(buf));
	check("recv_msg_trunc_discards", recv(s, buf, 3, MSG_TRUNC) == 3 && buf[0] == 0);
	check("recv_after_msg_trunc", recv(s, buf, sizeof(buf), 0) == 5 && !memcmp(buf, "DEFGH", 5));
	send(c, "xyz", 3, MSG_DONTWAIT);
	check("recvfrom_null_addr", readable(s, 5000) && recvfrom(s, buf, sizeof(buf), 0, NULL, NULL) == 3);
	/* MSG_WAITALL waits for the whole request. */
	pid_t kid = fork();
	if (kid == 0) {
		for (int i = 0; i < 4; i++) {
			usleep(20000);
			send(c, "wait", 4, 0);
		}
		_exit(0);
	}
	check("recv_waitall", recv(s, buf, 16, MSG_WAITALL) == 16 && !memcmp(buf + 12, "wait", 4));
	waitpid(kid, NULL, 0);
	/* SO_RCVTIMEO: EAGAIN after the timeout. */
	struct timeval tv = { 0, 150000 }, t0;
	check("so_rcvtimeo_set", setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == 0);
	struct timeval tv2 = { 0, 0 };
	socklen_t tl = sizeof(tv2);
	check("so_rcvtimeo_get", getsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv2, &tl) == 0 && tv2.tv_sec == 0 &&
	      tv2.tv_usec >= 140000 && tv2.tv_usec <= 160000);
	gettimeofday(&t0, NULL);
	ERR("so_rcvtimeo_eagain", recv(s, buf, sizeof(buf), 0), EAGAIN);
	long ms = ms_since(&t0);
	check("so_rcvtimeo_waited", ms >= 130 && ms < 5000);
	/* SO_SNDTIMEO: a blocking send into a full connection gives back what it queued once the
	 * timeout passes, or EAGAIN if nothing went (Linux may still find room: buffers grow). */
	{
		int sc, ss;
		pair(&sc, &ss);
		struct timeval st = { 0, 150000 }, st2 = { 0, 0 };
		socklen_t sl = sizeof(st2);
		check("so_sndtimeo_set", setsockopt(sc, SOL_SOCKET, SO_SNDTIMEO, &st, sizeof(st)) == 0);
		check("so_sndtimeo_get", getsockopt(sc, SOL_SOCKET, SO_SNDTIMEO, &st2, &sl) == 0 && st2.tv_sec == 0 &&
		      st2.tv_usec >= 140000 && st2.tv_usec <= 160000);
		static char fill[8 << 20];
		ssize_t n1 = send(sc, fill, sizeof(fill), 0);
		check("so_sndtimeo_partial", n1 > 0 && n1 < (ssize_t)sizeof(fill));
		gettimeofday(&t0, NULL);
		errno = 0;
		ssize_t n2 = send(sc, fill, sizeof(fill), 0);
		long sms = ms_since(&t0);
		check("so_sndtimeo_again", (n2 > 0 && n2 < (ssize_t)sizeof(fill)) || (n2 == -1 && errno == EAGAIN));
		check("so_sndtimeo_waited", sms >= 130 && sms < 5000);
		close(sc);
		close(ss);
	}
	/* shutdown(SHUT_WR): the peer reads end of stream and can still answer. */
	check("shutdown_wr", shutdown(c, SHUT_WR) == 0);
	check("peer_reads_eof", readable(s, 5000) && read(s, buf, sizeof(buf)) == 0);
	check("peer_reads_eof_again", read(s, buf, sizeof(buf)) == 0);
	check("peer_sends_back", write(s, "back", 4) == 4);
	check("half_closed_receives", readable(c, 5000) && read(c, buf, sizeof(buf)) == 4 && !memcmp(buf, "back", 4));
	sigpipes = 0;
	ERR("send_after_shut_wr_epipe", send(c, "x", 1, MSG_NOSIGNAL), EPIPE);
	check("msg_nosignal_no_sigpipe", sigpipes == 0);
	ERR("write_after_shut_wr_epipe", write(c, "x", 1), EPIPE);
	check("write_raises_sigpipe", sigpipes == 1);
	close(c);
	close(s);
	/* The peer closed: sends end in EPIPE (after its RST), without SIGPIPE under MSG_NOSIGNAL. */
	pair(&c, &s);
	close(s);
	readable(c, 5000);
	check("read_eof_after_peer_close", read(c, buf, sizeof(buf)) == 0);
	sigpipes = 0;
	int r = 0, e = 0;
	for (int i = 0; i < 200; i++) {
		errno = 0;
		r = (int)send(c, "data", 4, MSG_NOSIGNAL);
		e = errno;
		if (r < 0)
			break;
		usleep(10000);
	}
	check("send_to_closed_peer_epipe", r == -1 && e == EPIPE);
	check("send_to_closed_peer_no_sigpipe", sigpipes == 0);
	close(c);
	/* Close with unread data resets the connection: the peer sees ECONNRESET. */
	pair(&c, &s);
	send(c, "unread", 6, 0);
	readable(s, 5000);
	close(s);
	readable(c, 5000);
	ERR("close_unread_econnreset", recv(c, buf, sizeof(buf), 0), ECONNRESET);
	check("after_reset_eof", recv(c, buf, sizeof(buf), 0) == 0);
	close(c);
	/* SO_LINGER {1, 0}: close aborts with a reset. */
	pair(&c, &s);
	struct linger lg = { 1, 0 };
	setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(s);
	readable(c, 5000);
	ERR("linger0_econnreset", recv(c, buf, sizeof(buf), 0), ECONNRESET);
	close(c);
	/* SHUT_RD: reads give end of stream at once. */
	pair(&c, &s);
	check("shutdown_rd", shutdown(s, SHUT_RD) == 0);
	check("recv_after_shut_rd", recv(s, buf, sizeof(buf), 0) == 0);
	ERR("shutdown_bad_how", shutdown(s, 7), EINVAL);
	close(c);
	close(s);
	/* Blocking send of more than fits: a child drains it. */
	pair(&c, &s);
	static char big[1 << 20];
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)(i * 13 + 1);
	kid = fork();
	if (kid == 0) {
		static char back[1 << 20];
		close(c);
		size_t got = read_full(s, back, sizeof(back));
		_exit(got == sizeof(back) && !memcmp(back, big, sizeof(big)) ? 0 : 1);
	}
	close(s);
	EQ("send_1mib_blocking", send(c, big, sizeof(big), 0), (long)sizeof(big));
	int st = -1;
	waitpid(kid, &st, 0);
	check("send_1mib_received", WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(c);
}

static void polls(void)
{
	uint16_t port;
	int l = listener(&port, 8);
	struct pollfd p = { l, POLLIN, 0 };
	check("poll_listener_idle", poll(&p, 1, 0) == 0);
	int ep = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = l }, got[4];
	epoll_ctl(ep, EPOLL_CTL_ADD, l, &ev);
	check("epoll_listener_idle", epoll_wait(ep, got, 4, 0) == 0);
	int c = connect_to(port);
	check("poll_listener_pending", poll(&p, 1, 5000) == 1 && (p.revents & POLLIN));
	fd_set r;
	FD_ZERO(&r);
	FD_SET(l, &r);
	struct timeval tv = { 5, 0 };
	check("select_listener_pending", select(l + 1, &r, NULL, NULL, &tv) == 1 && FD_ISSET(l, &r));
	check("epoll_listener_pending", epoll_wait(ep, got, 4, 5000) == 1 && got[0].data.fd == l && (got[0].events & EPOLLIN));
	int s = accept(l, NULL, NULL);
	p.revents = 0;
	check("poll_listener_drained", poll(&p, 1, 0) == 0);
	epoll_ctl(ep, EPOLL_CTL_DEL, l, NULL);
	/* A connection: writable at once, readable with data. */
	p = (struct pollfd){ s, POLLIN | POLLOUT | POLLRDHUP, 0 };
	check("poll_conn_writable", poll(&p, 1, 0) == 1 && p.revents == POLLOUT);
	send(c, "ping", 4, 0);
	p = (struct pollfd){ s, POLLIN | POLLRDHUP, 0 }; /* not POLLOUT: it would end the wait at once */
	check("poll_conn_readable", poll(&p, 1, 5000) == 1 && (p.revents & POLLIN) && !(p.revents & (POLLHUP | POLLRDHUP)));
	FD_ZERO(&r);
	FD_SET(s, &r);
	tv = (struct timeval){ 5, 0 };
	check("select_conn_readable", select(s + 1, &r, NULL, NULL, &tv) == 1 && FD_ISSET(s, &r));
	/* Edge-triggered: one event per arrival, not per poll. */
	ev = (struct epoll_event){ .events = EPOLLIN | EPOLLET, .data.fd = s };
	epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev);
	check("epoll_et_first", epoll_wait(ep, got, 4, 5000) == 1 && got[0].data.fd == s && (got[0].events & EPOLLIN));
	check("epoll_et_no_repeat", epoll_wait(ep, got, 4, 100) == 0);
	send(c, "more", 4, 0);
	check("epoll_et_new_data", epoll_wait(ep, got, 4, 5000) == 1 && (got[0].events & EPOLLIN));
	char buf[64];
	check("epoll_et_read_all", recv(s, buf, sizeof(buf), 0) == 8 && !memcmp(buf, "pingmore", 8));
	check("epoll_et_drained", recv(s, buf, sizeof(buf), MSG_DONTWAIT) == -1 && errno == EAGAIN);
	/* Level-triggered epoll repeats while data waits. */
	int ep2 = epoll_create1(0);
	ev = (struct epoll_event){ .events = EPOLLIN | EPOLLRDHUP, .data.fd = s };
	epoll_ctl(ep2, EPOLL_CTL_ADD, s, &ev);
	send(c, "lvl", 3, 0);
	check("epoll_lt_first", epoll_wait(ep2, got, 4, 5000) == 1);
	check("epoll_lt_repeat", epoll_wait(ep2, got, 4, 0) == 1 && (got[0].events & EPOLLIN));
	recv(s, buf, sizeof(buf), 0);
	check("epoll_lt_drained", epoll_wait(ep2, got, 4, 0) == 0);
	/* The peer closes: readable, POLLRDHUP, read 0; POLLHUP once we shut down too. */
	close(c);
	p = (struct pollfd){ s, POLLIN | POLLRDHUP, 0 };
	check("poll_peer_closed_rdhup", poll(&p, 1, 5000) == 1 && (p.revents & POLLIN) && (p.revents & POLLRDHUP));
	check("epoll_peer_closed_rdhup", epoll_wait(ep2, got, 4, 5000) == 1 && (got[0].events & EPOLLRDHUP));
	check("read_eof", read(s, buf, sizeof(buf)) == 0);
	shutdown(s, SHUT_WR);
	p = (struct pollfd){ s, POLLIN, 0 };
	check("poll_both_closed_hup", poll(&p, 1, 5000) == 1 && (p.revents & POLLHUP));
	close(ep2);
	close(ep);
	close(s);
	close(l);
}

static uint8_t pattern(uint64_t i, unsigned seed) { return (uint8_t)((i * 2654435761u + seed) >> 7); }

/* buf gets the pattern's n bytes from stream offset at. */
static void fill_pattern(uint8_t *buf, size_t n, uint64_t at, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		buf[i] = pattern(at + i, seed);
}

/* How many of buf's n bytes differ from the pattern at stream offset at. */
static int count_bad(const uint8_t *buf, ssize_t n, uint64_t at, unsigned seed)
{
	int bad = 0;
	for (ssize_t i = 0; i < n; i++)
		bad += buf[i] != pattern(at + (uint64_t)i, seed);
	return bad;
}

/* size bytes each way at once between a and b (non-blocking, one poll loop), checked. */
static int both_ways(int a, int b, size_t size)
{
	fcntl(a, F_SETFL, O_NONBLOCK);
	fcntl(b, F_SETFL, O_NONBLOCK);
	int fds[2] = { a, b };
	size_t sent[2] = { 0, 0 }, got[2] = { 0, 0 };
	int bad = 0;
	static uint8_t buf[65536];
	struct timeval t0;
	gettimeofday(&t0, NULL);
	long polls = 0, longest = 0, slow = 0; /* what the wait cost: printed for issue 19's notes */
	while ((sent[0] < size || sent[1] < size || got[0] < size || got[1] < size) && ms_since(&t0) < 300000) {
		struct pollfd p[2];
		for (int k = 0; k < 2; k++)
			p[k] = (struct pollfd){ fds[k], (short)((got[k] < size ? POLLIN : 0) | (sent[k] < size ? POLLOUT : 0)), 0 };
		long before = ms_since(&t0);
		int ready = poll(p, 2, 5000);
		long waited = ms_since(&t0) - before;
		polls++;
		slow += waited >= 100;
		longest = waited > longest ? waited : longest;
		if (ready <= 0) {
			printf("  both_ways: poll gave %d after %ld ms (events %#x %#x)\n", ready, waited, p[0].events, p[1].events);
			break;
		}
		for (int k = 0; k < 2; k++) {
			if ((p[k].revents & POLLOUT) && sent[k] < size) {
				size_t n = size - sent[k] < sizeof(buf) ? size - sent[k] : sizeof(buf);
				fill_pattern(buf, n, sent[k], (unsigned)k);
				ssize_t w = send(fds[k], buf, n, MSG_NOSIGNAL);
				if (w > 0)
					sent[k] += (size_t)w;
			}
			if (p[k].revents & (POLLIN | POLLHUP | POLLERR)) {
				ssize_t n = recv(fds[k], buf, sizeof(buf), 0);
				if (n == 0 || (n < 0 && errno != EAGAIN))
					return 0;
				bad += count_bad(buf, n, got[k], (unsigned)!k);
				if (n > 0)
					got[k] += (size_t)n;
			}
		}
	}
	printf("  both_ways: %ld ms, %ld polls, %ld waits of 100 ms or more, longest %ld ms\n", ms_since(&t0), polls, slow, longest);
	if (got[0] != size || got[1] != size || bad)
		printf("  both_ways: sent %zu/%zu got %zu/%zu, %d bad bytes\n", sent[0], sent[1], got[0], got[1], bad);
	return got[0] == size && got[1] == size && !bad;
}

static void bulk(void)
{
	int c, s;
	pair(&c, &s);
	check("transfer_4mib_both_ways", both_ways(c, s, 4 << 20));
	close(c);
	close(s);
	/* 200 connections opened, used and closed. */
	uint16_t port;
	int l = listener(&port, 16), ok = 0;
	for (int i = 0; i < 200; i++) {
		int a = connect_to(port), b = accept(l, NULL, NULL);
		char x = (char)i, y = 0;
		if (a >= 0 && b >= 0 && write(a, &x, 1) == 1 && read(b, &y, 1) == 1 && y == x && write(b, &y, 1) == 1 &&
		    read(a, &x, 1) == 1 && x == (char)i)
			ok++;
		close(a);
		close(b);
	}
	EQ("connections_200", ok, 200);
	close(l);
	/* A child writes to the connection it inherited. */
	pair(&c, &s);
	pid_t kid = fork();
	if (kid == 0) {
		_exit(write(c, "from the child", 14) == 14 ? 0 : 1);
	}
	int st = -1;
	waitpid(kid, &st, 0);
	char buf[64];
	check("fork_child_writes", WIFEXITED(st) && WEXITSTATUS(st) == 0 && read_full(s, buf, 14) == 14 &&
	      !memcmp(buf, "from the child", 14));
	check("fork_parent_still_writes", write(c, "parent", 6) == 6 && read_full(s, buf, 6) == 6);
	close(c);
	close(s);
	/* sendfile from a regular file: with an offset pointer, then with NULL (the file offset). */
	const char *path = "/tmp/tcptest.sendfile";
	static uint8_t file[200000], back[200000];
	for (size_t i = 0; i < sizeof(file); i++)
		file[i] = pattern(i, 9);
	int f = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	check("sendfile_file_written", f >= 0 && write(f, file, sizeof(file)) == (ssize_t)sizeof(file));
	lseek(f, 0, SEEK_SET);
	pair(&c, &s);
	off_t off = 1000;
	size_t want = 150000, done = 0;
	while (done < want) {
		ssize_t n = sendfile(c, f, &off, want - done);
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	check("sendfile_offset_sent", done == want && off == 151000);
	check("sendfile_offset_file_pos_unchanged", lseek(f, 0, SEEK_CUR) == 0);
	check("sendfile_offset_received", read_full(s, back, want) == want && !memcmp(back, file + 1000, want));
	lseek(f, 50000, SEEK_SET);
	done = 0;
	while (done < 100000) {
		ssize_t n = sendfile(c, f, NULL, 100000 - done);
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	check("sendfile_null_sent", done == 100000 && lseek(f, 0, SEEK_CUR) == 150000);
	check("sendfile_null_received", read_full(s, back, 100000) == 100000 && !memcmp(back, file + 50000, 100000));
	off = sizeof(file) - 10;
	EQ("sendfile_past_end_short", sendfile(c, f, &off, 100), 10);
	EQ("sendfile_at_end_zero", sendfile(c, f, &off, 100), 0);
	check("sendfile_tail_received", read_full(s, back, 10) == 10 && !memcmp(back, file + sizeof(file) - 10, 10));
	close(f);
	unlink(path);
	close(c);
	close(s);
}

#define STALL_GO "/tmp/tcptest.go"

/* Writes pattern bytes to fd (non-blocking) until it takes no more; the bytes written. */
static size_t fill(int fd, size_t at, unsigned seed)
{
	static uint8_t buf[16384];
	size_t n = 0;
	for (;;) {
		fill_pattern(buf, sizeof(buf), at + n, seed);
		ssize_t w = send(fd, buf, sizeof(buf), MSG_NOSIGNAL);
		if (w <= 0)
			return n;
		n += (size_t)w;
	}
}

/* Both directions full and nobody reading: both receive windows closed, both ends probing.
 * Then everything is read and checked. (A test watches tcp meanwhile: its ACK war guard.) */
static void stall(void)
{
	int c, s;
	pair(&c, &s);
	fcntl(c, F_SETFL, O_NONBLOCK);
	fcntl(s, F_SETFL, O_NONBLOCK);
	int fds[2] = { c, s };
	size_t sent[2] = { 0, 0 }, got[2] = { 0, 0 };
	unlink(STALL_GO);
	/* until neither takes more for a second (the windows closed; what is queued stays) */
	for (int quiet = 0; quiet < 10;) {
		size_t more = 0;
		for (int k = 0; k < 2; k++) {
			size_t n = fill(fds[k], sent[k], (unsigned)k);
			sent[k] += n, more += n;
		}
		quiet = more ? 0 : quiet + 1;
		usleep(100000);
	}
	printf("tcptest: both directions full (%zu and %zu bytes sent); waiting for %s\n", sent[0], sent[1], STALL_GO);
	for (int i = 0; i < 6000 && access(STALL_GO, F_OK) != 0; i++)
		usleep(100000);
	int bad = 0;
	static uint8_t buf[65536];
	struct timeval t0;
	gettimeofday(&t0, NULL);
	while ((got[0] < sent[1] || got[1] < sent[0]) && ms_since(&t0) < 120000) {
		struct pollfd p[2] = { { c, POLLIN, 0 }, { s, POLLIN, 0 } };
		if (poll(p, 2, 5000) <= 0)
			break;
		for (int k = 0; k < 2; k++) {
			ssize_t n = (p[k].revents & POLLIN) ? recv(fds[k], buf, sizeof(buf), 0) : 0;
			bad += count_bad(buf, n, got[k], (unsigned)!k);
			got[k] += n > 0 ? (size_t)n : 0;
		}
	}
	check("stalled_both_ways_delivered", got[0] == sent[1] && got[1] == sent[0] && !bad);
	if (got[0] != sent[1] || got[1] != sent[0] || bad)
		printf("  stall: got %zu/%zu and %zu/%zu, %d bad bytes\n", got[0], sent[1], got[1], sent[0], bad);
	close(c);
	close(s);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	struct sigaction sa = { .sa_handler = on_sigpipe };
	sigaction(SIGPIPE, &sa, NULL);
	alarm(900); /* whatever hangs, the run ends */
	static const struct {
		const char *name;
		void (*run)(void);
		int named_only;
	} groups[] = { { "calls", calls, 0 }, { "conn", conn, 0 }, { "data", data, 0 }, { "poll", polls, 0 },
		       { "bulk", bulk, 0 }, { "stall", stall, 1 } };
	for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++) {
		int want = argc < 2 && !groups[g].named_only;
		for (int i = 1; i < argc; i++)
			want |= !strcmp(argv[i], groups[g].name);
		if (want)
			groups[g].run();
	}
	print_library_counts("tcptest");
	printf("tcptest: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
