/* netmicro: the benchmark suite's in-guest microbenchmarks (docs/benchmarks.md), one static
 * Linux binary run unchanged on Axolotl and on the Linux guest (tools/bench/bench.py types
 * it on each guest's console):
 *
 *   recvfrom_empty   a non-blocking recvfrom on an empty UDP socket (EAGAIN each time): on
 *                    Axolotl with the socket library, answered from the socket buffer in
 *                    user space; without it, a system call to the stack
 *   connect_close    connect to a listener on 127.0.0.1, accept, close both: the whole
 *                    life of a TCP connection over the loopback
 *
 * Each prints one line, `netmicro: NAME n=N cycles=C ns=T`: C is the mean TSC ticks per
 * operation (rdtsc; under QEMU's -icount shift=0 the TSC counts guest instructions, which is
 * how the suite measures those) and T the mean wall-clock time per operation.
 *
 *   netmicro [RECV_N [CONNECT_N]]    (defaults 20000 and 300)
 *
 * Linked with lib/sock by ld --wrap, as lighttpd and memcached are; AXOLOTL_SOCK=0 turns the
 * library off. Exit status 0 only when every operation behaved as expected. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../../tests/linux/libcount.h"

static inline uint64_t tsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi)::"memory");
	return ((uint64_t)hi << 32) | lo;
}

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void report(const char *name, long n, uint64_t ticks, uint64_t ns)
{
	printf("netmicro: %s n=%ld cycles=%llu ns=%llu\n", name, n, (unsigned long long)(ticks / (uint64_t)n),
	       (unsigned long long)(ns / (uint64_t)n));
	fflush(stdout);
}

static int fail(const char *what)
{
	printf("netmicro: FAILED %s: %s\n", what, strerror(errno));
	fflush(stdout);
	return 1;
}

static int recvfrom_empty(long n)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	if (s < 0)
		return fail("udp socket");
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (bind(s, (struct sockaddr *)&a, sizeof a) < 0)
		return fail("udp bind");
	char buf[64];
	struct sockaddr_in from;
	socklen_t fl;
	/* warm up: the library takes the socket over on its first calls */
	for (int i = 0; i < 100; i++) {
		fl = sizeof from;
		if (recvfrom(s, buf, sizeof buf, 0, (struct sockaddr *)&from, &fl) != -1 || errno != EAGAIN)
			return fail("recvfrom (warm-up) did not say EAGAIN");
	}
	uint64_t t0 = now_ns(), c0 = tsc();
	for (long i = 0; i < n; i++) {
		fl = sizeof from;
		if (recvfrom(s, buf, sizeof buf, 0, (struct sockaddr *)&from, &fl) != -1 || errno != EAGAIN)
			return fail("recvfrom did not say EAGAIN");
	}
	uint64_t c1 = tsc(), t1 = now_ns();
	close(s);
	report("recvfrom_empty", n, c1 - c0, t1 - t0);
	return 0;
}

static int connect_close(long n)
{
	int l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0)
		return fail("listener socket");
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof a;
	if (bind(l, (struct sockaddr *)&a, sizeof a) < 0 || listen(l, 16) < 0 ||
	    getsockname(l, (struct sockaddr *)&a, &al) < 0)
		return fail("listener");
	uint64_t t0 = now_ns(), c0 = tsc();
	for (long i = 0; i < n; i++) {
		int c = socket(AF_INET, SOCK_STREAM, 0);
		if (c < 0)
			return fail("socket");
		if (connect(c, (struct sockaddr *)&a, sizeof a) < 0)
			return fail("connect");
		int s = accept(l, NULL, NULL);
		if (s < 0)
			return fail("accept");
		if (close(s) < 0 || close(c) < 0)
			return fail("close");
	}
	uint64_t c1 = tsc(), t1 = now_ns();
	close(l);
	report("connect_close", n, c1 - c0, t1 - t0);
	return 0;
}

int main(int argc, char **argv)
{
	long rn = argc > 1 ? atol(argv[1]) : 20000, cn = argc > 2 ? atol(argv[2]) : 300;
	if (argc > 3 || rn <= 0 || cn <= 0) {
		fprintf(stderr, "usage: netmicro [RECV_N [CONNECT_N]] (both > 0)\n");
		return 2;
	}
	int bad = recvfrom_empty(rn) | connect_close(cn);
	print_library_counts("netmicro");
	printf("netmicro: %s\n", bad ? "failed" : "done");
	return bad;
}
