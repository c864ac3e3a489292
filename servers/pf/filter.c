/* The decision (filter.h). Order: a bad request is blocked; a later fragment follows its
 * first fragment; a packet of a known connection passes; otherwise the rules decide, and a
 * passing `keep state` rule makes an entry. */
#include "filter.h"

void pf_filter_init(struct pf_filter *f)
{
	f->nrules = 0;
	for (int i = 0; i < PF_MAX_RULES; i++)
		f->hits[i] = 0;
	pf_state_init(&f->states);
	for (int i = 0; i < PF_FRAGS; i++)
		f->frags[i] = (struct pf_frag){ 0 };
	f->frag_next = 0;
	f->c = (struct pf_counters){ 0 };
}

void pf_filter_set_rules(struct pf_filter *f, const struct pf_rule *rules, int n)
{
	if (n < 0)
		n = 0;
	if (n > PF_MAX_RULES)
		n = PF_MAX_RULES;
	for (int i = 0; i < n; i++) {
		f->rules[i] = rules[i];
		f->hits[i] = 0;
	}
	f->nrules = n;
}

bool pf_pkt_key(const struct pf_pkt *p, struct pf_key *k)
{
	if (p->later_frag)
		return false;
	bool out = p->dir == PF_OUT;
	*k = (struct pf_key){ .proto = p->proto };
	k->laddr = out ? p->src : p->dst;
	k->raddr = out ? p->dst : p->src;
	if (p->ports) {
		k->lport = out ? p->sport : p->dport;
		k->rport = out ? p->dport : p->sport;
		return true;
	}
	if (p->proto == PF_PROTO_ICMP && (p->icmp_type == 8 || p->icmp_type == 0)) {
		k->lport = p->icmp_id;
		k->rport = 0;
		return true;
	}
	return false;
}

static struct pf_frag *frag_find(struct pf_filter *f, const struct pf_pkt *p, uint64_t now)
{
	for (int i = 0; i < PF_FRAGS; i++) {
		struct pf_frag *g = &f->frags[i];
		if (g->expires > now && g->src == p->src && g->dst == p->dst && g->id == p->ipid && g->proto == p->proto)
			return g;
	}
	return NULL;
}

static void frag_remember(struct pf_filter *f, const struct pf_pkt *p, uint32_t verdict, uint64_t now)
{
	struct pf_frag *g = frag_find(f, p, now);
	if (!g) {
		g = &f->frags[f->frag_next];
		f->frag_next = (f->frag_next + 1) % PF_FRAGS;
	}
	*g = (struct pf_frag){ p->src, p->dst, p->ipid, p->proto, (uint8_t)verdict, now + PF_TMO_FRAG };
}

/* A packet of a known connection: refresh the entry's lifetime (TCP by its phase). */
static void state_seen(struct pf_state *s, const struct pf_pkt *p, uint64_t now)
{
	s->packets++;
	if (p->dir != s->dir)
		s->replied = true;
	uint64_t tmo = PF_TMO_UDP;
	if (p->proto == PF_PROTO_ICMP) {
		tmo = PF_TMO_ICMP;
	} else if (p->proto == PF_PROTO_TCP) {
		if (p->tcp_flags & PF_TH_RST)
			s->phase = PFS_RESET;
		else if (p->tcp_flags & PF_TH_FIN)
			s->phase = s->phase == PFS_RESET ? PFS_RESET : PFS_CLOSING;
		else if (s->replied && s->phase == PFS_OPENING && !(p->tcp_flags & PF_TH_SYN))
			s->phase = PFS_EST;
		tmo = s->phase == PFS_RESET ? PF_TMO_TCP_RST : s->phase == PFS_CLOSING ? PF_TMO_TCP_CLOSING
		      : s->phase == PFS_EST ? PF_TMO_TCP_EST : PF_TMO_TCP_OPENING;
		s->expires = now + tmo; /* may shorten: a closing connection goes soon */
		return;
	}
	s->expires = now + tmo;
}

static uint32_t count(struct pf_filter *f, const struct pf_pkt *p, uint32_t verdict)
{
	if (verdict == PF_PASS)
		f->c.passed[p->dir]++;
	else
		f->c.blocked[p->dir]++;
	return verdict;
}

uint32_t pf_filter_judge(struct pf_filter *f, const struct pf_req *req, uint64_t now, uint32_t *rule)
{
	struct pf_pkt p;
	*rule = 0;
	if (pf_pkt_parse(req, &p) < 0) {
		f->c.bad++;
		return PF_BLOCK;
	}
	if (p.later_frag) {
		/* Its first fragment's verdict if pf saw it; otherwise pass: ip cannot reassemble
		 * the datagram without the first fragment, which is judged when it comes. */
		struct pf_frag *g = frag_find(f, &p, now);
		if (g) {
			f->c.frag_follow++;
			return count(f, &p, g->verdict);
		}
		f->c.frag_unknown++;
		return count(f, &p, PF_PASS);
	}
	struct pf_key k;
	bool keyed = pf_pkt_key(&p, &k);
	struct pf_state *s = keyed ? pf_state_find(&f->states, &k, now) : NULL;
	uint32_t verdict;
	if (s) {
		state_seen(s, &p, now);
		f->c.state_pass++;
		verdict = PF_PASS;
	} else {
		int i = pf_rules_eval(f->rules, f->nrules, &p);
		verdict = i < 0 ? PF_PASS : f->rules[i].action;
		if (i >= 0) {
			f->hits[i]++;
			*rule = (uint32_t)i + 1;
		}
		if (i >= 0 && verdict == PF_PASS && (f->rules[i].flags & PFR_STATE) && keyed) {
			uint64_t tmo = p.proto == PF_PROTO_UDP ? PF_TMO_UDP : p.proto == PF_PROTO_ICMP ? PF_TMO_ICMP
											  : PF_TMO_TCP_OPENING;
			struct pf_state *n = pf_state_insert(&f->states, &k, p.dir, now, tmo);
			if (n) {
				f->c.states_made++;
				n->phase = p.proto == PF_PROTO_TCP ? PFS_OPENING : PFS_EST;
				n->packets = 1;
			} else {
				f->c.state_full++;
			}
		}
	}
	if (p.first_frag)
		frag_remember(f, &p, verdict, now);
	return count(f, &p, verdict);
}

bool pf_filter_reply_passes(struct pf_filter *f, const struct pf_req *req, uint64_t now)
{
	struct pf_pkt p;
	if (pf_pkt_parse(req, &p) < 0 || p.proto != PF_PROTO_TCP || !p.ports || p.later_frag || p.first_frag ||
	    (p.tcp_flags & (PF_TH_SYN | PF_TH_ACK | PF_TH_FIN | PF_TH_RST)) != PF_TH_SYN)
		return false;
	struct pf_pkt r = p;
	r.dir = p.dir == PF_IN ? PF_OUT : PF_IN;
	r.src = p.dst, r.dst = p.src;
	r.sport = p.dport, r.dport = p.sport;
	r.tcp_flags = PF_TH_SYN | PF_TH_ACK;
	struct pf_key k;
	if (pf_pkt_key(&r, &k) && pf_state_find(&f->states, &k, now))
		return true;
	int i = pf_rules_eval(f->rules, f->nrules, &r);
	return i < 0 || (f->rules[i].action == PF_PASS && !(f->rules[i].flags & PFR_STATE));
}
