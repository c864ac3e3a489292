/* The half of a socket engine (udp, tcp) that faces ip and syscall, one implementation
 * compiled into each engine's lwIP instance (lib/lwip/README.md "xport"):
 *  - start-up: the send pool (lwIP's heap, MOF_DMA), exported to ip and the drivers; T/out;
 *  - ip: importing ip/T.in and ip's pools in the right order, the netifs mirroring ip's
 *    interfaces (saved in ds as "if.N"), IPX_* messages, the netif output that ships
 *    IPX_TX, the IPX_TX_DONE bookkeeping, ip's restarts (IPX_HELLO);
 *  - syscall: importing syscall/T.req and syscall/T.ev, SK_HELLO, re-importing on change;
 *  - the event loop: two input channels and one doorbell, lwIP's loopback and timers.
 * The engine supplies what is its own (struct xport_ops): received packets, ICMP errors,
 * requests, socket TX, events, NETQ. T is ops->name. */
#pragma once
#include "axrt.h"
#include "spsc.h"
#include "pool.h"
#include "reqdb.h"
#include "chan_name.h"
#include "chan_axolotl.h"
#include "evloop.h"
#include "sock_proto.h"
#include "sockbuf.h"
#include "ipx_proto.h"

#define XP_MAX_IF 4
#define XP_MAX_DRV 3     /* drivers we export the send pool to (system.conf: e1000, virtio-net, ixgbe) */
#define XP_TX_INFLIGHT 1024
#define XP_WAKE_BIT (1ull << 40) /* "a channel from T has messages" */
#define XP_OUT_RESERVE 4 /* T/out slots lwIP's output leaves free for IPX_RX_DONE */
#define XP_RX_HELD INT32_MIN /* ops->rx: kept until ops->rx_flush */
#define XP_HOLD_RX_NS 1000000000ull /* ip's packets wait this long for the reattaches */

/* A counter the console shows: *v, or f() when v is NULL. */
struct xport_counter {
	const char *name;
	const uint64_t *v;
	uint64_t (*f)(void);
};

struct xport_ops {
	const char *name;     /* "udp", "tcp": our label; the channels' names */
	uint32_t poolid_kind; /* POOLID_UDP, POOLID_TCP */
	uint64_t heap_bytes;  /* lwIP's MEM_SIZE: the send pool holds it */
	/* IPX_RX: pkt is the packet in ip's pool (read-only; copy what you check). Returns
	 * IPX_RX_DONE's arg (0 or IPX_UNREACH_PORT); nothing of ip's may be kept after. Or
	 * XP_RX_HELD: the engine keeps the packet until rx_flush, which answers it with
	 * xport_rx_done (tcp's receive offload, servers/tcp/rx.c). */
	int32_t (*rx)(const struct ipx_msg *m, const unsigned char *pkt);
	/* Ends every batch of ip's messages, and comes before any other message is taken or
	 * when T/out has no room left for the held packets' answers. NULL: rx never holds. */
	void (*rx_flush)(void);
	/* IPX_ICMP_ERR: the ICMP message, len bytes (pkt resolved already). */
	void (*icmp)(const unsigned char *pkt, uint32_t len);
	/* One loop turn: requests from syscall, socket TX, events (each may set xp.retry). */
	void (*sys_poll)(bool *work);
	void (*tx_poll)(bool *work);
	void (*flush_events)(void);
	void (*gc)(uint64_t now);
	/* NETQ_SHOW (xport_netq): the counters (ending with a NULL name), and socket line
	 * `line` (0: the heading) into buf (NETQ_TEXT bytes; false: no such line). */
	const struct xport_counter *counters;
	bool (*sock_line)(uint64_t line, char *buf);
	/* The activity pages (xact.c): our index in them (AXE_UDP, AXE_TCP), and the library
	 * moved the data of socket `sock`, the engine's `cookie` (as given to xport_lib): look
	 * at it (check that cookie still is sock). */
	uint32_t act_eng;
	void (*lib_work)(int32_t cookie, uint32_t sock);
	/* A restart loses nothing an application would notice (udp: sockets come back from
	 * syscall and ds): a live update replaces us as a restart (lib/axrt/evloop.h). tcp's
	 * connections live in lwIP's private memory: not so. */
	bool restartable;
	/* A live update (lib/axrt/evloop.h): quiesce hook run at the top of the loop after
	 * lwIP's loopback queues are dropped (the netifs are not kept; TCP sends those segments
	 * again). NULL: restartable decides. */
	int64_t (*quiesce)(void);
	/* A new ip (restarted or updated) said hello: what the old one had in hand is lost. NULL:
	 * nothing to do (lwIP's timers resend). */
	void (*ip_restarted)(void);
};

/* What an engine that keeps its image (tcp, lib/axrt/keep.h) hands its next instance with
 * lwIP's state: the send pool (lwIP's heap: at the same address), T/out (the IPX_TX in it
 * point into the pool), the TX packets ip has not answered, and ip's incarnation. */
struct xport_kept {
	int64_t pool_h, out_h;
	uint64_t pool_va, pool_pages, out_bytes;
	uint32_t pool_id;
	uint32_t tx_ip;             /* the ip endpoint our TXs go to (their reqdb peer) */
	int64_t ip_incarnation;     /* from ip's last IPX_HELLO, -1 before the first */
	uint32_t sys_ep;            /* the syscall whose channels we last attached to */
	/* TX packets ip has not answered: ctx = the pbuf */
	struct reqdb txdb;
	struct reqdb_entry txdb_e[XP_TX_INFLIGHT];
};

struct xport_counters {
	uint64_t bad_ptr, bad_ipx, stale_tx_done;
	uint64_t bad_act; /* SK_ACT/SK_LIB we could not follow (no room, not a page, bad bit) */
	uint64_t lib_rings; /* waiting libraries woken through their wake word (KC_WAKE) */
};

struct xport {
	const struct xport_ops *ops;
	/* ip: its channel to us and its pools (imported), our channel to it (exported) */
	struct chan_import in_imp, rx_imp, heap_imp;
	struct spsc in;
	struct pool_view ip_rx, ip_heap;
	bool ip_ok;
	bool deaf;            /* `service inject NAME deaf`: ip's channel is not read (tests) */
	uint32_t ip_owner;          /* endpoint that exported ip/T.in */
	struct chan_export out_ex;
	struct spsc out;
	struct chan_axolotl_peer ip_peer;
	struct chan_platform ip_plat;
	struct chan_watch out_w;    /* ip reads T/out (lib/chan/watch.h) */
	bool out_pushed;
	int32_t rx_held;            /* IPX_RX the engine holds (XP_RX_HELD), not answered yet */
	/* syscall: both channels imported */
	struct chan_import req_imp, ev_imp;
	struct spsc req, evq;
	bool sys_ok;
	uint32_t sys_owner;
	struct chan_axolotl_peer sys_peer;
	struct chan_platform sys_plat;
	struct chan_watch ev_w;     /* syscall reads T/ev */
	bool ev_pushed;              /* syscall must be woken for what we posted this turn */
	uint64_t hello_at;          /* when SK_HELLO went to syscall */
	bool awaiting_reattach;     /* restored sockets wait for syscall: hold ip's packets */
	/* the send pool: lwIP's heap */
	struct pool_owner pool;
	uint32_t pool_priv[4];
	struct chan_export pool_ip_ex, pool_drv_ex[XP_MAX_DRV];
	int ndrv;
	bool retry;                 /* something waits for room: poll again soon */
	bool adopted;               /* the kept state was adopted: no IPX_HELLO at the first attach */
	bool hello_pending;         /* our IPX_HELLO did not fit in T/out yet: nothing else goes first */
	bool sys_adopted;           /* ... and syscall's channel is not attached yet */
	uint64_t replayed_until;    /* syscall/T.req's requests before this index are asked again */
	uint64_t next_attach;       /* when to try importing missing channels again */
	uint64_t ip_wait_from;      /* since when we wait for ip to import T/out first */
	uint64_t next_nudge;        /* when to publish T/out again if ip has not imported it */
	uint32_t table_slots;       /* the socket table's high-water mark saved in ds */
	struct xport_counters c;
};
extern struct xport xp;
extern struct xport_kept xk;
extern void *xp_lwip_heap;  /* LWIP_RAM_HEAP_POINTER of every engine */

/* Start: the send pool, lwIP, T/out, the pool for the drivers (drv= arguments, default
 * e1000), after a restart the interfaces from ds. 0 or a negative error (printed).
 * adopted: the engine adopted its kept image (ax_keep_image; xport_claim came first): the
 * pool and T/out are the predecessor's, lwIP's state is taken as it is (its code pointers
 * made again: the timers, the netifs), and no IPX_HELLO tells ip to forget anything. */
/* Answers a packet the engine held (XP_RX_HELD): ip may reuse its buffer. */
void xport_rx_done(uint64_t id, int32_t arg);
int64_t xport_start(int argc, char **argv, const struct xport_ops *ops, bool adopted);
/* The request at index `at` of syscall/T.req was in the channel when we adopted the state:
 * syscall asks it again after our hello (a request it wanted an answer to): skip it. */
bool xport_req_replayed(uint64_t at, const struct sk_msg *q);
/* After an adoption, before the sweep: the handles xport keeps (the pool, T/out). */
void xport_claim(void);
/* The event loop (after the engine restored its sockets). */
int xport_run(void);

/* Room in T/out (IPX messages). */
uint32_t xport_out_space(void);
/* Room in syscall/T.ev; push one message there (room checked by the caller). */
uint32_t xport_ev_space(void);
void xport_push_ev(const struct sk_msg *m);
/* The same for an answer nobody waits for (a close's: the application's close was answered
 * by vfs already): syscall is not woken for it, but reads it with whatever wakes it next (its
 * next call from vfs, an event, rs's heartbeat), or is woken once the queue is half full. */
void xport_push_ev_lazy(const struct sk_msg *m);
/* The interface a packet to dst came in on, as lwIP needs one (that address, else the
 * default); NULL when there is none. */
struct netif *xport_input_netif(uint32_t dst);
/* Before lwIP takes a packet from ip on n: its transport checksum (l4_check, a
 * NETIF_CHECKSUM_CHECK_* bit) is checked unless the NIC did (IPXF_L4_CSUM_OK). */
struct netif;
void xport_rx_csum(struct netif *n, bool nic_checked, uint16_t l4_check);
/* Every TX of ours is done (ip restarted). */
void xport_forget_tx(void);
/* A socket's buffer syscall granted us (SK_OPEN: handle, bytes), mapped and attached as the
 * engine's side: 0 with *va, or -ENOMEM (no mapping) / -EINVAL (not a socket buffer); on
 * failure the handle is closed (the grant dropped). */
int64_t xport_sockbuf_map(int64_t handle, uint64_t bytes, struct sockbuf *sb, void **va);
/* Unmaps it and closes the handle (either may be absent). */
void xport_sockbuf_unmap(void *va, int64_t handle);
/* The engine's socket table in ds (sock_proto.h, struct sk_dsrec): slot's record is
 * written when it differs from *saved (then *saved = *r), "nslots" when the table grew. */
void xport_table_put(uint32_t slot, const struct sk_dsrec *r, struct sk_dsrec *saved);
/* After a restart: the high-water mark (0: no table), then each slot's record (false: none). */
uint32_t xport_table_slots(void);
bool xport_table_get(uint32_t slot, struct sk_dsrec *r);
/* The activity pages (xact.c): SK_ACT (a process's page granted, or dropped); SK_LIB (a
 * socket the process's library moves: cookie is the engine's index for it, -1: we have no
 * such socket); each loop turn's look at the pages (true: a socket was given to
 * ops->lib_work); our sleeping flag in every page; whether a word moved since the look. */
/* SK_ACT, SK_BELL or SK_LIB (cookie: the engine's index for q->sock, -1: none): handled
 * (true), or not one of them. */
bool xport_lib_request(const struct sk_msg *q, int32_t cookie);
void xport_act_init(int argc, char **argv);
void xport_bell(const struct sk_msg *q);
/* The line to sleep on when applications may wake us with a store (MWAIT path), or NULL. */
const volatile uint64_t *xport_act_doorbell(void);
void xport_act(const struct sk_msg *q);
void xport_lib(const struct sk_msg *q, int32_t cookie);
bool xport_act_poll(void);
/* An event we post (SK_EV) for a library-owned socket marks its process for a wake-up, made
 * by xport_act_ring once per process at the end of the turn if its library waits. True: a
 * data-only event of an owned socket whose library blocks in no kernel call on it: syscall
 * need not be woken for it (sock_ax.h, app.lazy). */
bool xport_act_event(const struct sk_msg *m);
void xport_act_ring(void);
void xport_act_sleeping(uint32_t v);
bool xport_act_waiting(void);
/* Dotted quad of a network-order address (buf >= 16 bytes). */
void xport_fmt_ip4(char *buf, uint32_t addr);

/* xsys.c. The engine's sys_poll drains syscall/T.req through request() while T.ev has room
 * for `room` messages (a request's answer and its events), 64 a turn. */
void xport_requests(void (*request)(const struct sk_msg *q), uint32_t room, bool *work);
/* SK_OPEN's checks, the same in every engine: the socket type (SKF_STREAM or SKF_DGRAM),
 * IPv4, a socket id, a buffer of 1..XP_SOCKBUF_MAX bytes (arg2), and no second open of a
 * socket the engine knows (`known`) but a reattach. 0 or a negative errno; on an error the
 * caller drops the grant (arg, the buffer's handle). */
#define XP_SOCKBUF_MAX (64ull << 20)
int64_t xport_open_check(const struct sk_msg *q, uint32_t type, bool known);
/* lwIP's err_t as a negative Linux errno (ERR_VAL: EINVAL; the caller knows better). */
int64_t xport_errno(int e);
/* 0 (any), 127.0.0.0/8 or an address of one of our interfaces: a socket may bind it. */
bool xport_local_addr(uint32_t a);
/* NETQ_SHOW from ops->counters and ops->sock_line. */
void xport_netq(struct kmsg *m);
