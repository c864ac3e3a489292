/* sockevil: an application that abuses the socket buffers it was given (thesis §5.7,
 * docs/sockets.md "Safety"). It takes a UDP and a TCP socket over (AX_SOCKBUF) and then
 * lies: connect descriptors where none belongs, garbage descriptors, an impossible TX head,
 * an RX `released` beyond what was produced, a scribbled buffer header, spare-buffer
 * entries it never made; it tells the engines to look (AX_KICK) each time.
 * Meanwhile an honest UDP pair and an honest TCP connection, on the system-call path, must
 * keep working; the abused sockets report errors, never take the engines down. The test
 * (tests/system/test_sock.py) also checks that rs restarted nothing.
 * Prints SOCKEVIL PASS|FAIL NAME lines and "sockevil: N passed, N failed". */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>
#include "sockbuf.h"
#include "sock_ax.h"
#include "socktest.h"

static void tcp_pair(int *c, int *s)
{
	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 4) || getsockname(l, (struct sockaddr *)&a, &al))
		printf("  listener: %s\n", strerror(errno));
	*c = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(*c, (struct sockaddr *)&a, sizeof(a)))
		printf("  connect: %s\n", strerror(errno));
	*s = accept(l, NULL, NULL);
	close(l);
}

/* The honest ones: a datagram each way, and 64 KiB over TCP each way. */
static int honest(int u1, struct sockaddr_in *a1, int u2, struct sockaddr_in *a2, int tc, int ts)
{
	static char b[65536], r[65536];
	int ok = sendto(u1, "ping", 4, 0, (struct sockaddr *)a2, sizeof(*a2)) == 4 &&
		 recv(u2, r, sizeof(r), 0) == 4 && !memcmp(r, "ping", 4) &&
		 sendto(u2, "pong", 4, 0, (struct sockaddr *)a1, sizeof(*a1)) == 4 &&
		 recv(u1, r, sizeof(r), 0) == 4 && !memcmp(r, "pong", 4);
	for (size_t i = 0; i < sizeof(b); i++)
		b[i] = (char)(i * 31);
	ok = ok && send(tc, b, sizeof(b), 0) == (ssize_t)sizeof(b) && recv(ts, r, sizeof(r), MSG_WAITALL) == (ssize_t)sizeof(r) &&
	     !memcmp(b, r, sizeof(b));
	ok = ok && send(ts, b, sizeof(b), 0) == (ssize_t)sizeof(b) && recv(tc, r, sizeof(r), MSG_WAITALL) == (ssize_t)sizeof(r) &&
	     !memcmp(b, r, sizeof(b));
	return ok;
}

static unsigned char *take(int fd, struct ax_sockbuf *b)
{
	socklen_t l = sizeof(*b);
	if (getsockopt(fd, SOL_AXOLOTL, AX_SOCKBUF, b, &l) || l != sizeof(*b))
		return NULL;
	return (unsigned char *)(uintptr_t)b->va;
}

static void kick(int fd) { setsockopt(fd, SOL_AXOLOTL, AX_KICK, NULL, 0); }

/* Lies about one socket's buffer, telling the engine after each. */
static void abuse(int fd, unsigned char *m, uint64_t bytes)
{
	struct sockbuf_hdr h;
	memcpy(&h, m, sizeof(h));
	/* 0. well-formed connect descriptors where none belongs: on a connected or datagram
	 * socket, to a family that does not exist, to port 0, one with data */
	struct sockbuf sb;
	if (sockbuf_attach(&sb, m, bytes, SB_APP) == 0) {
		struct sockbuf_desc d = { .flags = SBD_CONNECT, .family = AF_INET, .port = htons(9) };
		sockbuf_commit(&sb.tx, 0, &d);
		d.family = 99;
		sockbuf_commit(&sb.tx, 0, &d);
		d.family = AF_INET, d.port = 0;
		sockbuf_commit(&sb.tx, 0, &d);
		void *p = sockbuf_alloc(&sb.tx, 16, &(int){ 0 });
		if (p)
			d.port = htons(9), sockbuf_commit(&sb.tx, 16, &d);
		kick(fd);
		usleep(50000);
	}
	struct spsc_shared *tx = (struct spsc_shared *)(m + h.tx_q);
	unsigned char *slots = m + h.tx_q + SPSC_HDR_SIZE;
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	/* 1. garbage descriptors, published */
	for (uint32_t i = 0; i < 8; i++)
		for (uint32_t k = 0; k < SOCKBUF_SLOT; k++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			slots[i * SOCKBUF_SLOT + k] = (unsigned char)(seed >> 56);
		}
	atomic_store(&tx->head, atomic_load(&tx->head) + 8);
	kick(fd);
	usleep(50000);
	/* 2. an impossible head */
	atomic_store(&tx->head, atomic_load(&tx->head) + (1ull << 40));
	kick(fd);
	usleep(50000);
	/* 3. RX released beyond anything produced */
	atomic_store((_Atomic uint64_t *)(void *)(m + h.rx_rel), 1ull << 50);
	kick(fd);
	usleep(50000);
	/* 4. the header scribbled (everyone copied it at attach) */
	memset(m, 0xff, 64);
	kick(fd);
	usleep(50000);
}

/* Lies in the process's activity page: every bit of both engines set again and again, the
 * words moved at random, the engines' sleeping flags and the page's header overwritten. The
 * engines must only ever serve this process's own library sockets through it. */
static void abuse_page(int fd, unsigned char *page)
{
	struct ax_activity *a = (struct ax_activity *)page;
	for (int round = 0; round < 200; round++) {
		for (int e = 0; e < AXE_N; e++) {
			for (int c = 0; c < AX_ACT_SOCKS / 64; c++)
				atomic_store(&a->bits[e][c], ~0ull);
			atomic_fetch_add(&a->eng[e].word, (uint64_t)round * 0x9e3779b9u + 1);
			atomic_store(&a->idle[e].sleeping, (uint32_t)round);
		}
		if (round % 50 == 0)
			kick(fd);
	}
	/* spare buffers that were never kept, in every state, then "reclaim them" */
	uint64_t seed = 0x2545f4914f6cdd1dull;
	for (int i = 0; i < AX_ACT_SPARES; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		a->spares[i].bit = (uint32_t)(seed >> 40) % (AX_ACT_SOCKS + 8);
		a->spares[i].va = seed, a->spares[i].bytes = seed >> 20;
		atomic_store(&a->spares[i].state, (uint32_t)(seed >> 61));
	}
	setsockopt(fd, SOL_AXOLOTL, AX_RECLAIM, NULL, 0);
	memset(page, 0xa5, 64); /* the header too (syscall wrote it; the engines copied it) */
	kick(fd);
	usleep(50000);
}

int main(void)
{
	check_tag = "SOCKEVIL";
	struct sockaddr_in a1, a2, ae;
	int u1 = udp_bound(&a1), u2 = udp_bound(&a2), ue = udp_bound(&ae);
	int tc, ts, ec, es;
	tcp_pair(&tc, &ts);
	tcp_pair(&ec, &es);
	check("honest_before", honest(u1, &a1, u2, &a2, tc, ts));
	struct ax_sockbuf bu, bt;
	unsigned char *mu = take(ue, &bu), *mt = take(es, &bt);
	check("take_udp_and_tcp", mu && mt);
	check("activity_page_mapped", mu && bu.act_va != 0);
	if (mu && bu.act_va)
		abuse_page(ue, (unsigned char *)(uintptr_t)bu.act_va);
	if (mu)
		abuse(ue, mu, bu.bytes);
	if (mt)
		abuse(es, mt, bt.bytes);
	check("honest_after_abuse", honest(u1, &a1, u2, &a2, tc, ts));
	/* the abused sockets: given back, syscall cannot use their rings and says so; closing
	 * them works */
	uint32_t off = 0;
	int r1 = setsockopt(ue, SOL_AXOLOTL, AX_SOCKBUF, &off, sizeof(off)), e1 = errno;
	check("abused_udp_given_back_refused", r1 == -1 && e1 == EIO);
	struct pollfd p = { es, POLLIN, 0 };
	check("abused_tcp_reports_an_error", poll(&p, 1, 2000) == 1 && (p.revents & POLLERR));
	check("abused_sockets_close", close(ue) == 0 && close(es) == 0 && close(ec) == 0);
	/* new sockets after all that */
	struct sockaddr_in a3;
	int u3 = udp_bound(&a3), nc, ns;
	tcp_pair(&nc, &ns);
	check("new_sockets_work", honest(u1, &a1, u3, &a3, nc, ns));
	printf("sockevil: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
