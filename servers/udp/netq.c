/* NETQ_SHOW (lib/net/netq_proto.h): the socket table and the counters, one line a call. */
#include "udp.h"
#include "netq_proto.h"
#include "lwip/udp.h"

const struct xport_counter us_counters[] = {
#define C(f) { #f, &us.c.f, NULL }
#define X(f) { #f, &xp.c.f, NULL }
	C(rx_dgrams), C(rx_bytes), C(tx_dgrams), C(tx_bytes), C(no_port), C(csum_err), C(malformed),
	C(not_ours), C(rx_full), C(rx_unattached), X(bad_ptr), C(bad_desc), C(tx_err), C(tx_nomem),
	C(icmp_err), C(corrupt_bufs), C(bad_msgs), X(bad_ipx), X(stale_tx_done), X(bad_act), X(lib_rings),
	{ NULL, NULL, NULL },
#undef C
#undef X
};

bool us_sock_line(uint64_t line, char *buf)
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
