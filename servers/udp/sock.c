/* udp's socket table (README.md): requests from syscall, each socket's lwIP pcb, its buffer
 * object (we are the ENGINE: we consume TX descriptors and produce RX ones), its record in
 * ds, and the events syscall hears of. */
#include "udp.h"
#include "lx_abi.h"
#include "ds_client.h"
#include "lwip/ip4.h"
#include "lwip/pbuf.h"
#include "lwip/udp.h"

void us_sock_pcb_setup(struct us_sock *s);

static uint32_t pcb_laddr(const struct udp_pcb *p) { return ip4_addr_get_u32(ip_2_ip4(&p->local_ip)); }
static uint32_t pcb_raddr(const struct udp_pcb *p) { return ip4_addr_get_u32(ip_2_ip4(&p->remote_ip)); }
static bool pcb_connected(const struct udp_pcb *p) { return (p->flags & UDP_FLAGS_CONNECTED) != 0; }

struct us_sock *us_sock_of_pcb(struct udp_pcb *pcb)
{
	for (int i = 0; i < US_MAX_SOCKS; i++)
		if (us.s[i].sock && us.s[i].pcb == pcb)
			return &us.s[i];
	return NULL;
}

static struct us_sock *find(uint32_t sock)
{
	for (int i = 0; i < US_MAX_SOCKS; i++)
		if (sock && us.s[i].sock == sock)
			return &us.s[i];
	return NULL;
}

/* The slot's record in ds ("s.N"), written when it changed; "nslots" when the table grew. */
static void save(struct us_sock *s)
{
	uint32_t slot = (uint32_t)(s - us.s);
	struct sk_dsrec r = { .sock = s->sock };
	if (s->sock && s->pcb) {
		r.laddr = pcb_laddr(s->pcb);
		r.lport = lwip_htons(s->pcb->local_port);
		if (pcb_connected(s->pcb)) {
			r.raddr = pcb_raddr(s->pcb);
			r.rport = lwip_htons(s->pcb->remote_port);
		}
		r.flags = s->flags;
		r.opts = s->opts;
	}
	xport_table_put(slot, &r, &s->saved);
}

static void unmap(struct us_sock *s)
{
	xport_sockbuf_unmap(s->va, s->handle);
	s->va = NULL, s->handle = 0, s->attached = false, s->corrupt = false;
}

static void sock_free(struct us_sock *s)
{
	unmap(s);
	if (s->pcb)
		udp_remove(s->pcb);
	struct sk_dsrec saved = s->saved;
	memset(s, 0, sizeof(*s));
	s->saved = saved;
	save(s);
}

static struct us_sock *sock_new(uint32_t sock, uint32_t flags)
{
	for (int i = 0; i < US_MAX_SOCKS; i++) {
		struct us_sock *s = &us.s[i];
		if (s->sock)
			continue;
		struct udp_pcb *pcb = udp_new_ip_type(IPADDR_TYPE_V4);
		if (!pcb)
			return NULL;
		struct sk_dsrec saved = s->saved;
		memset(s, 0, sizeof(*s));
		s->saved = saved;
		s->sock = sock, s->flags = flags & (SKF_DGRAM | SKF_INET6), s->pcb = pcb;
		us_sock_pcb_setup(s);
		return s;
	}
	return NULL;
}

static void apply_opts(struct us_sock *s)
{
	if (s->opts & SKR_BROADCAST)
		ip_set_option(s->pcb, SOF_BROADCAST);
	else
		ip_reset_option(s->pcb, SOF_BROADCAST);
}

/* After a restart: every socket of the previous incarnation back from ds, bound and
 * connected as it was, waiting for syscall's SK_OPEN|SKF_REATTACH with a fresh grant. */
void us_sock_restore(void)
{
	uint32_t slots = xport_table_slots(), restored = 0;
	for (uint32_t i = 0; i < slots && i < US_MAX_SOCKS; i++) {
		struct sk_dsrec r;
		if (!xport_table_get(i, &r))
			continue;
		struct us_sock *s = &us.s[i];
		s->saved = r;
		if (!r.sock || find(r.sock))
			continue;
		struct udp_pcb *pcb = udp_new_ip_type(IPADDR_TYPE_V4);
		if (!pcb)
			break;
		s->sock = r.sock, s->flags = r.flags & (SKF_DGRAM | SKF_INET6), s->opts = r.opts, s->pcb = pcb;
		us_sock_pcb_setup(s);
		apply_opts(s);
		ip_addr_t a;
		if (r.lport) {
			ip_addr_set_ip4_u32(&a, r.laddr);
			if (udp_bind(pcb, &a, lwip_ntohs(r.lport)) != ERR_OK)
				ax_printf("udp: socket %u: cannot bind its port %u again\n", r.sock, lwip_ntohs(r.lport));
		}
		if (r.rport) {
			ip_addr_set_ip4_u32(&a, r.raddr);
			udp_connect(pcb, &a, lwip_ntohs(r.rport));
		}
		s->restored_at = ax_time_ns() | 1;
		restored++;
	}
	xp.awaiting_reattach = restored > 0;
	ax_printf("udp: restored %u sockets from ds (%u slots)\n", restored, slots);
}

/* Restored sockets syscall never claimed are closed after a while. */
void us_sock_gc(uint64_t now)
{
	if (!xp.hello_at || (int64_t)(now - xp.hello_at) < (int64_t)US_REATTACH_NS)
		return;
	for (int i = 0; i < US_MAX_SOCKS; i++) {
		struct us_sock *s = &us.s[i];
		if (s->sock && !s->attached && s->restored_at) {
			ax_printf("udp: socket %u was not reattached: closed\n", s->sock);
			sock_free(s);
		}
	}
}

static void push_ev(const struct sk_msg *m) { xport_push_ev(m); }

static void answer(const struct sk_msg *q, int64_t result, const struct us_sock *s)
{
	struct sk_msg a = { .type = SK_ANSWER, .sock = q->sock, .req = q->req, .result = result };
	if (s && s->pcb && result == 0) {
		uint32_t la = pcb_laddr(s->pcb);
		if (!la && pcb_connected(s->pcb)) { /* the address a route to the peer leaves by */
			struct netif *n = ip4_route(ip_2_ip4(&s->pcb->remote_ip));
			la = n ? ip4_addr_get_u32(netif_ip4_addr(n)) : 0;
		}
		a.family = US_AF_INET;
		a.port = lwip_htons(s->pcb->local_port);
		memcpy(a.addr, &la, 4);
	}
	push_ev(&a);
}

/* 127.0.0.0/8 or one of our addresses: lwIP's loopback delivers it, ip is not involved. */
static bool is_local(uint32_t a)
{
	return (a & 0xff) == 127 || (a && xport_local_addr(a));
}

static int64_t do_open(const struct sk_msg *q, struct us_sock **out)
{
	int64_t handle = (int64_t)q->arg;
	uint64_t bytes = q->arg2;
	struct us_sock *s = find(q->sock);
	int64_t r = xport_open_check(q, SKF_DGRAM, s != NULL);
	if (!r && !s && !(s = sock_new(q->sock, q->flags)))
		r = -LX_EMFILE;
	if (r < 0) {
		if (handle > 0)
			ax_mo_destroy(handle); /* not ours to keep */
		return r;
	}
	unmap(s); /* a second reattach replaces the first grant */
	void *va;
	int64_t e = xport_sockbuf_map(handle, bytes, &s->sb, &va);
	if (e) {
		if (!s->restored_at)
			sock_free(s);
		return e;
	}
	s->handle = handle, s->va = va, s->bytes = bytes, s->attached = true;
	s->restored_at = 0;
	s->tx_pending = true; /* whatever the application queued meanwhile */
	xp.awaiting_reattach = false;
	for (int i = 0; i < US_MAX_SOCKS; i++)
		if (us.s[i].sock && us.s[i].restored_at && !us.s[i].attached)
			xp.awaiting_reattach = true;
	save(s);
	*out = s;
	return 0;
}

static int64_t do_bind(const struct sk_msg *q, struct us_sock *s)
{
	if (q->family != US_AF_INET)
		return -LX_EAFNOSUPPORT;
	uint32_t a;
	memcpy(&a, q->addr, 4);
	uint16_t port = lwip_ntohs(q->port);
	if (s->pcb->local_port) /* bound already: the same again is the idempotent resend */
		return (s->pcb->local_port == port || !port) && pcb_laddr(s->pcb) == a ? 0 : -LX_EINVAL;
	if (!xport_local_addr(a))
		return -LX_EADDRNOTAVAIL;
	ip_addr_t ia;
	ip_addr_set_ip4_u32(&ia, a);
	return xport_errno(udp_bind(s->pcb, &ia, port));
}

static int64_t do_connect(const struct sk_msg *q, struct us_sock *s)
{
	if (q->family == 0) {
		udp_disconnect(s->pcb);
		return 0;
	}
	if (q->family != US_AF_INET)
		return -LX_EAFNOSUPPORT;
	uint32_t a;
	memcpy(&a, q->addr, 4);
	if (!q->port)
		return -LX_EINVAL;
	ip_addr_t ia;
	ip_addr_set_ip4_u32(&ia, a);
	struct netif *n = ip4_route(ip_2_ip4(&ia));
	if (!(s->opts & SKR_BROADCAST) && (a == 0xffffffffu || (n && ip4_addr_isbroadcast(ip_2_ip4(&ia), n))))
		return -LX_EACCES;
	return xport_errno(udp_connect(s->pcb, &ia, lwip_ntohs(q->port)));
}

static int64_t do_setopt(const struct sk_msg *q, struct us_sock *s)
{
	switch (q->arg) {
	case SKO_BROADCAST:
		s->opts = q->arg2 ? s->opts | SKR_BROADCAST : s->opts & ~(uint32_t)SKR_BROADCAST;
		apply_opts(s);
		return 0;
	case SKO_REUSEADDR:
		if (q->arg2)
			ip_set_option(s->pcb, SOF_REUSEADDR);
		else
			ip_reset_option(s->pcb, SOF_REUSEADDR);
		return 0;
	case SKO_RCVBUF:
	case SKO_SNDBUF:
		return 0; /* the buffer's geometry is syscall's */
	default:
		return -LX_ENOPROTOOPT;
	}
}

static void request(const struct sk_msg *q)
{
	struct us_sock *s = find(q->sock);
	int64_t r;
	switch (q->type) {
	case SK_OPEN:
		s = NULL;
		r = do_open(q, &s);
		answer(q, r, s);
		return;
	case SK_TX:
		if (s)
			s->tx_pending = true;
		return;
	case SK_RXDONE:
		return; /* datagrams that found no room were dropped; nothing waits */
	default:
		break;
	}
	if (xport_lib_request(q, s ? (int32_t)(s - us.s) : -1))
		return;
	if (!s) {
		if (q->type == SK_BIND || q->type == SK_CONNECT || q->type == SK_SETOPT ||
		    q->type == SK_CLOSE || q->type == SK_SHUTDOWN)
			answer(q, q->type == SK_CLOSE ? 0 : -LX_EBADF, NULL);
		else
			us.c.bad_msgs++;
		return;
	}
	switch (q->type) {
	case SK_BIND:
		r = do_bind(q, s);
		break;
	case SK_CONNECT:
		r = do_connect(q, s);
		break;
	case SK_SETOPT:
		r = do_setopt(q, s);
		break;
	case SK_SHUTDOWN:
		if (q->arg > 2) {
			r = -LX_EINVAL;
			break;
		}
		s->shut_rd |= q->arg != 1; /* SHUT_RD 0, SHUT_WR 1, SHUT_RDWR 2 */
		s->shut_wr |= q->arg != 0;
		r = 0;
		break;
	case SK_CLOSE:
		sock_free(s);
		answer(q, 0, NULL);
		return;
	default:
		us.c.bad_msgs++;
		return;
	}
	save(s);
	answer(q, r, s);
}

/* The library moved the data of socket `sock` (our slot `cookie`, lib/lwip/xact.c). */
void us_lib_work(int32_t cookie, uint32_t sock)
{
	if (cookie < 0 || cookie >= US_MAX_SOCKS)
		return;
	struct us_sock *s = &us.s[cookie];
	if (s->sock != sock || !s->attached)
		return;
	s->tx_pending = true;
	s->ev |= EV_LIB;
}

/* Requests from syscall, while there is room for their answers. */
void us_sys_poll(bool *work)
{
	xport_requests(request, 2, work);
}

/* One socket's TX queue: each descriptor copied once into lwIP's heap (our send pool) and
 * sent with udp_sendto. A descriptor stays queued while there is no pool memory or no room
 * in the channel to ip. */
static void tx_sock(struct us_sock *s, bool *work)
{
	for (int n = 0; n < 32; n++) {
		struct sockbuf_desc d;
		int err = 0;
		const void *data = sockbuf_peek(&s->sb.tx, &d, &err);
		if (!data) {
			if (err == SOCKBUF_ECORRUPT) {
				s->corrupt = true, s->ev |= EV_ERR, s->err = -LX_EINVAL;
				us.c.corrupt_bufs++;
			}
			s->tx_pending = false;
			return;
		}
		uint32_t da = 0;
		uint16_t dp = 0;
		bool conn = pcb_connected(s->pcb);
		int c = us_txd_check(d.family, d.addr, d.port, d.len, conn, conn ? pcb_raddr(s->pcb) : 0,
				     lwip_htons(s->pcb->remote_port), &da, &dp);
		/* Datagrams that leave need ip and room in its channel; those to ourselves do not. */
		if (c == US_TXD_OK && !is_local(da) && (!xp.ip_ok || xport_out_space() < 2)) {
			xp.retry = true;
			return;
		}
		*work = true;
		int64_t r = 0;
		if (c != US_TXD_OK) {
			us.c.bad_desc++;
			r = -us_txd_errno(c);
		} else if (s->shut_wr) {
			r = -LX_EPIPE;
		} else {
			struct pbuf *p = pbuf_alloc(PBUF_TRANSPORT, (u16_t)d.len, PBUF_RAM);
			if (!p) {
				us.c.tx_nomem++;
				xp.retry = true; /* memory comes back with IPX_TX_DONE */
				return;
			}
			pbuf_take(p, data, (u16_t)d.len); /* the one copy: the application cannot change it now */
			ip_addr_t ia;
			ip_addr_set_ip4_u32(&ia, da);
			uint16_t before = s->pcb->local_port;
			err_t e = udp_sendto(s->pcb, p, &ia, lwip_ntohs(dp));
			r = e == ERR_VAL ? -LX_EACCES : xport_errno(e); /* broadcast without SO_BROADCAST */
			pbuf_free(p);
			if (r == 0)
				us.c.tx_dgrams++, us.c.tx_bytes += d.len;
			else
				us.c.tx_err++;
			if (before != s->pcb->local_port) /* sending bound it to an ephemeral port */
				save(s);
		}
		if (r < 0)
			s->ev |= EV_ERR, s->err = (int32_t)r;
		sockbuf_consume(&s->sb.tx, &d);
		s->ev |= EV_TXSPACE;
	}
	xp.retry = true; /* more than one turn's worth: come back */
}

void us_tx_poll(bool *work)
{
	for (int i = 0; i < US_MAX_SOCKS; i++) {
		struct us_sock *s = &us.s[i];
		if (s->sock && s->tx_pending && s->attached && !s->corrupt)
			tx_sock(s, work);
	}
}

/* Pending SK_EVs, one per socket, while there is room. */
void us_flush_events(void)
{
	if (!xp.sys_ok)
		return;
	for (int i = 0; i < US_MAX_SOCKS; i++) {
		struct us_sock *s = &us.s[i];
		if (!s->sock || !s->ev)
			continue;
		long queued = spsc_count(&xp.evq);
		if (queued < 0 || xp.evq.nslots - (uint32_t)queued < 1) {
			xp.retry = true;
			return;
		}
		struct sk_msg m = { .type = SK_EV, .sock = s->sock, .arg = s->ev,
				    .result = (s->ev & EV_ERR) ? s->err : 0 };
		push_ev(&m);
		s->ev = 0, s->err = 0;
	}
}

/* An ICMP error about a datagram a connected socket sent: EV_ERR on that socket (Linux
 * reports them only to connected sockets). */
void us_sock_icmp_err(const struct us_icmperr *e)
{
	for (int i = 0; i < US_MAX_SOCKS; i++) {
		struct us_sock *s = &us.s[i];
		if (!s->sock || !s->pcb || !pcb_connected(s->pcb))
			continue;
		if (lwip_htons(s->pcb->local_port) == e->lport && pcb_raddr(s->pcb) == e->rdst &&
		    lwip_htons(s->pcb->remote_port) == e->rport) {
			s->ev |= EV_ERR, s->err = -e->err;
			return;
		}
	}
}
