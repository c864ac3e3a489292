/* The udp server's shared state (README.md): the channels to ip and syscall, the send
 * pool, the socket table and the counters. One thread; lwIP is called only from here. */
#pragma once
#include "axrt.h"
#include "spsc.h"
#include "pool.h"
#include "reqdb.h"
#include "chan_name.h"
#include "chan_axolotl.h"
#include "evloop.h"
#include "sockbuf.h"
#include "sock_proto.h"
#include "ipx_proto.h"
#include "pkt.h"

#define US_MAX_SOCKS 48  /* each socket's buffer takes one of our 64 memory handles */
#define US_MAX_IF 4
#define US_MAX_DRV 2     /* drivers we export the send pool to */
#define US_TX_INFLIGHT 1024
#define US_WAKE_BIT (1ull << 40) /* "a channel from udp has messages" */
#define US_REATTACH_NS (30ull * 1000000000) /* restored sockets syscall does not claim go */
#define US_HOLD_RX_NS 1000000000ull /* ip's packets wait this long for the reattaches */

/* Linux errno values for answers and events. */
enum { UE_BADF = 9, UE_AGAIN = 11, UE_NOMEM = 12, UE_ACCES = 13, UE_EXIST = 17, UE_INVAL = 22,
       UE_PIPE = 32, UE_NOPROTOOPT = 92, UE_PROTONOSUPPORT = 93, UE_AFNOSUPPORT = 97,
       UE_ADDRINUSE = 98, UE_ADDRNOTAVAIL = 99, UE_NETUNREACH = 101, UE_ISCONN = 106,
       UE_MFILE = 24, UE_MSGSIZE = 90 };

struct udp_pcb;
struct us_sock {
	uint32_t sock;        /* syscall's id; 0: free slot */
	uint32_t flags;       /* SKF_* it was opened with */
	uint32_t opts;        /* SKR_* */
	struct udp_pcb *pcb;
	bool attached;        /* its buffer object is mapped */
	bool corrupt;         /* the application broke its buffer: no more I/O on it */
	bool tx_pending;      /* TX descriptors wait (no pool memory or a full channel) */
	bool shut_rd, shut_wr;
	uint8_t ev;           /* EV_* bits not yet told to syscall */
	int32_t err;          /* the pending EV_ERR's -errno */
	int64_t handle;
	void *va;
	uint64_t bytes;
	struct sockbuf sb;
	uint64_t restored_at; /* restored from ds, waiting for SK_OPEN|SKF_REATTACH: when */
	struct sk_dsrec saved;/* what ds holds for this slot */
};

struct us_counters {
	uint64_t rx_dgrams, rx_bytes, tx_dgrams, tx_bytes;
	uint64_t no_port, csum_err, malformed, not_ours, rx_full, rx_unattached, bad_ptr;
	uint64_t bad_desc, tx_err, tx_nomem, icmp_err, corrupt_bufs, bad_msgs, stale_tx_done;
};

struct us_state {
	/* ip: its channel to us and its pools (imported), our channel to it (exported) */
	struct chan_import in_imp, rx_imp, heap_imp;
	struct spsc in;
	struct pool_view ip_rx, ip_heap;
	bool ip_ok;
	uint32_t ip_owner;          /* endpoint that exported ip/udp.in */
	int64_t ip_incarnation;     /* from its last IPX_HELLO, -1 before the first */
	struct chan_export out_ex;
	struct spsc out;
	struct chan_axolotl_peer ip_peer;
	struct chan_platform ip_plat;
	bool out_pushed;
	/* syscall: both channels imported */
	struct chan_import req_imp, ev_imp;
	struct spsc req, evq;
	bool sys_ok;
	uint32_t sys_owner;
	struct chan_axolotl_peer sys_peer;
	struct chan_platform sys_plat;
	bool ev_pushed;
	uint64_t hello_at;          /* when SK_HELLO went to syscall */
	bool awaiting_reattach;     /* restored sockets wait for syscall: hold ip's packets */
	/* the send pool: lwIP's heap */
	struct pool_owner pool;
	uint32_t pool_priv[4];
	struct chan_export pool_ip_ex, pool_drv_ex[US_MAX_DRV];
	int ndrv;
	/* TX packets ip has not answered: ctx = the pbuf */
	struct reqdb txdb;
	struct reqdb_entry txdb_e[US_TX_INFLIGHT];
	/* sockets */
	struct us_sock s[US_MAX_SOCKS];
	uint32_t nslots;            /* high-water mark saved in ds */
	bool retry;                 /* something waits for room: poll again soon */
	uint64_t next_attach;       /* when to try importing missing channels again */
	uint64_t ip_wait_from;      /* since when we wait for ip to import udp/out first */
	uint64_t next_nudge;        /* when to publish udp/out again if ip has not imported it */
	struct us_counters c;
};
extern struct us_state us;

/* net.c: lwIP, the netifs and the ip side */
void us_net_init(void *heap);
void us_ip_poll(bool *work);
void us_ip_forget_tx(void);
void us_loop_poll(void);
uint32_t us_out_space(void);
void us_iface(const struct ipx_iface *f);
void us_iface_restore(void);
/* sock.c: the socket table, requests from syscall, socket I/O */
void us_sock_restore(void);
void us_sys_poll(bool *work);
void us_tx_poll(bool *work);
void us_flush_events(void);
void us_sock_gc(uint64_t now);
void us_sock_icmp_err(const struct us_icmperr *e);
struct us_sock *us_sock_of_pcb(struct udp_pcb *pcb);
void us_export_pool_for(const char *drv);
/* netq.c: NETQ_SHOW lines */
void us_netq(struct kmsg *m);
