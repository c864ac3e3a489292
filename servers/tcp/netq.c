/* NETQ_SHOW (lib/net/netq_proto.h): tcp's sockets and connections, and its counters, one line
 * a call. */
#include "tcp.h"
#include "netq_proto.h"
#include "lwip/stats.h"
#include "lwip/tcp.h"
#include "lwip/priv/tcp_priv.h"

static uint64_t pcbs_in_use(void)
{
	uint64_t n = 0;
	for (struct tcp_pcb *p = tcp_active_pcbs; p; p = p->next)
		n++;
	for (struct tcp_pcb *p = tcp_tw_pcbs; p; p = p->next)
		n++;
	for (struct tcp_pcb_listen *p = tcp_listen_pcbs.listen_pcbs; p; p = p->next)
		n++;
	return n;
}

#define C(f) { #f, &ts.c.f, NULL }
#define X(f) { #f, &xp.c.f, NULL }
#define L(name, expr) { name, NULL, expr }
static uint64_t seg_in(void) { return lwip_stats.tcp.recv; }
static uint64_t seg_out(void) { return lwip_stats.tcp.xmit; }
static uint64_t retransmits(void) { return lwip_stats.mib2.tcpretranssegs; }
static uint64_t resets_out(void) { return lwip_stats.mib2.tcpoutrsts; }
static uint64_t drops(void) { return lwip_stats.tcp.drop; }
static uint64_t heap_used(void) { return lwip_stats.mem.used; }
static uint64_t heap_max(void) { return lwip_stats.mem.max; }
static uint64_t heap_err(void) { return lwip_stats.mem.err; }
static uint64_t seg_mem_err(void) { return lwip_stats.tcp.memerr; }
const struct xport_counter ts_counters[] = {
	L("seg_in", seg_in), L("seg_out", seg_out), L("retransmits", retransmits), L("drops", drops),
	C(resets_in), L("resets_out", resets_out), C(aborts), C(timeouts), L("pcbs", pcbs_in_use), L("heap_used", heap_used),
	L("heap_max", heap_max), L("heap_err", heap_err), L("tcp_memerr", seg_mem_err), C(rx_bytes), C(tx_bytes),
	C(accepts), C(connects), C(connect_fail), C(malformed), C(not_ours), C(csum_err), C(rx_nomem),
	C(rx_detached), C(tx_nomem), C(bad_desc), C(corrupt_bufs), C(bad_msgs), C(icmp_err), C(accept_drops), C(tw_reused), C(oow_acks),
	C(rx_merges), C(rx_merged),
	X(bad_ptr), X(bad_ipx), X(stale_tx_done), X(bad_act), X(lib_rings),
	{ NULL, NULL, NULL },
};

static void view_pcb(struct ts_connview *v, const struct tcp_pcb *p)
{
	v->laddr = ip4_addr_get_u32(ip_2_ip4(&p->local_ip));
	v->lport = p->local_port;
	v->state = ts_state_name(p->state);
	if (p->state != LISTEN) {
		v->raddr = ip4_addr_get_u32(ip_2_ip4(&p->remote_ip));
		v->rport = p->remote_port;
		v->txq = TCP_SND_BUF - p->snd_buf;
	}
}

/* Line 0 is the title; then the table (sockets, pending connections), then connections no
 * socket has any more (closing, TIME_WAIT). */
bool ts_sock_line(uint64_t line, char *buf)
{
	if (line == 0) {
		ksnprintf(buf, NETQ_TEXT, "slot sock state local remote rxq txq");
		return true;
	}
	uint64_t k = 1;
	for (int i = 0; i < ts.top; i++) {
		const struct ts_sock *s = &ts.s[i];
		if (s->kind == TK_FREE || k++ != line)
			continue;
		struct ts_connview v = { .slot = i, .sock = s->sock, .state = s->hup ? "gone" : "new" };
		if (s->pcb)
			view_pcb(&v, s->pcb);
		if (s->kind == TK_PENDING)
			v.state = "pending";
		else if (s->closing)
			v.state = "closing";
		else if (s->restored_at)
			v.state = "wait";
		else if (s->corrupt)
			v.state = "bad";
		v.rxq = s->pend_len + (s->attached ? (uint32_t)(s->sb.rx.produced - s->rx_released) : 0);
		ts_fmt_conn(buf, NETQ_TEXT, &v);
		return true;
	}
	struct tcp_pcb *lists[2] = { tcp_active_pcbs, tcp_tw_pcbs };
	for (int j = 0; j < 2; j++)
		for (struct tcp_pcb *p = lists[j]; p; p = p->next) {
			if (p->callback_arg || k++ != line)
				continue;
			struct ts_connview v = { .slot = -1 };
			view_pcb(&v, p);
			ts_fmt_conn(buf, NETQ_TEXT, &v);
			return true;
		}
	return false;
}
