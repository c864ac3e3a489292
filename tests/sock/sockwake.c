/* sockwake: the stack's side of the socket library beyond the data calls, under Axolotl
 * (lib/net/sock_ax.h, docs/sockets.md):
 *   - accepts taken over by syscall during the accept (AX_ACCEPT_TAKE): the library finds
 *     the connection's entry in its activity page by the peer's address, adopts the socket
 *     without a system call and moves 256 KiB each way; syscall refuses data calls on it;
 *   - the wake socket (AX_WAKE): one per process, also when threads make it at once; a
 *     library that counts itself as waiting and blocks in
 *     epoll_wait on it (edge-triggered) is woken when data arrives on one of its sockets,
 *     and is not woken when it did not count itself in;
 *   - the socket's status in the page: a reset by the peer shows POLLERR|POLLHUP and
 *     ECONNRESET there;
 *   - lazy closing: a closed connection's buffer, kept mapped, goes to the next accepted
 *     connection at the same address; spares are reclaimed when they outnumber open sockets.
 * Prints SOCKWAKE PASS|FAIL NAME lines and "sockwake: N passed, N failed". */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/sysinfo.h>
#include <unistd.h>
#include <arpa/inet.h>
#include "sock.h"
#include "activity.h"
#include "socktest.h"

/* what an accept entry said of arrivals and the queue (looked at by the library, not here) */
static uint32_t arr_, more_;

static int listener(struct sockaddr_in *a)
{
	int l = socket(AF_INET, SOCK_STREAM, 0);
	*a = (struct sockaddr_in){ .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(*a);
	if (l < 0 || bind(l, (struct sockaddr *)a, sizeof(*a)) || listen(l, 4) || getsockname(l, (struct sockaddr *)a, &len)) {
		printf("  listener: %s\n", strerror(errno));
		close(l);
		return -1;
	}
	return l;
}

/* The peer, on a thread of its own: after delay_ms, sends one byte on fd. */
struct later {
	int fd, delay_ms;
	char byte;
};
static void *send_later(void *p)
{
	struct later *l = p;
	usleep((useconds_t)l->delay_ms * 1000);
	send(l->fd, &l->byte, 1, 0);
	return NULL;
}

/* Threads that ask for the wake socket at the same moment, as blocking workers do. */
#define WAKE_THREADS 4
static atomic_int wake_go;
static int wake_fds[WAKE_THREADS];

static void *first_wake_fd(void *p)
{
	while (!atomic_load(&wake_go))
		;
	*(int *)p = axsock_wake_fd();
	return NULL;
}

/* One round of waiting: counted in or not, blocks in epoll_wait on the wake socket for up
 * to timeout_ms while the peer sends a byte after 300 ms; epoll_wait's result. */
static int wait_round(int ep, int a, int c, char byte, bool counted, int timeout_ms)
{
	pthread_t t;
	struct later l = { c, 300, byte };
	pthread_create(&t, NULL, send_later, &l);
	char x;
	int r = -2;
	if (counted)
		axsock_waiting(true);
	if (axsock_recvfrom(a, &x, 1, MSG_DONTWAIT, NULL, NULL) == -EAGAIN) {
		struct epoll_event ev;
		r = epoll_wait(ep, &ev, 1, timeout_ms);
	}
	if (counted)
		axsock_waiting(false);
	pthread_join(t, NULL);
	return r;
}

/* The stack may still be coming up when pm starts us (tcp on a core of its own can start
 * before ds knows its name, and rs starts it again): wait until a connection to ourselves
 * works, up to 30 s. */
static void wait_for_tcp(void)
{
	for (int i = 0; i < 300; i++) {
		struct sockaddr_in a;
		int l = listener(&a), c = socket(AF_INET, SOCK_STREAM, 0);
		bool up = l >= 0 && c >= 0 && connect(c, (struct sockaddr *)&a, sizeof(a)) == 0;
		close(c);
		close(l);
		if (up)
			return;
		usleep(100000);
	}
}

/* Accepts a connection on l, taken over (AX_ACCEPT_TAKE) and adopted: true, *fd and *b. */
static bool accept_adopt(int l, uint32_t key, int *fd, struct ax_sockbuf *b)
{
	struct sockaddr_in peer;
	socklen_t pl = sizeof(peer);
	uint64_t mk = axsock_accept_mark();
	*fd = accept(l, (struct sockaddr *)&peer, &pl);
	return *fd >= 0 && axsock_accepted(key, peer.sin_addr.s_addr, peer.sin_port, mk, b, &arr_, &more_) == 0 && axsock_adopt(*fd, b) == 0;
}

/* The state of the spare entry for the buffer at va (AX_SPARE_FREE if none names it). */
static int spare_state(uint64_t va)
{
	const struct ax_activity *p = axsock_act();
	for (int i = 0; i < AX_ACT_SPARES; i++) {
		uint32_t st = atomic_load(&p->spares[i].state);
		if (st != AX_SPARE_FREE && p->spares[i].va == va)
			return (int)st;
	}
	return AX_SPARE_FREE;
}

/* Waits up to 3 s for va's entry to reach state: the state it has then. */
static int wait_spare(uint64_t va, int state)
{
	int st = spare_state(va);
	for (int i = 0; i < 60 && st != state; i++) {
		usleep(50000);
		st = spare_state(va);
	}
	return st;
}

/* No spare held from earlier rounds: each is reclaimed (syscall destroys it: AX_RECLAIM on
 * any socket of ours, here the listener l). */
static void settle_spares(int l)
{
	if (axsock_spares_reclaim() > 0)
		setsockopt(l, SOL_AXOLOTL, AX_RECLAIM, NULL, 0);
}

int main(void)
{
	check_tag = "SOCKWAKE";
	wait_for_tcp();
	static char out[262144], in[262144];
	struct sockaddr_in la;
	int l = listener(&la);
	uint32_t key = 0, lbits = 1, lseq = 0;
	uint8_t slot = 0;
	check("listener_key", axsock_listener_key(l, &key, &slot) == 0);
	/* the listener's readiness in the page: nothing queued yet */
	check("listen_entry_idle", slot != 0 && axsock_listen_read(slot, key, &lbits, &lseq) && lbits == 0);
	uint32_t seq0 = lseq;
	int c = socket(AF_INET, SOCK_STREAM, 0);
	check("connect", connect(c, (struct sockaddr *)&la, sizeof(la)) == 0);
	/* connected: the connection is queued, and syscall says so in the page (soon) */
	for (int i = 0; i < 20000 && axsock_listen_read(slot, key, &lbits, &lseq) && !(lbits & POLLIN); i++)
		sched_yield();
	check("listen_entry_readable", (lbits & POLLIN) && lseq != seq0);
	uint64_t mark = axsock_accept_mark();
	struct sockaddr_in peer;
	socklen_t pl = sizeof(peer);
	int a = accept(l, (struct sockaddr *)&peer, &pl);
	check("listen_entry_drained", axsock_listen_read(slot, key, &lbits, &lseq) && lbits == 0);
	struct ax_sockbuf b;
	int found = axsock_accepted(key, peer.sin_addr.s_addr, peer.sin_port, mark, &b, &arr_, &more_);
	check("accepted_entry_found", a >= 0 && found == 0 && b.stream == 1 && b.va != 0);
	/* an entry from before the mark is never taken */
	struct ax_sockbuf old;
	check("no_entry_before_the_mark", axsock_accepted(key, peer.sin_addr.s_addr, peer.sin_port,
							   axsock_accept_mark(), &old, &arr_, &more_) == -ENOENT);
	uint64_t sys0 = axsock_counts.syscalls;
	check("adopted_without_a_system_call", found == 0 && axsock_adopt(a, &b) == 0 && axsock_counts.syscalls == sys0);
	char x;
	errno = 0;
	check("syscall_refuses_data_calls", recv(a, &x, 1, MSG_DONTWAIT) == -1 && errno == EBADFD);
	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = (char)(i * 7 + 3);
	bool ok = send(c, out, sizeof(out), 0) == (ssize_t)sizeof(out) &&
		  axsock_recvfrom(a, in, sizeof(in), MSG_WAITALL, NULL, NULL) == (ssize_t)sizeof(in) && !memcmp(in, out, sizeof(in));
	ok = ok && axsock_sendto(a, out, sizeof(out), 0, NULL, 0) == (ssize_t)sizeof(out) &&
	     recv(c, in, sizeof(in), MSG_WAITALL) == (ssize_t)sizeof(in) && !memcmp(in, out, sizeof(in));
	check("adopted_socket_moves_256k_each_way", ok);

	/* threads that block for the first time at once (memcached's workers, when its first
	 * connections arrive together) all get the one wake socket syscall wakes */
	pthread_t wt[WAKE_THREADS];
	for (int i = 0; i < WAKE_THREADS; i++)
		pthread_create(&wt[i], NULL, first_wake_fd, &wake_fds[i]);
	atomic_store(&wake_go, 1);
	for (int i = 0; i < WAKE_THREADS; i++)
		pthread_join(wt[i], NULL);
	int w = axsock_wake_fd(), ep = epoll_create1(0);
	ok = w >= 0;
	for (int i = 0; i < WAKE_THREADS; i++)
		ok = ok && wake_fds[i] == w;
	check("one_wake_socket_for_all_threads", ok);
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET, .data.fd = w };
	check("wake_socket", w >= 0 && ep >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, w, &ev) == 0);
	epoll_wait(ep, &ev, 1, 0); /* the registration's first report */
	uint64_t wakes0 = axsock_act()->app.wakes;
	int r = wait_round(ep, a, c, 'w', true, 10000);
	check("waiting_library_is_woken", r == 1 && axsock_act()->app.wakes > wakes0 &&
						  axsock_recvfrom(a, &x, 1, 0, NULL, NULL) == 1 && x == 'w');
	r = wait_round(ep, a, c, 'n', false, 1500);
	check("library_not_waiting_is_not_woken", r == 0 && axsock_recvfrom(a, &x, 1, 0, NULL, NULL) == 1 && x == 'n');

	/* 40 more connections taken over at accept and closed: each buffer (560 KiB) is
	 * unmapped at close, so free memory stays put (it would drop by 22 MiB otherwise) */
	struct sysinfo si0, si1;
	sysinfo(&si0);
	int adopted = 0;
	for (int i = 0; i < 40; i++) {
		int cc = socket(AF_INET, SOCK_STREAM, 0);
		if (connect(cc, (struct sockaddr *)&la, sizeof(la)) != 0)
			break;
		uint64_t mk = axsock_accept_mark();
		pl = sizeof(peer);
		int aa = accept(l, (struct sockaddr *)&peer, &pl);
		struct ax_sockbuf bb;
		if (aa >= 0 && axsock_accepted(key, peer.sin_addr.s_addr, peer.sin_port, mk, &bb, &arr_, &more_) == 0 &&
		    axsock_adopt(aa, &bb) == 0 && send(cc, "hi", 2, 0) == 2 &&
		    axsock_recvfrom(aa, in, 2, MSG_WAITALL, NULL, NULL) == 2)
			adopted++;
		axsock_close(aa);
		close(cc);
	}
	usleep(500000); /* the engine lets go of the last buffers */
	sysinfo(&si1);
	long long drop = ((long long)si0.freeram - (long long)si1.freeram) * si0.mem_unit;
	printf("sockwake: free memory dropped by %lld KiB over 40 connections taken over and closed\n", drop / 1024);
	check("closed_buffers_unmapped", adopted == 40 && drop < 8ll * 1024 * 1024);

	/* lazy closing (thesis §5.5.5): a connection closed while others are open keeps its
	 * buffer mapped; syscall parks it once tcp is done with it and the next accepted
	 * connection gets it, at the same address, with no new mapping; closing more than stay
	 * open gives the spares back */
	{
		settle_spares(l);
		int cc = socket(AF_INET, SOCK_STREAM, 0), aa = -1;
		struct ax_sockbuf b1 = { 0 }, b2 = { 0 };
		bool took = connect(cc, (struct sockaddr *)&la, sizeof(la)) == 0 && accept_adopt(l, key, &aa, &b1);
		axsock_close(aa);
		close(cc);
		int st = wait_spare(b1.va, AX_SPARE_PARKED);
		check("closed_buffer_parked", took && st == AX_SPARE_PARKED);
		cc = socket(AF_INET, SOCK_STREAM, 0);
		took = connect(cc, (struct sockaddr *)&la, sizeof(la)) == 0 && accept_adopt(l, key, &aa, &b2);
		char y[2] = { 0 };
		ok = took && b2.va == b1.va && spare_state(b1.va) == AX_SPARE_FREE && send(cc, "ok", 2, 0) == 2 &&
		     axsock_recvfrom(aa, y, 2, MSG_WAITALL, NULL, NULL) == 2 && !memcmp(y, "ok", 2) &&
		     axsock_sendto(aa, "re", 2, 0, NULL, 0) == 2 && recv(cc, y, 2, MSG_WAITALL) == 2 && !memcmp(y, "re", 2);
		printf("sockwake: first buffer at %#llx, the next connection's at %#llx\n", (unsigned long long)b1.va,
		       (unsigned long long)b2.va);
		check("next_accept_reuses_the_buffer", ok);
		/* a second connection; close both: the first is kept (one other is open), the
		 * second finds as many spares as open sockets and reclaims them all */
		int c3 = socket(AF_INET, SOCK_STREAM, 0), a3 = -1;
		struct ax_sockbuf b3;
		took = connect(c3, (struct sockaddr *)&la, sizeof(la)) == 0 && accept_adopt(l, key, &a3, &b3);
		axsock_close(aa);
		int held = axsock_spares_held();
		axsock_close(a3);
		close(cc);
		close(c3);
		int after = axsock_spares_held();
		st = wait_spare(b2.va, AX_SPARE_FREE);
		printf("sockwake: spares held %d after the first close, %d after the second\n", held, after);
		check("spares_reclaimed_when_more_than_open", took && held == 1 && after == 0 && st == AX_SPARE_FREE);
	}

	/* A sleeping tcp is woken by the library's own notify (a shared core; the bell on a
	 * dedicated MWAIT core); an endpoint in the page that no longer names tcp (as after a
	 * restart) falls back to AX_KICK through syscall. Each round waits until tcp sleeps, so
	 * the send must wake it; a round where tcp woke meanwhile proves nothing and is tried
	 * again. */
	{
		int cc = socket(AF_INET, SOCK_STREAM, 0), aa = -1;
		struct ax_sockbuf bb;
		bool took = connect(cc, (struct sockaddr *)&la, sizeof(la)) == 0 && accept_adopt(l, key, &aa, &bb);
		struct ax_activity *pg = (struct ax_activity *)axsock_act();
		struct ax_idle *idle = &pg->idle[AXE_TCP];
		bool moved = took, direct = false, fallback = false, mwait = false;
		for (int i = 0; i < 40 && moved && !(direct && fallback); i++) {
			uint32_t f = 0;
			for (int t = 0; t < 1500 && !f; t++, usleep(2000))
				f = atomic_load(&idle->sleeping);
			mwait = f == AX_SLEEP_MWAIT;
			bool lie = direct || mwait;
			uint32_t ep = atomic_load(&idle->ep);
			if (lie && ep)
				atomic_store(&idle->ep, ep + 0x10000); /* the next generation: a dead endpoint */
			uint64_t n0 = axsock_notifies, k0 = axsock_kicks, r0 = axsock_rings;
			char y = 0;
			moved = axsock_sendto(aa, "w", 1, 0, NULL, 0) == 1 && recv(cc, &y, 1, 0) == 1 && y == 'w';
			if (mwait) { /* the bell, whatever the page says; never a system call */
				direct |= axsock_rings > r0 && axsock_kicks == k0;
				fallback |= direct;
			} else if (!lie) {
				direct |= axsock_notifies == n0 + 1 && axsock_kicks == k0 + 1;
			} else {
				fallback |= axsock_notifies == n0 && axsock_kicks == k0 + 1;
			}
		}
		printf("sockwake: %s tcp: %llu kicks, %llu of them our own notify\n", mwait ? "MWAIT" : "notified",
		       (unsigned long long)axsock_kicks, (unsigned long long)axsock_notifies);
		check("sleeping_tcp_woken_by_our_notify", moved && direct);
		check("stale_endpoint_falls_back_to_kick", moved && fallback);
		axsock_close(aa);
		close(cc);
	}

	/* A read wakes a sleeping tcp only once its release reaches the mark tcp set beside
	 * `released` (lwIP's window-update threshold past what tcp last saw): a 1-byte read
	 * leaves tcp asleep and only marks the socket; an 8 KiB read reaches the mark and wakes
	 * it (a notify, or a store to the bell on an MWAIT core). tcp sets its mark when it
	 * first looks at the socket, so the first small read may wake it; a round where tcp was
	 * awake at the read proves nothing and is tried again. */
	{
		int cc = socket(AF_INET, SOCK_STREAM, 0), aa = -1;
		struct ax_sockbuf bb;
		bool ok = connect(cc, (struct sockaddr *)&la, sizeof(la)) == 0 && accept_adopt(l, key, &aa, &bb);
		struct ax_idle *idle = &((struct ax_activity *)axsock_act())->idle[AXE_TCP];
		static char big[8192], got[8192];
		bool quiet = false, woke = false;
		for (int i = 0; i < 60 && ok && !(quiet && woke); i++) {
			size_t n = quiet ? sizeof(big) : 1;
			ok = send(cc, big, n, 0) == (ssize_t)n;
			for (int t = 0; t < 1500 && ok && !(atomic_load(&idle->sleeping) && axsock_nread(aa) >= (int)n); t++)
				usleep(2000);
			uint64_t k0 = axsock_kicks, q0 = axsock_quiet, r0 = axsock_rings;
			bool asleep = atomic_load(&idle->sleeping) != 0;
			ok = ok && axsock_recvfrom(aa, got, n, 0, NULL, NULL) == (ssize_t)n;
			if (n == 1)
				quiet |= asleep && axsock_quiet == q0 + 1 && axsock_kicks == k0 && axsock_rings == r0;
			else
				woke |= asleep && axsock_quiet == q0 && axsock_kicks + axsock_rings == k0 + r0 + 1;
		}
		check("small_read_leaves_tcp_asleep", ok && quiet);
		check("read_past_the_mark_wakes_tcp", ok && woke);
		axsock_close(aa);
		close(cc);
	}

	/* shutdown in user space: the peer reads the end, our sends fail, its data still comes */
	{
		int cc = socket(AF_INET, SOCK_STREAM, 0);
		connect(cc, (struct sockaddr *)&la, sizeof(la));
		uint64_t mk = axsock_accept_mark();
		pl = sizeof(peer);
		int aa = accept(l, (struct sockaddr *)&peer, &pl);
		struct ax_sockbuf bb;
		bool took = aa >= 0 && axsock_accepted(key, peer.sin_addr.s_addr, peer.sin_port, mk, &bb, &arr_, &more_) == 0 &&
			    axsock_adopt(aa, &bb) == 0;
		uint64_t sys1 = axsock_counts.syscalls, kicks1 = axsock_kicks;
		int sr = took ? axsock_shutdown(aa, SHUT_WR) : -1;
		bool no_call = axsock_counts.syscalls - sys1 == axsock_kicks - kicks1; /* a kick at most */
		char y;
		ok = sr == 0 && no_call && recv(cc, &y, 1, 0) == 0 && axsock_sendto(aa, "q", 1, MSG_NOSIGNAL, NULL, 0) == -EPIPE &&
		     send(cc, "z", 1, 0) == 1 && axsock_recvfrom(aa, &y, 1, 0, NULL, NULL) == 1 && y == 'z';
		check("shutdown_in_user_space", ok);
		axsock_close(aa);
		close(cc);
	}

	struct linger lg = { 1, 0 };
	setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(c); /* a reset */
	uint32_t st = 0;
	for (int i = 0; i < 100 && !(st & POLLERR); i++) {
		usleep(50000);
		st = axsock_status(axsock_bit(a));
	}
	check("reset_in_the_status", (st & POLLERR) && (st & POLLHUP) && (st >> AXS_ERR_SHIFT) == ECONNRESET);
	printf("sockwake: status %#x, %llu wake-ups\n", st, (unsigned long long)axsock_act()->app.wakes);
	/* how the engine was woken after the library moved data: by a kick (a system call) or
	 * by a store to the bell (tcp on a dedicated MWAIT core) */
	printf("sockwake: %llu calls moved data, %llu kicks, %llu bell rings\n", (unsigned long long)axsock_marks,
	       (unsigned long long)axsock_kicks, (unsigned long long)axsock_rings);
	printf("sockwake: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
