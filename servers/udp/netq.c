/* NETQ_SHOW (lib/net/netq_proto.h): the socket table and the counters, one line a call. */
#include "udp.h"
#include "netq_proto.h"
#include "lwip/udp.h"

static const struct { const char *name; const uint64_t *v; } counters[] = {
#define C(f) { #f, &us.c.f }
#define X(f) { #f, &xp.c.f }
	C(rx_dgrams), C(rx_bytes), C(tx_dgrams), C(tx_bytes), C(no_port), C(csum_err), C(malformed),
	C(not_ours), C(rx_full), C(rx_unattached), X(bad_ptr), C(bad_desc), C(tx_err), C(tx_nomem),
	C(icmp_err), C(corrupt_bufs), C(bad_msgs), X(bad_ipx), X(stale_tx_done), X(bad_act), X(lib_rings),
#undef C
#undef X
};

static bool sock_line(uint64_t line, char *buf)
{
	if (line == 0) {
		ksnprintf(buf, NETQ_TEXT, "slot sock local remote state");
		return true;
	}
	uint64_t k = 1;
	for (int i = 0; i < US_MAX_SOCKS; i++) {
		const struct us_sock *s = &us.s[i];
		if (!s->sock || !s->pcb || k++ != line)
			continue;
		struct us_sockview v = { .slot = (uint32_t)i, .sock = s->sock,
			.laddr = ip4_addr_get_u32(ip_2_ip4(&s->pcb->local_ip)), .lport = lwip_htons(s->pcb->local_port),
			.attached = s->attached, .corrupt = s->corrupt, .broadcast = (s->opts & SKR_BROADCAST) != 0 };
		if (s->pcb->flags & UDP_FLAGS_CONNECTED) {
			v.raddr = ip4_addr_get_u32(ip_2_ip4(&s->pcb->remote_ip));
			v.rport = lwip_htons(s->pcb->remote_port);
		}
		us_fmt_sock(buf, NETQ_TEXT, &v);
		return true;
	}
	return false;
}

void us_netq(struct kmsg *m)
{
	uint64_t topic = m->w[0], line = m->w[1];
	char buf[NETQ_TEXT + 8];
	memset(buf, 0, sizeof(buf));
	bool have;
	if (topic == NQ_COUNTERS) {
		have = line < sizeof(counters) / sizeof(counters[0]);
		if (have)
			ksnprintf(buf, NETQ_TEXT, "%s %llu", counters[line].name,
				  (unsigned long long)*counters[line].v);
	} else if (topic == NQ_SOCKETS) {
		have = sock_line(line, buf);
	} else {
		memset(m->w, 0, sizeof(m->w));
		m->type = (uint32_t)-2; /* -ENOENT */
		ax_reply(m->source, m);
		return;
	}
	memset(m->w, 0, sizeof(m->w));
	m->type = have ? NETQ_LINE : NETQ_END;
	if (have)
		memcpy(m->w, buf, NETQ_TEXT);
	ax_reply(m->source, m);
}
