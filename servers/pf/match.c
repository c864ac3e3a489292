/* Packet headers and rule matching (match.h). Every length is checked before a byte is
 * read: the request is a copy, but its contents are the peer's. */
#include "match.h"

static uint16_t be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

int pf_pkt_parse(const struct pf_req *req, struct pf_pkt *p)
{
	*p = (struct pf_pkt){ 0 };
	if (req->dir != PF_IN && req->dir != PF_OUT)
		return PF_BAD_DIR;
	uint32_t hl = req->hdr_len;
	if (hl > PF_HDR_MAX || hl > req->pkt_len || hl < 20)
		return PF_BAD_LEN;
	const uint8_t *h = req->hdr;
	uint32_t ihl = (uint32_t)(h[0] & 15) * 4, tot = be16(h + 2);
	if (h[0] >> 4 != 4 || ihl < 20 || ihl > hl || tot < ihl || tot > req->pkt_len)
		return PF_BAD_IP;
	p->dir = req->dir;
	p->ifindex = req->ifindex;
	p->proto = h[9];
	p->ipid = be16(h + 4);
	p->src = be32(h + 12);
	p->dst = be32(h + 16);
	uint16_t frag = be16(h + 6);
	uint32_t off = (uint32_t)(frag & 0x1fff) * 8;
	if (off) {
		p->later_frag = true;
		return 0;
	}
	p->first_frag = (frag & 0x2000) != 0;
	/* The transport header must be there: within the copied bytes and within the packet. */
	uint32_t need = p->proto == PF_PROTO_UDP ? 8 : p->proto == PF_PROTO_TCP ? 14 : p->proto == PF_PROTO_ICMP ? 8 : 0;
	if (!need)
		return 0;
	if (ihl + need > hl || ihl + need > tot)
		return PF_BAD_L4;
	const uint8_t *l4 = h + ihl;
	if (p->proto == PF_PROTO_ICMP) {
		p->icmp_type = l4[0];
		p->icmp_id = be16(l4 + 4);
		return 0;
	}
	p->ports = true;
	p->sport = be16(l4);
	p->dport = be16(l4 + 2);
	if (p->proto == PF_PROTO_TCP)
		p->tcp_flags = l4[13];
	return 0;
}

static bool in_prefix(uint32_t a, uint32_t net, uint8_t len)
{
	uint32_t mask = len == 0 ? 0 : 0xffffffffu << (32 - len);
	return (a & mask) == net;
}

bool pf_rule_match(const struct pf_rule *r, const struct pf_pkt *p)
{
	if ((r->flags & PFR_IN) && p->dir != PF_IN)
		return false;
	if ((r->flags & PFR_OUT) && p->dir != PF_OUT)
		return false;
	if ((r->flags & PFR_ON) && r->ifindex != p->ifindex)
		return false;
	if ((r->flags & PFR_PROTO) && r->proto != p->proto)
		return false;
	if (!in_prefix(p->src, r->src, r->src_len) || !in_prefix(p->dst, r->dst, r->dst_len))
		return false;
	/* A port condition needs ports: later fragments and other protocols do not match it. */
	if (r->flags & PFR_SPORT && (!p->ports || p->sport < r->sport_lo || p->sport > r->sport_hi))
		return false;
	if (r->flags & PFR_DPORT && (!p->ports || p->dport < r->dport_lo || p->dport > r->dport_hi))
		return false;
	return true;
}

int pf_rules_eval(const struct pf_rule *rules, int n, const struct pf_pkt *p)
{
	int found = -1;
	for (int i = 0; i < n; i++) {
		if (!pf_rule_match(&rules[i], p))
			continue;
		found = i;
		if (rules[i].flags & PFR_QUICK)
			break;
	}
	return found;
}
