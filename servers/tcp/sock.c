/* tcp's socket table (README.md): requests from syscall (sock_proto.h), each socket's pcb and
 * buffer object (we are the ENGINE: we consume TX, produce RX), closing, listeners in ds and
 * their restore, and the events syscall hears of. */
#include "tcp.h"
#include "lx_abi.h"
#include "ds_client.h"
#include "lwip/ip4.h"
#include "lwip/netif.h"
#include "lwip/tcp.h"
#include "lwip/priv/tcp_priv.h"

int ts_connect_start(struct ts_sock *s, const ip_addr_t *a, uint16_t port);

/* A slot leaves TK_FREE: the scans (several per loop turn, and one per request) look at the
 * slots below ts.top only, a few with a few sockets instead of all TS_SLOTS. ts.top comes
 * down again in ts_sys_poll. */
void ts_slot_used(const struct ts_sock *s)
{
	int i = (int)(s - ts.s) + 1;
	if (i > ts.top)
		ts.top = i;
}

static struct ts_sock *find(uint32_t sock)
{
	for (int i = 0; sock && i < ts.top; i++)
		if (ts.s[i].kind == TK_SOCK && ts.s[i].sock == sock)
			return &ts.s[i];
	return NULL;
}

static int attached_count(void)
{
	int n = 0;
	for (int i = 0; i < ts.top; i++)
		n += ts.s[i].kind == TK_SOCK && ts.s[i].attached;
	return n;
}

int ts_pending_count(const struct ts_sock *l)
{
	int n = 0, li = (int)(l - ts.s);
	for (int i = 0; i < ts.top; i++)
		n += ts.s[i].kind == TK_PENDING && ts.s[i].lst == li;
	return n;
}

void ts_set_err(struct ts_sock *s, int32_t err, bool hup)
{
	s->ev |= EV_ERR, s->err = err;
	if (hup)
		s->ev |= EV_HUP, s->hup = true;
}

static uint32_t laddr_of(const struct tcp_pcb *p) { return ip4_addr_get_u32(ip_2_ip4(&p->local_ip)); }
static uint32_t raddr_of(const struct tcp_pcb *p) { return ip4_addr_get_u32(ip_2_ip4(&p->remote_ip)); }

/* The slot's record in ds ("s.N"): listeners only (SKF_STREAM|SKR_LISTEN, opts = backlog). */
void ts_save(struct ts_sock *s)
{
	uint32_t slot = (uint32_t)(s - ts.s);
	struct sk_dsrec r = { 0 };
	if (s->kind == TK_SOCK && s->listening && s->pcb) {
		r.sock = s->sock;
		r.laddr = laddr_of(s->pcb);
		r.lport = lwip_htons(s->pcb->local_port);
		r.flags = SKF_STREAM | SKR_LISTEN;
		r.opts = s->backlog;
	}
	xport_table_put(slot, &r, &s->saved);
}

static void unmap(struct ts_sock *s)
{
	xport_sockbuf_unmap(s->va, s->handle);
	s->va = NULL, s->handle = 0, s->attached = false, s->corrupt = false;
}

/* Forgets the socket: its pcb (a listener's pending connections are reset), its buffer. */
void ts_sock_free(struct ts_sock *s)
{
	if (s->listening) {
		int li = (int)(s - ts.s);
		for (int i = 0; i < ts.top; i++) {
			struct ts_sock *e = &ts.s[i];
			if (e->kind == TK_PENDING && e->lst == li) {
				if (e->pcb)
					tcp_backlog_accepted(e->pcb);
				ts_abort(e);
				ts_pend_free(e);
				memset(e, 0, offsetof(struct ts_sock, saved));
			}
		}
	}
	ts_abort(s);
	unmap(s);
	ts_pend_free(s);
	memset(s, 0, offsetof(struct ts_sock, saved));
	ts_save(s);
}

void ts_answer(uint32_t sock, uint64_t req, int64_t result, const struct ts_sock *s)
{
	struct sk_msg a = { .type = SK_ANSWER, .sock = sock, .req = req, .result = result };
	if (s && s->pcb && result == 0) {
		uint32_t la = laddr_of(s->pcb);
		a.family = TS_AF_INET;
		a.port = lwip_htons(s->pcb->local_port);
		memcpy(a.addr, &la, 4);
	}
	xport_push_ev(&a);
}

/* A close's answer: syscall only frees (or parks) the socket's buffer then, and reads it
 * when something else wakes it (xport_push_ev_lazy): a switch fewer per connection. */
static void answer_close(uint32_t sock, uint64_t req)
{
	xport_push_ev_lazy(&(struct sk_msg){ .type = SK_ANSWER, .sock = sock, .req = req });
}

static void apply_opts(struct ts_sock *s)
{
	struct tcp_pcb *p = s->pcb;
	if (!p || s->listening)
		return;
	if (s->opts & TO_REUSEADDR)
		ip_set_option(p, SOF_REUSEADDR);
	else
		ip_reset_option(p, SOF_REUSEADDR);
	if (s->opts & TO_KEEPALIVE)
		ip_set_option(p, SOF_KEEPALIVE);
	else
		ip_reset_option(p, SOF_KEEPALIVE);
	/* TCP_CORK has no lwIP equivalent: it keeps Nagle on (small pieces coalesce) */
	if ((s->opts & TO_NODELAY) && !(s->opts & TO_CORK))
		tcp_nagle_disable(p);
	else
		tcp_nagle_enable(p);
	if (s->keepidle)
		p->keep_idle = s->keepidle * 1000;
	if (s->keepintvl)
		p->keep_intvl = s->keepintvl * 1000;
	if (s->keepcnt)
		p->keep_cnt = s->keepcnt;
	/* TCP_MAXSEG caps the segments we send (lwIP sets the MSS again from the peer's
	 * option when the handshake ends: ts_apply_opts runs again then) */
	if (s->maxseg && (p->state == CLOSED || p->mss > s->maxseg))
		p->mss = (u16_t)s->maxseg;
}

void ts_apply_opts(struct ts_sock *s) { apply_opts(s); }

/* The socket's pcb, made on first need (an accepted socket never needs its own). */
static int64_t need_pcb(struct ts_sock *s)
{
	if (s->pcb)
		return 0;
	if (s->connected || s->hup)
		return -LX_EINVAL;
	if (!(s->pcb = tcp_new_ip_type(IPADDR_TYPE_V4)))
		return -LX_ENOMEM;
	ts_pcb_setup(s);
	apply_opts(s);
	return 0;
}

static int64_t do_open(const struct sk_msg *q, struct ts_sock **out)
{
	int64_t handle = (int64_t)q->arg;
	uint64_t bytes = q->arg2;
	struct ts_sock *s = find(q->sock);
	bool unknown_reattach = false;
	int64_t r = xport_open_check(q, SKF_STREAM, s != NULL);
	if (!r && !(s && s->attached) && attached_count() >= TS_MAX_SOCKS)
		r = -LX_EMFILE;
	else if (!r && !s) {
		for (int i = 0; i < TS_SLOTS && !s; i++)
			if (ts.s[i].kind == TK_FREE)
				s = &ts.s[i];
		if (!s)
			r = -LX_EMFILE;
		else {
			memset(s, 0, offsetof(struct ts_sock, saved));
			s->kind = TK_SOCK, s->sock = q->sock, s->flags = q->flags & (SKF_STREAM | SKF_INET6);
			ts_slot_used(s);
			unknown_reattach = (q->flags & SKF_REATTACH) != 0;
		}
	}
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
			ts_sock_free(s);
		return e;
	}
	s->handle = handle, s->va = va, s->bytes = bytes, s->attached = true;
	/* the ring continues where its published indices stand */
	s->rx_released = atomic_load_explicit(s->sb.rx.released, memory_order_acquire);
	s->ring = (struct ts_ring){ .produced = s->sb.rx.produced, .data = s->sb.rx.produced };
	s->rx_recved = s->ring.data;
	if (s->rx_released > s->sb.rx.produced)
		s->rx_released = s->sb.rx.produced;
	sockbuf_notify_at(&s->sb.rx, 0); /* a mark an earlier tcp left means nothing to us */
	s->tx_pending = true;
	if (s->restored_at && s->listening && ts_pending_count(s))
		s->ev |= EV_ACCEPT; /* connections arrived before syscall came back */
	if (q->flags & SKF_REATTACH && s->attached_before) {
		/* A restarted syscall (the same tcp): events it had not read died with its old
		 * channel, so it hears the socket's state again. */
		s->ev |= EV_RX | EV_TXSPACE | (s->listening ? EV_ACCEPT : 0) | (s->rx_fin_placed ? EV_FIN : 0) |
			 (s->hup ? EV_HUP : 0);
	}
	s->attached_before = true;
	s->restored_at = 0;
	if (unknown_reattach) /* its connection (if it had one) died with the old tcp */
		ts_set_err(s, -LX_ECONNRESET, true);
	*out = s;
	return 0;
}

static int64_t do_bind(const struct sk_msg *q, struct ts_sock *s)
{
	if (q->family != TS_AF_INET)
		return -LX_EAFNOSUPPORT;
	uint32_t a;
	memcpy(&a, q->addr, 4);
	uint16_t port = lwip_ntohs(q->port);
	if (s->pcb && s->pcb->local_port) /* bound already: the same again is the idempotent resend */
		return (s->pcb->local_port == port || !port) && laddr_of(s->pcb) == a ? 0 : -LX_EINVAL;
	if (s->connected || s->connecting)
		return -LX_EINVAL;
	if (!xport_local_addr(a))
		return -LX_EADDRNOTAVAIL;
	/* Linux: LX_SO_REUSEADDR never lets a second socket bind next to a listener */
	for (int i = 0; port && i < ts.top; i++) {
		struct ts_sock *o = &ts.s[i];
		if (o != s && o->kind == TK_SOCK && o->listening && o->pcb && o->pcb->local_port == port &&
		    (!a || !laddr_of(o->pcb) || laddr_of(o->pcb) == a))
			return -LX_EADDRINUSE;
	}
	int64_t r = need_pcb(s);
	if (r < 0)
		return r;
	ip_addr_t ia;
	ip_addr_set_ip4_u32(&ia, a);
	return xport_errno(tcp_bind(s->pcb, &ia, port));
}

static int64_t do_listen(const struct sk_msg *q, struct ts_sock *s)
{
	uint64_t bl = q->arg < 1 ? 1 : q->arg > 255 ? 255 : q->arg;
	if (s->listening) {
		s->backlog = (uint16_t)bl;
		tcp_backlog_set(s->pcb, (u8_t)bl);
		return 0;
	}
	if (s->connected || s->connecting || s->hup)
		return -LX_EINVAL;
	int64_t r = need_pcb(s);
	if (r < 0)
		return r;
	if (!s->pcb->local_port && (r = xport_errno(tcp_bind(s->pcb, IP4_ADDR_ANY, 0))) < 0)
		return r;
	err_t e = ERR_OK;
	ip_set_option(s->pcb, SOF_REUSEADDR); /* a listener restored after a restart binds again */
	struct tcp_pcb *l = tcp_listen_with_backlog_and_err(s->pcb, (u8_t)bl, &e);
	if (!l)
		return xport_errno(e);
	s->pcb = l, s->listening = true, s->backlog = (uint16_t)bl;
	ts_listen_setup(s);
	return 0;
}

int64_t ts_connect(struct ts_sock *s, uint16_t family, uint16_t port, const uint8_t *addr)
{
	if (family != TS_AF_INET)
		return family == 0 ? -LX_EINVAL : -LX_EAFNOSUPPORT;
	if (s->listening || s->connected)
		return -LX_EISCONN;
	if (s->connecting)
		return -LX_EALREADY;
	uint32_t a;
	memcpy(&a, addr, 4);
	if (!port)
		return -LX_ECONNREFUSED;
	if (!a)
		a = lwip_htonl(0x7f000001); /* Linux: 0.0.0.0 is this host */
	ip_addr_t ia;
	ip_addr_set_ip4_u32(&ia, a);
	if (!ip4_route(ip_2_ip4(&ia)))
		return -LX_ENETUNREACH;
	s->hup = false;
	int64_t r = need_pcb(s);
	if (r < 0)
		return r;
	apply_opts(s);
	r = xport_errno(ts_connect_start(s, &ia, lwip_ntohs(port)));
	if (r == 0)
		s->connecting = true;
	return r;
}

static int64_t do_connect(const struct sk_msg *q, struct ts_sock *s, bool *later)
{
	/* A connect our predecessor took and syscall asks again after a live update (it had no
	 * answer): the same connect, answered when it ends, or now if it has. */
	if (s->kept && !s->listening && (s->connecting || s->connected)) {
		s->kept = false;
		if (s->connecting) {
			s->connect_req = q->req, s->connect_desc = false;
			*later = true;
			return 0;
		}
		return s->pcb ? 0 : -LX_ECONNRESET;
	}
	s->kept = false;
	int64_t r = ts_connect(s, q->family, q->port, q->addr);
	if (r == 0) {
		s->connect_req = q->req, s->connect_desc = false;
		*later = true;
	}
	return r;
}

/* SK_ACCEPT's answer: the peer, and our address and port. */
static void accepted(const struct ts_sock *s, struct sk_msg *a)
{
	uint32_t la = laddr_of(s->pcb), ra = raddr_of(s->pcb);
	a->family = TS_AF_INET, a->port = lwip_htons(s->pcb->remote_port);
	memcpy(a->addr, &ra, 4);
	a->arg = la, a->arg2 = lwip_htons(s->pcb->local_port);
}

static int64_t do_accept(const struct sk_msg *q, struct ts_sock *s, struct sk_msg *a)
{
	struct ts_sock *l = find((uint32_t)q->arg);
	if (!l || !l->listening)
		return -LX_EINVAL;
	if (s->kept && s->connected && s->pcb) { /* our predecessor's accept, asked again */
		s->kept = false;
		accepted(s, a);
		return 0;
	}
	if (s == l || s->listening || s->connected || s->connecting || !s->attached)
		return -LX_EINVAL;
	struct ts_sock *e = NULL;
	int li = (int)(l - ts.s);
	for (int i = 0; i < ts.top; i++)
		if (ts.s[i].kind == TK_PENDING && ts.s[i].lst == li && (!e || ts.s[i].seq < e->seq))
			e = &ts.s[i];
	if (!e)
		return -LX_EAGAIN;
	if (s->pcb) { /* made for options: not needed, the connection has its own */
		ts_pcb_orphan(s->pcb);
		tcp_close(s->pcb);
	}
	s->pcb = e->pcb, s->connected = true, s->rx_fin = e->rx_fin, s->hup = false;
	s->pend = e->pend, s->pend_off = e->pend_off, s->pend_len = e->pend_len, s->pend_cap = e->pend_cap;
	/* the listener's options, as Linux's accepted sockets have them */
	s->opts |= l->opts & (TO_NODELAY | TO_KEEPALIVE | TO_LINGER);
	s->keepidle = s->keepidle ? s->keepidle : l->keepidle;
	s->keepintvl = s->keepintvl ? s->keepintvl : l->keepintvl;
	s->keepcnt = s->keepcnt ? s->keepcnt : l->keepcnt;
	s->maxseg = s->maxseg ? s->maxseg : l->maxseg;
	s->linger_s = (s->opts & TO_LINGER) && !s->linger_s ? l->linger_s : s->linger_s;
	bool alive = s->pcb != NULL;
	memset(e, 0, offsetof(struct ts_sock, saved));
	l->ev |= EV_ACCEPT; /* the count changed */
	if (alive) {
		tcp_backlog_accepted(s->pcb);
		ts_pcb_setup(s);
		apply_opts(s);
		accepted(s, a);
	}
	ts_rx_place(s);
	return 0;
}

/* TCP_INFO's numbers from lwIP's pcb (sock_proto.h SK_INFO). lwIP keeps the RTO and the
 * smoothed RTT in ticks of its slow timer (500 ms), so they are that coarse. */
static int64_t do_info(struct ts_sock *s, struct sk_msg *a)
{
	/* lwIP's states (CLOSED..TIME_WAIT) as Linux numbers them */
	static const uint8_t linux_state[] = { 7, 10, 2, 3, 1, 4, 5, 8, 11, 9, 6 };
	struct tcp_pcb *p = s->pcb;
	if (!p || s->listening)
		return -LX_ENOTCONN;
	uint32_t unacked = 0;
	for (struct tcp_seg *g = p->unacked; g; g = g->next)
		unacked++;
	uint64_t st = p->state < sizeof(linux_state) ? linux_state[p->state] : 7;
	a->result = 0;
	a->arg = st | (uint64_t)p->nrtx << 8 | (uint64_t)p->mss << 16 | (uint64_t)p->cwnd << 32;
	uint64_t rto = p->rto > 0 ? (uint64_t)p->rto : 0, srtt = p->sa > 0 ? (uint64_t)(p->sa >> 3) : 0;
	a->arg2 = rto * TCP_SLOW_INTERVAL | srtt * TCP_SLOW_INTERVAL << 32;
	uint32_t w[4] = { p->snd_wnd, p->rcv_wnd, p->ssthresh, unacked };
	memcpy(a->addr, w, sizeof(w));
	return 0;
}

static int64_t do_setopt(const struct sk_msg *q, struct ts_sock *s)
{
	uint64_t v = q->arg2;
	uint32_t bit = 0;
	switch (q->arg) {
	case SKO_REUSEADDR: bit = TO_REUSEADDR; break;
	case SKO_KEEPALIVE: bit = TO_KEEPALIVE; break;
	case SKO_TCP_NODELAY: bit = TO_NODELAY; break;
	case SKO_TCP_CORK: bit = TO_CORK; break;
	case SKO_LINGER:
		s->opts = (v >> 32) ? s->opts | TO_LINGER : s->opts & ~(uint32_t)TO_LINGER;
		s->linger_s = (uint32_t)v;
		return 0;
	case SKO_TCP_MAXSEG:
		if (v < 88 || v > TCP_MSS)
			return -LX_EINVAL;
		s->maxseg = (uint32_t)v;
		break;
	case SKO_TCP_KEEPIDLE:
	case SKO_TCP_KEEPINTVL:
		if (v < 1 || v > 32767)
			return -LX_EINVAL;
		*(q->arg == SKO_TCP_KEEPIDLE ? &s->keepidle : &s->keepintvl) = (uint32_t)v;
		break;
	case SKO_TCP_KEEPCNT:
		if (v < 1 || v > 127)
			return -LX_EINVAL;
		s->keepcnt = (uint32_t)v;
		break;
	case SKO_RCVBUF:
	case SKO_SNDBUF:
		return 0; /* the buffer's geometry is syscall's */
	default:
		return -LX_ENOPROTOOPT;
	}
	if (bit)
		s->opts = v ? s->opts | bit : s->opts & ~bit;
	apply_opts(s);
	if (q->arg == SKO_TCP_CORK && !v && s->pcb && !s->listening)
		tcp_output(s->pcb); /* uncorked: what waits goes */
	return 0;
}

/* SK_CLOSE: a listener or an unconnected socket goes at once; a connection with unread data
 * or LX_SO_LINGER 0 is reset; otherwise TX drains into lwIP first (ts_close_poll). */
static bool do_close(const struct sk_msg *q, struct ts_sock *s)
{
	s->close_req = q->req;
	s->close_at = ax_time_ns() | 1;
	if (s->listening || !s->pcb || !s->connected || s->corrupt) {
		ts_sock_free(s);
		return true;
	}
	if (((s->opts & TO_LINGER) && s->linger_s == 0) || ts_rx_unread(s)) {
		ts_abort(s); /* RST, as Linux does */
		ts_sock_free(s);
		return true;
	}
	s->closing = true;
	s->tx_pending = true;
	return false;
}

/* Closing sockets whose TX is drained: FIN (tcp_close), answer, the pcb finishes alone. */
static void close_poll(uint64_t now)
{
	for (int i = 0; i < ts.top; i++) {
		struct ts_sock *s = &ts.s[i];
		if (s->kind != TK_SOCK || !s->closing)
			continue;
		bool expired = now - s->close_at > TS_CLOSE_NS;
		bool drained = !s->attached || s->corrupt || !sockbuf_ready(&s->sb.tx);
		if (!xport_ev_space()) {
			xp.retry = true;
			return;
		}
		if (expired) {
			ts_abort(s);
		} else if (!drained && s->pcb) {
			continue;
		} else if (s->pcb) {
			struct tcp_pcb *p = s->pcb;
			ts_pcb_orphan(p);
			if (tcp_close(p) != ERR_OK) { /* no memory for the FIN: later */
				ts_pcb_setup(s);
				xp.retry = true;
				continue;
			}
			s->pcb = NULL;
		}
		uint32_t sock = s->sock;
		uint64_t req = s->close_req;
		ts_sock_free(s);
		answer_close(sock, req);
	}
}

static void request(const struct sk_msg *q)
{
	struct ts_sock *s = find(q->sock);
	struct sk_msg a = { .type = SK_ANSWER, .sock = q->sock, .req = q->req };
	int64_t r;
	switch (q->type) {
	case SK_OPEN:
		s = NULL;
		r = do_open(q, &s);
		ts_answer(q->sock, q->req, r, NULL);
		return;
	case SK_TX:
		if (s)
			s->tx_pending = true;
		return;
	case SK_RXDONE:
		if (s) {
			ts_rx_window(s);
			ts_rx_place(s);
		}
		return;
	default:
		break;
	}
	if (xport_lib_request(q, s ? (int32_t)(s - ts.s) : -1))
		return;
	if (!s) {
		if (q->type >= SK_BIND && q->type <= SK_INFO)
			ts_answer(q->sock, q->req, q->type == SK_CLOSE ? 0 : -LX_EBADF, NULL);
		else
			ts.c.bad_msgs++;
		return;
	}
	if (s->closing) {
		ts_answer(q->sock, q->req, -LX_EBADF, NULL);
		return;
	}
	bool later = false;
	switch (q->type) {
	case SK_BIND:
		r = do_bind(q, s);
		break;
	case SK_LISTEN:
		r = do_listen(q, s);
		break;
	case SK_CONNECT:
		r = do_connect(q, s, &later);
		break;
	case SK_ACCEPT:
		r = do_accept(q, s, &a);
		if (r == 0) {
			xport_push_ev(&a);
			return;
		}
		break;
	case SK_SETOPT:
		r = do_setopt(q, s);
		break;
	case SK_INFO:
		r = do_info(s, &a);
		if (r == 0) {
			xport_push_ev(&a);
			return;
		}
		break;
	case SK_SHUTDOWN: /* a stream's SHUT_WR is an SBD_FIN in its TX ring; SHUT_RD: nothing to do */
		r = q->arg > 2 ? -LX_EINVAL : (s->connected && !s->hup) ? 0 : -LX_ENOTCONN;
		break;
	case SK_CLOSE:
		if (do_close(q, s))
			answer_close(q->sock, q->req);
		return;
	default:
		ts.c.bad_msgs++;
		return;
	}
	ts_save(s);
	if (!later)
		ts_answer(q->sock, q->req, r, s);
}

/* The library moved the data of socket `sock` (our slot `cookie`, lib/lwip/xact.c): its TX
 * queue and RX window are looked at in this turn, and syscall hears its readiness again. */
void ts_lib_work(int32_t cookie, uint32_t sock)
{
	if (cookie < 0 || cookie >= TS_SLOTS)
		return;
	struct ts_sock *s = &ts.s[cookie];
	if (s->kind != TK_SOCK || s->sock != sock || !s->attached)
		return;
	s->tx_pending = true;
	s->ev |= EV_LIB;
}

/* Requests from syscall, while there is room for their answers. */
void ts_sys_poll(bool *work)
{
	while (ts.top > 0 && ts.s[ts.top - 1].kind == TK_FREE)
		ts.top--;
	if (!xp.sys_ok)
		return;
	close_poll(ax_time_ns());
	xport_requests(request, 4, work);
}

/* Pending SK_EVs, one per socket per loop turn, while there is room. */
void ts_flush_events(void)
{
	if (!xp.sys_ok)
		return;
	for (int i = 0; i < ts.top; i++) {
		struct ts_sock *s = &ts.s[i];
		if (s->kind != TK_SOCK || !s->ev)
			continue;
		if (xport_ev_space() < 2) {
			xp.retry = true;
			return;
		}
		if (s->ev & EV_CONN) { /* alone: its result and addresses */
			struct sk_msg c = { .type = SK_EV, .sock = s->sock, .arg = EV_CONN, .result = s->conn_result };
			if (s->conn_result == 0 && s->pcb) {
				uint32_t la = laddr_of(s->pcb), ra = ip4_addr_get_u32(ip_2_ip4(&s->pcb->remote_ip));
				c.family = TS_AF_INET, c.port = lwip_htons(s->pcb->local_port);
				memcpy(c.addr, &la, 4);
				c.arg2 = ra | (uint64_t)lwip_htons(s->pcb->remote_port) << 32;
			}
			xport_push_ev(&c);
			s->ev &= (uint8_t)~EV_CONN;
			if (!s->ev)
				continue;
		}
		struct sk_msg m = { .type = SK_EV, .sock = s->sock, .arg = s->ev };
		m.result = (s->ev & EV_ERR) ? s->err : (s->ev & EV_ACCEPT) ? ts_pending_count(s) : 0;
		xport_push_ev(&m);
		s->ev = 0, s->err = 0;
	}
}

/* Restored listeners and kept sockets syscall never claimed are closed after a while; a close that waited
 * too long resets (close_poll). */
void ts_gc(uint64_t now)
{
	if (!xp.hello_at || (int64_t)(now - xp.hello_at) < (int64_t)TS_REATTACH_NS)
		return;
	for (int i = 0; i < ts.top; i++) {
		struct ts_sock *s = &ts.s[i];
		if (s->kind == TK_SOCK && s->restored_at && !s->closing) {
			/* a restored listener, or a socket kept through a live update that syscall no
			 * longer has (it was closed meanwhile): its connection is reset */
			ax_printf("tcp: %s %u was not reattached: closed\n", s->listening ? "listener" : "socket", s->sock);
			ts_sock_free(s);
		}
	}
}

/* After a restart: the listeners back from ds, listening before we say SK_HELLO. */
void ts_restore(void)
{
	uint32_t slots = xport_table_slots(), restored = 0;
	for (uint32_t i = 0; i < slots && i < TS_SLOTS; i++) {
		struct sk_dsrec r;
		if (!xport_table_get(i, &r))
			continue;
		struct ts_sock *s = &ts.s[i];
		s->saved = r;
		if (!r.sock || !(r.flags & SKR_LISTEN) || find(r.sock))
			continue;
		s->kind = TK_SOCK, s->sock = r.sock, s->flags = SKF_STREAM, s->opts = TO_REUSEADDR;
		ts_slot_used(s);
		struct sk_msg b = { .type = SK_BIND, .family = TS_AF_INET, .port = r.lport };
		memcpy(b.addr, &r.laddr, 4);
		struct sk_msg l = { .type = SK_LISTEN, .arg = r.opts };
		int64_t e = do_bind(&b, s);
		if (e == 0)
			e = do_listen(&l, s);
		if (e < 0) {
			ax_printf("tcp: listener %u: cannot listen on port %u again (%lld)\n", r.sock, lwip_ntohs(r.lport),
				  (long long)e);
			ts_sock_free(s);
			continue;
		}
		s->restored_at = ax_time_ns() | 1;
		restored++;
	}
	ax_printf("tcp: restored %u listeners from ds (%u slots)\n", restored, slots);
}
