/* lib/sock's half of the activity page (lib/net/sock_ax.h, docs/sockets.md "Telling the
 * stack"): telling a socket's engine that the library moved its data, and the counters of
 * calls answered in user space against calls that needed the kernel. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "sock_ax.h"

/* The page syscall made for this process (from AX_SOCKBUF's answer; 0: none). */
void axsock_act_page(uint64_t va);
/* The library moved fd's data (TX queued, RX released): set its bit, bump its engine's word
 * and, if the engine may be asleep, wake it (one AX_KICK system call). */
void axsock_activity(int fd, uint32_t eng, uint32_t bit);
/* The same without waking the engine: it serves the socket when it next turns (for what
 * nothing waits on, e.g. RX space that no window depends on). */
void axsock_activity_lazy(uint32_t eng, uint32_t bit);
/* After a read released RX space: as axsock_activity, but a sleeping engine is woken only
 * when the release reaches the mark it set on that side (sockbuf_notify_at: tcp, when lwIP
 * would announce the larger window, or at once when bytes wait for room). */
struct sockbuf_side;
void axsock_activity_rx(int fd, uint32_t eng, uint32_t bit, struct sockbuf_side *rx);
/* One interposed call of kind c ended: user: it made no system call. */
void axsock_count(enum ax_call c, bool user);
/* System calls the library made from this thread so far (a call compares before and after
 * to know whether it stayed in user space). */
extern _Thread_local uint64_t axsock_nsys;
/* Wake-ups the library made by a kernel call (the engine slept, or there is no page): its own
 * notify to the engine, or AX_KICK through syscall. */
extern uint64_t axsock_kicks, axsock_marks; /* and times the library marked activity */
extern uint64_t axsock_notifies; /* of the kicks, those made by our own notify (not AX_KICK) */
extern uint64_t axsock_rings; /* wake-ups by a store to the bell (the engine MWAITs) */
extern uint64_t axsock_quiet; /* reads whose release did not reach the engine's mark: no wake-up */
/* The counters (the page's, or the library's own before the page exists). */
const struct ax_activity *axsock_act(void);

/* The socket's status as syscall last computed it (sock_ax.h: POLLERR, POLLHUP, POLLRDHUP,
 * the pending errno << AXS_ERR_SHIFT); 0 without a page. */
uint32_t axsock_status(uint32_t bit);

/* Blocking in the kernel on sockets the library answers (docs/sockets.md, "select, poll,
 * epoll"): the process's wake socket (made at the first call: a descriptor to register
 * edge-triggered for reading, or -1 without a page); axsock_waiting(true) before the last
 * look at the sockets and the blocking call, (false) after it. */
int axsock_wake_fd(void);
void axsock_waiting(bool on);
/* A blocking kernel call (through vfs) whose answer depends on syscall's view of an owned
 * socket, fd (a poll mixing owned sockets with other descriptors, the wake socket's way, an
 * epoll set whose kernel part holds one): (true) before the last look at the sockets, wakes
 * syscall (AX_KICK on fd) if an engine left events for it unannounced meanwhile (sock_ax.h
 * app.lazy); (false) after the call. */
void axsock_kernel_wait(int fd, bool on);
extern uint64_t axsock_lazy_kicks; /* the kicks it made */
/* Sleeping without vfs in between (sock_ax.h app.word): the process's wake word, named to
 * the kernel at the first call; NULL without a page or where the kernel has no KC_WAKE.
 * axsock_woken counts a sleep on it that was rung. */
_Atomic uint32_t *axsock_wake_word(void);
void axsock_woken(void);
/* One sleep on the wake word while it still reads `seen` (read after axsock_waiting(true),
 * before the last look): until a ring, ns nanoseconds (< 0: no limit) or a signal. restart:
 * a handler with SA_RESTART does not end it (the kernel makes the FUTEX_WAIT again, as
 * Linux makes a blocking read again); otherwise every handler ends it, as poll and
 * epoll_wait end. 0 (rung, or the word had moved already), ETIMEDOUT or EINTR; a rung
 * sleep is counted (app.wakes). */
int axsock_sleep(_Atomic uint32_t *word, uint32_t seen, int64_t ns, bool restart);
/* CLOCK_MONOTONIC in ns; what is left of a timeout (ns, -1: none) that ends at deadline. */
int64_t axsock_now_ns(void);
int64_t axsock_left(int64_t timeout, int64_t deadline);

/* Accepts taken over by syscall (AX_ACCEPT_TAKE): asks it for listener lfd (0 and *key, or
 * -errno). Before an accept, axsock_accept_mark(); after it returned a connection from
 * peer addr:port, its entry among those written since the mark (0 and *b, or -ENOENT: the
 * library takes the socket over with AX_SOCKBUF instead). Entries older than the mark are
 * never taken: a peer that reconnects from the same port must not get an old buffer. */
int axsock_listener_key(int lfd, uint32_t *key, uint8_t *slot);
/* Listener readiness from the page (sock_ax.h `listen`): entry slot (+ 1) of the listener
 * with key. True and its poll bits and arrival count, or false: the entry is gone (no page,
 * a fork's child, its accepts went elsewhere, a shutdown): the kernel answers for it. */
bool axsock_listen_read(uint8_t slot, uint32_t key, uint32_t *bits, uint32_t *seq);
uint64_t axsock_accept_mark(void);
int axsock_accepted(uint32_t key, uint32_t addr, uint16_t port, uint64_t mark, struct ax_sockbuf *b,
		    uint32_t *arrivals, uint32_t *more);
/* The page's app.arrivals (sock_ax.h) into *v; false without a page. What an accept's entry
 * said of it and of the connections still queued (axsock_accepted's *arrivals and *more)
 * tells whether the listener's next non-blocking accept may be answered EAGAIN here. */
bool axsock_arrivals(uint32_t *v);

/* In a fork's child: no page, bell or wake socket (the parent's are the parent's). */
void axsock_act_forked(void);

/* Lazy closing (sock_ax.h `spares`, docs/sockets.md "accept and close"): closing a socket
 * it owned whose buffer is mapped at va, with `live` other sockets still mapped, the
 * library asks whether to keep the mapping: AXK_KEPT (recorded for syscall: do not unmap),
 * AXK_UNMAP (unmap it), AXK_SHRINK (more spares than live sockets: reclaim them all with
 * axsock_spares_reclaim, tell syscall with AX_RECLAIM, and unmap this one). */
enum axsock_keep { AXK_KEPT, AXK_UNMAP, AXK_SHRINK };
enum axsock_keep axsock_spare_keep(uint32_t bit, uint64_t va, uint64_t bytes, uint64_t live);
/* Claims and unmaps every spare syscall has not handed out: how many. */
int axsock_spares_reclaim(void);
/* Spares held now (kept or parked). */
int axsock_spares_held(void);
