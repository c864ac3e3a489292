/* The calls of stream (TCP) sockets, with Linux's semantics and errno values: listen,
 * accept (the new socket is made here and the call passed back to vfs, which makes its
 * descriptor), connect (blocking, or non-blocking with EINPROGRESS), the stream's data
 * (pieces of the byte stream in the socket's rings; a read may take part of a piece, a
 * blocking write goes on until all of it is queued), shutdown (an SBD_FIN piece, in order
 * with the data), sendfile (bytes vfs staged), TCP options and what poll sees. The engine's
 * side of all this is lib/net/sock_proto.h; the common calls are in calls.c. */
#include "syscall.h"
#include "lx_abi.h"

#define PIECE_MAX (64 * 1024)   /* bytes per TX piece (at most half the TX ring anyway) */
#define SOMAXCONN 4096

/* Linux's TCP states (tcp_info.tcpi_state). */
enum { TCPS_ESTABLISHED = 1, TCPS_SYN_SENT = 2, TCPS_CLOSE = 7, TCPS_CLOSE_WAIT = 8, TCPS_LISTEN = 10 };

static int64_t do_listen(struct lcall *c, struct sock *s)
{
	if (s->connected || s->connecting || s->was_connected)
		return -LX_EINVAL;
	int64_t backlog = (int32_t)c->a[1];
	backlog = backlog < 0 || backlog > SOMAXCONN ? SOMAXCONN : backlog;
	c->a[1] = (uint64_t)backlog;
	struct held *h = calls_hold_for_answer(c);
	if (!h)
		return -LX_EAGAIN;
	struct sk_msg m = { .type = SK_LISTEN, .arg = (uint64_t)backlog };
	engine_request(s, &m, c->serial);
	return CALL_TAKEN;
}

static int64_t do_accept(struct lcall *c, struct sock *s)
{
	if (c->nr == LX_SYS_accept4 && (c->a[3] & ~(uint64_t)(LX_SOCK_NONBLOCK | LX_SOCK_CLOEXEC)))
		return -LX_EINVAL;
	if (!s->listening)
		return -LX_EINVAL;
	if (s->error) /* the listener died with tcp and could not be restored */
		return take_error(s);
	if (!s->pending)
		return nonblocking(c, 0) ? -LX_EAGAIN : CALL_HELD;
	int64_t err;
	struct sock *n = c->newsock ? sock_find(c->newsock) : NULL;
	if (!n) {
		uint32_t id = (uint32_t)c->a[4];
		if (!id || sock_find(id))
			return -LX_EINVAL; /* vfs gives a fresh id with every accept */
		/* accepts taken over for a library may reuse a buffer it kept (lazy closing) */
		n = sock_get(id, true, true, s->accept_take_pid == c->pid ? c->pid : 0, &err);
		if (!n)
			return err;
		c->newsock = id;
		/* as on Linux, the connection's socket starts with the listener's options (tcp
		 * gives its connection the same ones) */
		n->opt_set = s->opt_set;
		memcpy(n->opt_val, s->opt_val, sizeof(n->opt_val));
		n->reuseaddr = s->reuseaddr, n->rcvbuf = s->rcvbuf, n->sndbuf = s->sndbuf;
		n->rcvtimeo_ns = s->rcvtimeo_ns, n->sndtimeo_ns = s->sndtimeo_ns;
	}
	s->pending--;
	if (s->accept_take_pid)
		act_listen_state(s);
	struct held *h = calls_hold_for_answer(c);
	if (!h) {
		stream_cancelled(c, 0);
		return -LX_EAGAIN;
	}
	struct sk_msg m = { .type = SK_ACCEPT, .arg = s->id };
	engine_request(n, &m, c->serial);
	return CALL_TAKEN;
}

static int64_t do_connect(struct lcall *c, struct sock *s)
{
	struct inaddr a = { 0, 0 };
	bool unspec;
	int64_t r = get_sin(c->thread, c->a[1], c->a[2], &a, &unspec);
	if (r)
		return r;
	if (unspec)
		return -LX_EINVAL; /* dissolving a TCP connection this way is not offered */
	if (s->nb_connect && !s->connecting) { /* a non-blocking connect ended: its result, once */
		s->nb_connect = false;
		if (s->error)
			return take_error(s);
		if (s->connected)
			return 0;
	}
	if (s->listening || s->connected || s->was_connected)
		return -LX_EISCONN;
	if (s->connecting)
		return -LX_EALREADY;
	if (!a.port)
		return -111; /* ECONNREFUSED: nothing listens on port 0 */
	s->peer = a;
	s->connecting = true;
	s->error = 0;
	struct sk_msg m = { .type = SK_CONNECT };
	addr_msg(&m, &a);
	ready_changed(s);
	if (nonblocking(c, 0)) {
		s->nb_connect = true;
		engine_request(s, &m, 0); /* stream_connect_done takes the answer */
		return -LX_EINPROGRESS;
	}
	struct held *h = calls_hold_for_answer(c);
	if (!h) {
		s->connecting = false;
		return -LX_EAGAIN;
	}
	engine_request(s, &m, c->serial);
	return CALL_TAKEN;
}

static void connected(struct sock *s, const struct sk_msg *a)
{
	s->connecting = false;
	if (a->result == 0) {
		s->connected = s->was_connected = true;
		s->bound = true;
	}
	ready_changed(s);
}

void stream_connect_done(struct sock *s, const struct sk_msg *a)
{
	connected(s, a);
	if (a->result < 0 && a->result > -4096)
		s->error = (int32_t)-a->result; /* LX_SO_ERROR, and the next call */
	calls_retry(s->id);
}

void stream_conn_event(struct sock *s, const struct sk_msg *m)
{
	if (m->result == 0 && m->family == LX_AF_INET) { /* the addresses, for getsockname/getpeername */
		memcpy(&s->local.addr, m->addr, 4);
		s->local.port = m->port;
		s->peer.addr = (uint32_t)m->arg2, s->peer.port = (uint16_t)(m->arg2 >> 32);
	}
	s->nb_connect = true; /* the next connect call reports the result once, as after ours */
	s->lib_connect = false;
	stream_connect_done(s, m);
	if (s->lib_pid)
		act_event(s);
}

/* An accepted connection's socket is ready: the peer's address to the application, the
 * call back to vfs for the descriptor. */
static int64_t accepted(struct lcall *c, struct sock *n, const struct sk_msg *a)
{
	n->connected = n->was_connected = n->bound = true;
	memcpy(&n->peer.addr, a->addr, 4);
	n->peer.port = a->port;
	n->local.addr = (uint32_t)a->arg;
	n->local.port = (uint16_t)a->arg2;
	int64_t r = c->a[1] ? put_sin(c->thread, &n->peer, c->a[1], c->a[2]) : 0;
	if (r)
		return r;
	sock_map_into(n, c->thread, c->pid);
	struct sock *l = sock_find(c->sock);
	if (l && l->accept_take_pid == c->pid)
		act_accepted(c, l, n);
	uint64_t w[6] = { n->id, c->nr == LX_SYS_accept4 ? c->a[3] : 0, stream_ready(n) };
	n->ready = (uint32_t)w[2], n->ready_told = true;
	r = vfs_pass_back(c->thread, LX_SYS_accept4, w);
	return r < 0 ? -LX_ENOMEM : CALL_DONE;
}

/* Linux's struct tcp_info (its first 104 bytes) from tcp's SK_INFO answer. */
static int64_t tcp_info_answer(struct lcall *c, const struct sk_msg *a)
{
	uint8_t info[104] = { 0 };
	uint32_t w[4], mss = (uint32_t)(a->arg >> 16) & 0xffff;
	memcpy(w, a->addr, sizeof(w));
	info[0] = (uint8_t)a->arg;              /* tcpi_state */
	info[2] = (uint8_t)(a->arg >> 8);       /* tcpi_retransmits */
	uint32_t f[26] = { 0 };                 /* the uint32 fields from offset 8 on */
	f[0] = (uint32_t)a->arg2 * 1000;        /* rto, us */
	f[2] = mss, f[3] = mss;                 /* snd_mss, rcv_mss */
	f[4] = w[3];                            /* unacked (segments) */
	f[13] = 1500;                           /* pmtu */
	f[14] = w[1];                           /* rcv_ssthresh */
	f[15] = (uint32_t)(a->arg2 >> 32) * 1000; /* rtt, us */
	f[17] = mss ? w[2] / mss : 0;           /* snd_ssthresh (segments) */
	f[18] = mss ? (uint32_t)(a->arg >> 32) / mss : 0; /* snd_cwnd (segments) */
	f[19] = mss;                            /* advmss */
	f[22] = w[1];                           /* rcv_space */
	memcpy(info + 8, f, sizeof(info) - 8);
	return put_int_opt(c->thread, info, sizeof(info), c->a[3], c->a[4]);
}

/* TCP_INFO without a connection (or when tcp cannot say): the state we know and defaults
 * (MSS 1460, cwnd 10 segments, RTO 200 ms), in the form of tcp's answer. */
static int64_t tcp_info_local(struct lcall *c, struct sock *s)
{
	uint64_t state = s->listening ? TCPS_LISTEN : s->connecting ? TCPS_SYN_SENT
		: s->connected && !s->hup ? (s->peer_fin ? TCPS_CLOSE_WAIT : TCPS_ESTABLISHED) : TCPS_CLOSE;
	const struct sk_msg a = { .arg = state | 1460ull << 16 | (10ull * 1460) << 32, .arg2 = 200 };
	return tcp_info_answer(c, &a);
}

void stream_answered(struct lcall *c, struct sock *s, const struct sk_msg *a)
{
	int64_t r = a->result;
	switch (c->nr) {
	case LX_SYS_getsockopt: /* TCP_INFO (SK_INFO) */
		if (r == 0)
			r = tcp_info_answer(c, a);
		else
			r = tcp_info_local(c, s);
		break;
	case LX_SYS_listen:
		if (r == 0)
			s->listening = true, s->backlog = (int32_t)c->a[1];
		break;
	case LX_SYS_connect:
		connected(s, a);
		break;
	case LX_SYS_accept:
	case LX_SYS_accept4: {
		struct sock *n = sock_find(c->newsock);
		if (r == -LX_EAGAIN && n) { /* it went away before we asked: wait for the next */
			c->serial = 0;
			calls_hold(c);
			return;
		}
		r = r == 0 && n ? accepted(c, n, a) : r == 0 ? -LX_ECONNABORTED : r;
		if (r != CALL_DONE)
			stream_cancelled(c, r);
		break;
	}
	}
	if (r != CALL_DONE)
		answer(c->thread, r);
}

bool stream_cancelled(struct lcall *c, int64_t r)
{
	if ((c->nr == LX_SYS_accept || c->nr == LX_SYS_accept4) && c->newsock) {
		struct sock *n = sock_find(c->newsock);
		c->newsock = 0;
		if (n && !n->closing)
			engine_close(n); /* a connection it took from the backlog is closed */
	}
	if (c->nr == LX_SYS_sendfile) { /* vfs frees what it staged */
		uint64_t w[6] = { (uint64_t)(c->done ? (int64_t)c->done : r), c->a[1], !c->a[3] };
		vfs_pass_back(c->thread, LX_SYS_sendfile, w);
		return true;
	}
	return false;
}

/* Queues len bytes from src into TX, going on from c->done: the total, or CALL_HELD (a
 * blocking call waits for room), -EAGAIN, -EPIPE... */
static int64_t queue_bytes(struct lcall *c, struct sock *s, const struct app_dst *src, uint64_t len, uint64_t flags)
{
	if (s->error) {
		int64_t e = take_error(s);
		return c->done ? (int64_t)c->done : e;
	}
	if (s->shut_wr || s->fin_sent || s->hup)
		return c->done ? (int64_t)c->done : -LX_EPIPE;
	if (!s->connected) {
		if (s->connecting)
			return nonblocking(c, flags) ? -LX_EAGAIN : CALL_HELD;
		return -LX_EPIPE;
	}
	uint64_t before = c->done;
	int r = sockbuf_stream_write(&s->sb.tx, &c->done, len, PIECE_MAX, copy_from_app, (void *)src);
	if (c->done > before)
		s->tx_hint = true;
	if (r)
		return c->done ? (int64_t)c->done : r;
	if (c->done == len)
		return (int64_t)len;
	ready_changed(s);
	return wait_for_space(c, s, flags);
}

static int64_t stream_send(struct lcall *c, struct sock *s)
{
	struct app_dst src = { .t = c->thread };
	uint64_t len = 0, flags = 0;
	int64_t r;
	if (c->nr == LX_SYS_sendmsg) {
		struct lx_msghdr mh;
		if (ax_vcopy(c->thread, (const void *)c->a[1], EP_NONE, &mh, sizeof(mh)) < 0)
			return -LX_EFAULT;
		src.iov = mh.iov, src.iovlen = mh.iovlen, flags = c->a[2];
	} else if (c->nr == LX_SYS_writev) {
		src.iov = c->a[1], src.iovlen = c->a[2];
	} else {
		src.buf = c->a[1], len = c->a[2];
		if (c->nr == LX_SYS_sendto)
			flags = c->a[3];
		if ((int64_t)len < 0)
			return -LX_EINVAL;
	}
	if (src.iov && (r = iov_total(c->thread, src.iov, src.iovlen, &len)))
		return r;
	if (!len && !s->error)
		return s->connected || !s->was_connected ? 0 : -LX_EPIPE;
	return queue_bytes(c, s, &src, len, flags);
}

static int64_t do_sendfile(struct lcall *c, struct sock *s)
{
	struct app_dst src = { .t = vfs_endpoint(), .buf = c->a[1] };
	uint64_t len = c->a[2] < SYSP_SENDFILE_MAX ? c->a[2] : SYSP_SENDFILE_MAX;
	int64_t r = len ? queue_bytes(c, s, &src, len, 0) : 0;
	if (r == CALL_HELD)
		return r;
	if (r > 0 && c->a[3]) { /* the offset pointer: advanced here, vfs's file position stays */
		uint64_t off = c->a[4] + (uint64_t)r;
		if (ax_vcopy(EP_NONE, &off, c->thread, (void *)c->a[3], 8) < 0)
			r = -LX_EFAULT;
	}
	uint64_t w[6] = { (uint64_t)r, c->a[1], !c->a[3] };
	return vfs_pass_back(c->thread, LX_SYS_sendfile, w) < 0 ? -LX_ENOMEM : CALL_DONE;
}

/* Copies up to len stream bytes into the application from byte c->done of its buffer. */
static int64_t stream_recv(struct lcall *c, struct sock *s)
{
	endpoint_t t = c->thread;
	uint64_t flags = 0, len = 0, iov = 0, iovlen = 0, buf = 0;
	struct lx_msghdr mh = { 0 };
	int64_t r;
	if (c->nr == LX_SYS_recvmsg) {
		if (ax_vcopy(t, (const void *)c->a[1], EP_NONE, &mh, sizeof(mh)) < 0)
			return -LX_EFAULT;
		iov = mh.iov, iovlen = mh.iovlen, flags = c->a[2];
	} else if (c->nr == LX_SYS_readv) {
		iov = c->a[1], iovlen = c->a[2];
	} else {
		buf = c->a[1], len = c->a[2];
		if (c->nr == LX_SYS_recvfrom)
			flags = c->a[3];
		if ((int64_t)len < 0)
			return -LX_EINVAL;
	}
	if (iov && (r = iov_total(t, iov, iovlen, &len)))
		return r;
	if (s->listening || (!s->connected && !s->connecting && !s->was_connected))
		return -LX_ENOTCONN;
	bool peek = flags & LX_MSG_PEEK;
	struct sockbuf_read rd = { .got = c->done };
	struct app_dst dst = { t, iov, iovlen, buf };
	if (!s->peer_fin && !s->shut_rd)
		sockbuf_stream_read(&s->sb.rx, &s->rx_off, len, (peek ? SOCKBUF_READ_PEEK : 0) |
				    (flags & LX_MSG_TRUNC ? SOCKBUF_READ_TRUNC : 0), copy_to_app, &dst, &rd);
	uint64_t got = rd.got;
	if (rd.fin && !peek) /* every read from now on returns 0 */
		s->peer_fin = true;
	s->rx_hint |= rd.freed;
	if (rd.err)
		return got ? (int64_t)got : rd.err == SOCKBUF_ECORRUPT ? -LX_EIO /* the engine wrote impossible pieces */
							    : rd.err;
	ready_changed(s);
	bool waitall = (flags & LX_MSG_WAITALL) && !peek && !nonblocking(c, flags);
	if (got && (!waitall || got == len || s->peer_fin || s->error || s->hup)) {
		if (c->nr == LX_SYS_recvmsg) { /* no address, no control data for a stream */
			mh.namelen = 0, mh.controllen = 0, mh.flags = 0;
			if (ax_vcopy(EP_NONE, &mh, t, (void *)c->a[1], sizeof(mh)) < 0)
				return -LX_EFAULT;
		} else if (c->nr == LX_SYS_recvfrom && c->a[4] && c->a[5]) {
			uint32_t zero = 0;
			ax_vcopy(EP_NONE, &zero, t, (void *)c->a[5], 4);
		}
		return (int64_t)got;
	}
	c->done = got;
	if (got)
		return CALL_HELD; /* LX_MSG_WAITALL: the rest */
	if (s->peer_fin || s->shut_rd || !len)
		return 0;
	if (s->error)
		return take_error(s);
	if (s->hup)
		return 0;
	return wait_for_data(c, s, flags);
}

/* SHUT_WR: an SBD_FIN piece after the data (the engine sends FIN when it gets there). */
static void queue_fin(struct sock *s)
{
	if (s->fin_sent || !s->connected)
		return;
	struct sockbuf_desc d = { .flags = SBD_FIN };
	if (sockbuf_commit(&s->sb.tx, 0, &d) == 0)
		s->fin_sent = true, s->tx_hint = true;
}

static int64_t do_shutdown(struct lcall *c, struct sock *s)
{
	uint64_t how = c->a[1];
	if (how > 2)
		return -LX_EINVAL;
	if (!s->connected && !s->listening)
		return -LX_ENOTCONN;
	s->shut_rd |= how != 1;
	s->shut_wr |= how != 0;
	if (s->listening && s->accept_take_pid)
		act_listen_drop(s); /* the kernel's answers from now on (accept: EINVAL) */
	if (s->shut_wr && !s->lib_pid)
		queue_fin(s); /* a library-owned socket's TX is the library's to fill (its FIN too) */
	calls_retry(s->id); /* blocked receives now see the end */
	ready_changed(s);
	return 0;
}

int64_t stream_getsockopt(struct lcall *c, struct sock *s, int32_t name)
{
	int32_t v;
	switch (name) {
	case 1: v = (int32_t)s->opt_val[OPT_NODELAY]; break;
	case 2: v = s->opt_set & (1u << OPT_MAXSEG) ? (int32_t)s->opt_val[OPT_MAXSEG] : s->connected ? 1460 : 536; break;
	case 3: v = (int32_t)s->opt_val[OPT_CORK]; break;
	case 4: v = s->opt_set & (1u << OPT_KEEPIDLE) ? (int32_t)s->opt_val[OPT_KEEPIDLE] : 7200; break;
	case 5: v = s->opt_set & (1u << OPT_KEEPINTVL) ? (int32_t)s->opt_val[OPT_KEEPINTVL] : 75; break;
	case 6: v = s->opt_set & (1u << OPT_KEEPCNT) ? (int32_t)s->opt_val[OPT_KEEPCNT] : 9; break;
	case 11: { /* TCP_INFO: a connection's numbers come from tcp (SK_INFO, answered in
		          * stream_answered); otherwise the state and the defaults */
		if (s->connected && !s->hup && s->opened && engine_ready(ENG_TCP)) {
			struct held *h = calls_hold_for_answer(c);
			if (h) {
				struct sk_msg m = { .type = SK_INFO };
				engine_request(s, &m, c->serial);
				return CALL_TAKEN;
			}
		}
		return tcp_info_local(c, s);
	}
	case 13: { /* TCP_CONGESTION: lwIP's one */
		char name16[16] = "reno";
		return put_int_opt(c->thread, name16, sizeof(name16), c->a[3], c->a[4]);
	}
	default:
		return -LX_ENOPROTOOPT;
	}
	return put_int_opt(c->thread, &v, 4, c->a[3], c->a[4]);
}

uint32_t stream_ready(struct sock *s)
{
	if (s->listening)
		return s->pending || s->error ? LX_POLLIN | LX_POLLRDNORM : 0;
	if (s->connecting)
		return 0;
	if (!s->connected) /* never connected, or a connect that failed: as Linux reports it */
		return LX_POLLOUT | LX_POLLWRNORM | LX_POLLHUP | (s->error ? LX_POLLERR : 0);
	uint32_t bits = 0;
	if (sockbuf_ready(&s->sb.rx) || s->peer_fin || s->fin_queued || s->shut_rd)
		bits |= LX_POLLIN | LX_POLLRDNORM;
	if (s->peer_fin || s->fin_queued)
		bits |= LX_POLLRDHUP;
	if (s->error)
		bits |= LX_POLLERR;
	if (s->hup || ((s->peer_fin || s->fin_queued) && s->shut_wr))
		bits |= LX_POLLHUP | LX_POLLIN | LX_POLLRDNORM;
	if (!s->shut_wr && !s->hup && sockbuf_room(&s->sb.tx) >= 4096)
		bits |= LX_POLLOUT | LX_POLLWRNORM;
	if (s->hup || s->shut_wr)
		bits |= LX_POLLOUT | LX_POLLWRNORM; /* a write does not wait: it fails at once */
	return bits;
}

int64_t stream_serve(struct lcall *c, struct sock *s)
{
	switch (c->nr) {
	case LX_SYS_listen:
		return do_listen(c, s);
	case LX_SYS_accept:
	case LX_SYS_accept4:
		return do_accept(c, s);
	case LX_SYS_connect:
		return do_connect(c, s);
	case LX_SYS_sendto:
	case LX_SYS_sendmsg:
	case LX_SYS_write:
	case LX_SYS_writev:
		return stream_send(c, s);
	case LX_SYS_recvfrom:
	case LX_SYS_recvmsg:
	case LX_SYS_read:
	case LX_SYS_readv:
		return stream_recv(c, s);
	case LX_SYS_sendfile:
		return do_sendfile(c, s);
	case LX_SYS_shutdown:
		return do_shutdown(c, s);
	case LX_SYS_getpeername:
		return s->connected ? put_sin(c->thread, &s->peer, c->a[1], c->a[2]) : -LX_ENOTCONN;
	}
	return CALL_NOT_STREAM;
}
