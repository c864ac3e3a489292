/* The udp server's state (README.md): the socket table and the counters (the channels to
 * ip and syscall and the send pool are lib/lwip/xport's). One thread; lwIP is called only from here. */
#pragma once
#include "xport.h"
#include "lx_abi.h"
#include "sockbuf.h"
#include "pkt.h"

#define US_MAX_SOCKS 256 /* each socket: one memory handle and one mapping of ours, a pcb */
#define US_REATTACH_NS (30ull * 1000000000) /* restored sockets syscall does not claim go */

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
	uint64_t no_port, csum_err, malformed, not_ours, rx_full, rx_unattached;
	uint64_t bad_desc, tx_err, tx_nomem, icmp_err, corrupt_bufs, bad_msgs;
};

struct us_state {
	struct us_sock s[US_MAX_SOCKS];
	struct us_counters c;
};
extern struct us_state us;

/* net.c: packets from ip into lwIP, ICMP errors, the sockets' receive callback */
int32_t us_rx(const struct ipx_msg *m, const unsigned char *pkt);
void us_icmp(const unsigned char *pkt, uint32_t len);
/* sock.c: the socket table, requests from syscall, socket I/O */
void us_sock_restore(void);
void us_sys_poll(bool *work);
void us_lib_work(int32_t cookie, uint32_t sock);
void us_tx_poll(bool *work);
void us_flush_events(void);
void us_sock_gc(uint64_t now);
void us_sock_icmp_err(const struct us_icmperr *e);
struct us_sock *us_sock_of_pcb(struct udp_pcb *pcb);
/* netq.c: NETQ_SHOW's counters and lines (xport_netq) */
extern const struct xport_counter us_counters[];
bool us_sock_line(uint64_t line, char *buf);
