/* The tcp server's state (README.md): the socket table (syscall's sockets, and connections a
 * listener accepted that no socket has taken yet) and the counters. The channels to ip and
 * syscall, the send pool and the loop are lib/lwip/xport's. One thread; lwIP is called only
 * from here. */
#pragma once
#include "xport.h"
#include "lx_abi.h"
#include "sockbuf.h"
#include "seg.h"

#define TS_MAX_SOCKS 512  /* attached sockets (each buffer: one memory handle and one mapping of ours) */
#define TS_SLOTS 1024     /* table entries: sockets plus pending (not yet accepted) connections */
#define TS_REATTACH_NS (30ull * 1000000000) /* restored listeners syscall does not claim go */
#define TS_CLOSE_NS (60ull * 1000000000)    /* SK_CLOSE's bound on draining TX */

struct tcp_pcb;
struct pbuf;
enum ts_kind { TK_FREE = 0, TK_SOCK, TK_PENDING };

struct ts_sock {
	uint8_t kind;          /* TK_* */
	uint32_t sock;         /* syscall's id (0 for a pending connection) */
	uint32_t flags;        /* SKF_* it was opened with */
	struct tcp_pcb *pcb;   /* NULL: none yet, or the connection is gone */
	bool listening;
	bool connecting;       /* SK_CONNECT waits for the handshake */
	bool connected;        /* was established (data may flow) */
	bool attached;         /* its buffer object is mapped */
	bool attached_before;  /* a reattach finds it known: its state is told again */
	bool corrupt;          /* the application broke its buffer: no more I/O on it */
	bool tx_pending;       /* TX descriptors may wait */
	bool rx_fin;           /* the peer's FIN arrived (after the data in pend) */
	bool rx_fin_placed;    /* ... and is in the RX ring as SBD_FIN */
	bool tx_fin_sent;      /* an SBD_FIN from TX became tcp_shutdown */
	bool hup;              /* the connection is gone (reset, failed, closed both ways) */
	bool closing;          /* SK_CLOSE: drain TX, then FIN and answer */
	uint8_t ev;            /* EV_* bits not yet told to syscall */
	int32_t err;           /* the pending EV_ERR's -errno */
	uint64_t connect_req, close_req; /* requests answered later */
	bool connect_desc;     /* the connect came from TX (SBD_CONNECT): EV_CONN answers it */
	int32_t conn_result;   /* EV_CONN's result */
	uint64_t close_at;     /* when SK_CLOSE came */
	/* options (kept here too: the pcb may come later) */
	uint32_t opts;         /* TO_* */
	uint32_t keepidle, keepintvl, keepcnt, maxseg, linger_s;
	uint16_t backlog;
	/* the buffer */
	int64_t handle;
	void *va;
	uint64_t bytes;
	struct sockbuf sb;
	uint32_t tx_off;       /* bytes of the oldest TX descriptor already given to lwIP */
	uint64_t rx_released;  /* the consumer's `released` we last read */
	struct ts_ring ring;   /* stream bytes in the RX ring (seg.h) */
	uint64_t rx_recved;    /* stream bytes we told lwIP about (tcp_recved) */
	uint8_t *pend;         /* received bytes not yet in the ring (our heap): a connection not
				  yet accepted, or a ring that was full */
	uint32_t pend_off, pend_len, pend_cap;
	/* a pending connection: its listener's slot and arrival order */
	int32_t lst;
	uint64_t seq;
	uint64_t restored_at;  /* a listener restored from ds, waiting for syscall */
	bool kept;             /* adopted from a live update's predecessor (adopt.c): a request
				  syscall asks again is answered as the first time */
	struct sk_dsrec saved; /* what ds holds for this slot */
	uint64_t oow_ack_at;   /* when an ACK war's ACK last reached lwIP (rx.c ts_inpacket) */
};
#define TO_REUSEADDR 1
#define TO_KEEPALIVE 2
#define TO_NODELAY 4
#define TO_CORK 8
#define TO_LINGER 16

struct ts_counters {
	uint64_t rx_bytes, tx_bytes, accepts, connects, connect_fail, resets_in, aborts, timeouts;
	uint64_t malformed, not_ours, csum_err, rx_nomem, rx_detached, tx_nomem, bad_desc, corrupt_bufs;
	uint64_t bad_msgs, icmp_err, accept_drops;
	uint64_t tw_reused; /* SYNs that ended a TIME_WAIT of the same connection (rx.c) */
	uint64_t oow_acks;  /* ACK war's ACKs dropped (rx.c ts_inpacket) */
	uint64_t rx_merges, rx_merged; /* receive offload: merged segments made, packets in them (rx.c) */
};

struct ts_state {
	struct ts_sock s[TS_SLOTS];
	int top;          /* every slot in use is below it: the table's scans stop there */
	uint64_t seq;     /* arrival order of pending connections */
	struct ts_counters c;
};
extern struct ts_state ts;

/* rx.c: packets from ip into lwIP */
int32_t ts_rx(const struct ipx_msg *m, const unsigned char *pkt);
void ts_rx_flush(void);
void ts_ip_restarted(void); /* a new ip: unacknowledged data again, now */
void ts_icmp(const unsigned char *pkt, uint32_t len);
/* sock.c: the table, requests from syscall, events, ds */
void ts_sys_poll(bool *work);
void ts_lib_work(int32_t cookie, uint32_t sock);
void ts_flush_events(void);
void ts_gc(uint64_t now);
void ts_restore(void);
void ts_save(struct ts_sock *s);
void ts_sock_free(struct ts_sock *s);
void ts_slot_used(const struct ts_sock *s);
void ts_answer(uint32_t sock, uint64_t req, int64_t result, const struct ts_sock *s);
/* Starts s's connect to addr:port (network order; family TS_AF_INET): 0 (on_connected or
 * on_err ends it), or -errno at once. */
int64_t ts_connect(struct ts_sock *s, uint16_t family, uint16_t port, const uint8_t *addr);
void ts_set_err(struct ts_sock *s, int32_t err, bool hup);
int ts_pending_count(const struct ts_sock *l);
/* stream.c: lwIP callbacks, the data both ways, closing */
void ts_pcb_setup(struct ts_sock *s);
/* The socket's options onto its pcb (again after the handshake: TCP_MAXSEG). */
void ts_apply_opts(struct ts_sock *s);
void ts_pcb_orphan(struct tcp_pcb *pcb);
void ts_listen_setup(struct ts_sock *s);
void ts_tx_poll(bool *work);
void ts_rx_place(struct ts_sock *s);
void ts_rx_window(struct ts_sock *s);
bool ts_rx_unread(struct ts_sock *s);
void ts_abort(struct ts_sock *s);
void ts_pend_free(struct ts_sock *s);
/* adopt.c: a live update's new instance takes the kept state over. The function addresses
 * stream.c and rx.c give lwIP (TS_NFNS with lwIP's tcp_recv_null): each writes its own into
 * v and returns how many. */
#define TS_NFNS 7
int ts_stream_fns(uintptr_t *v);
int ts_rx_fns(uintptr_t *v);
void ts_adopt_claim(void);   /* the kept buffers' handles, before the sweep */
bool ts_adopt(void);         /* code addresses made ours, buffers mapped where they were */
void ts_keep_fns(void);      /* our addresses into the kept state, for our successor */
int64_t ts_quiesce(void);
/* netq.c: NETQ_SHOW's counters and lines (xport_netq) */
extern const struct xport_counter ts_counters[];
bool ts_sock_line(uint64_t line, char *buf);
