/* The user-space socket library's calls to `syscall` (docs/sockets.md): Linux socket
 * options at a level Linux does not use, so they travel as ordinary get/setsockopt calls.
 *   getsockopt(fd, SOL_AXOLOTL, AX_SOCKBUF, struct ax_sockbuf *, len): the library takes the
 *     socket's buffers over: they are mapped into the caller (if not yet), `syscall` stops
 *     serving data calls on the socket (EBADFD) and answers with where they are. The
 *     library attaches as the application side (sockbuf_attach, SB_APP) and continues from
 *     the published indices.
 *   setsockopt(fd, SOL_AXOLOTL, AX_SOCKBUF, uint32_t [2], 8): hands the socket back: the
 *     stream offset into the oldest RX piece, and AX_BACK_FIN if the library queued the
 *     stream's FIN piece (shutdown SHUT_WR; 4 bytes: the offset alone): `syscall` serves
 *     its data calls again.
 *   setsockopt(fd, SOL_AXOLOTL, AX_KICK, NULL, 0): the library queued TX or released RX
 *     and the socket's engine sleeps (its flag in the activity page): the engine looks at
 *     the socket, vfs hears its readiness again. */
#pragma once
#include <stdint.h>

#define SOL_AXOLOTL 0x4158
#define AX_SOCKBUF 1
#define AX_KICK 2
#define AX_BACK_FIN 1
#define AX_WAKE 3 /* setsockopt(fd, SOL_AXOLOTL, AX_WAKE, NULL, 0) on a UDP socket of the
                     process: it becomes the process's wake socket (ax_activity.app) */
#define AX_EPOLL_ARM 0x4158 /* epoll_ctl(epfd, AX_EPOLL_ARM, 0, NULL), served by vfs: 1 if a
                     descriptor of the kernel's set is ready now, else 0 and vfs rings the
                     caller's wake word (AX_RING_VFS) once, when one becomes ready
                     ("A library that blocks") */
#define AX_RING_STACK 1u
#define AX_RING_VFS 0x10000u
#define AX_ACCEPT_TAKE 4 /* getsockopt(listener, SOL_AXOLOTL, AX_ACCEPT_TAKE, struct
                     ax_listener *, len): from now on every connection this process accepts
                     from the listener is taken over by its library during the accept (mapped,
                     library-owned) and announced in the page's `accepted` ring */

#define AX_RECLAIM 5 /* setsockopt(fd, SOL_AXOLOTL, AX_RECLAIM, NULL, 0) on any socket of the
                     process: the library unmapped the spares it marked AX_SPARE_CLAIMED;
                     syscall destroys their buffers (see `spares` below) */

/* In AX_SOCKBUF's buffer, rx_off = AX_TAKE_CONNECT: the library takes a fresh stream over
 * to connect it by a connect descriptor (lib/net/sockbuf.h SBD_CONNECT): syscall counts it
 * as connecting (no POLLOUT/POLLHUP of an unconnected socket) until the engine's EV_CONN. */
#define AX_TAKE_CONNECT 1

struct ax_sockbuf {
	uint64_t va;     /* the buffer's address in the caller */
	uint64_t bytes;  /* its size */
	uint32_t rx_off; /* stream: bytes already read of the oldest RX piece */
	uint32_t stream; /* 1: a stream socket, 0: datagrams */
	uint64_t act_va; /* the process's activity page in the caller (struct ax_activity) */
	uint32_t bit;    /* the socket's bit in the page's bitmap of its engine */
	uint32_t eng;    /* AXE_UDP or AXE_TCP */
};

struct ax_listener {
	uint64_t act_va; /* the process's activity page (0: none: accepts are not taken over) */
	uint32_t key;    /* the listener's key in `accepted` entries */
	uint32_t slot;   /* its entry in the page's `listen` table + 1 (0: none: epoll asks the
	                    kernel about it) */
};

/* The activity page (docs/sockets.md, "Telling the stack"; thesis §5.6.1): one per process
 * whose library took a socket over, made by syscall with the first AX_SOCKBUF, mapped into
 * the process and granted to both engines. After moving a socket's data the library sets
 * the socket's bit in its engine's bitmap, then bumps that engine's word; an engine that
 * sees the word move swaps the bitmap out 64 bits at a time and serves those sockets. An
 * engine about to sleep raises its `sleeping` flag (then looks at the words once more); a
 * library that sees it up after bumping the word wakes the engine (see AX_SLEEP_*). The
 * library also keeps its call counters here (syscall sums them for the console). Everything
 * here is a hint the process can spoil only for itself.
 *
 * The page is AX_ACT_BYTES long: the second page holds each library-owned socket's status
 * as syscall last computed it (by bit): its poll bits POLLERR, POLLHUP, POLLRDHUP (POLLIN and
 * POLLOUT the library reads from the rings itself), AXS_CONNECTED, and its pending error
 * (SO_ERROR) above bit 16. And a library about to block (epoll_wait on sockets it answers
 * itself) counts itself in app.waiting, reads its wake word app.word, looks at its sockets
 * once more, arms vfs for the kernel's part of the set (AX_EPOLL_ARM) and sleeps on the
 * word with FUTEX_WAIT. An engine that posts an event for a socket of a waiting process, and
 * syscall when such a socket's status changes, ring the word (KC_WAKE WK_RING): the kernel
 * adds to it and wakes the waiters, no server in between. Where it cannot (epoll_pwait with
 * a signal mask, a kernel without KC_WAKE) the library blocks in vfs in a call that includes
 * its wake socket (AX_WAKE, registered edge-triggered), and syscall makes the wake socket
 * report an arrival on every event for a socket of a waiting process.
 *
 * syscall's view of an owned socket (its readiness records for vfs, the wake socket) matters
 * only while the library blocks in the kernel on it (a poll mixing owned sockets with other
 * descriptors, the wake socket's way, an epoll set whose kernel part holds one). The library
 * counts those waits in app.kwaiting; an engine posts data-only events (EV_RX, EV_TXSPACE,
 * EV_LIB) for owned sockets of a process with none without waking syscall (it reads them at
 * its next turn), and sets app.lazy. A library that starts such a wait with `lazy` set clears
 * it and wakes syscall itself (AX_KICK). Both sides fence between their store and their
 * load, so one of them sees the other. */
#define AX_ACT_MAGIC 0x54434158u /* "XACT" */
#define AX_ACT_VERSION 5
#define AX_ACT_SOCKS 1024        /* bits per engine: syscall's socket table slots */
#define AX_ACT_BYTES 8192
#define AX_ACT_ACCEPTS 32
#define AX_ACT_SPARES 32
#define AX_ACT_LISTENERS 8
enum { AX_SPARE_FREE, AX_SPARE_WRITING, AX_SPARE_KEEP, AX_SPARE_PARKED, AX_SPARE_CLAIMED };
enum { AXE_UDP, AXE_TCP, AXE_N };
/* The calls the library counts (thesis table 5.2), by the C library's name. */
enum ax_call {
	AXC_READ, AXC_WRITE, AXC_READV, AXC_WRITEV, AXC_RECV, AXC_SEND, AXC_RECVMSG, AXC_SENDMSG,
	AXC_SENDFILE, AXC_SHUTDOWN, AXC_CLOSE, AXC_ACCEPT, AXC_POLL, AXC_SELECT, AXC_EPOLL_WAIT,
	AXC_EPOLL_CTL, AXC_OTHER, AXC_N
};
#define AX_CALL_NAMES                                                                              \
	{ "read", "write", "readv", "writev", "recv", "send", "recvmsg", "sendmsg", "sendfile",    \
	  "shutdown", "close", "accept", "poll", "select", "epoll_wait", "epoll_ctl", "other" }

struct ax_activity {
	uint32_t magic, version; /* written by syscall */
	uint32_t pid, pad;
	uint64_t bell_va;        /* the engines' bell (struct ax_bell) in the process, 0: none */
	uint8_t pad0[40];
	struct {
		_Atomic uint64_t word; /* library: bumped after setting bits */
		uint8_t pad[56];
	} eng[AXE_N];
	struct ax_idle {
		_Atomic uint32_t sleeping; /* the engine: AX_SLEEP_* while it may sleep, else 0 */
		_Atomic uint32_t ep;       /* the engine: its endpoint, for AX_SLEEP_NOTIFY */
		_Atomic uint64_t bits;     /* the engine: the notification bits that wake it */
		uint8_t pad[48];
	} idle[AXE_N];
	_Atomic uint64_t bits[AXE_N][AX_ACT_SOCKS / 64];
	struct {
		uint64_t user; /* answered from the buffers alone */
		uint64_t sys;  /* needed one or more system calls */
	} calls[AXC_N];
	struct {
		_Atomic uint32_t waiting; /* library: threads about to block or blocked */
		_Atomic uint32_t word;    /* the process's wake word (KC_WAKE): the kernel adds
		                             AX_RING_STACK for tcp, udp and syscall, AX_RING_VFS for
		                             vfs; the library sleeps on it with FUTEX_WAIT */
		_Atomic uint64_t wakes;   /* wake-ups: syscall's through the wake socket, and the
		                             library's sleeps on its word that were rung */
		_Atomic uint32_t kwaiting; /* library: threads blocked in a kernel call (vfs) whose
		                              answer depends on syscall's view of owned sockets */
		_Atomic uint32_t lazy;    /* an engine: it posted data events for owned sockets
		                             without waking syscall (no kwaiting then) */
		_Atomic uint32_t arrivals; /* syscall: bumped whenever tcp tells it of connections
		                              queued on a listener whose accepts are taken over for
		                              this process (EV_ACCEPT) */
		uint8_t pad2[36];
	} app;
	/* Connections taken over during accept (AX_ACCEPT_TAKE), newest last, written by
	 * syscall before accept returns: the library finds its new descriptor's entry by the
	 * listener's key and the peer's address and port (unique among one listener's
	 * connections) and checks `seq` around its copy (odd: being written). */
	_Atomic uint64_t accepted_n; /* entries written so far */
	uint8_t pad3[56];
	struct ax_accepted {
		_Atomic uint32_t seq;
		uint32_t listener;   /* the listener's key */
		uint32_t addr;       /* the peer, network order */
		uint16_t port, pad;
		struct ax_sockbuf b; /* as AX_SOCKBUF would answer it */
		uint32_t arrivals;   /* app.arrivals when the accept was answered */
		uint32_t more;       /* connections still queued on the listener then: with 0, and
		                        app.arrivals unchanged since, the library answers the next
		                        non-blocking accept EAGAIN itself (once) */
	} accepted[AX_ACT_ACCEPTS];
	/* Spare buffers (thesis §5.5.5, lazy closing): closing a socket it owned, the library
	 * may keep its mapping of the buffer for a later socket of the process instead of
	 * unmapping it. It fills a FREE entry (FREE -> WRITING -> KEEP) with the socket's bit
	 * and its mapping, then closes the descriptor. When the engine is done with the buffer,
	 * syscall parks it (KEEP -> PARKED, checked against its own record of the mapping) and
	 * gives it to the next socket of the same kind that this process takes over or accepts
	 * (PARKED -> FREE; the answer names the same address). The library reclaims spares
	 * (KEEP/PARKED -> CLAIMED, munmap, then AX_RECLAIM) when it keeps more than it has live
	 * sockets; syscall then destroys them (CLAIMED -> FREE). A library that lies here only
	 * loses its own memory. */
	struct ax_spare {
		_Atomic uint32_t state; /* AX_SPARE_* */
		uint32_t bit;           /* the closed socket's bit */
		uint64_t va, bytes;     /* the library's mapping of its buffer */
	} spares[AX_ACT_SPARES];
	/* Listeners whose accepts are taken over for this process (AX_ACCEPT_TAKE): their
	 * readiness, so the library's epoll answers them from here and sleeps on its wake word
	 * with no listener in the kernel's set (no AX_EPOLL_ARM, no kernel epoll_wait per
	 * connection). syscall writes `bits` whenever the listener's readiness may have changed
	 * (a connection queued or accepted, an error, a shutdown), bumps `seq` at each arrival
	 * (EPOLLET reports each, as Linux), then rings the wake word if the library waits. An
	 * entry whose key is no longer the listener's (its accepts went to another process, it
	 * closed) is gone: the library puts the listener into the kernel's set. */
	struct ax_listen {
		_Atomic uint32_t key;  /* the listener's key + 1, 0: a free entry */
		_Atomic uint32_t bits; /* its poll bits: POLLIN while connections wait, POLLERR, POLLHUP */
		_Atomic uint32_t seq;  /* arrivals */
		uint32_t rung;         /* syscall's: `seq` when it last rang for this entry */
	} listen[AX_ACT_LISTENERS];
};
_Static_assert(sizeof(struct ax_activity) <= 4096, "one page");
/* The `sleeping` flag's values: an engine on a dedicated core with MONITOR sleeps in
 * KC_WAIT's MWAIT path watching its line of the bell, so a store there wakes it; any other
 * engine is woken by the library's own KC_NOTIFY to the endpoint and bits the engine wrote
 * beside its flag (one kernel call, no server in between), or, when that fails (an engine
 * restarting), by AX_KICK (a notify through syscall). */
#define AX_SLEEP_NOTIFY 1
#define AX_SLEEP_MWAIT 2
/* The bell: one page made by syscall, mapped into every process with an activity page and
 * granted to the engines (SK_BELL). Any library may ring it: at worst an engine wakes up
 * for nothing. */
struct ax_bell {
	struct {
		_Atomic uint64_t ring;
		uint8_t pad[56];
	} eng[AXE_N];
};
#define AXS_ERR_SHIFT 16
#define AXS_CONNECTED 0x8000u /* a stream: its connection is up (ends a library's connect) */
struct ax_act_status {
	_Atomic uint32_t st[AX_ACT_SOCKS]; /* by bit: poll bits | pending errno << 16 */
};
#define AX_ACT_STATUS(page) ((struct ax_act_status *)((char *)(page) + 4096))
