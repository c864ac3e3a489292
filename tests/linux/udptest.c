/* udptest [calls] [loop] [restart N]: the socket calls of a UDP socket as Linux defines
 * them, through vfs, syscall and udp (tests/system/test_udp.py).
 *   calls      errno semantics that need no delivery (bad descriptors and addresses, EAGAIN,
 *              getsockname, EADDRINUSE, SO_BROADCAST, options, shutdown, ...)
 *   loop       datagrams to ourselves on 127.0.0.1: addresses, MSG_PEEK, MSG_TRUNC,
 *              recvmsg/sendmsg with several iovecs, connected read/write, 60000 bytes
 *   restart N  N ping-pong rounds between two sockets with checked payloads, resending
 *              after a 200 ms SO_RCVTIMEO (the test kills udp meanwhile); the same two
 *              sockets throughout
 * Prints `UDPTEST PASS|FAIL name` per check and `udptest: N passed, M failed`. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
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
	printf("UDPTEST %s %s\n", ok ? "PASS" : "FAIL", name);
	if (ok)
		passed++;
	else
		failed++;
}
/* The call failed with exactly this errno. */
#define ERR(name, call, e) do { errno = 0; long r_ = (long)(call); int e_ = errno; \
	check(name, r_ == -1 && e_ == (e)); if (r_ != -1 || e_ != (e)) printf("  %s: got %ld errno %d, want %d\n", name, r_, e_, e); } while (0)

static struct sockaddr_in sin_of(uint32_t addr, uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(addr) };
	return a;
}
#define SA(a) ((struct sockaddr *)&(a))
#define BAD_PTR ((void *)16)

static int udp(void) { return socket(AF_INET, SOCK_DGRAM, 0); }

static uint16_t local_port(int fd)
{
	struct sockaddr_in a;
	socklen_t l = sizeof(a);
	return getsockname(fd, SA(a), &l) == 0 ? ntohs(a.sin_port) : 0;
}

static void calls(void)
{
	char buf[64];
	struct sockaddr_in a = sin_of(INADDR_ANY, 0);
	socklen_t len;
	ERR("bad_fd_sendto", sendto(999, "x", 1, 0, SA(a), sizeof(a)), EBADF);
	ERR("bad_fd_bind", bind(-1, SA(a), sizeof(a)), EBADF);
	ERR("not_a_socket", bind(1, SA(a), sizeof(a)), ENOTSOCK);
	int s = udp();
	check("socket", s >= 0);
	ERR("bind_efault", bind(s, BAD_PTR, sizeof(a)), EFAULT);
	ERR("bind_short", bind(s, SA(a), 8), EINVAL);
	struct sockaddr_in6 six = { .sin6_family = AF_INET6 };
	ERR("bind_inet6", bind(s, (struct sockaddr *)&six, sizeof(six)), EAFNOSUPPORT);
	ERR("recv_unbound_dontwait", recv(s, buf, sizeof(buf), MSG_DONTWAIT), EAGAIN);
	len = sizeof(a);
	check("getsockname_unbound", getsockname(s, SA(a), &len) == 0 && a.sin_port == 0 && a.sin_addr.s_addr == 0 && len == sizeof(a));
	a = sin_of(INADDR_ANY, 0);
	check("bind_ephemeral", bind(s, SA(a), sizeof(a)) == 0);
	uint16_t port = local_port(s);
	check("getsockname_after_bind", port != 0);
	ERR("bind_twice", bind(s, SA(a), sizeof(a)), EINVAL);
	int t = udp();
	struct sockaddr_in same = sin_of(INADDR_ANY, port);
	ERR("eaddrinuse", bind(t, SA(same), sizeof(same)), EADDRINUSE);
	int one = 1, v = -1;
	len = sizeof(v);
	check("so_broadcast_default_off", getsockopt(s, SOL_SOCKET, SO_BROADCAST, &v, &len) == 0 && v == 0 && len == 4);
	struct sockaddr_in bc = sin_of(INADDR_BROADCAST, 9);
	ERR("sendto_broadcast_eacces", sendto(s, "x", 1, 0, SA(bc), sizeof(bc)), EACCES);
	check("so_broadcast_set", setsockopt(s, SOL_SOCKET, SO_BROADCAST, &one, sizeof(one)) == 0);
	len = sizeof(v);
	check("so_broadcast_on", getsockopt(s, SOL_SOCKET, SO_BROADCAST, &v, &len) == 0 && v == 1);
	len = sizeof(v);
	check("so_type", getsockopt(s, SOL_SOCKET, SO_TYPE, &v, &len) == 0 && v == SOCK_DGRAM);
	len = sizeof(v);
	check("so_rcvbuf_default", getsockopt(s, SOL_SOCKET, SO_RCVBUF, &v, &len) == 0 && v > 0);
	v = 65536;
	check("so_rcvbuf_set", setsockopt(s, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v)) == 0);
	len = sizeof(v);
	check("so_rcvbuf_doubled", getsockopt(s, SOL_SOCKET, SO_RCVBUF, &v, &len) == 0 && v == 131072);
	check("so_reuseaddr", setsockopt(t, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == 0);
	ERR("setsockopt_short", setsockopt(s, SOL_SOCKET, SO_BROADCAST, &one, 2), EINVAL);
	ERR("setsockopt_efault", setsockopt(s, SOL_SOCKET, SO_BROADCAST, BAD_PTR, 4), EFAULT);
	ERR("getsockopt_unknown", getsockopt(s, SOL_SOCKET, 12345, &v, &len), ENOPROTOOPT);
	len = sizeof(v);
	check("so_error_none", getsockopt(s, SOL_SOCKET, SO_ERROR, &v, &len) == 0 && v == 0);
	ERR("send_unconnected", send(s, "x", 1, 0), EDESTADDRREQ);
	ERR("getpeername_unconnected", getpeername(s, SA(a), &len), ENOTCONN);
	ERR("shutdown_unconnected", shutdown(s, SHUT_RDWR), ENOTCONN);
	ERR("listen", listen(s, 5), EOPNOTSUPP);
	struct sockaddr_in dst = sin_of(INADDR_LOOPBACK, 9);
	ERR("sendto_efault_buf", sendto(s, BAD_PTR, 10, 0, SA(dst), sizeof(dst)), EFAULT);
	ERR("sendto_efault_addr", sendto(s, "x", 1, 0, BAD_PTR, sizeof(dst)), EFAULT);
	ERR("sendto_short_addr", sendto(s, "x", 1, 0, SA(dst), 4), EINVAL);
	static char big[65600];
	ERR("sendto_emsgsize", sendto(s, big, 65508, 0, SA(dst), sizeof(dst)), EMSGSIZE);
	ERR("recvfrom_dontwait", recvfrom(s, buf, sizeof(buf), MSG_DONTWAIT, NULL, NULL), EAGAIN);
	len = sizeof(a);
	ERR("getsockname_efault", getsockname(s, BAD_PTR, &len), EFAULT);
	struct timeval tv = { 0, 100000 };
	check("so_rcvtimeo_set", setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == 0);
	struct timeval t0, t1;
	gettimeofday(&t0, NULL);
	ERR("so_rcvtimeo_eagain", recv(s, buf, sizeof(buf), 0), EAGAIN);
	gettimeofday(&t1, NULL);
	long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_usec - t0.tv_usec) / 1000;
	check("so_rcvtimeo_waited", ms >= 90 && ms < 5000);
	int nb = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	check("bind_nonblocking", bind(nb, SA(a), 0) == -1 && errno == EINVAL);
	struct sockaddr_in any = sin_of(INADDR_ANY, 0);
	check("bind_nb", bind(nb, SA(any), sizeof(any)) == 0);
	ERR("recv_sock_nonblock", recv(nb, buf, sizeof(buf), 0), EAGAIN);
	int c = udp();
	fcntl(c, F_SETFL, O_NONBLOCK);
	bind(c, SA(any), sizeof(any));
	ERR("recv_o_nonblock", read(c, buf, sizeof(buf)), EAGAIN);
	struct sockaddr_in peer = sin_of(INADDR_LOOPBACK, 4242);
	check("connect", connect(c, SA(peer), sizeof(peer)) == 0);
	len = sizeof(a);
	check("getpeername", getpeername(c, SA(a), &len) == 0 && a.sin_port == htons(4242) && a.sin_addr.s_addr == htonl(INADDR_LOOPBACK));
	check("shutdown_connected", shutdown(c, SHUT_RD) == 0);
	check("recv_after_shut_rd", recv(c, buf, sizeof(buf), 0) == 0);
	struct sockaddr_in unspec = { .sin_family = AF_UNSPEC };
	check("connect_unspec", connect(c, SA(unspec), sizeof(unspec)) == 0);
	ERR("getpeername_dissolved", getpeername(c, SA(a), &len), ENOTCONN);
	close(c);
	close(nb);
	close(t);
	close(s);
	ERR("closed_fd", send(s, "x", 1, 0), EBADF);
	/* The port is free again once the socket has gone. */
	int r = udp();
	check("port_reusable_after_close", bind(r, SA(same), sizeof(same)) == 0);
	close(r);
}

static void on_alarm(int sig) { (void)sig; }

/* A blocked receive that a signal interrupts (syscall answers the kernel's cancel); a
 * message type of the kernel's own range cannot be sent from user space. */
static void interrupts(void)
{
	int s = udp();
	struct sockaddr_in any = sin_of(INADDR_ANY, 0);
	bind(s, SA(any), sizeof(any));
	struct sigaction sa = { .sa_handler = on_alarm }; /* no SA_RESTART */
	sigaction(SIGUSR1, &sa, NULL);
	pid_t parent = getpid(), kid = fork();
	if (kid == 0) {
		usleep(150000);
		kill(parent, SIGUSR1);
		_exit(0);
	}
	char buf[16];
	ERR("recv_eintr", recv(s, buf, sizeof(buf), 0), EINTR);
	waitpid(kid, NULL, 0);
	close(s);
	/* KC_SELF, then KC_SENDNB to ourselves with KMSG_LINUX_PASSED | 45 (kcall.h). */
	long self = syscall(0x0a000000 | 3);
	struct { uint32_t source, type; uint64_t w[7]; } m = { 0, 0xffff8000u | 45, { 0 } };
	long r = syscall(0x0a000000 | 10, self, &m);
	check("kernel_types_refused", r == -1 && errno == EINVAL);
	if (!(r == -1 && errno == EINVAL))
		printf("  KC_SENDNB of a kernel type: %ld errno %d (self %ld)\n", r, errno, self);
}

static void loop(void)
{
	int a = udp(), b = udp();
	struct sockaddr_in any = sin_of(INADDR_ANY, 0), from;
	bind(a, SA(any), sizeof(any));
	bind(b, SA(any), sizeof(any));
	struct sockaddr_in to_b = sin_of(INADDR_LOOPBACK, local_port(b));
	char buf[256];
	socklen_t fl = sizeof(from);
	check("loop_sendto", sendto(a, "hello", 5, 0, SA(to_b), sizeof(to_b)) == 5);
	ssize_t n = recv(b, buf, sizeof(buf), MSG_PEEK);
	check("loop_peek", n == 5 && !memcmp(buf, "hello", 5));
	memset(buf, 0, sizeof(buf));
	n = recvfrom(b, buf, sizeof(buf), 0, SA(from), &fl);
	check("loop_recvfrom", n == 5 && !memcmp(buf, "hello", 5));
	check("loop_source_address", fl == sizeof(from) && from.sin_port == htons(local_port(a)) &&
	      from.sin_addr.s_addr == htonl(INADDR_LOOPBACK));
	sendto(a, "0123456789", 10, 0, SA(to_b), sizeof(to_b));
	n = recv(b, buf, 4, MSG_TRUNC);
	check("loop_msg_trunc", n == 10 && !memcmp(buf, "0123", 4));
	check("loop_gone_after_trunc", recv(b, buf, sizeof(buf), MSG_DONTWAIT) == -1 && errno == EAGAIN);
	struct iovec out[3] = { { "ab", 2 }, { "cde", 3 }, { "fghij", 5 } };
	struct msghdr mh = { .msg_name = &to_b, .msg_namelen = sizeof(to_b), .msg_iov = out, .msg_iovlen = 3 };
	check("loop_sendmsg", sendmsg(a, &mh, 0) == 10);
	char p1[4], p2[3];
	struct iovec in[2] = { { p1, 4 }, { p2, 3 } };
	struct sockaddr_in src;
	struct msghdr rh = { .msg_name = &src, .msg_namelen = sizeof(src), .msg_iov = in, .msg_iovlen = 2 };
	n = recvmsg(b, &rh, 0);
	check("loop_recvmsg", n == 7 && !memcmp(p1, "abcd", 4) && !memcmp(p2, "efg", 3));
	check("loop_recvmsg_flags", (rh.msg_flags & MSG_TRUNC) && rh.msg_namelen == sizeof(src) && src.sin_port == htons(local_port(a)));
	struct sockaddr_in to_a = sin_of(INADDR_LOOPBACK, local_port(a));
	connect(b, SA(to_a), sizeof(to_a));
	check("loop_write_connected", write(b, "xyz", 3) == 3);
	n = read(a, buf, sizeof(buf));
	check("loop_read", n == 3 && !memcmp(buf, "xyz", 3));
	static char big[60000], back[60000];
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)(i * 7 + 3);
	check("loop_big_send", sendto(a, big, sizeof(big), 0, SA(to_b), sizeof(to_b)) == (ssize_t)sizeof(big));
	n = recv(b, back, sizeof(back), 0);
	check("loop_big_recv", n == (ssize_t)sizeof(big) && !memcmp(big, back, sizeof(big)));
	/* A child shares the socket (fork): its send arrives. */
	pid_t pid = fork();
	if (pid == 0) {
		_exit(write(b, "kid", 3) == 3 ? 0 : 1);
	}
	n = recv(a, buf, sizeof(buf), 0);
	check("loop_fork_shared", n == 3 && !memcmp(buf, "kid", 3));
	close(a);
	close(b);
}

static void restart(unsigned long rounds)
{
	int a = udp(), b = udp();
	struct sockaddr_in any = sin_of(INADDR_ANY, 0);
	bind(a, SA(any), sizeof(any));
	bind(b, SA(any), sizeof(any));
	struct sockaddr_in to_b = sin_of(INADDR_LOOPBACK, local_port(b));
	struct timeval tv = { 0, 200000 };
	setsockopt(a, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(b, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	unsigned long resends = 0, corrupt = 0, stale = 0;
	char msg[200], buf[256];
	for (unsigned long i = 0; i < rounds; i++) {
		int len = snprintf(msg, sizeof(msg), "round %lu payload %lx", i, i * 2654435761ul);
		for (;;) {
			if (sendto(a, msg, (size_t)len, 0, SA(to_b), sizeof(to_b)) != len) {
				resends++;
				continue;
			}
			struct sockaddr_in from;
			socklen_t fl = sizeof(from);
			ssize_t n = recvfrom(b, buf, sizeof(buf), 0, SA(from), &fl);
			if (n < 0) {
				resends++;
				continue; /* lost (udp was restarting): send again */
			}
			if (n != len || memcmp(buf, msg, (size_t)len)) {
				if (strncmp(buf, "round ", 6))
					corrupt++;
				else
					stale++; /* an earlier round's resend */
				continue;
			}
			if (sendto(b, buf, (size_t)n, 0, SA(from), fl) != n) {
				resends++;
				continue;
			}
			n = recv(a, buf, sizeof(buf), 0);
			while (n > 0 && (n != len || memcmp(buf, msg, (size_t)len)))
				n = recv(a, buf, sizeof(buf), 0); /* skip stale echoes */
			if (n == len)
				break;
			resends++;
		}
		if ((i + 1) % 500 == 0) {
			printf("udptest: round %lu\n", i + 1);
			fflush(stdout);
		}
	}
	printf("udptest: restart: %lu rounds, %lu resends, %lu stale, %lu corrupt\n", rounds, resends, stale, corrupt);
	check("restart_rounds", corrupt == 0);
	close(a);
	close(b);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	int all = argc < 2;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "calls"))
			calls();
		else if (!strcmp(argv[i], "loop"))
			loop();
		else if (!strcmp(argv[i], "restart") && i + 1 < argc)
			restart(strtoul(argv[++i], NULL, 10));
	}
	if (all)
		calls();
	if (all || (argc > 1 && !strcmp(argv[1], "calls")))
		interrupts();
	print_library_counts("udptest");
	printf("udptest: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
