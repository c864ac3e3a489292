/* sockbench: the user-space socket library's first slice (lib/sock, docs/sockets.md) on a UDP
 * socket over udp's loopback, against the system-call path, under Axolotl.
 *   - cycles per non-blocking recvfrom on an empty socket: system call vs library, side by
 *     side (thesis table 5.1), and that the library's calls made no system call at all
 *     (the kernel's count of this process's Linux calls, KC_INFO KI_LINUX_CALLS);
 *   - datagrams both ways between a library-owned socket and an ordinary one, checked;
 *   - data calls through syscall on a library-owned socket fail with EBADFD; given back,
 *     the socket works through system calls again;
 *   - a TCP connection over tcp's loopback whose accepted end the library takes over: 1 MiB
 *     each way in 64 KiB rounds, checked byte by byte, partial reads, the peer's shutdown
 *     read as end of stream, and the socket given back in the middle of a piece.
 * Prints SOCKBENCH PASS|FAIL NAME lines and "sockbench: N passed, N failed". */
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <netinet/tcp.h>
#include "sock.h"
#include "activity.h"
#include "socktest.h"

#define KC_BASE 0x0a000000L
#define KC_INFO 16
#define KI_LINUX_CALLS 9
#define ROUNDS 20000

static long linux_calls(void) { return syscall(KC_BASE | KC_INFO, KI_LINUX_CALLS, 0); }

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

int main(void)
{
	check_tag = "SOCKBENCH";
	struct sockaddr_in sa, ca;
	int s = udp_bound(&sa), c = udp_bound(&ca);
	char buf[2048];
	/* 1. The system-call path. */
	int eagain = 0;
	uint64_t t0 = rdtsc();
	for (int i = 0; i < ROUNDS; i++)
		eagain += recvfrom(s, buf, sizeof(buf), MSG_DONTWAIT, NULL, NULL) < 0 && errno == EAGAIN;
	uint64_t sys_cycles = (rdtsc() - t0) / ROUNDS;
	check("syscall_recvfrom_empty_eagain", eagain == ROUNDS);
	/* 2. The library. */
	check("take_over", axsock_take(s) == 0);
	eagain = 0;
	long calls0 = linux_calls();
	t0 = rdtsc();
	for (int i = 0; i < ROUNDS; i++)
		eagain += axsock_recvfrom(s, buf, sizeof(buf), MSG_DONTWAIT, NULL, NULL) == -EAGAIN;
	uint64_t lib_cycles = (rdtsc() - t0) / ROUNDS;
	long calls1 = linux_calls();
	check("library_recvfrom_empty_eagain", eagain == ROUNDS);
	check("library_recvfrom_empty_no_system_call", calls0 >= 0 && calls1 == calls0);
	printf("sockbench: nonblocking recvfrom on an empty socket: system call %llu cycles, library %llu cycles "
	       "(%d calls each)\n", (unsigned long long)sys_cycles, (unsigned long long)lib_cycles, ROUNDS);
	/* 3. Data both ways. */
	int ok = 1;
	for (int i = 0; i < 100 && ok; i++) {
		int n = 1 + i * 13;
		memset(buf, 'a' + i % 26, (size_t)n);
		ok &= sendto(c, buf, (size_t)n, 0, (struct sockaddr *)&sa, sizeof(sa)) == n;
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);
		char got[2048];
		ssize_t r = axsock_recvfrom(s, got, sizeof(got), 0, (struct sockaddr *)&from, &fl);
		ok &= r == n && !memcmp(got, buf, (size_t)n) && fl == sizeof(from) && from.sin_port == ca.sin_port;
	}
	check("library_receives_100_datagrams", ok);
	ok = 1;
	uint64_t marks0 = axsock_marks, kicks0 = axsock_kicks, rings0 = axsock_rings;
	for (int i = 0; i < 100 && ok; i++) {
		int n = 1 + i * 17;
		memset(buf, 'A' + i % 26, (size_t)n);
		ok &= axsock_sendto(s, buf, (size_t)n, 0, (struct sockaddr *)&ca, sizeof(ca)) == n;
		char got[2048];
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);
		ok &= recvfrom(c, got, sizeof(got), 0, (struct sockaddr *)&from, &fl) == n && !memcmp(got, buf, (size_t)n) &&
		      from.sin_port == sa.sin_port;
	}
	check("library_sends_100_datagrams", ok);
	/* how udp was woken for them: a kick (a system call) or a store to the bell (udp on a
	 * dedicated MWAIT core) */
	printf("sockbench: datagram sends: %llu moved data, %llu kicks, %llu bell rings\n",
	       (unsigned long long)(axsock_marks - marks0), (unsigned long long)(axsock_kicks - kicks0),
	       (unsigned long long)(axsock_rings - rings0));
	check("library_peek_then_read",
	      sendto(c, "peek", 4, 0, (struct sockaddr *)&sa, sizeof(sa)) == 4 &&
	      axsock_recvfrom(s, buf, sizeof(buf), MSG_PEEK, NULL, NULL) == 4 &&
	      axsock_recvfrom(s, buf, sizeof(buf), 0, NULL, NULL) == 4 && !memcmp(buf, "peek", 4) &&
	      axsock_recvfrom(s, buf, sizeof(buf), MSG_DONTWAIT, NULL, NULL) == -EAGAIN);
	/* 4. Owned by the library: syscall refuses its data calls; given back, they work. */
	errno = 0;
	check("syscall_data_call_on_owned_socket_ebadfd", recvfrom(s, buf, sizeof(buf), MSG_DONTWAIT, NULL, NULL) < 0 &&
	      errno == EBADFD);
	check("give_back", axsock_give_back(s) == 0);
	check("after_give_back_syscall_path_works",
	      sendto(c, "back", 4, 0, (struct sockaddr *)&sa, sizeof(sa)) == 4 &&
	      recvfrom(s, buf, sizeof(buf), 0, NULL, NULL) == 4 && !memcmp(buf, "back", 4));
	/* 5. A fork gives the library's sockets back: both processes use system calls on them. */
	check("take_before_fork", axsock_take(s) == 0);
	pid_t kid = fork();
	if (kid == 0) {
		char kb[16];
		int r = recvfrom(s, kb, sizeof(kb), 0, NULL, NULL) == 5 && !memcmp(kb, "child", 5);
		_exit(r ? 0 : 1);
	}
	check("after_fork_socket_given_back", axsock_recvfrom(s, buf, sizeof(buf), MSG_DONTWAIT, NULL, NULL) == -EBADF);
	sendto(c, "child", 5, 0, (struct sockaddr *)&sa, sizeof(sa));
	int st = -1;
	waitpid(kid, &st, 0);
	check("child_receives_through_syscall", WIFEXITED(st) && WEXITSTATUS(st) == 0);
	check("parent_receives_through_syscall", sendto(c, "parent", 6, 0, (struct sockaddr *)&sa, sizeof(sa)) == 6 &&
	      recvfrom(s, buf, sizeof(buf), 0, NULL, NULL) == 6 && !memcmp(buf, "parent", 6));
	/* 6. A stream. */
	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in la = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t ll = sizeof(la);
	if (l < 0 || bind(l, (struct sockaddr *)&la, sizeof(la)) || listen(l, 4) || getsockname(l, (struct sockaddr *)&la, &ll))
		printf("  listener: %s\n", strerror(errno));
	int tc = socket(AF_INET, SOCK_STREAM, 0);
	int connected = connect(tc, (struct sockaddr *)&la, sizeof(la)) == 0;
	check("tcp_connect", connected);
	int ts = connected ? accept(l, NULL, NULL) : -1;
	int taken = ts >= 0 && axsock_take(ts) == 0;
	check("tcp_take_over", taken);
	if (!taken) {
		printf("sockbench: %d passed, %d failed\n", passed, failed);
		return 1;
	}
	static unsigned char out[65536], in[65536];
	ok = 1;
	for (int r = 0; r < 16 && ok; r++) { /* the syscall path sends, the library receives */
		for (size_t i = 0; i < sizeof(out); i++)
			out[i] = (unsigned char)(i * 7 + r);
		ok &= send(tc, out, sizeof(out), 0) == (ssize_t)sizeof(out);
		ok &= axsock_recvfrom(ts, in, sizeof(in), MSG_WAITALL, NULL, NULL) == (ssize_t)sizeof(in) &&
		      !memcmp(in, out, sizeof(in));
	}
	check("tcp_library_receives_1mib", ok);
	ok = 1;
	for (int r = 0; r < 16 && ok; r++) { /* the library sends, the syscall path receives */
		for (size_t i = 0; i < sizeof(out); i++)
			out[i] = (unsigned char)(i * 11 + r);
		ok &= axsock_sendto(ts, out, sizeof(out), 0, NULL, 0) == (ssize_t)sizeof(out);
		ok &= recv(tc, in, sizeof(in), MSG_WAITALL) == (ssize_t)sizeof(in) && !memcmp(in, out, sizeof(in));
	}
	check("tcp_library_sends_1mib", ok);
	/* a piece read in part, the socket given back in its middle: syscall goes on from there */
	ok = send(tc, "0123456789", 10, 0) == 10 && axsock_recvfrom(ts, in, 4, MSG_WAITALL, NULL, NULL) == 4 &&
	     !memcmp(in, "0123", 4) && axsock_recvfrom(ts, in, 2, MSG_PEEK, NULL, NULL) == 2 && !memcmp(in, "45", 2);
	check("tcp_partial_and_peek", ok);
	check("tcp_give_back_mid_piece", axsock_give_back(ts) == 0 && recv(ts, in, 6, MSG_WAITALL) == 6 &&
	      !memcmp(in, "456789", 6));
	check("tcp_take_again", axsock_take(ts) == 0);
	check("tcp_nonblocking_empty", axsock_recvfrom(ts, in, sizeof(in), MSG_DONTWAIT, NULL, NULL) == -EAGAIN);
	shutdown(tc, SHUT_WR);
	check("tcp_peer_shutdown_is_end_of_stream", axsock_recvfrom(ts, in, sizeof(in), 0, NULL, NULL) == 0 &&
	      axsock_recvfrom(ts, in, sizeof(in), 0, NULL, NULL) == 0);
	check("tcp_give_back_at_end", axsock_give_back(ts) == 0);
	close(ts);
	close(tc);
	close(l);
	/* syscall made this process's activity page and mapped it in (lib/net/sock_ax.h) */
	check("activity_page", axsock_act()->magic == AX_ACT_MAGIC && axsock_act()->version == AX_ACT_VERSION);
	printf("sockbench: %llu wake-ups of a sleeping engine (AX_KICK) for %llu calls that moved data\n",
	       (unsigned long long)axsock_kicks, (unsigned long long)axsock_marks);
	printf("sockbench: library answered %llu calls itself and made %llu system calls\n",
	       (unsigned long long)axsock_counts.user, (unsigned long long)axsock_counts.syscalls);
	printf("sockbench: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
