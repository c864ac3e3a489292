/* What the socket engines (udp, tcp) do alike with syscall's requests and the console's
 * questions, beside their own sockets (xport.h): the request channel drained while
 * syscall/T.ev has room for the answers, SK_OPEN's checks, lwIP's errors as Linux errnos, our own addresses,
 * and NETQ_SHOW answered from the engine's counters and socket lines. */
#include "xport.h"
#include "lx_abi.h"
#include "netq_proto.h"
#include "lwip/err.h"
#include "lwip/ip4.h"
#include "lwip/netif.h"

#define REQUESTS_PER_TURN 64

void xport_requests(void (*request)(const struct sk_msg *q), uint32_t room, bool *work)
{
	if (!xp.sys_ok)
		return;
	for (int i = 0; i < REQUESTS_PER_TURN; i++) {
		if (xport_ev_space() < room) {
			xp.retry = true;
			return;
		}
		union { struct sk_msg m; uint8_t raw[SK_SLOT]; } u;
		uint64_t at = xp.req.mine;
		int e = spsc_pop(&xp.req, &u);
		if (e == CHAN_EAGAIN)
			return;
		if (e < 0) {
			ax_printf("%s: syscall/%s.req is corrupt (%d): detached, importing again\n", xp.ops->name,
				  xp.ops->name, e);
			xp.sys_ok = false;
			return;
		}
		*work = true;
		if (!xport_req_replayed(at, &u.m))
			request(&u.m);
	}
	xp.retry = true; /* more than one turn's worth: come back */
}

int64_t xport_errno(int e)
{
	switch (e) {
	case ERR_OK: return 0;
	case ERR_USE: return -LX_EADDRINUSE;
	case ERR_MEM: case ERR_BUF: return -LX_ENOMEM;
	case ERR_RTE: return -LX_ENETUNREACH;
	case ERR_ISCONN: return -LX_EISCONN;
	case ERR_ALREADY: return -LX_EALREADY;
	default: return -LX_EINVAL;
	}
}

int64_t xport_open_check(const struct sk_msg *q, uint32_t type, bool known)
{
	uint32_t other = type == SKF_STREAM ? SKF_DGRAM : SKF_STREAM;
	if (!(q->flags & type) || (q->flags & other))
		return -LX_EPROTONOSUPPORT;
	if (q->flags & SKF_INET6)
		return -LX_EAFNOSUPPORT;
	if (!q->sock || q->arg2 == 0 || q->arg2 > XP_SOCKBUF_MAX)
		return -LX_EINVAL;
	if (known && !(q->flags & SKF_REATTACH))
		return -LX_EEXIST;
	return 0;
}

bool xport_local_addr(uint32_t a)
{
	if (a == 0 || (a & 0xff) == 127) /* any, or loopback */
		return true;
	struct netif *n;
	NETIF_FOREACH(n)
		if (ip4_addr_get_u32(netif_ip4_addr(n)) == a)
			return true;
	return false;
}

/* NETQ_SHOW: topic NQ_COUNTERS or NQ_SOCKETS, one line a call (lib/net/netq_proto.h). */
void xport_netq(struct kmsg *m)
{
	const struct xport_ops *o = xp.ops;
	uint64_t topic = m->w[0], line = m->w[1];
	char buf[NETQ_TEXT + 8];
	memset(buf, 0, sizeof(buf));
	bool have;
	if (topic == NQ_COUNTERS) {
		uint64_t n = 0;
		while (o->counters[n].name)
			n++;
		have = line < n;
		if (have) {
			const struct xport_counter *c = &o->counters[line];
			ksnprintf(buf, NETQ_TEXT, "%s %llu", c->name, (unsigned long long)(c->v ? *c->v : c->f()));
		}
	} else if (topic == NQ_SOCKETS) {
		have = o->sock_line(line, buf);
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
