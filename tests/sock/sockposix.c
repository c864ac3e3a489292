/* sockposix: an unmodified program (no axsock_* call) linked with lib/sock by ld --wrap
 * (lib/sock/wrap.syms), as lighttpd, memcached and iperf are. Over tcp's and udp's
 * loopbacks: read/write/readv/writev/send/recv/sendmsg/recvmsg on a TCP connection whose two
 * ends the library takes over by itself, a non-blocking accept loop (its EAGAIN after an
 * accept that emptied the queue answered without a Linux call, a connection heard of since
 * accepted), datagrams with sendto/recvfrom/recvmsg (MSG_TRUNC),
 * O_NONBLOCK, FIONREAD, MSG_PEEK, the peer's shutdown; non-blocking connects (a connect
 * descriptor with the library), refused ones too; poll, select and epoll over a socket
 * and a pipe together (readiness both ways, data checked); an epoll_wait that sleeps (on the
 * process's wake word, with the library) until another thread's data on the socket, or
 * its byte in the pipe, wakes it, that ends at its timeout, and with EINTR on a signal
 * whose handler has no SA_RESTART; a blocking read and a poll of the socket alone that sleep
 * the same way, a read that a handler without SA_RESTART ends with EINTR and one that goes
 * on after a handler with SA_RESTART (poll ends even then, as on Linux); a poll mixing the
 * socket with a pipe and an epoll_pwait with a mask (both block in the kernel) woken by the
 * socket's data, which otherwise reaches syscall lazily (app.lazy); a sleep woken by the
 * stack after 2100 short connections taken over (4200 owned sockets); and through the counters
 * (axsock_act()->calls) and the kernel's count of this process's Linux calls that the data
 * calls were answered in user space. A child whose library owns two sockets execs the
 * program on them: the new image's library gets them again. Then it runs itself again with
 * AXOLOTL_SOCK=0: the same checks pass through system calls, and the counters stay 0.
 * Prints SOCKPOSIX PASS|FAIL NAME lines (NAME prefixed off_ in the second run) and
 * "sockposix: N passed, N failed" at the end. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include "activity.h"
#include "sock.h"
#include "socktest.h"

#define KC_BASE 0x0a000000L
#define KC_INFO 16
#define KI_LINUX_CALLS 9

static bool lib;          /* the library is on (AXOLOTL_SOCK unset) */
static const char *pre = ""; /* check name prefix */
static long linux_calls(void) { return syscall(KC_BASE | KC_INFO, KI_LINUX_CALLS, 0); }

static void ck(const char *name, int ok)
{
	char n[128];
	snprintf(n, sizeof(n), "%s%s", pre, name);
	check(n, ok);
}

static uint64_t user(enum ax_call c) { return axsock_act()->calls[c].user; }
static uint64_t total(void)
{
	uint64_t t = 0;
	for (int c = 0; c < AXC_N; c++)
		t += axsock_act()->calls[c].user + axsock_act()->calls[c].sys;
	return t;
}

static void fill(unsigned char *b, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)(i * 31 + seed + (i >> 9));
}

/* A connected pair over tcp's loopback: *a the connecting end, *b the accepted one. */
static int tcp_pair(int *a, int *b)
{
	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in la = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t ll = sizeof(la);
	if (l < 0 || bind(l, (struct sockaddr *)&la, sizeof(la)) || listen(l, 4) ||
	    getsockname(l, (struct sockaddr *)&la, &ll))
		return -1;
	*a = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(*a, (struct sockaddr *)&la, sizeof(la)))
		return -1;
	*b = accept(l, NULL, NULL);
	close(l);
	return *b >= 0 ? 0 : -1;
}

static void tcp_checks(void)
{
	int c = -1, s = -1;
	ck("tcp_pair", tcp_pair(&c, &s) == 0);
	static unsigned char out[65536], in[65536];
	int ok = 1;
	for (int r = 0; r < 8 && ok; r++) { /* write / read, 512 KiB each way */
		fill(out, sizeof(out), r);
		ok &= write(c, out, sizeof(out)) == (ssize_t)sizeof(out);
		ok &= recv(s, in, sizeof(in), MSG_WAITALL) == (ssize_t)sizeof(in) && !memcmp(in, out, sizeof(in));
		fill(out, sizeof(out), r + 100);
		ok &= send(s, out, sizeof(out), 0) == (ssize_t)sizeof(out);
		size_t got = 0;
		while (ok && got < sizeof(in)) { /* plain reads: whatever has come */
			ssize_t n = read(c, in + got, sizeof(in) - got);
			ok &= n > 0;
			got += n > 0 ? (size_t)n : 0;
		}
		ok &= !memcmp(in, out, sizeof(in));
	}
	ck("tcp_write_read_send_recv_512kib_each_way", ok);
	/* writev / readv with different boundaries */
	fill(out, 3000, 7);
	struct iovec wv[3] = { { out, 1 }, { out + 1, 999 }, { out + 1000, 2000 } };
	memset(in, 0, 3000);
	struct iovec rv[3] = { { in, 1500 }, { in + 1500, 1 }, { in + 1501, 1499 } };
	ssize_t w = writev(c, wv, 3);
	struct msghdr rm = { .msg_iov = rv, .msg_iovlen = 3 };
	ssize_t r = recvmsg(s, &rm, MSG_WAITALL);
	ck("tcp_writev_recvmsg", w == 3000 && r == 3000 && !memcmp(in, out, 3000));
	fill(out, 3000, 8);
	struct msghdr wm = { .msg_iov = wv, .msg_iovlen = 3 };
	w = sendmsg(s, &wm, MSG_NOSIGNAL);
	size_t got = 0;
	while (got < 3000) {
		struct iovec one[2] = { { in + got, (3000 - got) / 2 }, { in + got + (3000 - got) / 2, 3000 - got - (3000 - got) / 2 } };
		ssize_t n = readv(c, one, 2);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	ck("tcp_sendmsg_readv", w == 3000 && got == 3000 && !memcmp(in, out, 3000));
	/* non-blocking: an empty socket answers EAGAIN, in user space when the library owns it */
	uint64_t u0 = user(AXC_RECV), r0 = user(AXC_READ);
	long k0 = linux_calls();
	int eagain = 0;
	for (int i = 0; i < 1000; i++)
		eagain += recv(s, in, 10, MSG_DONTWAIT) < 0 && errno == EAGAIN;
	long k1 = linux_calls();
	ck("tcp_recv_dontwait_empty_eagain", eagain == 1000);
	ck("tcp_recv_dontwait_counted", lib ? user(AXC_RECV) - u0 == 1000 : total() == 0);
	if (lib)
		ck("tcp_recv_dontwait_no_system_call", k0 >= 0 && k1 == k0);
	ck("fcntl_o_nonblock", fcntl(s, F_SETFL, fcntl(s, F_GETFL) | O_NONBLOCK) == 0 && read(s, in, 10) < 0 &&
	   errno == EAGAIN);
	ck("tcp_read_nonblock_counted", lib ? user(AXC_READ) == r0 + 1 : total() == 0);
	/* poll over a pipe and the socket */
	int p[2];
	ck("pipe", pipe(p) == 0);
	struct pollfd pf[2] = { { p[0], POLLIN, 0 }, { s, POLLIN, 0 } };
	ck("poll_nothing_ready", poll(pf, 2, 0) == 0 && !pf[0].revents && !pf[1].revents);
	ck("poll_pipe_ready", write(p[1], "x", 1) == 1 && poll(pf, 2, 1000) == 1 && pf[0].revents == POLLIN &&
	   !pf[1].revents && read(p[0], in, 1) == 1);
	ck("poll_socket_ready_waits", send(c, "hello", 5, 0) == 5 && poll(pf, 2, 5000) == 1 && !pf[0].revents &&
	   (pf[1].revents & POLLIN));
	uint64_t pu = user(AXC_POLL);
	ck("poll_socket_ready_again", poll(pf, 2, -1) == 1 && (pf[1].revents & POLLIN) && !pf[0].revents);
	ck("poll_from_the_rings", lib ? user(AXC_POLL) == pu + 1 : total() == 0);
	int nr = -1;
	if (lib)
		ck("ioctl_fionread", ioctl(s, FIONREAD, &nr) == 0 && nr == 5);
	else if (ioctl(s, FIONREAD, &nr) != 0) /* syscall's path may not know FIONREAD */
		printf("sockposix: FIONREAD through syscall: %s\n", strerror(errno));
	else
		ck("ioctl_fionread", nr == 5);
	ck("recv_peek_then_read", recv(s, in, 5, MSG_PEEK) == 5 && read(s, in, 5) == 5 && !memcmp(in, "hello", 5));
	int both = write(p[1], "y", 1) == 1 && send(c, "abc", 3, 0) == 3 ? 0 : -1;
	for (int i = 0; i < 100 && both >= 0 && both != 2; i++) /* until the socket's data is there too */
		if ((both = poll(pf, 2, 5000)) != 2)
			usleep(50000);
	ck("poll_both_ready", both == 2 && pf[0].revents == POLLIN && (pf[1].revents & POLLIN));
	ck("poll_both_read", read(p[0], in, 1) == 1 && read(s, in, 3) == 3 && !memcmp(in, "abc", 3));
	/* select */
	fd_set rs;
	struct timeval tv0 = { 0, 0 };
	FD_ZERO(&rs); FD_SET(p[0], &rs); FD_SET(s, &rs);
	ck("select_nothing_ready", select(s > p[0] ? s + 1 : p[0] + 1, &rs, NULL, NULL, &tv0) == 0);
	send(c, "sel", 3, 0);
	struct timeval tv = { 5, 0 };
	FD_ZERO(&rs); FD_SET(p[0], &rs); FD_SET(s, &rs);
	int n = select(s > p[0] ? s + 1 : p[0] + 1, &rs, NULL, NULL, &tv);
	ck("select_socket_ready", n == 1 && FD_ISSET(s, &rs) && !FD_ISSET(p[0], &rs));
	fd_set ws;
	FD_ZERO(&rs); FD_SET(s, &rs); FD_ZERO(&ws); FD_SET(s, &ws); FD_SET(p[1], &ws);
	uint64_t su = user(AXC_SELECT);
	tv = (struct timeval){ 5, 0 };
	n = select(s > p[1] ? s + 1 : p[1] + 1, &rs, &ws, NULL, &tv);
	ck("select_read_and_write_ready", n >= 2 && FD_ISSET(s, &rs) && FD_ISSET(s, &ws));
	ck("select_from_the_rings", lib ? user(AXC_SELECT) == su + 1 : total() == 0);
	ck("select_read", read(s, in, 10) == 3 && !memcmp(in, "sel", 3));
	/* epoll */
	int ep = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 1 }, evp = { .events = EPOLLIN, .data.u64 = 2 };
	ck("epoll_ctl_add", ep >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev) == 0 &&
	   epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &evp) == 0);
	struct epoll_event got_ev[4];
	ck("epoll_nothing_ready", epoll_wait(ep, got_ev, 4, 0) == 0);
	ck("epoll_pipe_ready", write(p[1], "z", 1) == 1 && epoll_wait(ep, got_ev, 4, 5000) == 1 &&
	   got_ev[0].data.u64 == 2 && read(p[0], in, 1) == 1);
	ck("epoll_socket_ready_waits", send(c, "epoll", 5, 0) == 5 && epoll_wait(ep, got_ev, 4, 5000) == 1 &&
	   got_ev[0].data.u64 == 1 && (got_ev[0].events & EPOLLIN));
	uint64_t eu = user(AXC_EPOLL_WAIT);
	ck("epoll_level_triggered_again", epoll_wait(ep, got_ev, 4, -1) == 1 && got_ev[0].data.u64 == 1);
	ck("epoll_from_the_rings", lib ? user(AXC_EPOLL_WAIT) == eu + 1 : total() == 0);
	ck("epoll_read", read(s, in, 10) == 5 && !memcmp(in, "epoll", 5));
	ck("epoll_empty_again", epoll_wait(ep, got_ev, 4, 0) == 0);
	struct epoll_event one = { .events = EPOLLIN | EPOLLONESHOT, .data.u64 = 1 };
	ck("epoll_oneshot", epoll_ctl(ep, EPOLL_CTL_MOD, s, &one) == 0 && send(c, "12", 2, 0) == 2 &&
	   epoll_wait(ep, got_ev, 4, 5000) == 1 && got_ev[0].data.u64 == 1 && epoll_wait(ep, got_ev, 4, 200) == 0);
	ck("epoll_oneshot_rearmed", epoll_ctl(ep, EPOLL_CTL_MOD, s, &one) == 0 && epoll_wait(ep, got_ev, 4, 5000) == 1 &&
	   read(s, in, 10) == 2);
	/* the peer's shutdown: end of stream (also through poll) */
	shutdown(c, SHUT_WR);
	pf[1].revents = 0;
	ck("peer_shutdown_polls_readable", poll(&pf[1], 1, 5000) == 1 && (pf[1].revents & POLLIN));
	ck("peer_shutdown_reads_0", read(s, in, 10) == 0 && read(s, in, 10) == 0);
	ck("shutdown_wr_then_send_fails", shutdown(s, SHUT_WR) == 0 && send(s, "x", 1, MSG_NOSIGNAL) < 0 &&
	   errno == EPIPE);
	ck("close", close(ep) == 0 && close(s) == 0 && close(c) == 0 && close(p[0]) == 0 && close(p[1]) == 0);
}

/* Another thread's doing, after 300 ms: a byte written to fd, or a signal to a thread. */
struct later {
	int fd;
	char byte;
	pthread_t whom;
};
static void *write_later(void *p)
{
	struct later *l = p;
	usleep(300000);
	if (write(l->fd, &l->byte, 1) != 1)
		printf("sockposix: write_later: %s\n", strerror(errno));
	return NULL;
}
static void *kill_later(void *p)
{
	usleep(300000);
	pthread_kill(((struct later *)p)->whom, SIGUSR1);
	return NULL;
}
static atomic_int usr1_hits;
static void on_usr1(int sig) { (void)sig; atomic_fetch_add(&usr1_hits, 1); }
/* A signal after 300 ms, then (300 ms later) the byte. */
static void *kill_then_write(void *p)
{
	kill_later(p);
	return write_later(p);
}

/* epoll_wait that must sleep: with the library it sleeps on the wake word (tcp rings it for
 * the socket's data, vfs for the pipe: app.wakes counts the rung sleeps), without it in vfs. */
static void sleep_checks(void)
{
	int c, s, p[2], ep = epoll_create1(0);
	char in[8];
	bool made = ep >= 0 && tcp_pair(&c, &s) == 0 && pipe(p) == 0 && write(c, "t", 1) == 1 && read(s, in, 1) == 1;
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 1 }, evp = { .events = EPOLLIN, .data.u64 = 2 }, got;
	made = made && epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev) == 0 && epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &evp) == 0;
	pthread_t t;
	struct later ld = { .fd = c, .byte = 'd' }, lp = { .fd = p[1], .byte = 'p' }, lk = { .whom = pthread_self() };
	uint64_t w0 = axsock_act()->app.wakes;
	int r = made && pthread_create(&t, NULL, write_later, &ld) == 0 ? epoll_wait(ep, &got, 1, 10000) : -2;
	if (r != -2)
		pthread_join(t, NULL);
	ck("epoll_sleep_woken_by_data", r == 1 && got.data.u64 == 1 && read(s, in, 8) == 1 && in[0] == 'd' &&
	   (!lib || axsock_act()->app.wakes > w0));
	w0 = axsock_act()->app.wakes;
	r = made && pthread_create(&t, NULL, write_later, &lp) == 0 ? epoll_wait(ep, &got, 1, 10000) : -2;
	if (r != -2)
		pthread_join(t, NULL);
	ck("epoll_sleep_woken_by_a_pipe", r == 1 && got.data.u64 == 2 && read(p[0], in, 8) == 1 && in[0] == 'p' &&
	   (!lib || axsock_act()->app.wakes > w0));
	ck("epoll_sleep_times_out", made && epoll_wait(ep, &got, 1, 200) == 0);
	struct sigaction sa = { .sa_handler = on_usr1 }; /* no SA_RESTART */
	sigaction(SIGUSR1, &sa, NULL);
	r = made && pthread_create(&t, NULL, kill_later, &lk) == 0 ? epoll_wait(ep, &got, 1, 10000) : -2;
	int e = errno;
	if (r != -2)
		pthread_join(t, NULL);
	ck("epoll_sleep_ends_on_a_signal", r == -1 && e == EINTR && atomic_load(&usr1_hits) == 1);
	/* data events of owned sockets reach syscall lazily while nothing waits in the kernel
	 * on them; a poll mixing the socket with a pipe does, and is woken by the data */
	ck("data_events_lazy", !lib || atomic_load(&axsock_act()->app.lazy) == 1);
	struct pollfd mix[2] = { { p[0], POLLIN, 0 }, { s, POLLIN, 0 } };
	r = made && pthread_create(&t, NULL, write_later, &ld) == 0 ? poll(mix, 2, 10000) : -2;
	if (r != -2)
		pthread_join(t, NULL);
	ck("mixed_poll_woken_by_data", r == 1 && (mix[1].revents & POLLIN) && !mix[0].revents && read(s, in, 8) == 1 &&
	   in[0] == 'd');
	sigset_t none;
	sigemptyset(&none);
	r = made && pthread_create(&t, NULL, write_later, &ld) == 0 ? epoll_pwait(ep, &got, 1, 10000, &none) : -2;
	if (r != -2)
		pthread_join(t, NULL);
	ck("epoll_pwait_masked_woken_by_data", r == 1 && got.data.u64 == 1 && read(s, in, 8) == 1 && in[0] == 'd');
	/* a blocking read and a poll of the socket alone sleep on the word too */
	w0 = axsock_act()->app.wakes;
	r = made && pthread_create(&t, NULL, write_later, &ld) == 0 ? (int)read(s, in, 8) : -2;
	if (r != -2)
		pthread_join(t, NULL);
	ck("read_sleep_woken_by_data", r == 1 && in[0] == 'd' && (!lib || axsock_act()->app.wakes > w0));
	struct pollfd pf = { s, POLLIN, 0 };
	w0 = axsock_act()->app.wakes;
	r = made && pthread_create(&t, NULL, write_later, &ld) == 0 ? poll(&pf, 1, 10000) : -2;
	if (r != -2)
		pthread_join(t, NULL);
	ck("poll_sleep_woken_by_data", r == 1 && (pf.revents & POLLIN) && read(s, in, 8) == 1 && in[0] == 'd' &&
	   (!lib || axsock_act()->app.wakes > w0));
	r = made && pthread_create(&t, NULL, kill_later, &lk) == 0 ? (int)read(s, in, 8) : -2;
	e = errno;
	if (r != -2)
		pthread_join(t, NULL);
	ck("read_sleep_ends_on_a_signal", r == -1 && e == EINTR && atomic_load(&usr1_hits) == 2);
	/* with SA_RESTART the read goes on after the handler and gets the byte; poll ends */
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	struct later lkw = { .fd = c, .byte = 'r', .whom = pthread_self() };
	r = made && pthread_create(&t, NULL, kill_then_write, &lkw) == 0 ? (int)read(s, in, 8) : -2;
	if (r != -2)
		pthread_join(t, NULL);
	ck("read_sleep_restarts_after_sa_restart", r == 1 && in[0] == 'r' && atomic_load(&usr1_hits) == 3);
	r = made && pthread_create(&t, NULL, kill_later, &lk) == 0 ? poll(&pf, 1, 10000) : -2;
	e = errno;
	if (r != -2)
		pthread_join(t, NULL);
	ck("poll_sleep_ends_on_a_signal_even_with_sa_restart", r == -1 && e == EINTR && atomic_load(&usr1_hits) == 4);
	ck("epoll_sleep_close", close(ep) == 0 && close(s) == 0 && close(c) == 0 && close(p[0]) == 0 && close(p[1]) == 0);
}

/* Many short connections, each end taken over by the library, then one more sleep that
 * only the stack's ring ends: the engines' map of owned sockets must forget closed ones
 * (it filled after 4096 and later sockets were never rung). */
#define CHURN_PAIRS 2100
static void churn_checks(void)
{
	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in la = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t ll = sizeof(la);
	bool ok = l >= 0 && !bind(l, (struct sockaddr *)&la, sizeof(la)) && !listen(l, 8) &&
		  !getsockname(l, (struct sockaddr *)&la, &ll);
	int done = 0;
	char b;
	struct timeval tmo = { 10, 0 }; /* a read nothing wakes fails, not hangs */
	for (; ok && done < CHURN_PAIRS; done++) {
		int c = socket(AF_INET, SOCK_STREAM, 0), s = -1;
		ok = c >= 0 && !setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tmo, sizeof(tmo)) &&
		     !connect(c, (struct sockaddr *)&la, sizeof(la)) && (s = accept(l, NULL, NULL)) >= 0 &&
		     !setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tmo, sizeof(tmo)) && write(c, "x", 1) == 1 &&
		     read(s, &b, 1) == 1 && write(s, "y", 1) == 1 && read(c, &b, 1) == 1;
		close(c);
		if (s >= 0)
			close(s);
	}
	close(l);
	if (!ok)
		printf("sockposix: churn stopped at pair %d: %s\n", done, strerror(errno));
	ck("churn_connections", ok && done == CHURN_PAIRS);
	int c, s, ep = epoll_create1(0);
	char in[8];
	bool made = ep >= 0 && tcp_pair(&c, &s) == 0 && write(c, "t", 1) == 1 && read(s, in, 1) == 1;
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 7 }, got;
	made = made && epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev) == 0;
	pthread_t t;
	struct later ld = { .fd = c, .byte = 'z' };
	uint64_t w0 = axsock_act()->app.wakes;
	int r = made && pthread_create(&t, NULL, write_later, &ld) == 0 ? epoll_wait(ep, &got, 1, 10000) : -2;
	if (r != -2)
		pthread_join(t, NULL);
	ck("epoll_sleep_woken_after_churn", r == 1 && got.data.u64 == 7 && read(s, in, 8) == 1 && in[0] == 'z' &&
	   axsock_act()->app.wakes > w0);
	close(ep), close(s), close(c);
}

/* A non-blocking listener's accept loop, as lighttpd's: accept until EAGAIN. With the
 * library the EAGAIN after an accept that emptied the queue is answered without a Linux
 * call; a connection syscall has heard of since (the listener polls readable) is accepted,
 * never answered EAGAIN; and the shortcut is taken once, not twice in a row. */
static void accept_checks(void)
{
	int l = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	struct sockaddr_in la = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t ll = sizeof(la);
	bool ok = l >= 0 && !bind(l, (struct sockaddr *)&la, sizeof(la)) && !listen(l, 8) &&
		  !getsockname(l, (struct sockaddr *)&la, &ll);
	int c[3] = { -1, -1, -1 }, s[3] = { -1, -1, -1 };
	struct pollfd p = { .fd = l, .events = POLLIN };
	bool fresh_ok = true, again_ok = true, quiet = true;
	for (int i = 0; ok && i < 3; i++) {
		c[i] = socket(AF_INET, SOCK_STREAM, 0);
		ok &= c[i] >= 0 && !connect(c[i], (struct sockaddr *)&la, sizeof(la)) && poll(&p, 1, 10000) == 1;
		/* readable: syscall has heard of it, so this accept must get it */
		s[i] = accept4(l, NULL, NULL, SOCK_NONBLOCK);
		fresh_ok &= s[i] >= 0;
		long k0 = linux_calls();
		errno = 0;
		again_ok &= accept4(l, NULL, NULL, SOCK_NONBLOCK) == -1 && errno == EAGAIN;
		quiet &= linux_calls() == k0;
		errno = 0; /* the second in a row asks the kernel: still EAGAIN */
		again_ok &= accept4(l, NULL, NULL, SOCK_NONBLOCK) == -1 && errno == EAGAIN;
	}
	ck("accept_loop_setup", ok);
	ck("accept_of_a_heard_connection", fresh_ok);
	ck("accept_then_eagain", again_ok);
	if (lib)
		ck("accept_eagain_without_linux_call", quiet);
	bool data = ok && fresh_ok && write(c[2], "a", 1) == 1;
	char b = 0;
	p.fd = s[2];
	data = data && poll(&p, 1, 10000) == 1 && read(s[2], &b, 1) == 1 && b == 'a';
	ck("accepted_connection_carries_data", data);
	for (int i = 0; i < 3; i++) {
		if (c[i] >= 0)
			close(c[i]);
		if (s[i] >= 0)
			close(s[i]);
	}
	close(l);
}

static void udp_checks(void)
{
	struct sockaddr_in a1, a2;
	int u1 = udp_bound(&a1), u2 = udp_bound(&a2);
	unsigned char out[2048], in[2048];
	int ok = 1;
	for (int i = 0; i < 50 && ok; i++) {
		int n = 1 + i * 37;
		fill(out, (size_t)n, i);
		ok &= sendto(u1, out, (size_t)n, 0, (struct sockaddr *)&a2, sizeof(a2)) == n;
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);
		ok &= recvfrom(u2, in, sizeof(in), 0, (struct sockaddr *)&from, &fl) == n && !memcmp(in, out, (size_t)n) &&
		      from.sin_port == a1.sin_port;
	}
	ck("udp_50_datagrams", ok);
	int p[2];
	pipe(p);
	struct pollfd pf[2] = { { p[0], POLLIN, 0 }, { u2, POLLIN, 0 } };
	sendto(u1, "datagram!", 9, 0, (struct sockaddr *)&a2, sizeof(a2));
	ck("udp_poll_with_pipe", poll(pf, 2, 5000) == 1 && (pf[1].revents & POLLIN) && !pf[0].revents);
	char small[4];
	struct iovec v = { small, sizeof(small) };
	struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1 };
	ck("udp_recvmsg_trunc", recvmsg(u2, &m, 0) == 4 && (m.msg_flags & MSG_TRUNC) && !memcmp(small, "data", 4));
	ck("udp_empty_eagain", recv(u2, in, sizeof(in), MSG_DONTWAIT) < 0 && errno == EAGAIN);
	close(u1), close(u2), close(p[0]), close(p[1]);
}

/* Non-blocking connects (with the library: by a connect descriptor, the socket taken over
 * at once): EINPROGRESS, a second connect EALREADY or done, POLLOUT when up, SO_ERROR 0, the
 * peer's address, data both ways; and to a port nobody listens on: POLLOUT|POLLERR and
 * ECONNREFUSED in SO_ERROR. */
static void nb_connect_checks(void)
{
	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in la = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t ll = sizeof(la);
	if (l < 0 || bind(l, (struct sockaddr *)&la, sizeof(la)) || listen(l, 4) ||
	    getsockname(l, (struct sockaddr *)&la, &ll)) {
		ck("nb_listener", 0);
		return;
	}
	int c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	errno = 0;
	int r = connect(c, (struct sockaddr *)&la, sizeof(la));
	ck("nb_connect_in_progress", r == -1 && errno == EINPROGRESS);
	if (lib) /* taken over by the connect itself: a connect descriptor went into its TX */
		ck("nb_connect_by_descriptor", axsock_bit(c) < AX_ACT_SOCKS);
	errno = 0;
	r = connect(c, (struct sockaddr *)&la, sizeof(la));
	ck("nb_connect_again", (r == -1 && (errno == EALREADY || errno == EISCONN)) || r == 0);
	struct pollfd pf = { c, POLLOUT, 0 };
	int err = -1;
	socklen_t el = sizeof(err);
	ck("nb_connect_writable", poll(&pf, 1, 10000) == 1 && (pf.revents & POLLOUT) && !(pf.revents & POLLERR) &&
				      getsockopt(c, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && err == 0);
	struct sockaddr_in pa;
	socklen_t pl = sizeof(pa);
	ck("nb_connect_peer", getpeername(c, (struct sockaddr *)&pa, &pl) == 0 && pa.sin_port == la.sin_port &&
				  pa.sin_addr.s_addr == la.sin_addr.s_addr);
	int a = accept(l, NULL, NULL);
	char in[8] = { 0 };
	struct pollfd pr = { c, POLLIN, 0 };
	ck("nb_connect_data", a >= 0 && send(c, "hello", 5, 0) == 5 && recv(a, in, 5, MSG_WAITALL) == 5 &&
				  !memcmp(in, "hello", 5) && send(a, "back", 4, 0) == 4 && poll(&pr, 1, 10000) == 1 &&
				  recv(c, in, 4, 0) == 4 && !memcmp(in, "back", 4));
	close(a), close(c), close(l);
	/* refused: the listener is gone, its port closed */
	c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	errno = 0;
	r = connect(c, (struct sockaddr *)&la, sizeof(la));
	bool started = r == -1 && errno == EINPROGRESS;
	pf = (struct pollfd){ c, POLLOUT, 0 };
	int pr2 = started ? poll(&pf, 1, 10000) : -1;
	err = 0, el = sizeof(err);
	getsockopt(c, SOL_SOCKET, SO_ERROR, &err, &el);
	ck("nb_connect_refused", (started && pr2 == 1 && (pf.revents & POLLERR) && err == ECONNREFUSED) ||
				     (r == -1 && errno == ECONNREFUSED));
	if (failed)
		printf("  refused: connect %d, poll %d revents %#x, SO_ERROR %d\n", r, pr2, pf.revents, err);
	close(c);
}

/* A datagram each way between u1 and u2 (their addresses a1, a2): true if both came. */
/* A datagram fd has waiting: each receive below finds its datagram there, so a socket the
 * library owns is read in user space however slowly the datagram travelled. */
static bool readable(int fd)
{
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	return poll(&pf, 1, 10000) == 1 && (pf.revents & POLLIN);
}

static bool udp_round(int u1, int u2, const struct sockaddr_in *a1, const struct sockaddr_in *a2)
{
	char in[16];
	return sendto(u1, "ping", 4, 0, (const struct sockaddr *)a2, sizeof(*a2)) == 4 && readable(u2) &&
	       recv(u2, in, sizeof(in), 0) == 4 && !memcmp(in, "ping", 4) &&
	       sendto(u2, "pong", 4, 0, (const struct sockaddr *)a1, sizeof(*a1)) == 4 && readable(u1) &&
	       recv(u1, in, sizeof(in), 0) == 4 && !memcmp(in, "pong", 4);
}

static struct sockaddr_in local_addr(int fd)
{
	struct sockaddr_in a = { 0 };
	socklen_t l = sizeof(a);
	getsockname(fd, (struct sockaddr *)&a, &l);
	return a;
}

/* `sockposix exec U1 U2`, run by exec from a process whose library owned the datagram
 * sockets U1 and U2. The new image does not track them (it did not make them): their calls
 * go to syscall, which must serve them again (its library is gone). A socket it makes is
 * taken over by its library, whose first call tells syscall the image is new: syscall maps
 * the activity page in again (the old image's address is not mapped here). Exit status 0
 * if both work. */
static int after_exec(int u1, int u2)
{
	struct sockaddr_in a1 = local_addr(u1), a2 = local_addr(u2);
	bool inherited = udp_round(u1, u2, &a1, &a2) && udp_round(u1, u2, &a1, &a2);
	struct sockaddr_in a3;
	int u3 = udp_bound(&a3);
	bool fresh = udp_round(u3, u1, &a3, &a1);
	bool user_space = user(AXC_RECV) > 0;
	printf("sockposix exec: inherited sockets %s, a new one %s, receives in user space %llu\n",
	       inherited ? "work" : "FAIL", fresh ? "works" : "FAILS", (unsigned long long)user(AXC_RECV));
	return inherited && fresh && user_space ? 0 : 1;
}

/* A child whose library owns two datagram sockets execs this program on them. */
static void exec_checks(const char *self)
{
	fflush(stdout);
	pid_t kid = fork();
	if (kid == 0) {
		struct sockaddr_in a1, a2;
		int u1 = udp_bound(&a1), u2 = udp_bound(&a2);
		if (!udp_round(u1, u2, &a1, &a2) || axsock_bit(u1) >= AX_ACT_SOCKS)
			_exit(2);
		char f1[12], f2[12];
		snprintf(f1, sizeof(f1), "%d", u1);
		snprintf(f2, sizeof(f2), "%d", u2);
		char *args[] = { (char *)self, "exec", f1, f2, NULL };
		char *env[] = { NULL };
		execve(self, args, env);
		_exit(127);
	}
	int st = -1;
	waitpid(kid, &st, 0);
	ck("exec_keeps_owned_sockets_working", WIFEXITED(st) && WEXITSTATUS(st) == 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		printf("  exec child: status %#x\n", st);
}

/* A connection made by another thread after 300 ms to the address in p. */
static void *connect_later(void *p)
{
	usleep(300000);
	int c = socket(AF_INET, SOCK_STREAM, 0);
	if (c < 0 || connect(c, (struct sockaddr *)p, sizeof(struct sockaddr_in)) != 0)
		printf("sockposix: connect_later: %s\n", strerror(errno));
	return (void *)(intptr_t)c;
}

/* An epoll set holding a listener: with the library the listener's readiness comes from
 * the activity page (syscall writes it; sock_ax.h `listen`), so the set needs no kernel
 * epoll: a queued connection is reported with no system call, a sleep on the wake word is
 * rung by syscall when one arrives, level- and edge-triggered as Linux, and a deleted
 * listener is not reported. */
static void listener_epoll_checks(void)
{
	int l = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), ep = epoll_create1(0);
	struct sockaddr_in la = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t ll = sizeof(la);
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 9 }, got;
	bool ok = l >= 0 && ep >= 0 && !bind(l, (struct sockaddr *)&la, sizeof(la)) && !listen(l, 8) &&
		  !getsockname(l, (struct sockaddr *)&la, &ll) && epoll_ctl(ep, EPOLL_CTL_ADD, l, &ev) == 0;
	ck("listener_epoll_setup", ok && epoll_wait(ep, &got, 1, 0) == 0);
	/* a sleep ended by a connection */
	uint64_t w0 = lib ? axsock_act()->app.wakes : 0;
	pthread_t t;
	int r = ok && pthread_create(&t, NULL, connect_later, &la) == 0 ? epoll_wait(ep, &got, 1, 10000) : -2;
	void *c1 = (void *)(intptr_t)-1;
	if (r != -2)
		pthread_join(t, &c1);
	ck("listener_epoll_woken_by_a_connection", r == 1 && got.data.u64 == 9 && (got.events & EPOLLIN) &&
	   (!lib || axsock_act()->app.wakes > w0));
	/* level-triggered: reported again while the connection waits, from the page */
	uint64_t u0 = lib ? user(AXC_EPOLL_WAIT) : 0;
	long k0 = linux_calls();
	r = epoll_wait(ep, &got, 1, 0);
	long k1 = linux_calls(); /* (before ck, whose line is a write) */
	ck("listener_epoll_level_triggered", r == 1 && got.data.u64 == 9);
	if (lib)
		ck("listener_epoll_from_the_page", user(AXC_EPOLL_WAIT) == u0 + 1 && k1 == k0);
	int s1 = accept4(l, NULL, NULL, SOCK_NONBLOCK);
	ck("listener_epoll_quiet_once_accepted", s1 >= 0 && epoll_wait(ep, &got, 1, 0) == 0);
	/* edge-triggered: each arrival once */
	struct epoll_event et = { .events = EPOLLIN | EPOLLET, .data.u64 = 10 };
	r = epoll_ctl(ep, EPOLL_CTL_MOD, l, &et) == 0 && pthread_create(&t, NULL, connect_later, &la) == 0
		    ? epoll_wait(ep, &got, 1, 10000) : -2;
	void *c2 = (void *)(intptr_t)-1;
	if (r != -2)
		pthread_join(t, &c2);
	ck("listener_epollet_reports_an_arrival", r == 1 && got.data.u64 == 10);
	ck("listener_epollet_once", epoll_wait(ep, &got, 1, 0) == 0);
	/* deleted: an arrival is not reported */
	ck("listener_epoll_del", epoll_ctl(ep, EPOLL_CTL_DEL, l, NULL) == 0);
	r = pthread_create(&t, NULL, connect_later, &la) == 0 ? epoll_wait(ep, &got, 1, 1000) : -2;
	void *c3 = (void *)(intptr_t)-1;
	if (r != -2)
		pthread_join(t, &c3);
	ck("listener_epoll_deleted_is_quiet", r == 0);
	int n = 0;
	for (int i = 0; i < 2; i++) {
		struct pollfd p = { .fd = l, .events = POLLIN };
		int s = poll(&p, 1, 10000) == 1 ? accept4(l, NULL, NULL, SOCK_NONBLOCK) : -1;
		n += s >= 0;
		if (s >= 0)
			close(s);
	}
	ck("listener_epoll_connections_accepted", n == 2);
	for (void **c = (void *[]){ c1, c2, c3 }, **e = c + 3; c < e; c++)
		if ((intptr_t)*c >= 0)
			close((int)(intptr_t)*c);
	if (s1 >= 0)
		close(s1);
	close(ep);
	close(l);
}

int main(int argc, char **argv)
{
	check_tag = "SOCKPOSIX";
	if (argc == 4 && !strcmp(argv[1], "exec"))
		return after_exec(atoi(argv[2]), atoi(argv[3]));
	const char *e = getenv("AXOLOTL_SOCK");
	lib = !(e && !strcmp(e, "0"));
	pre = lib ? "" : "off_";
	tcp_checks();
	accept_checks();
	listener_epoll_checks();
	sleep_checks();
	udp_checks();
	nb_connect_checks();
	if (lib) {
		const struct ax_activity *a = axsock_act();
		static const char *names[] = AX_CALL_NAMES;
		printf("sockposix: calls (user/sys):");
		for (int c = 0; c < AXC_N; c++)
			if (a->calls[c].user || a->calls[c].sys)
				printf(" %s %llu/%llu", names[c], (unsigned long long)a->calls[c].user,
				       (unsigned long long)a->calls[c].sys);
		printf("\n");
		ck("counters_read_user_space", user(AXC_READ) > 0 && user(AXC_RECV) > 0);
		churn_checks(); /* (with the library only: the engines' map is its) */
		exec_checks(argv[0]);
		/* the same program without the library */
		ck("without_library_all_passed", rerun_without_library(argv[0]));
		printf("sockposix: %d passed, %d failed\n", passed, failed);
	} else {
		ck("without_library_counters_zero", total() == 0);
		printf("sockposix off: %d passed, %d failed\n", passed, failed);
	}
	return failed != 0;
}
