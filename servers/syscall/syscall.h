/* syscall: the socket front door (README.md). Shared state of its files:
 *   main.c    the loop: passed Linux calls, vfs's closes, signals, channel work
 *   sock.c    the socket table: buffers (created, mapped into applications, granted)
 *   engine.c  the channels to udp (sock_proto.h): requests, answers, events, udp restarts
 *   calls.c   the Linux socket calls themselves, and the calls that wait (held) */
#pragma once
#include "axrt.h"
#include "evloop.h"
#include "sockbuf.h"
#include "sock_proto.h"
#include "syscall_proto.h"

/* Linux errno values. */
#define E_PERM 1
#define E_INTR 4
#define E_BADF 9
#define E_AGAIN 11
#define E_NOMEM 12
#define E_ACCES 13
#define E_FAULT 14
#define E_INVAL 22
#define E_PIPE 32
#define E_NOTSOCK 88
#define E_DESTADDRREQ 89
#define E_MSGSIZE 90
#define E_NOPROTOOPT 92
#define E_OPNOTSUPP 95
#define E_AFNOSUPPORT 97
#define E_ADDRINUSE 98
#define E_NETDOWN 100
#define E_ISCONN 106
#define E_NOTCONN 107

#define AF_INET 2
#define MAX_SOCKS 128
#define MAX_MAPPED 4  /* processes a socket's buffer is mapped into */
#define UDP_MAX 65507 /* the largest UDP payload over IPv4 */

struct inaddr {
	uint32_t addr; /* network order */
	uint16_t port; /* network order */
};

struct sock {
	uint32_t id;              /* vfs's socket id; 0: a free slot */
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
	uint64_t rcvtimeo_ns;     /* SO_RCVTIMEO, 0: none */
	int32_t error;            /* pending SO_ERROR (an EV_ERR), a positive errno */
	bool shut_rd, shut_wr;
	bool closing;             /* no descriptor left: freed when udp has let go (SK_CLOSE) */
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
	uint64_t deadline;        /* SO_RCVTIMEO's end (KC_TIME ns), 0: none */
	uint64_t serial;          /* names a held call to engine.c (never reused), 0: none */
};
/* A call's outcome: a result to answer now, or one of these. */
#define CALL_HELD INT64_MIN          /* must wait for data or space: hold it */
#define CALL_TAKEN (INT64_MIN + 1)   /* held already, waiting for udp's answer */

extern bool sys_debug;

/* sock.c */
extern struct sock socks[MAX_SOCKS];
struct sock *sock_find(uint32_t id);
struct sock *sock_get(uint32_t id, bool make, int64_t *err); /* make: SYSP_NEW */
void sock_map_into(struct sock *s, endpoint_t thread, uint32_t pid);
void sock_free(struct sock *s);

/* engine.c */
void engine_init(void);
bool engine_ready(void);              /* udp attached and said hello */
/* A request to udp for socket s about the held call `serial` (0: syscall's own: an
 * implicit bind, an option). Pushed when udp is ready; the answer goes to calls_answered. */
void engine_request(struct sock *s, struct sk_msg *m, uint64_t serial);
bool engine_poll(void);               /* pushes what waits, drains events; true if it did work */
void engine_close(struct sock *s);
void engine_message(struct kmsg *m);  /* CHAN_ATTACH */
/* The event channel's sleep protocol before blocking: false if events arrived meanwhile. */
bool engine_may_sleep(void);

/* calls.c */
int64_t calls_serve(struct lcall *c, struct sock *s);
void calls_hold(struct lcall *c);
void calls_retry(uint32_t sock);      /* data or space may be there now (0: every socket) */
void calls_answered(uint64_t serial, const struct sk_msg *a);
void calls_cancel(endpoint_t thread);
void calls_drop_sock(uint32_t sock);
uint64_t calls_timer(void);           /* answers expired waits; ns to the next deadline */
void answer(endpoint_t thread, int64_t r);
