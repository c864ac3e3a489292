/* syscall: the socket front door (README.md). Shared state of its files:
 *   syscall.c the loop: passed Linux calls, vfs's closes, signals, channel work
 *   sock.c    the socket table: buffers (created, mapped into applications, granted)
 *   engine.c  the channels to udp and tcp (sock_proto.h): requests, answers, events, restarts
 *   calls.c   the Linux socket calls common to both kinds, datagram data, held calls
 *   stream.c  the calls of stream sockets: listen, accept, connect, stream data, sendfile
 *   vfsside.c what vfs learns from us: readiness (for poll/select/epoll), accepted
 *             sockets and sendfile results (the call passed back, KC_LX_PASS) */
#pragma once
#include "axrt.h"
#include "lx_abi.h"
#include "evloop.h"
#include "sockbuf.h"
#include "sock_proto.h"
#include "syscall_proto.h"

#define MAX_SOCKS 1024
#define MAX_MAPPED 4  /* processes a socket's buffer is mapped into */
#define UDP_MAX 65507 /* the largest UDP payload over IPv4 */

struct inaddr {
	uint32_t addr; /* network order */
	uint16_t port; /* network order */
};

enum { ENG_UDP, ENG_TCP, ENGINES };
/* Options told to the engine (and replayed to a restarted one): index -> SKO_* name. */
enum { OPT_BROADCAST, OPT_REUSEADDR, OPT_RCVBUF, OPT_SNDBUF, OPT_KEEPALIVE, OPT_LINGER, OPT_NODELAY,
       OPT_MAXSEG, OPT_CORK, OPT_KEEPIDLE, OPT_KEEPINTVL, OPT_KEEPCNT, NOPTS };
extern const uint16_t opt_names[NOPTS];

struct sock {
	uint32_t id;              /* vfs's socket id; 0: a free slot */
	uint8_t eng;              /* ENG_UDP or ENG_TCP */
	bool stream;
	int64_t mo;               /* the buffer object (our handle) */
	void *mem;
	uint64_t bytes;
	struct sockbuf sb;        /* our side: the application's (produces TX, consumes RX) */
	int64_t engine_handle;    /* udp's handle for the object (the grant), 0: none */
	bool opened;              /* SK_OPEN went to the current udp */
	bool ever_opened;         /* SK_OPEN went to some udp (later ones get SKF_REATTACH) */
	bool bound, connected;
	bool binding;             /* an implicit bind (before the first send) is in flight */
	struct inaddr local, peer;
	bool broadcast, reuseaddr;
	int32_t rcvbuf, sndbuf;   /* as set (getsockopt doubles them, as Linux does) */
	uint64_t rcvtimeo_ns;     /* LX_SO_RCVTIMEO, 0: none */
	uint64_t sndtimeo_ns;     /* LX_SO_SNDTIMEO, 0: none */
	int32_t error;            /* pending LX_SO_ERROR (an EV_ERR), a positive errno */
	bool shut_rd, shut_wr;
	uint32_t lib_pid;         /* the process whose socket library moves the data (AX_SOCKBUF), 0: us */
	bool lib_dirty;           /* the engine has not heard lib_pid yet (SK_LIB) */
	bool wake;                /* a process's wake socket (AX_WAKE) */
	uint32_t accept_take_pid; /* a listener: this process's accepts are taken over (AX_ACCEPT_TAKE) */
	uint32_t opt_set;         /* OPT_* bits set by the application (replayed) */
	uint64_t opt_val[NOPTS];
	/* streams */
	bool listening;
	int32_t backlog;
	uint32_t pending;         /* connections waiting for accept (the engine's EV_ACCEPT) */
	bool connecting;          /* SK_CONNECT in flight, or the library's SBD_CONNECT */
	bool lib_connect;         /* the library connects it (AX_TAKE_CONNECT): EV_CONN ends it */
	bool was_connected;       /* connected once (stays true after a reset) */
	bool peer_fin;            /* the peer's FIN was read: every read returns 0 */
	bool fin_queued;          /* the peer's FIN is in RX (EV_FIN), maybe behind data */
	bool nb_connect;          /* a non-blocking connect whose end was not yet reported */
	bool hup;                 /* EV_HUP: the connection is gone */
	bool fin_sent;            /* our SBD_FIN is in TX (shutdown SHUT_WR) */
	uint32_t rx_off;          /* bytes already read of the oldest RX piece */
	uint32_t ready;           /* POLL* bits vfs last heard (vfsside.c) */
	bool ready_told;
	bool closing;             /* no descriptor left: freed when udp has let go (SK_CLOSE) */
	bool reclose;             /* closing when the old instance died: closed again once reopened */
	bool tx_hint, rx_hint;    /* SK_TX / SK_RXDONE to push */
	uint32_t mapped_pid[MAX_MAPPED];
	uint64_t mapped_va[MAX_MAPPED];
};

/* A Linux call being served. */
struct lcall {
	endpoint_t thread;
	uint32_t pid;
	uint32_t nr;
	uint32_t sock;            /* the socket id */
	uint32_t vflags;          /* SYSP_* from vfs */
	uint64_t a[6];            /* a[0] is the socket id word */
	uint64_t deadline;        /* LX_SO_RCVTIMEO's end (KC_TIME ns), 0: none */
	uint64_t serial;          /* names a held call to engine.c (never reused), 0: none */
	uint64_t done;            /* stream send: bytes already queued (a held send goes on) */
	uint32_t newsock;         /* accept: the socket made for the connection, 0: none yet */
};
/* A call's outcome: a result to answer now, or one of these. */
#define CALL_HELD INT64_MIN          /* must wait for data or space: hold it */
#define CALL_TAKEN (INT64_MIN + 1)   /* held already, waiting for the engine's answer */
#define CALL_DONE (INT64_MIN + 3)    /* answered already (passed back to vfs): forget it */
/* poll's bits (Linux's), as vfs keeps them for a socket. */

extern bool sys_debug;

/* keep.c: what survives our restart (README.md "State and recovery") */
enum { KEEP_SOCKS, KEEP_ACTS, KEEP_VFS, KEEP_PARTS };
#define KEEP_ACT_BYTES (96u << 10) /* activity.c's table and bell */
#define KEEP_VFS_BYTES 4096u        /* vfsside.c's channel record */
/* Maps the table our predecessor left (a restart with a legacy, same layout) or makes a new
 * one, and lets each part take its storage (and, adopting, map its objects again). */
void keep_init(void);
/* Each part: its storage in the kept object; adopted: it holds the old instance's state. */
void sock_keep(void *part, bool adopted);
void act_keep(void *part, bool adopted);
void vfsside_keep(void *part, bool adopted);
uint64_t act_layout(void);
uint64_t vfsside_layout(void);

/* sock.c */
extern struct sock *socks; /* MAX_SOCKS, in the kept object */
extern int sock_top; /* every socket in use is below it: the table's scans stop there */
void sock_trim(void);
struct sock *sock_find(uint32_t id);
/* make: SYSP_NEW; spare_pid: a process whose spare buffer (lazy closing) it may get, 0: none */
struct sock *sock_get(uint32_t id, bool make, bool stream, uint32_t spare_pid, int64_t *err);
/* A socket's buffer object: our handle and mapping, and (a spare) the process's mapping. */
struct sockbuf_obj {
	int64_t mo;
	void *mem;
	uint64_t bytes;
	bool stream;
	uint64_t app_va;
};
void sockbuf_obj_destroy(struct sockbuf_obj *b);
/* Where s's buffer is mapped in process pid, 0: not. */
uint64_t sock_mapped_va(const struct sock *s, uint32_t pid);
/* Process pid has a new image (exec): its mappings are gone and its library with them: its
 * sockets are served by us again. */
void sock_forget_process(uint32_t pid);
void sock_map_into(struct sock *s, endpoint_t thread, uint32_t pid);
/* Maps s's buffers into the process (once) whatever `map` says: its address, or -errno. */
int64_t sock_map_force(struct sock *s, endpoint_t thread, uint32_t pid);
void sock_free(struct sock *s);
/* Maps object mo (bytes) shared, read/write, into the process of thread: its address there,
 * or -errno. */
int64_t lx_map_shared(int64_t mo, uint64_t bytes, endpoint_t thread);

/* activity.c: the processes' activity pages (lib/net/sock_ax.h) */
/* The page of process pid, made and mapped into it at the first call: its address there,
 * or 0 when there is none (too many processes: its library kicks after every call). */
uint64_t act_map(uint32_t pid, endpoint_t thread);
/* SYSCALL_EXEC: process pid has a new image. Its library and every mapping we made into the
 * old image are gone: we serve its sockets again, drop its spares, and map its page into the
 * new image at its library's first call. */
void act_exec(uint32_t pid);
/* Lazy closing (sock_ax.h `spares`): the buffer of the socket at bit, closed, is parked for
 * process pid if its library kept it (true: b is ours to keep now, do not destroy it). */
bool act_park(uint32_t pid, uint32_t bit, const struct sockbuf_obj *b);
/* A parked buffer of pid for a new socket of this kind: true and *b (its mapping in pid too). */
bool act_take_spare(uint32_t pid, bool stream, struct sockbuf_obj *b);
/* AX_RECLAIM: pid's library unmapped the spares it claimed: destroy them. */
void act_reclaim(uint32_t pid);
/* Engine eng's grant of pid's page for its instance ep: 0 if it has one already, 1 and
 * *handle if the grant is new (SK_ACT must go first), or -1 when pid has no page. */
int act_grant(uint32_t pid, int eng, endpoint_t ep, int64_t *handle);
void act_engine_gone(int eng);   /* a new instance of eng: grants go again */
/* The bell's grant to engine eng's instance ep: as act_grant. */
int act_bell_grant(int eng, endpoint_t ep, int64_t *handle);
void act_netq(struct kmsg *m);
/* AX_WAKE: s becomes process pid's wake socket. 0 or -errno. */
int64_t act_set_wake(struct sock *s, uint32_t pid);
uint32_t act_wake_bits(void);
/* A library-owned socket's readiness is `bits`: its status in the page. */
void act_status(struct sock *s, uint32_t bits);
/* An engine's event on a library-owned socket: its status, and a wake-up if its process
 * waits (AX_WAKE). */
void act_event(struct sock *s);
/* vfsside.c: s's poll bits now (from our view of its rings, re-read if the library has it). */
uint32_t sock_ready_bits(struct sock *s);
/* An accept of listener l by c's process made n: taken over for its library if l asked
 * (AX_ACCEPT_TAKE), and announced in the page. */
void act_accepted(const struct lcall *c, const struct sock *l, struct sock *n);
/* tcp told us of connections queued on l, whose accepts are taken over: the process's
 * app.arrivals moves (the library may answer EAGAIN itself only while it stays). */
void act_arrival(const struct sock *l);
/* Listener l's entry in the page of the process its accepts are taken over for
 * (AX_ACCEPT_TAKE; sock_ax.h `listen`): made (its number + 1, or 0 when there is no room),
 * brought up to date after a change of its queue or error (a wake-up if the library waits),
 * and dropped (its accepts go to another process, it is shut down or freed). */
uint32_t act_listen_open(const struct sock *l);
void act_listen_state(const struct sock *l);
void act_listen_drop(const struct sock *l);
/* s is freed or given back: not the wake socket any more, its status cleared. */
void act_forget_sock(struct sock *s);   /* NETQ_SHOW NQ_SOCKLIB: the library's counters, for `socklib` */
extern bool sys_map_apps;   /* `map` argument: map buffers into applications (for lib/sock) */

/* engine.c */
void engine_init(void);
bool engine_ready(int eng);           /* the engine attached and said hello */
/* A request to udp for socket s about the held call `serial` (0: syscall's own: an
 * implicit bind, an option). Pushed when udp is ready; the answer goes to calls_answered. */
void engine_request(struct sock *s, struct sk_msg *m, uint64_t serial);
bool engine_poll(void);               /* pushes what waits, drains events; true if it did work */
extern bool engines_watched;                 /* engine_poll saw requests waiting: it should run again soon */
bool engine_export_missing(void);     /* publishes what ds refused before; true: still missing */
bool vfsside_export_missing(void);    /* the same for syscall/vfs.ev */
void engine_close(struct sock *s);
void engine_message(struct kmsg *m);  /* CHAN_ATTACH */
/* The event channel's sleep protocol before blocking: false if events arrived meanwhile. */
bool engine_may_sleep(void);

/* calls.c */
int64_t calls_serve(struct lcall *c, struct sock *s);
void calls_event(struct sock *s, uint64_t ev, int64_t result); /* an engine's SK_EV */
/* EV_CONN: the connect a socket library queued in TX (SBD_CONNECT) ended. */
void stream_conn_event(struct sock *s, const struct sk_msg *m);
struct held *calls_hold_for_answer(struct lcall *c); /* NULL: too many held calls */
void setopt_engine(struct sock *s, int opt, uint64_t val);
bool nonblocking(const struct lcall *c, uint64_t flags);
/* The pending asynchronous error as -errno, cleared (it is reported once); 0 if none. */
int64_t take_error(struct sock *s);
/* A receive that found nothing (c->done is 0 then): EAGAIN (non-blocking, or LX_SO_RCVTIMEO
 * ran out), else CALL_HELD with LX_SO_RCVTIMEO's deadline started. */
int64_t wait_for_data(struct lcall *c, struct sock *s, uint64_t flags);
/* A send that found no room: what it queued or EAGAIN (non-blocking, or LX_SO_SNDTIMEO ran
 * out), else CALL_HELD with LX_SO_SNDTIMEO's deadline started. */
int64_t wait_for_space(struct lcall *c, struct sock *s, uint64_t flags);
int64_t put_sin(endpoint_t t, const struct inaddr *a, uint64_t uaddr, uint64_t ulen);
int64_t get_sin(endpoint_t t, uint64_t uaddr, uint64_t len, struct inaddr *out, bool *unspec);
void addr_msg(struct sk_msg *m, const struct inaddr *a);
/* A msghdr's fields (x86-64 layout) and iovecs. */
struct lx_msghdr {
	uint64_t name;
	uint32_t namelen, pad;
	uint64_t iov, iovlen, control, controllen;
	int32_t flags, pad2;
};
struct lx_iovec {
	uint64_t base, len;
};
int64_t iov_total(endpoint_t t, uint64_t iov, uint64_t iovlen, uint64_t *total);
/* Copies len bytes between buf (ours) and the iovec from byte skip on (out: to the app). */
int64_t iov_copy(endpoint_t t, uint64_t iov, uint64_t iovlen, uint64_t skip, unsigned char *buf, uint64_t len, bool out);
/* A call's bytes in thread t (the application's, or vfs's staging for sendfile): its
 * iovecs (iov != 0), else its buffer at buf. The socket buffer reads' copy to it
 * (sockbuf_stream_read, sockbuf_dgram_read) and the writes' fill from it
 * (sockbuf_stream_write, sockbuf_dgram_write); ctx is a struct app_dst. */
struct app_dst {
	endpoint_t t;
	uint64_t iov, iovlen, buf;
};
int copy_to_app(void *ctx, uint64_t at, const unsigned char *p, uint64_t n);
int copy_from_app(void *ctx, uint64_t at, unsigned char *p, uint64_t n);

/* stream.c */
int64_t stream_serve(struct lcall *c, struct sock *s);  /* CALL_NOT_STREAM: a common call */
#define CALL_NOT_STREAM (INT64_MIN + 2)
void stream_answered(struct lcall *c, struct sock *s, const struct sk_msg *a); /* its held call */
void stream_connect_done(struct sock *s, const struct sk_msg *a);              /* non-blocking */
int64_t stream_getsockopt(struct lcall *c, struct sock *s, int32_t name);
int64_t put_int_opt(endpoint_t t, const void *v, uint32_t vlen, uint64_t uval, uint64_t ulen);
/* A held stream call ends with r (a signal, a close): an accept's new socket goes; a
 * sendfile is passed back to vfs (true: answered so). */
bool stream_cancelled(struct lcall *c, int64_t r);
uint32_t stream_ready(struct sock *s);                /* POLL* bits now */

/* vfsside.c */
void vfsside_init(void);
void ready_changed(struct sock *s);      /* look at s's readiness again (pushed from poll) */
bool vfsside_poll(void);                 /* pushes what changed; true if it did work */
/* Passes the held call back to vfs (KC_LX_PASS), which answers it: w = its words. */
int64_t vfs_pass_back(endpoint_t thread, uint32_t nr, const uint64_t w[6]);
endpoint_t vfs_endpoint(void);       /* the vfs we serve (looked up once) */
endpoint_t vfs_endpoint_again(void); /* looked up again (it may have restarted) */
void calls_hold(struct lcall *c);
struct held;
void calls_retry(uint32_t sock);      /* data or space may be there now (0: every socket) */
extern bool calls_noretry;            /* injected fault: calls_retry does nothing (tests the sweep) */
void calls_answered(uint64_t serial, const struct sk_msg *a);
void calls_cancel(endpoint_t thread);
void calls_drop_sock(uint32_t sock);
uint64_t calls_timer(void);           /* answers expired waits; ns to the next deadline */
void answer(endpoint_t thread, int64_t r);
