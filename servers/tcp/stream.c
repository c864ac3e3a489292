/* tcp's byte streams (README.md "Where the bytes go"): lwIP's callbacks, received bytes into
 * each socket's RX ring (the window opens only as the application releases them), the TX
 * ring's pieces into lwIP (tcp_write copies them into its send buffer: our heap), the FIN
 * both ways, and what happens to a connection whose socket let go. */
#include "tcp.h"
#include <string.h> /* memmove: lib/lwip/include/string.h */
#include "lwip/mem.h"
#include "lwip/pbuf.h"
#include "lwip/tcp.h"
#include "lwip/priv/tcp_priv.h"

static int32_t conn_errno(err_t e, bool connecting)
{
	switch (e) {
	case ERR_RST: return connecting ? -LX_ECONNREFUSED : -LX_ECONNRESET;
	case ERR_ABRT: return -LX_ETIMEDOUT; /* lwIP gave up: retransmissions or keepalives */
	case ERR_CLSD: return 0;
	case ERR_RTE: return -LX_ENETUNREACH;
	default: return connecting ? -LX_ECONNREFUSED : -LX_ECONNRESET;
	}
}

void ts_pend_free(struct ts_sock *s)
{
	if (s->pend)
		mem_free(s->pend);
	s->pend = NULL, s->pend_off = s->pend_len = s->pend_cap = 0;
}

/* Appends bytes to the socket's pending buffer (grown in our heap). */
static bool pend_add(struct ts_sock *s, const struct pbuf *p, uint32_t off, uint32_t len)
{
	if (s->pend_off + s->pend_len + len > s->pend_cap) {
		uint32_t need = s->pend_len + len, cap = s->pend_cap ? s->pend_cap : 16384;
		while (cap < need)
			cap *= 2;
		uint8_t *n = cap == s->pend_cap ? s->pend : mem_malloc((mem_size_t)cap);
		if (!n)
			return false;
		if (s->pend_len)
			memmove(n, s->pend + s->pend_off, s->pend_len);
		if (n != s->pend && s->pend)
			mem_free(s->pend);
		s->pend = n, s->pend_cap = cap, s->pend_off = 0;
	}
	if (s->attached)
		sockbuf_notify_at(&s->sb.rx, 0); /* bytes wait for room: any release wakes us */
	pbuf_copy_partial(p, s->pend + s->pend_off + s->pend_len, (u16_t)len, (u16_t)off);
	s->pend_len += len;
	return true;
}

static void mark_corrupt(struct ts_sock *s)
{
	s->corrupt = true;
	ts.c.corrupt_bufs++;
	ts_set_err(s, -LX_EINVAL, false);
}

/* Copies up to len bytes (from p at off, or from buf) into the RX ring as pieces; returns
 * how many went in. */
static uint32_t ring_put(struct ts_sock *s, const struct pbuf *p, const uint8_t *buf, uint32_t off, uint32_t len)
{
	uint32_t done = 0;
	while (done < len && !s->corrupt) {
		uint32_t n = sockbuf_room(&s->sb.rx);
		if (n == 0)
			break;
		if (n > len - done)
			n = len - done;
		int err = 0;
		uint8_t *dst = sockbuf_alloc(&s->sb.rx, n, &err);
		if (!dst) {
			if (err == SOCKBUF_ECORRUPT)
				mark_corrupt(s);
			break;
		}
		if (p)
			pbuf_copy_partial(p, dst, (u16_t)n, (u16_t)(off + done));
		else
			memcpy(dst, buf + done, n);
		uint64_t before = s->sb.rx.produced;
		struct sockbuf_desc d = { 0 };
		if (sockbuf_commit(&s->sb.rx, n, &d) != 0)
			break;
		ts_ring_commit(&s->ring, before, s->sb.rx.produced, n);
		done += n;
		s->ev |= EV_RX;
	}
	return done;
}

/* Pending bytes into the ring, then the peer's FIN after them. */
void ts_rx_place(struct ts_sock *s)
{
	if (s->kind != TK_SOCK || !s->attached || s->corrupt)
		return;
	if (s->pend_len) {
		uint32_t n = ring_put(s, NULL, s->pend + s->pend_off, 0, s->pend_len);
		s->pend_off += n, s->pend_len -= n;
		if (!s->pend_len)
			ts_pend_free(s);
	}
	if (s->rx_fin && !s->rx_fin_placed && !s->pend_len && sockbuf_room(&s->sb.rx) > 0) {
		int err = 0;
		struct sockbuf_desc d = { .flags = SBD_FIN };
		uint64_t before = s->sb.rx.produced;
		if (sockbuf_alloc(&s->sb.rx, 0, &err) && sockbuf_commit(&s->sb.rx, 0, &d) == 0) {
			ts_ring_commit(&s->ring, before, s->sb.rx.produced, 0);
			s->rx_fin_placed = true;
			s->ev |= EV_RX | EV_FIN;
		}
	}
}

/* The consumer released RX bytes: open lwIP's window by as many stream bytes. */
void ts_rx_window(struct ts_sock *s)
{
	if (s->kind != TK_SOCK || !s->attached || s->corrupt)
		return;
	uint64_t rel = atomic_load_explicit(s->sb.rx.released, memory_order_acquire);
	if (rel < s->rx_released || rel > s->sb.rx.produced) {
		mark_corrupt(s);
		return;
	}
	s->rx_released = rel;
	uint64_t done = ts_ring_consumed(&s->ring, rel);
	while (s->pcb && !s->listening && done > s->rx_recved) {
		uint64_t n = done - s->rx_recved;
		if (n > 0xffff)
			n = 0xffff;
		tcp_recved(s->pcb, (u16_t)n);
		s->rx_recved += n;
	}
	if (done > s->rx_recved)
		s->rx_recved = done; /* no connection any more: nothing to open */
	/* The reader need not wake us for space until lwIP would announce it (its window
	 * grows by TCP_WND_UPDATE_THRESHOLD); with bytes waiting for room, at once. */
	sockbuf_notify_at(&s->sb.rx, s->pend_len ? 0 : rel + TCP_WND_UPDATE_THRESHOLD);
}

bool ts_rx_unread(struct ts_sock *s)
{
	if (s->pend_len)
		return true;
	if (!s->attached || s->corrupt)
		return false;
	uint64_t rel = atomic_load_explicit(s->sb.rx.released, memory_order_acquire);
	struct ts_ring r = s->ring;
	return rel < s->sb.rx.produced && ts_ring_consumed(&r, rel) < s->ring.data;
}

static err_t on_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
	(void)err;
	struct ts_sock *s = arg;
	if (!s)
		return tcp_recv_null(NULL, pcb, p, ERR_OK);
	if (!p) {
		s->rx_fin = true;
		ts_rx_place(s);
		return ERR_OK;
	}
	/* We always take the pbuf: what fits goes into the ring now (one copy), the rest into
	 * the pending buffer, so nothing of ip's memory is kept. */
	uint32_t len = p->tot_len, put = 0;
	ts.c.rx_bytes += len;
	if (s->kind == TK_SOCK && s->attached && !s->corrupt && !s->pend_len)
		put = ring_put(s, p, NULL, 0, len);
	if (put < len && !(s->kind == TK_SOCK && s->corrupt) && !pend_add(s, p, put, len - put)) {
		ts.c.rx_nomem++; /* bytes lwIP acknowledged cannot be kept: the stream is broken */
		pbuf_free(p);
		ts_set_err(s, -LX_ECONNRESET, true);
		ts_abort(s);
		return ERR_ABRT;
	}
	pbuf_free(p);
	return ERR_OK;
}

static err_t on_sent(void *arg, struct tcp_pcb *pcb, u16_t len)
{
	(void)pcb, (void)len;
	struct ts_sock *s = arg;
	if (s)
		s->tx_pending = true;
	return ERR_OK;
}

/* The connect ended (0 or -errno): SK_CONNECT's answer, or EV_CONN for one from TX. */
static void connect_done(struct ts_sock *s, int32_t result)
{
	if (s->connect_desc) {
		s->connect_desc = false;
		s->conn_result = result, s->ev |= EV_CONN;
		s->tx_pending = true; /* what the library queued after the connect goes now */
	} else {
		ts_answer(s->sock, s->connect_req, result, result ? NULL : s);
	}
}

/* lwIP freed the pcb (reset, timeout, or closed both ways and acknowledged). */
static void on_err(void *arg, err_t e)
{
	struct ts_sock *s = arg;
	if (!s)
		return;
	s->pcb = NULL;
	if (e == ERR_RST)
		ts.c.resets_in++;
	else if (e == ERR_ABRT)
		ts.c.timeouts++;
	if (s->kind == TK_PENDING) {
		struct ts_sock *l = &ts.s[s->lst];
		ts_pend_free(s);
		memset(s, 0, offsetof(struct ts_sock, saved));
		if (l->kind == TK_SOCK && l->listening)
			l->ev |= EV_ACCEPT;
		return;
	}
	if (s->connecting) {
		s->connecting = false;
		ts.c.connect_fail++;
		connect_done(s, conn_errno(e, true));
		return;
	}
	int32_t r = conn_errno(e, false);
	if (r)
		ts_set_err(s, r, true);
	else
		s->hup = true, s->ev |= EV_HUP;
	s->tx_pending = true; /* a closing socket finishes now */
}

static err_t on_connected(void *arg, struct tcp_pcb *pcb, err_t err)
{
	(void)pcb, (void)err;
	struct ts_sock *s = arg;
	if (!s)
		return ERR_OK;
	s->connecting = false, s->connected = true, s->tx_pending = true;
	ts_apply_opts(s); /* the MSS the handshake set, capped by TCP_MAXSEG */
	ts.c.connects++;
	connect_done(s, 0);
	return ERR_OK;
}

void ts_pcb_setup(struct ts_sock *s)
{
	tcp_arg(s->pcb, s);
	tcp_recv(s->pcb, on_recv);
	tcp_sent(s->pcb, on_sent);
	tcp_err(s->pcb, on_err);
}

/* No socket any more: lwIP finishes the connection alone (tcp_recv_null). */
void ts_pcb_orphan(struct tcp_pcb *pcb)
{
	tcp_arg(pcb, NULL);
	tcp_recv(pcb, NULL);
	tcp_sent(pcb, NULL);
	tcp_err(pcb, NULL);
}

int ts_connect_start(struct ts_sock *s, const ip_addr_t *a, uint16_t port);
int ts_connect_start(struct ts_sock *s, const ip_addr_t *a, uint16_t port)
{
	return tcp_connect(s->pcb, a, port, on_connected);
}

/* A connection completed its handshake on a listener: pending until SK_ACCEPT takes it. */
static err_t on_accept(void *arg, struct tcp_pcb *npcb, err_t err)
{
	struct ts_sock *l = arg;
	if (err != ERR_OK || !npcb || !l)
		return ERR_VAL;
	struct ts_sock *e = NULL;
	for (int i = 0; i < TS_SLOTS && !e; i++)
		if (ts.s[i].kind == TK_FREE)
			e = &ts.s[i];
	if (!e) {
		ts.c.accept_drops++;
		tcp_abort(npcb);
		return ERR_ABRT;
	}
	memset(e, 0, offsetof(struct ts_sock, saved));
	e->kind = TK_PENDING, e->pcb = npcb, e->connected = true;
	ts_slot_used(e);
	e->lst = (int32_t)(l - ts.s), e->seq = ++ts.seq;
	e->opts = l->opts;
	ts_pcb_setup(e);
	tcp_backlog_delayed(npcb); /* counts against the backlog until accepted */
	if (l->opts & TO_NODELAY)
		tcp_nagle_disable(npcb);
	if (l->opts & TO_KEEPALIVE)
		ip_set_option(npcb, SOF_KEEPALIVE);
	ts.c.accepts++;
	l->ev |= EV_ACCEPT;
	return ERR_OK;
}

int ts_stream_fns(uintptr_t *v)
{
	v[0] = (uintptr_t)on_recv, v[1] = (uintptr_t)on_sent, v[2] = (uintptr_t)on_err;
	v[3] = (uintptr_t)on_connected, v[4] = (uintptr_t)on_accept;
	return 5;
}

void ts_listen_setup(struct ts_sock *s)
{
	tcp_arg(s->pcb, s);
	tcp_accept(s->pcb, on_accept);
}

/* Ends the connection now (RST); a listener stops listening. */
void ts_abort(struct ts_sock *s)
{
	struct tcp_pcb *pcb = s->pcb;
	s->pcb = NULL;
	if (!pcb)
		return;
	if (s->listening) {
		tcp_arg(pcb, NULL);
		tcp_accept(pcb, NULL);
		tcp_close(pcb); /* a listen pcb is always freed */
		return;
	}
	ts_pcb_orphan(pcb);
	ts.c.aborts++;
	tcp_abort(pcb);
}

static void drop_desc(struct ts_sock *s, const struct sockbuf_desc *d, int32_t err)
{
	sockbuf_consume(&s->sb.tx, d);
	s->ev |= EV_TXSPACE;
	if (err)
		ts_set_err(s, err, false);
}

/* One socket's TX ring into lwIP: pieces taken (in part) as its send buffer allows, copied
 * once (TCP_WRITE_FLAG_COPY); SBD_FIN becomes tcp_shutdown after everything before it. */
static void tx_sock(struct ts_sock *s, bool *work)
{
	bool wrote = false;
	uint64_t taken = s->sb.tx.q.mine; /* TX descriptors consumed so far */
	for (int k = 0; k < 64; k++) {
		struct sockbuf_desc d;
		int err = 0;
		const uint8_t *data = sockbuf_peek(&s->sb.tx, &d, &err);
		if (!data) {
			if (err == SOCKBUF_ECORRUPT)
				mark_corrupt(s);
			s->tx_pending = false;
			break;
		}
		if (s->connecting && s->pcb)
			break; /* after the handshake */
		if (d.flags == SBD_CONNECT && !d.len) { /* the library's non-blocking connect */
			int64_t r = s->pcb && (s->connected || s->listening) ? -LX_EISCONN
											: ts_connect(s, d.family, d.port, d.addr);
			drop_desc(s, &d, 0);
			s->connect_desc = true;
			if (r != 0) { /* refused at once: the library hears it */
				ts.c.connect_fail++;
				connect_done(s, (int32_t)r);
			}
			continue;
		}
		if ((d.flags & ~(uint32_t)SBD_FIN) || ((d.flags & SBD_FIN) && d.len)) {
			ts.c.bad_desc++;
			drop_desc(s, &d, -LX_EINVAL);
			continue;
		}
		if (!s->pcb || !s->connected || s->tx_fin_sent || s->hup) {
			/* nothing to send on: the connection is gone, never was, or was shut down */
			drop_desc(s, &d, s->hup ? 0 : -LX_EPIPE);
			s->tx_off = 0;
			continue;
		}
		if (d.flags & SBD_FIN) {
			if (tcp_shutdown(s->pcb, 0, 1) != ERR_OK) {
				xp.retry = true;
				break;
			}
			s->tx_fin_sent = true;
			drop_desc(s, &d, 0);
			wrote = true;
			continue;
		}
		if (d.len == 0 || s->tx_off >= d.len) {
			s->tx_off = 0;
			drop_desc(s, &d, 0);
			continue;
		}
		uint32_t n = d.len - s->tx_off, room = tcp_sndbuf(s->pcb);
		if (n > room)
			n = room;
		if (n == 0 || tcp_sndqueuelen(s->pcb) >= TCP_SND_QUEUELEN - 4)
			break; /* the sent callback says when there is room */
		err_t e = tcp_write(s->pcb, data + s->tx_off, (u16_t)n, TCP_WRITE_FLAG_COPY);
		if (e == ERR_MEM) {
			ts.c.tx_nomem++;
			xp.retry = true; /* heap comes back with IPX_TX_DONE and acknowledgements */
			break;
		}
		if (e != ERR_OK) {
			drop_desc(s, &d, -LX_EPIPE);
			s->tx_off = 0;
			continue;
		}
		wrote = true;
		ts.c.tx_bytes += n;
		s->tx_off += n;
		if (s->tx_off < d.len)
			break; /* the send buffer is full */
		s->tx_off = 0;
		drop_desc(s, &d, 0);
	}
	if (wrote && s->pcb)
		tcp_output(s->pcb);
	/* Work is progress only (bytes into lwIP, pieces freed): a send buffer that stays full
	 * lets the loop sleep (and serve its messages) until an acknowledgement makes room. */
	*work |= wrote || s->sb.tx.q.mine != taken;
}

void ts_tx_poll(bool *work)
{
	for (int i = 0; i < ts.top; i++) {
		struct ts_sock *s = &ts.s[i];
		if (s->kind != TK_SOCK || !s->attached || s->corrupt || s->listening)
			continue;
		ts_rx_window(s);
		ts_rx_place(s);
		if (s->tx_pending)
			tx_sock(s, work);
	}
	/* Segments lwIP could not hand to ip (its channel was full) go now, not at the next
	 * timer tick. */
	for (struct tcp_pcb *p = tcp_active_pcbs; p && xp.ip_ok; p = p->next)
		if (p->unsent && xport_out_space() > 64)
			tcp_output(p);
}
