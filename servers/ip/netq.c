/* Questions from the console (netq_proto.h): interfaces, routes, the ARP cache, counters,
 * and ping through a raw ICMP pcb (which also passes ICMP errors on to the transports). Answered at once; ping runs from the event loop. */
#include "ip.h"
#include "lx_abi.h"
#include "lwip/raw.h"
#include "lwip/etharp.h"
#include "lwip/inet_chksum.h"
#include "lwip/stats.h"
#include "lwip/prot/icmp.h"
#include "lwip/prot/ip4.h"
#include "netq_proto.h"

#define PING_SESSIONS 16
#define PING_MAX 100
#define PING_LOST_NS 3000000000ull
#define PING_FORGET_NS 30000000000ull

struct ping {
	bool used;
	uint16_t ident, gen;
	ip4_addr_t dst;
	uint32_t count, size, interval_ns, sent;
	uint64_t next_ns, last_ns;
	uint64_t tx_ns[PING_MAX];
	uint8_t state[PING_MAX], ttl[PING_MAX];
	uint32_t rtt_us[PING_MAX], bytes[PING_MAX];
};
static struct ping pings[PING_SESSIONS];
static struct raw_pcb *icmp_pcb;
static uint16_t next_ident = 0x4158;

/* --- ping --- */

static u8_t icmp_rx(void *arg, struct raw_pcb *pcb, struct pbuf *p, const ip_addr_t *addr)
{
	(void)arg, (void)pcb, (void)addr;
	uint8_t h[60 + 8];
	u16_t n = pbuf_copy_partial(p, h, sizeof(h), 0);
	if (n < 20)
		return 0;
	u16_t hl = (u16_t)((h[0] & 15) * 4);
	if (n < hl + 8)
		return 0;
	uint8_t type = h[hl];
	if (type == ICMP_DUR || type == ICMP_TE || type == ICMP_SQ || type == ICMP_PP) {
		/* An error about a packet we sent: the quoted header says whose it was. */
		uint8_t inner[20];
		if (pbuf_copy_partial(p, inner, 20, (u16_t)(hl + 8)) != 20 || inner[0] >> 4 != 4)
			return 0;
		return ip_ipx_icmp_err(inner[9], p) ? 1 : 0;
	}
	if (type != ICMP_ER)
		return 0;
	uint16_t ident = (uint16_t)(h[hl + 4] << 8 | h[hl + 5]), seq = (uint16_t)(h[hl + 6] << 8 | h[hl + 7]);
	for (int i = 0; i < PING_SESSIONS; i++) {
		struct ping *s = &pings[i];
		if (!s->used || s->ident != ident)
			continue;
		seq--; /* on the wire, as in netq_proto.h, echoes count from 1; our table from 0 */
		if (seq < s->sent && s->state[seq] == NQP_WAIT) {
			uint64_t now = ax_time_ns();
			s->state[seq] = NQP_REPLY;
			s->rtt_us[seq] = (uint32_t)((now - s->tx_ns[seq]) / 1000);
			s->bytes[seq] = (uint32_t)(p->tot_len - hl - 8);
			s->ttl[seq] = h[8];
			s->last_ns = now;
		}
		pbuf_free(p);
		return 1;
	}
	return 0;
}

static void ping_send(struct ping *s)
{
	uint32_t seq = s->sent;
	struct pbuf *p = pbuf_alloc(PBUF_IP, (u16_t)(8 + s->size), PBUF_RAM);
	s->tx_ns[seq] = ax_time_ns();
	s->state[seq] = NQP_WAIT;
	s->sent++;
	s->last_ns = s->tx_ns[seq];
	s->next_ns = s->tx_ns[seq] + s->interval_ns;
	if (!p)
		return;
	uint8_t *b = p->payload; /* PBUF_RAM: one piece */
	b[0] = ICMP_ECHO, b[1] = 0, b[2] = b[3] = 0;
	b[4] = (uint8_t)(s->ident >> 8), b[5] = (uint8_t)s->ident;
	b[6] = (uint8_t)((seq + 1) >> 8), b[7] = (uint8_t)(seq + 1);
	for (uint32_t i = 0; i < s->size; i++)
		b[8 + i] = (uint8_t)(i + seq);
	u16_t c = inet_chksum(b, p->len);
	memcpy(b + 2, &c, 2);
	ip_addr_t dst;
	ip_addr_copy_from_ip4(dst, s->dst);
	raw_sendto(icmp_pcb, p, &dst);
	pbuf_free(p);
}

/* From the loop: sends what is due, marks what timed out; the ns until the next thing. */
uint64_t ip_ping_poll(void);
uint64_t ip_ping_poll(void)
{
	uint64_t now = 0, wait = 0;
	for (int i = 0; i < PING_SESSIONS; i++) {
		struct ping *s = &pings[i];
		if (!s->used)
			continue;
		if (!now)
			now = ax_time_ns(); /* not read at every loop turn while nobody pings */
		if (s->sent < s->count && now >= s->next_ns)
			ping_send(s);
		for (uint32_t q = 0; q < s->sent; q++)
			if (s->state[q] == NQP_WAIT && s->tx_ns[q] < now && now - s->tx_ns[q] > PING_LOST_NS)
				s->state[q] = NQP_LOST;
		if (s->last_ns < now && now - s->last_ns > PING_FORGET_NS) {
			s->used = false;
			continue;
		}
		uint64_t due = s->sent < s->count ? s->next_ns - (now < s->next_ns ? now : s->next_ns) : 100000000;
		if (!wait || due < wait)
			wait = due ? due : 1;
	}
	return wait;
}

static int64_t ping_start(const struct kmsg *m)
{
	uint32_t count = (uint32_t)m->w[1], size = (uint32_t)m->w[2], ms = (uint32_t)m->w[3];
	if (!m->w[0] || count < 1 || count > PING_MAX || m->w[2] > 65000 || ms < 10 || ms > 10000)
		return -LX_EINVAL;
	/* A free session, else the one finished longest ago (every echo answered or lost). */
	int pick = -1;
	for (int i = 0; i < PING_SESSIONS && pick < 0; i++)
		if (!pings[i].used)
			pick = i;
	for (int i = 0; i < PING_SESSIONS && (pick < 0 || pings[pick].used); i++) {
		bool finished = pings[i].sent == pings[i].count;
		for (uint32_t q = 0; finished && q < pings[i].sent; q++)
			finished = pings[i].state[q] != NQP_WAIT;
		if (finished && (pick < 0 || pings[i].last_ns < pings[pick].last_ns))
			pick = i;
	}
	for (int i = pick; i >= 0; i = -1) {
		struct ping *s = &pings[i];
		uint16_t gen = (uint16_t)(s->gen + 1);
		memset(s, 0, sizeof(*s));
		s->used = true, s->gen = gen;
		s->ident = next_ident++;
		ip4_addr_set_u32(&s->dst, (uint32_t)m->w[0]);
		s->count = count, s->size = size, s->interval_ns = ms * 1000000u;
		s->next_ns = ax_time_ns();
		ping_send(s);
		return (int64_t)((uint32_t)gen << 8 | (uint32_t)i);
	}
	return -LX_EBUSY;
}

static struct ping *session(uint64_t id)
{
	uint32_t i = id & 0xff;
	if (i >= PING_SESSIONS || !pings[i].used || pings[i].gen != (uint16_t)(id >> 8))
		return NULL;
	return &pings[i];
}

int ip_ping_init(void)
{
	icmp_pcb = raw_new(IP_PROTO_ICMP);
	if (!icmp_pcb)
		return -KE_NOMEM;
	raw_recv(icmp_pcb, icmp_rx, NULL);
	return 0;
}

/* --- tables --- */

static void mac_str(const uint8_t *m, char *b)
{
	ksnprintf(b, 18, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

/* Per interface: its address line, its counters, and with several queue pairs one line
 * per queue (frames, RX buffers held by the driver, flows first seen there) and the flows
 * that moved between queues. */
static bool line_iface(int n, char *b)
{
	int i = 0;
	for (; i < ip.nifs; i++) {
		int lines = 2 + (ip.ifs[i].nq > 1 ? ip.ifs[i].nq + 1 : 0);
		if (n < lines)
			break;
		n -= lines;
	}
	if (i >= ip.nifs)
		return false;
	struct ip_if *f = &ip.ifs[i];
	char a[16], mac[18];
	if (n == 0) {
		mac_str(f->mac, mac);
		ksnprintf(b, NETQ_TEXT, "%s %s/%d %s mtu %u %s%s", f->name, iph_str(f->cfg_addr, a),
			  iph_plen(f->cfg_mask), mac, NETDEV_MTU, (f->link & NDL_UP) ? "up" : "down",
			  f->dhcp ? " dhcp" : "");
	} else if (n == 1) {
		ksnprintf(b, NETQ_TEXT, "  rx %llu/%lluB tx %llu/%lluB drop %llu",
			  (unsigned long long)f->c.rx_frames, (unsigned long long)f->c.rx_bytes,
			  (unsigned long long)f->c.tx_frames, (unsigned long long)f->c.tx_bytes,
			  (unsigned long long)(f->c.tx_drop_full + f->c.rx_runt + f->c.rx_bad_msg));
	} else if (n - 2 < f->nq) {
		const struct ip_q *q = &f->q[n - 2];
		ksnprintf(b, NETQ_TEXT, "  queue %d rx %llu tx %llu rxbufs %u flows %llu", n - 2,
			  (unsigned long long)q->rx_frames, (unsigned long long)q->tx_frames, q->rx_posted,
			  (unsigned long long)f->flows.flows[n - 2]);
	} else {
		ksnprintf(b, NETQ_TEXT, "  %u queues, flows moved %llu", f->nq, (unsigned long long)f->c.rx_flow_moved);
	}
	return true;
}

static bool line_route(int n, char *b)
{
	const char *names[IP_MAX_IF];
	for (int i = 0; i < IP_MAX_IF; i++)
		names[i] = i < ip.nifs ? ip.ifs[i].name : "?";
	return rt_format(&ip.rt, n, names, b, NETQ_TEXT) == 0;
}

static bool line_arp(int n, char *b)
{
	int k = 0;
	for (size_t i = 0; i < ARP_TABLE_SIZE; i++) {
		ip4_addr_t *a;
		struct netif *nf;
		struct eth_addr *e;
		if (!etharp_get_entry(i, &a, &nf, &e))
			continue;
		if (k++ != n)
			continue;
		char s[16], mac[18];
		mac_str(e->addr, mac);
		ksnprintf(b, NETQ_TEXT, "%s %s %s", iph_str(ip4_addr_get_u32(a), s), mac, ip_if_of(nf)->name);
		return true;
	}
	return false;
}

struct counter {
	const char *name;
	int kind; /* 0: uint64_t, 1: lwIP STAT_COUNTER */
	const void *p;
	int ifsum; /* offset into struct ip_counters summed over interfaces, or -1 */
};
#define IFC(field) { #field, 0, NULL, (int)__builtin_offsetof(struct ip_counters, field) }
#define LWC(name, field) { name, 1, &lwip_stats.field, -1 }
#define OWN(name, var) { name, 0, &var, -1 }
static const struct counter counters[] = {
	IFC(rx_frames), IFC(rx_bytes), IFC(tx_frames), IFC(tx_bytes), IFC(rx_bad_msg), IFC(rx_runt),
	IFC(tx_drop_full), IFC(tx_err), IFC(tx_copied), IFC(rx_flow_moved),
	LWC("ip_recv", ip.recv), LWC("ip_xmit", ip.xmit), LWC("ip_drop", ip.drop), LWC("ip_chkerr", ip.chkerr),
	LWC("ip_lenerr", ip.lenerr), LWC("ip_proterr", ip.proterr), LWC("ip_rterr", ip.rterr),
	LWC("frag_recv", ip_frag.recv), LWC("frag_xmit", ip_frag.xmit), LWC("frag_drop", ip_frag.drop),
	LWC("frag_memerr", ip_frag.memerr), LWC("frag_lenerr", ip_frag.lenerr),
	LWC("icmp_recv", icmp.recv), LWC("icmp_xmit", icmp.xmit), LWC("icmp_drop", icmp.drop),
	LWC("icmp_chkerr", icmp.chkerr), LWC("icmp_lenerr", icmp.lenerr),
	LWC("arp_recv", etharp.recv), LWC("arp_xmit", etharp.xmit), LWC("arp_drop", etharp.drop),
	LWC("udp_recv", udp.recv), LWC("udp_xmit", udp.xmit), LWC("udp_drop", udp.drop),
	LWC("link_recv", link.recv), LWC("link_drop", link.drop), LWC("mem_err", mem.err),
	OWN("pf_pass", ip.c_pf_pass), OWN("pf_block", ip.c_pf_block), OWN("pf_drop", ip.c_pf_drop),
	OWN("pf_resubmit", ip.c_pf_resubmit), OWN("pf_bad_answer", ip.c_pf_bad),
	OWN("pf_fast", ip.c_pf_fast), OWN("pf_synack", ip.c_pf_synack), OWN("pf_flow_tables", ip.c_pf_tables), OWN("pf_noted", ip.c_pf_noted),
	OWN("udp_rx", ip.t[0].c_rx), OWN("udp_tx", ip.t[0].c_tx), OWN("udp_tx_bad", ip.t[0].c_tx_bad),
	OWN("udp_tx_noroute", ip.t[0].c_tx_noroute), OWN("udp_unreach", ip.t[0].c_unreach),
	OWN("udp_rx_full", ip.t[0].c_rx_full), OWN("udp_bad_msg", ip.t[0].c_bad_msg), OWN("udp_stale_msg", ip.t[0].c_stale_msg),
	OWN("udp_rx_csum_hw", ip.t[0].c_rx_csum_hw),
	OWN("tcp_rx", ip.t[1].c_rx), OWN("tcp_tx", ip.t[1].c_tx), OWN("tcp_tx_bad", ip.t[1].c_tx_bad),
	OWN("tcp_rx_full", ip.t[1].c_rx_full), OWN("tcp_bad_msg", ip.t[1].c_bad_msg), OWN("tcp_stale_msg", ip.t[1].c_stale_msg),
	OWN("tcp_rx_csum_hw", ip.t[1].c_rx_csum_hw),
	OWN("tcp_tx_csum_hw", ip.t[1].c_tx_csum_hw),
	OWN("udp_out_queued", ip.t[0].out_queued), OWN("tcp_out_queued", ip.t[1].out_queued),
};
#define NCOUNTERS (sizeof(counters) / sizeof(counters[0]))

static bool line_counter(int n, char *b)
{
	if (n < (int)NCOUNTERS) {
		const struct counter *c = &counters[n];
		uint64_t v = 0;
		if (c->ifsum >= 0)
			for (int i = 0; i < ip.nifs; i++)
				v += *(const uint64_t *)(const void *)((const char *)&ip.ifs[i].c + c->ifsum);
		else if (c->kind == 1)
			v = *(const STAT_COUNTER *)c->p;
		else
			v = *(const uint64_t *)c->p;
		ksnprintf(b, NETQ_TEXT, "%s %llu", c->name, (unsigned long long)v);
		return true;
	}
	n -= (int)NCOUNTERS;
	if (n < IP4_NVERDICT - 1) { /* malformed headers dropped, by reason */
		uint64_t v = 0;
		for (int i = 0; i < ip.nifs; i++)
			v += ip.ifs[i].c.rx_bad_hdr[n + 1];
		ksnprintf(b, NETQ_TEXT, "rx_bad_%s %llu", iph_verdict_name[n + 1], (unsigned long long)v);
		return true;
	}
	return false;
}

void ip_netq(struct kmsg *m)
{
	char text[NETQ_TEXT + 1];
	int64_t r = 0;
	memset(text, 0, sizeof(text));
	switch (m->type) {
	case NETQ_SHOW: {
		int n = (int)m->w[1];
		bool have;
		if (m->w[1] > 100000) {
			have = false;
		} else {
			switch (m->w[0]) {
			case NQ_IFACES: have = line_iface(n, text); break;
			case NQ_ROUTES: have = line_route(n, text); break;
			case NQ_ARP: have = line_arp(n, text); break;
			case NQ_COUNTERS:
				if (n == 0)
					ip_ipx_gauges();
				have = line_counter(n, text);
				break;
			default: r = -LX_ENOENT; have = false; break;
			}
		}
		memset(m->w, 0, sizeof(m->w));
		if (r < 0) {
			m->type = (uint32_t)r;
		} else if (have) {
			m->type = NETQ_LINE;
			memcpy(m->w, text, NETQ_TEXT);
		} else {
			m->type = NETQ_END;
		}
		break;
	}
	case NETQ_PING:
		r = ping_start(m);
		memset(m->w, 0, sizeof(m->w));
		m->type = r < 0 ? (uint32_t)r : NETQ_OK;
		m->w[0] = (uint64_t)r;
		break;
	case NETQ_PING_STATUS: {
		struct ping *s = session(m->w[0]);
		uint64_t seq = m->w[1] - 1; /* asked from 1; 0 wraps and waits forever */
		memset(m->w, 0, sizeof(m->w));
		if (!s) {
			m->type = (uint32_t)-LX_ENOENT;
			m->w[0] = (uint64_t)-LX_ENOENT;
			break;
		}
		m->type = NETQ_OK;
		if (seq < s->sent) {
			m->w[0] = s->state[seq], m->w[1] = s->rtt_us[seq], m->w[2] = s->bytes[seq], m->w[3] = s->ttl[seq];
		} else {
			m->w[0] = NQP_WAIT;
		}
		m->w[4] = s->sent;
		break;
	}
	default:
		memset(m->w, 0, sizeof(m->w));
		m->type = (uint32_t)-LX_ENOENT;
		break;
	}
	ax_reply(m->source, m);
}
