/* lib/sock: the activity page, application side (activity.h). */
#include "activity.h"
#include <errno.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>
#include "sock.h"
#include "sockbuf.h"
#include "sys.h"

_Thread_local uint64_t axsock_nsys;
uint64_t axsock_kicks, axsock_marks;
static struct ax_activity own; /* counters before (or without) the page */
static struct ax_activity *page = &own;
static bool have_page;
static struct ax_bell *bell; /* the engines' bell (sock_ax.h), NULL: none */
uint64_t axsock_rings;
uint64_t axsock_lazy_kicks;

/* The process's one wake socket, made by the first thread that blocks (wake_state:
 * WAKE_NONE, WAKE_MAKING while that thread makes it, WAKE_READY). Every thread must use
 * the same one: syscall wakes only the last socket AX_WAKE named, and epoll sets holding an
 * earlier one would never hear of their sockets again. */
enum { WAKE_NONE, WAKE_MAKING, WAKE_READY };
static int wake_fd = -1;
static _Atomic int wake_state;
/* a listener's accepts are taken over: the only sockets that reuse spares */
static bool accept_taking;
/* The wake word, named to the kernel by the first thread that sleeps on it (a second
 * naming of the same word is harmless); WORD_NONE where the kernel has no KC_WAKE. */
enum { WORD_UNSET, WORD_SET, WORD_NONE };
static _Atomic int word_state;

void axsock_act_forked(void)
{
	/* the parent's page, bell and wake socket are the parent's: the child gets its own */
	page = &own, have_page = false, bell = NULL;
	if (wake_fd >= 0)
		syscall(SYS_close, wake_fd);
	wake_fd = -1;
	atomic_store_explicit(&wake_state, WAKE_NONE, memory_order_relaxed);
	atomic_store_explicit(&word_state, WORD_UNSET, memory_order_relaxed); /* the child has none */
	accept_taking = false;
}

void axsock_act_page(uint64_t va)
{
	if (have_page || !va)
		return;
	struct ax_activity *p = (struct ax_activity *)(uintptr_t)va;
	if (p->magic != AX_ACT_MAGIC || p->version != AX_ACT_VERSION)
		return; /* not one we understand: every data call kicks */
	for (int c = 0; c < AXC_N; c++) /* what was counted before the page existed */
		p->calls[c].user += own.calls[c].user, p->calls[c].sys += own.calls[c].sys;
	page = p, have_page = true;
	bell = p->bell_va ? (struct ax_bell *)(uintptr_t)p->bell_va : NULL;
}

uint64_t axsock_notifies;
uint64_t axsock_quiet;

/* The engine sleeps and waits for a notification: send it ourselves (one kernel call), to
 * the endpoint and bits it wrote beside its flag; if that fails (none written, an engine
 * restarting: a stale endpoint), through syscall (AX_KICK), which knows the engine now. */
static void kick(int fd, uint32_t eng)
{
	axsock_nsys++;
	axsock_kicks++;
	axsock_counts.syscalls++;
	if (have_page && eng < AXE_N) {
		uint32_t ep = atomic_load_explicit(&page->idle[eng].ep, memory_order_relaxed);
		uint64_t bits = atomic_load_explicit(&page->idle[eng].bits, memory_order_relaxed);
		if (ep && bits && ax_sys_notify(ep, bits) == 0) {
			axsock_notifies++;
			return;
		}
	}
	ax_sys_setsockopt(fd, SOL_AXOLOTL, AX_KICK, NULL, 0);
}

/* The bit and the word: the engine serves the socket in its next turn. */
static bool mark(uint32_t eng, uint32_t bit)
{
	if (!have_page || eng >= AXE_N || bit >= AX_ACT_SOCKS)
		return false;
	atomic_fetch_or_explicit(&page->bits[eng][bit / 64], 1ull << (bit % 64), memory_order_relaxed);
	atomic_fetch_add_explicit(&page->eng[eng].word, 1, memory_order_release);
	return true;
}

void axsock_activity_lazy(uint32_t eng, uint32_t bit)
{
	mark(eng, bit);
}

void axsock_activity(int fd, uint32_t eng, uint32_t bit) { axsock_activity_rx(fd, eng, bit, NULL); }

void axsock_activity_rx(int fd, uint32_t eng, uint32_t bit, struct sockbuf_side *rx)
{
	axsock_marks++;
	if (!mark(eng, bit)) {
		kick(fd, AXE_N);
		return;
	}
	/* The word before the flag, as the engine raises its flag before its last look: one of
	 * the two sees the other (lib/chan's doorbell rule). The engine writes its RX mark
	 * before raising the flag, so a mark read too early finds the word seen. */
	atomic_thread_fence(memory_order_seq_cst);
	if (rx && !sockbuf_notify_due(rx)) {
		axsock_quiet++;
		return;
	}
	uint32_t f = atomic_load_explicit(&page->idle[eng].sleeping, memory_order_relaxed);
	if (f == AX_SLEEP_MWAIT && bell) /* it watches its line: the store wakes it */
		atomic_fetch_add_explicit(&bell->eng[eng].ring, 1, memory_order_release), axsock_rings++;
	else if (f)
		kick(fd, eng);
}

void axsock_count(enum ax_call c, bool user)
{
	if ((unsigned)c >= AXC_N)
		c = AXC_OTHER;
	if (user)
		page->calls[c].user++;
	else
		page->calls[c].sys++;
}

const struct ax_activity *axsock_act(void)
{
	return page;
}

uint32_t axsock_status(uint32_t bit)
{
	if (!have_page || bit >= AX_ACT_SOCKS)
		return 0;
	return atomic_load_explicit(&AX_ACT_STATUS(page)->st[bit], memory_order_acquire);
}

int axsock_wake_fd(void)
{
	if (!have_page)
		return -1;
	int st = atomic_load_explicit(&wake_state, memory_order_acquire);
	if (st == WAKE_READY)
		return wake_fd;
	if (st == WAKE_NONE &&
	    atomic_compare_exchange_strong_explicit(&wake_state, &st, WAKE_MAKING, memory_order_acquire,
						    memory_order_acquire)) {
		/* straight to the kernel: the wrappers must not track it */
		int fd = (int)syscall(SYS_socket, AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		axsock_nsys += 2;
		axsock_counts.syscalls += 2;
		if (fd >= 0 && ax_sys_setsockopt(fd, SOL_AXOLOTL, AX_WAKE, NULL, 0) != 0) {
			syscall(SYS_close, fd);
			fd = -1;
		}
		wake_fd = fd;
		/* failed: the next thread that blocks tries again (meanwhile the sockets go into
		 * the kernel's sets, events.c) */
		atomic_store_explicit(&wake_state, fd >= 0 ? WAKE_READY : WAKE_NONE, memory_order_release);
		return fd;
	}
	/* another thread is making it: two system calls */
	while ((st = atomic_load_explicit(&wake_state, memory_order_acquire)) == WAKE_MAKING)
		__builtin_ia32_pause();
	return st == WAKE_READY ? wake_fd : -1;
}

_Atomic uint32_t *axsock_wake_word(void)
{
	if (!have_page)
		return NULL;
	int st = atomic_load_explicit(&word_state, memory_order_acquire);
	if (st == WORD_UNSET) {
		axsock_nsys++;
		axsock_counts.syscalls++;
		st = ax_sys_wake_word(&page->app.word) == 0 ? WORD_SET : WORD_NONE;
		atomic_store_explicit(&word_state, st, memory_order_release);
	}
	return st == WORD_SET ? &page->app.word : NULL;
}

void axsock_woken(void)
{
	if (have_page)
		atomic_fetch_add_explicit(&page->app.wakes, 1, memory_order_relaxed);
}

int64_t axsock_now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

int64_t axsock_left(int64_t timeout, int64_t deadline)
{
	if (timeout < 0)
		return -1;
	int64_t l = deadline - axsock_now_ns();
	return l > 0 ? l : 0;
}

#define FUTEX_WAIT_PRIVATE 128 /* FUTEX_WAIT | FUTEX_PRIVATE_FLAG */

int axsock_sleep(_Atomic uint32_t *word, uint32_t seen, int64_t ns, bool restart)
{
	/* The kernel restarts only a FUTEX_WAIT without a timeout: a sleep a handler must end
	 * gets one, a year when the caller has none (its loop sleeps again after it). */
	if (ns < 0 && !restart)
		ns = 365ll * 86400 * 1000000000;
	struct timespec ts = { (time_t)(ns / 1000000000), (long)(ns % 1000000000) };
	axsock_nsys++;
	int e = syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, seen, ns < 0 ? NULL : &ts, NULL, 0) == 0 ? 0 : errno;
	if (atomic_load_explicit(word, memory_order_acquire) != seen)
		axsock_woken();
	return e == EINTR || e == ETIMEDOUT ? e : 0;
}

void axsock_waiting(bool on)
{
	if (!have_page)
		return;
	if (on) {
		atomic_fetch_add_explicit(&page->app.waiting, 1, memory_order_relaxed);
		/* counted in before the last look at the sockets; syscall writes a status
		 * before it looks at `waiting` */
		atomic_thread_fence(memory_order_seq_cst);
	} else {
		atomic_fetch_sub_explicit(&page->app.waiting, 1, memory_order_relaxed);
	}
}

void axsock_kernel_wait(int fd, bool on)
{
	if (!have_page)
		return;
	if (!on) {
		atomic_fetch_sub_explicit(&page->app.kwaiting, 1, memory_order_relaxed);
		return;
	}
	atomic_fetch_add_explicit(&page->app.kwaiting, 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst); /* counted in before the look at `lazy` */
	if (atomic_load_explicit(&page->app.lazy, memory_order_relaxed) &&
	    atomic_exchange_explicit(&page->app.lazy, 0, memory_order_relaxed)) {
		/* events syscall has not read yet may be what this wait waits for */
		axsock_nsys++;
		axsock_counts.syscalls++;
		axsock_lazy_kicks++;
		ax_sys_setsockopt(fd, SOL_AXOLOTL, AX_KICK, NULL, 0);
	}
}

int axsock_listener_key(int lfd, uint32_t *key, uint8_t *slot)
{
	struct ax_listener l;
	socklen_t len = sizeof(l);
	axsock_nsys++;
	axsock_counts.syscalls++;
	if (ax_sys_getsockopt(lfd, SOL_AXOLOTL, AX_ACCEPT_TAKE, &l, &len) != 0)
		return -errno;
	if (len != sizeof(l) || !l.act_va)
		return -ENOENT;
	axsock_act_page(l.act_va);
	accept_taking = true;
	*key = l.key;
	*slot = l.slot <= AX_ACT_LISTENERS ? (uint8_t)l.slot : 0;
	return have_page ? 0 : -ENOENT;
}

bool axsock_listen_read(uint8_t slot, uint32_t key, uint32_t *bits, uint32_t *seq)
{
	if (!have_page || !slot || slot > AX_ACT_LISTENERS)
		return false;
	struct ax_listen *e = &page->listen[slot - 1];
	*bits = atomic_load_explicit(&e->bits, memory_order_acquire);
	*seq = atomic_load_explicit(&e->seq, memory_order_relaxed);
	/* the key after the bits: a drop (key 0) comes before the entry's reuse */
	return atomic_load_explicit(&e->key, memory_order_acquire) == key + 1;
}

uint64_t axsock_accept_mark(void)
{
	return have_page ? atomic_load_explicit(&page->accepted_n, memory_order_acquire) : 0;
}

bool axsock_arrivals(uint32_t *v)
{
	if (!have_page)
		return false; /* (a fork's child before its first call: its parent's counts mean nothing) */
	*v = atomic_load_explicit(&page->app.arrivals, memory_order_acquire);
	return true;
}

int axsock_accepted(uint32_t key, uint32_t addr, uint16_t port, uint64_t mark, struct ax_sockbuf *b,
		    uint32_t *arrivals, uint32_t *more)
{
	if (!have_page)
		return -ENOENT;
	uint64_t n = atomic_load_explicit(&page->accepted_n, memory_order_acquire);
	for (uint64_t k = 0; k < AX_ACT_ACCEPTS && k < n && n - 1 - k >= mark; k++) { /* newest first */
		struct ax_accepted *e = &page->accepted[(n - 1 - k) % AX_ACT_ACCEPTS];
		for (int tries = 0; tries < 4; tries++) {
			uint32_t s1 = atomic_load_explicit(&e->seq, memory_order_acquire);
			if (s1 & 1)
				continue; /* being written */
			uint32_t l = e->listener, a = e->addr;
			uint16_t p = e->port;
			struct ax_sockbuf c = e->b;
			uint32_t arr = e->arrivals, m = e->more;
			atomic_thread_fence(memory_order_acquire);
			if (atomic_load_explicit(&e->seq, memory_order_relaxed) != s1)
				continue;
			if (l != key || a != addr || p != port)
				break;
			*b = c;
			*arrivals = arr, *more = m;
			return 0;
		}
	}
	return -ENOENT;
}

/* ---- spare buffers (lazy closing, sock_ax.h `spares`) ---- */

static bool spare_held(uint32_t st)
{
	return st == AX_SPARE_WRITING || st == AX_SPARE_KEEP || st == AX_SPARE_PARKED;
}

enum axsock_keep axsock_spare_keep(uint32_t bit, uint64_t va, uint64_t bytes, uint64_t live)
{
	if (!have_page || !accept_taking)
		return AXK_UNMAP;
	uint64_t held = 0;
	for (int i = 0; i < AX_ACT_SPARES; i++)
		held += spare_held(atomic_load_explicit(&page->spares[i].state, memory_order_acquire));
	if (held >= live) /* more closed than open: the load went down (thesis §5.5.5) */
		return AXK_SHRINK;
	for (int i = 0; i < AX_ACT_SPARES; i++) {
		struct ax_spare *e = &page->spares[i];
		uint32_t st = AX_SPARE_FREE;
		if (!atomic_compare_exchange_strong_explicit(&e->state, &st, AX_SPARE_WRITING, memory_order_acquire,
							     memory_order_relaxed))
			continue;
		e->bit = bit, e->va = va, e->bytes = bytes;
		atomic_store_explicit(&e->state, AX_SPARE_KEEP, memory_order_release);
		return AXK_KEPT;
	}
	return AXK_UNMAP; /* all entries in use */
}

int axsock_spares_reclaim(void)
{
	int n = 0;
	for (int i = 0; have_page && i < AX_ACT_SPARES; i++) {
		struct ax_spare *e = &page->spares[i];
		uint32_t st = atomic_load_explicit(&e->state, memory_order_acquire);
		if (st != AX_SPARE_KEEP && st != AX_SPARE_PARKED)
			continue;
		uint64_t va = e->va, bytes = e->bytes; /* ours: syscall never writes them */
		/* syscall may be handing a parked one to a new socket: whoever swaps first has it */
		if (!atomic_compare_exchange_strong_explicit(&e->state, &st, AX_SPARE_CLAIMED, memory_order_acq_rel,
							     memory_order_relaxed))
			continue;
		axsock_nsys++;
		axsock_counts.syscalls++;
		syscall(SYS_munmap, (void *)(uintptr_t)va, bytes);
		n++;
	}
	return n;
}

int axsock_spares_held(void)
{
	int n = 0;
	for (int i = 0; have_page && i < AX_ACT_SPARES; i++)
		n += spare_held(atomic_load_explicit(&page->spares[i].state, memory_order_acquire));
	return n;
}
