/* ip <-> pf: the T junction (thesis §2.5, docs/network.md). Every IPv4 packet ip receives
 * (before lwIP sees it) and every one it sends (after routing and fragmentation, before the
 * driver) waits for pf's verdict. ARP and other non-IP frames do not go to pf.
 *
 * Names in ds (ip owns both, importable by pf only):
 *   ip/pf.req  spsc, 128-byte slots, ip -> pf: struct pf_req
 *   ip/pf.ans  spsc, 64-byte slots,  pf -> ip: struct pf_ans
 * ip copies the headers into the request (pf never maps packet memory): pf sees exactly
 * what ip validated, and a pool owner cannot change it under pf.
 *
 * ip keeps each packet and its request id until the answer comes. A verdict for an unknown
 * id is dropped (late, duplicate or forged). If pf restarts, ip resubmits every pending
 * request to the new instance (pf may have taken some from the queue and died): no packet is
 * lost, some may be judged twice. With no pf configured (ip arg `pf=none`) ip passes all. */
#pragma once
#include <stdint.h>

#define PF_REQ_SLOT 128
#define PF_ANS_SLOT 64
#define PF_SLOTS 1024
#define PF_HDR_MAX 104 /* bytes of the packet copied: the IP header and the start of L4 */

enum { PF_IN = 0, PF_OUT = 1 };
enum { PF_PASS = 1, PF_BLOCK = 2 };
/* A note, not a question: ip passed this packet already (a FIN or RST of a flow pf's flow
 * table passes, lib/net/pf_flow.h) and pf only updates its connection state; no answer.
 * ip does not ring pf for a note: pf reads it with the next request. */
#define PF_REQ_NOTE 1

struct pf_req {
	uint64_t id;
	uint8_t dir;       /* PF_IN or PF_OUT */
	uint8_t ifindex;   /* ip's interface number (0 = first NIC) */
	uint16_t hdr_len;  /* bytes valid in hdr (min(packet length, PF_HDR_MAX)) */
	uint32_t pkt_len;  /* whole IP packet length */
	uint64_t flags;    /* PF_REQ_NOTE, else 0 */
	uint8_t hdr[PF_HDR_MAX];
};
_Static_assert(sizeof(struct pf_req) == PF_REQ_SLOT, "one slot");

struct pf_ans {
	uint64_t id;
	uint32_t verdict;  /* PF_PASS or PF_BLOCK */
	uint32_t rule;     /* the rule that decided (1-based), 0 = default or state */
};
_Static_assert(sizeof(struct pf_ans) <= PF_ANS_SLOT, "one slot");
