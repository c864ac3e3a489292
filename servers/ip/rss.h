/* Flows over a driver's queues (netdev_proto.h, "Several queues"), pure C (host unit tests:
 * tests/unit/test_ip_rss.c). The device spreads received flows over its RX queues (RSS);
 * ip remembers on which queue each flow arrived, sends the flow's frames on the same
 * queue, and counts flows per queue and flows that arrived on a second queue (the device's
 * spreading must keep each flow on one). A bounded table: a flow whose entry is taken by
 * another is simply seen as new when it comes back. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#define RSS_FLOWS 256
#define RSS_MAXQ 8

/* A TCP or UDP flow seen from here: the remote end, then ours (network byte order). */
struct rss_key {
	uint32_t raddr, laddr;
	uint16_t rport, lport;
	uint8_t proto;
};

struct rss_table {
	struct {
		struct rss_key k;
		uint8_t q;
		bool used;
	} e[RSS_FLOWS];
	uint64_t flows[RSS_MAXQ]; /* flows first seen on each queue */
};

/* The flow of an Ethernet frame of len bytes: IPv4, TCP or UDP, not a fragment after the
 * first, the ports inside len. rx: a received frame (the source is the remote end), else
 * one we send. False for anything else. */
bool rss_flow_of(const uint8_t *frame, uint32_t len, bool rx, struct rss_key *k);
/* A received frame of flow k arrived on queue q (< RSS_MAXQ); true if the flow was known
 * on another queue (it moved: the caller counts it). */
bool rss_note_rx(struct rss_table *t, const struct rss_key *k, unsigned q);
/* The queue (< nq, nq >= 1) to send a frame of flow k on: the one it arrives on, else one
 * chosen by a hash of the flow (the same for all its frames). */
unsigned rss_tx_queue(const struct rss_table *t, const struct rss_key *k, unsigned nq);
