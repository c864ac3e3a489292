/* The Linux socket calls, with Linux's errno values: those common to both kinds of socket
 * (names, options, bind) and datagram data (stream.c has the stream ones). Data moves
 * through the socket's buffers: a send copies from the application into the TX data area
 * (KC_VCOPY) and commits a descriptor; a receive copies the oldest RX datagram out. A call
 * that cannot finish now is held (the application stays blocked in its call) and served
 * again when the engine answers or says something changed on the socket (calls_retry). */
#include "syscall.h"
#include "lx_abi.h"
#include "sock_ax.h"

#define IOV_MAX 1024
#define DEFAULT_BUF 212992 /* Linux's default socket buffer size */

/* Held calls. */
#define MAX_HELD 1024
struct held {
	bool used;
	bool answer;   /* waits for the engine's answer (bind, connect); else for data or space */
	uint64_t tried_ns; /* when it was last served (calls_timer's sweep) */
	struct lcall c;
};
/* A call held for data or space is served again when an event says its socket changed, and
 * in any case after this long: a lost event (or a fault in calls_retry, as the fault
 * campaign found: held calls never retried, every blocking accept stuck) costs a second,
 * not the call. */
#define HELD_SWEEP_NS 1000000000ull
static struct held held[MAX_HELD];
static int held_top; /* every held call is below it (hold raises it, calls_timer lowers it) */

const uint16_t opt_names[NOPTS] = { SKO_BROADCAST, SKO_REUSEADDR, SKO_RCVBUF, SKO_SNDBUF, SKO_KEEPALIVE, SKO_LINGER,
				    SKO_TCP_NODELAY, SKO_TCP_MAXSEG, SKO_TCP_CORK, SKO_TCP_KEEPIDLE,
				    SKO_TCP_KEEPINTVL, SKO_TCP_KEEPCNT };
static uint64_t next_serial = 1;

void answer(endpoint_t thread, int64_t r)
{
	struct kmsg m = { .type = 0 };
	m.w[0] = (uint64_t)r;
	ax_reply(thread, &m);
}

static struct held *hold(struct lcall *c, bool for_answer)
{
	for (int i = 0; i < MAX_HELD; i++)
		if (!held[i].used) {
			held[i] = (struct held){ true, for_answer, ax_time_ns(), *c };
			held[i].c.serial = next_serial++;
			if (i >= held_top)
				held_top = i + 1;
			*c = held[i].c;
			return &held[i];
		}
	return NULL;
}

struct held *calls_hold_for_answer(struct lcall *c) { return hold(c, true); }

/* Reads a sockaddr_in: 0, -EFAULT, -EINVAL, -EAFNOSUPPORT; *unspec for AF_UNSPEC. */
int64_t get_sin(endpoint_t t, uint64_t uaddr, uint64_t len, struct inaddr *out, bool *unspec)
{
	uint8_t b[16] = { 0 };
	if ((int64_t)len < 0 || len > 128)
		return -LX_EINVAL;
	if (len < 2)
		return -LX_EINVAL;
	if (ax_vcopy(t, (const void *)uaddr, EP_NONE, b, len < 16 ? len : 16) < 0)
		return -LX_EFAULT;
	uint16_t fam = (uint16_t)(b[0] | b[1] << 8);
	if (unspec)
		*unspec = fam == 0;
	if (fam == 0 && unspec)
		return 0;
	if (len < 16)
		return -LX_EINVAL;
	if (fam != LX_AF_INET)
		return -LX_EAFNOSUPPORT;
	memcpy(&out->port, b + 2, 2);
	memcpy(&out->addr, b + 4, 4);
	return 0;
}

/* Writes a sockaddr_in and its length the Linux way (truncated to the caller's buffer). */
int64_t put_sin(endpoint_t t, const struct inaddr *a, uint64_t uaddr, uint64_t ulen)
{
	uint8_t b[16] = { LX_AF_INET, 0 };
	memcpy(b + 2, &a->port, 2);
	memcpy(b + 4, &a->addr, 4);
	int32_t have;
	uint32_t len = 16;
	if (ax_vcopy(t, (const void *)ulen, EP_NONE, &have, 4) < 0)
		return -LX_EFAULT;
	if (have < 0)
		return -LX_EINVAL;
	if (ax_vcopy(EP_NONE, b, t, (void *)uaddr, (uint32_t)have < len ? (uint32_t)have : len) < 0 ||
	    ax_vcopy(EP_NONE, &len, t, (void *)ulen, 4) < 0)
		return -LX_EFAULT;
	return 0;
}

static bool is_broadcast(const struct inaddr *a) { return a->addr == 0xffffffffu; }

void addr_msg(struct sk_msg *m, const struct inaddr *a)
{
	m->family = LX_AF_INET, m->port = a->port;
	memcpy(m->addr, &a->addr, 4);
}

static int64_t do_bind(struct lcall *c, struct sock *s)
{
	struct inaddr a;
	int64_t r = get_sin(c->thread, c->a[1], c->a[2], &a, NULL);
	if (r)
		return r;
	if (s->bound || s->binding)
		return -LX_EINVAL;
	struct held *h = hold(c, true);
	if (!h)
		return -LX_EAGAIN;
	struct sk_msg m = { .type = SK_BIND };
	addr_msg(&m, &a);
	engine_request(s, &m, h->c.serial);
	return CALL_TAKEN;
}

static int64_t do_connect(struct lcall *c, struct sock *s)
{
	struct inaddr a = { 0, 0 };
	bool unspec;
	int64_t r = get_sin(c->thread, c->a[1], c->a[2], &a, &unspec);
	if (r)
		return r;
	if (!unspec && is_broadcast(&a) && !s->broadcast)
		return -LX_EACCES;
	c->a[3] = a.addr, c->a[4] = a.port, c->a[5] = unspec; /* for the answer */
	struct held *h = hold(c, true);
	if (!h)
		return -LX_EAGAIN;
	struct sk_msg m = { .type = SK_CONNECT };
	if (!unspec)
		addr_msg(&m, &a);
	engine_request(s, &m, h->c.serial);
	return CALL_TAKEN;
}

int64_t take_error(struct sock *s)
{
	int64_t r = -s->error;
	s->error = 0;
	return r;
}

/* A call that cannot go on now: what it did so far (c->done) or EAGAIN when it must not
 * wait (non-blocking, or its timeout ran out), else CALL_HELD with the timeout started. */
static int64_t hold_or_give_up(struct lcall *c, uint64_t timeo_ns, uint64_t flags)
{
	if (nonblocking(c, flags) || (c->deadline && ax_time_ns() >= c->deadline))
		return c->done ? (int64_t)c->done : -LX_EAGAIN;
	if (!c->deadline && timeo_ns)
		c->deadline = ax_time_ns() + timeo_ns;
	return CALL_HELD;
}

int64_t wait_for_data(struct lcall *c, struct sock *s, uint64_t flags) { return hold_or_give_up(c, s->rcvtimeo_ns, flags); }
int64_t wait_for_space(struct lcall *c, struct sock *s, uint64_t flags) { return hold_or_give_up(c, s->sndtimeo_ns, flags); }

bool nonblocking(const struct lcall *c, uint64_t flags)
{
	return (c->vflags & SYSP_NONBLOCK) || (flags & LX_MSG_DONTWAIT);
}

/* An iovec (up to IOV_MAX entries, read in pieces) and its total length. */
int64_t iov_total(endpoint_t t, uint64_t iov, uint64_t iovlen, uint64_t *total)
{
	if (iovlen > IOV_MAX)
		return -LX_EMSGSIZE;
	*total = 0;
	for (uint64_t i = 0; i < iovlen; i++) {
		struct lx_iovec v;
		if (ax_vcopy(t, (const void *)(iov + i * sizeof(v)), EP_NONE, &v, sizeof(v)) < 0)
			return -LX_EFAULT;
		if ((int64_t)v.len < 0)
			return -LX_EINVAL;
		*total += v.len;
		if (*total > (1ull << 31))
			return -LX_EMSGSIZE;
	}
	return 0;
}

int64_t iov_copy(endpoint_t t, uint64_t iov, uint64_t iovlen, uint64_t skip, unsigned char *buf, uint64_t len, bool out)
{
	for (uint64_t i = 0; i < iovlen && len; i++) {
		struct lx_iovec v;
		if (ax_vcopy(t, (const void *)(iov + i * sizeof(v)), EP_NONE, &v, sizeof(v)) < 0)
			return -LX_EFAULT;
		if (skip >= v.len) {
			skip -= v.len;
			continue;
		}
		v.base += skip, v.len -= skip, skip = 0;
		uint64_t n = v.len < len ? v.len : len;
		int64_t r = out ? ax_vcopy(EP_NONE, buf, t, (void *)v.base, n) : ax_vcopy(t, (const void *)v.base, EP_NONE, buf, n);
		if (r < 0)
			return -LX_EFAULT;
		buf += n, len -= n;
	}
	return 0;
}

/* An implicit bind (a send before bind, as Linux's autobind): asked of udp once. */
static void autobind(struct sock *s)
{
	if (s->binding)
		return;
	s->binding = true;
	struct sk_msg m = { .type = SK_BIND, .family = LX_AF_INET };
	engine_request(s, &m, 0);
}

static int64_t do_send(struct lcall *c, struct sock *s)
{
	endpoint_t t = c->thread;
	uint64_t flags = 0, buf = 0, len = 0, uaddr = 0, alen = 0;
	struct lx_msghdr mh = { 0 };
	int64_t r;
	if (c->nr == LX_SYS_sendmsg) {
		if (ax_vcopy(t, (const void *)c->a[1], EP_NONE, &mh, sizeof(mh)) < 0)
			return -LX_EFAULT;
		flags = c->a[2], uaddr = mh.name, alen = mh.namelen;
		if ((r = iov_total(t, mh.iov, mh.iovlen, &len)))
			return r;
	} else if (c->nr == LX_SYS_writev) {
		mh.iov = c->a[1], mh.iovlen = c->a[2];
		if ((r = iov_total(t, mh.iov, mh.iovlen, &len)))
			return r;
	} else {
		buf = c->a[1], len = c->a[2];
		if (c->nr == LX_SYS_sendto)
			flags = c->a[3], uaddr = c->a[4], alen = c->a[5];
	}
	if (s->error) /* an asynchronous error (ICMP) is reported by the next call */
		return take_error(s);
	if (s->shut_wr)
		return -LX_EPIPE;
	struct inaddr to = s->peer;
	bool given = uaddr != 0;
	if (given) {
		if ((r = get_sin(t, uaddr, alen, &to, NULL)))
			return r;
		if (!to.port)
			return -LX_EINVAL;
		if (is_broadcast(&to) && !s->broadcast)
			return -LX_EACCES;
	} else if (!s->connected) {
		return -LX_EDESTADDRREQ;
	}
	if (len > UDP_MAX)
		return -LX_EMSGSIZE;
	if (!s->bound) {
		autobind(s);
		return CALL_HELD; /* again when udp has answered the bind */
	}
	struct sockbuf_desc d = { 0 };
	if (given) {
		d.family = LX_AF_INET, d.port = to.port;
		memcpy(d.addr, &to.addr, 4);
	}
	struct app_dst src = { .t = t, .buf = buf, .iov = mh.iov, .iovlen = mh.iovlen };
	int e = sockbuf_dgram_write(&s->sb.tx, len, &d, copy_from_app, &src);
	if (e == CHAN_EAGAIN)
		return wait_for_space(c, s, flags);
	if (e)
		return e == CHAN_EINVAL ? -LX_EMSGSIZE : e == SOCKBUF_ECORRUPT ? -LX_EIO : e; /* (else the copy's EFAULT) */
	if (sys_debug)
		ax_printf("syscall: %lu ms: tx %lu bytes to %u.%u.%u.%u:%u\n", (unsigned long)(ax_time_ns() / 1000000), (unsigned long)len,
			  d.addr[0], d.addr[1], d.addr[2], d.addr[3], (unsigned)(d.port >> 8 | (d.port & 0xff) << 8));
	s->tx_hint = true;
	return (int64_t)len;
}

int copy_to_app(void *ctx, uint64_t at, const unsigned char *p, uint64_t n)
{
	const struct app_dst *d = ctx;
	if (d->iov)
		return (int)iov_copy(d->t, d->iov, d->iovlen, at, (unsigned char *)p, n, true);
	return ax_vcopy(EP_NONE, p, d->t, (void *)(d->buf + at), n) < 0 ? -LX_EFAULT : 0;
}

int copy_from_app(void *ctx, uint64_t at, unsigned char *p, uint64_t n)
{
	const struct app_dst *d = ctx;
	if (d->iov)
		return (int)iov_copy(d->t, d->iov, d->iovlen, at, p, n, false);
	return ax_vcopy(d->t, (const void *)(d->buf + at), EP_NONE, p, n) < 0 ? -LX_EFAULT : 0;
}

static int64_t do_recv(struct lcall *c, struct sock *s)
{
	endpoint_t t = c->thread;
	uint64_t flags = 0;
	struct lx_msghdr mh = { 0 };
	uint64_t len = 0;
	int64_t r;
	if (c->nr == LX_SYS_recvmsg) {
		if (ax_vcopy(t, (const void *)c->a[1], EP_NONE, &mh, sizeof(mh)) < 0)
			return -LX_EFAULT;
		flags = c->a[2];
		if ((r = iov_total(t, mh.iov, mh.iovlen, &len)))
			return r;
	} else if (c->nr == LX_SYS_readv) {
		mh.iov = c->a[1], mh.iovlen = c->a[2];
		if ((r = iov_total(t, mh.iov, mh.iovlen, &len)))
			return r;
	} else {
		len = c->a[2];
		if (c->nr == LX_SYS_recvfrom)
			flags = c->a[3];
		if ((int64_t)len < 0)
			return -LX_EINVAL;
	}
	struct sockbuf_desc d;
	bool cut;
	int cerr;
	struct app_dst dst = { t, c->nr == LX_SYS_readv || c->nr == LX_SYS_recvmsg ? mh.iov : 0, mh.iovlen, c->a[1] };
	r = sockbuf_dgram_read(&s->sb.rx, len, (flags & LX_MSG_PEEK ? SOCKBUF_READ_PEEK : 0) |
			       (flags & LX_MSG_TRUNC ? SOCKBUF_READ_TRUNC : 0), copy_to_app, &dst, &d, &cut, &cerr);
	if (r == SOCKBUF_ECORRUPT)
		return -LX_EIO; /* udp wrote impossible descriptors into this socket */
	if (r == CHAN_EAGAIN) {
		if (s->error)
			return take_error(s);
		if (s->shut_rd)
			return 0;
		return wait_for_data(c, s, flags);
	}
	if (!(flags & LX_MSG_PEEK))
		s->rx_hint = true;
	if (cerr)
		return cerr;
	if (sys_debug)
		ax_printf("syscall: %lu ms: rx %u bytes from %u.%u.%u.%u:%u\n", (unsigned long)(ax_time_ns() / 1000000), d.len,
			  d.addr[0], d.addr[1], d.addr[2], d.addr[3], (unsigned)(d.port >> 8 | (d.port & 0xff) << 8));
	struct inaddr from = s->peer;
	if (d.family == LX_AF_INET) {
		from.port = d.port;
		memcpy(&from.addr, d.addr, 4);
	}
	if (c->nr == LX_SYS_recvmsg) {
		uint8_t b[16] = { LX_AF_INET, 0 };
		memcpy(b + 2, &from.port, 2);
		memcpy(b + 4, &from.addr, 4);
		struct lx_msghdr out = mh;
		if (mh.name && ax_vcopy(EP_NONE, b, t, (void *)mh.name, mh.namelen < 16 ? mh.namelen : 16) < 0)
			return -LX_EFAULT;
		out.namelen = mh.name ? 16 : 0;
		out.controllen = 0;
		out.flags = cut ? LX_MSG_TRUNC : 0;
		if (ax_vcopy(EP_NONE, &out, t, (void *)c->a[1], sizeof(out)) < 0)
			return -LX_EFAULT;
	} else if (c->nr == LX_SYS_recvfrom && c->a[4]) {
		int64_t e = put_sin(t, &from, c->a[4], c->a[5]);
		if (e)
			return e;
	}
	return r;
}

int64_t put_int_opt(endpoint_t t, const void *v, uint32_t vlen, uint64_t uval, uint64_t ulen)
{
	int32_t have;
	if (ax_vcopy(t, (const void *)ulen, EP_NONE, &have, 4) < 0)
		return -LX_EFAULT;
	if (have < 0)
		return -LX_EINVAL;
	uint32_t len = (uint32_t)have < vlen ? (uint32_t)have : vlen;
	if (ax_vcopy(EP_NONE, v, t, (void *)uval, len) < 0 || ax_vcopy(EP_NONE, &len, t, (void *)ulen, 4) < 0)
		return -LX_EFAULT;
	return 0;
}

void setopt_engine(struct sock *s, int opt, uint64_t val)
{
	s->opt_set |= 1u << opt;
	s->opt_val[opt] = val;
	struct sk_msg m = { .type = SK_SETOPT, .arg = opt_names[opt], .arg2 = val };
	engine_request(s, &m, 0);
}

static int64_t do_setsockopt(struct lcall *c, struct sock *s)
{
	int32_t level = (int32_t)c->a[1], name = (int32_t)c->a[2];
	uint64_t uval = c->a[3], len = c->a[4];
	if (level == LX_SOL_SOCKET && (name == LX_SO_RCVTIMEO || name == LX_SO_SNDTIMEO)) {
		int64_t tv[2];
		if (len < sizeof(tv))
			return -LX_EINVAL;
		if (ax_vcopy(c->thread, (const void *)uval, EP_NONE, tv, sizeof(tv)) < 0)
			return -LX_EFAULT;
		if (tv[1] < 0 || tv[1] >= 1000000)
			return -33; /* EDOM, as Linux */
		*(name == LX_SO_RCVTIMEO ? &s->rcvtimeo_ns : &s->sndtimeo_ns) =
			tv[0] < 0 ? 0 : (uint64_t)tv[0] * 1000000000ull + (uint64_t)tv[1] * 1000;
		return 0;
	}
	if (level == LX_IPPROTO_TCP && s->stream && name == 13 /* TCP_CONGESTION */) {
		char cc[16] = { 0 };
		uint64_t n = len < sizeof(cc) - 1 ? len : sizeof(cc) - 1;
		if ((int64_t)len < 1 || ax_vcopy(c->thread, (const void *)uval, EP_NONE, cc, n) < 0)
			return (int64_t)len < 1 ? -LX_EINVAL : -LX_EFAULT;
		/* lwIP has one congestion control (NewReno-like): Linux's names for it are taken */
		return !strcmp(cc, "reno") || !strcmp(cc, "cubic") ? 0 : -2 /* ENOENT */;
	}
	int32_t v;
	if ((int64_t)len < 4)
		return -LX_EINVAL;
	if (ax_vcopy(c->thread, (const void *)uval, EP_NONE, &v, 4) < 0)
		return -LX_EFAULT;
	if (level == LX_SOL_SOCKET) {
		switch (name) {
		case LX_SO_BROADCAST:
			s->broadcast = v != 0;
			setopt_engine(s, OPT_BROADCAST, s->broadcast);
			return 0;
		case LX_SO_REUSEADDR:
		case LX_SO_REUSEPORT:
			s->reuseaddr = v != 0;
			setopt_engine(s, OPT_REUSEADDR, s->reuseaddr);
			return 0;
		case LX_SO_RCVBUF:
		case LX_SO_SNDBUF:
			v = v < 1024 ? 1024 : v > (1 << 24) ? 1 << 24 : v;
			*(name == LX_SO_RCVBUF ? &s->rcvbuf : &s->sndbuf) = v;
			setopt_engine(s, name == LX_SO_RCVBUF ? OPT_RCVBUF : OPT_SNDBUF, (uint64_t)v);
			return 0;
		case LX_SO_KEEPALIVE:
			setopt_engine(s, OPT_KEEPALIVE, v != 0);
			return 0;
		case LX_SO_LINGER: {
			int32_t l[2];
			if (len < sizeof(l))
				return -LX_EINVAL;
			if (ax_vcopy(c->thread, (const void *)uval, EP_NONE, l, sizeof(l)) < 0)
				return -LX_EFAULT;
			setopt_engine(s, OPT_LINGER, (uint64_t)(l[0] != 0) << 32 | (uint32_t)(l[1] < 0 ? 0 : l[1]));
			return 0;
		}
		}
		return -LX_ENOPROTOOPT;
	}
	if (level == LX_IPPROTO_TCP && s->stream) {
		static const int tcp_opts[] = { [1] = OPT_NODELAY, [2] = OPT_MAXSEG, [3] = OPT_CORK, [4] = OPT_KEEPIDLE,
						[5] = OPT_KEEPINTVL, [6] = OPT_KEEPCNT };
		if (name >= 1 && name <= 6) {
			if (name == 2 && (v < 88 || v > 32767))
				return -LX_EINVAL;
			if (name >= 4 && (v < 1 || v > 32767))
				return -LX_EINVAL;
			setopt_engine(s, tcp_opts[name], (uint64_t)v);
			return 0;
		}
		if (name == 9 /* DEFER_ACCEPT */ || name == 12 /* QUICKACK */ || name == 23 /* FASTOPEN */)
			return 0; /* accepted; lwIP has no fast open */
		return -LX_ENOPROTOOPT;
	}
	if (level == 0 && (name == 1 /* IP_TOS */ || name == 2 /* IP_TTL */))
		return 0; /* accepted, not applied yet */
	return -LX_ENOPROTOOPT;
}

static int64_t do_getsockopt(struct lcall *c, struct sock *s)
{
	int32_t level = (int32_t)c->a[1], name = (int32_t)c->a[2], v = 0;
	if (level == LX_SOL_SOCKET && (name == LX_SO_RCVTIMEO || name == LX_SO_SNDTIMEO)) {
		uint64_t ns = name == LX_SO_RCVTIMEO ? s->rcvtimeo_ns : s->sndtimeo_ns;
		int64_t tv[2] = { (int64_t)(ns / 1000000000ull), (int64_t)(ns % 1000000000ull / 1000) };
		return put_int_opt(c->thread, tv, sizeof(tv), c->a[3], c->a[4]);
	}
	if (level == LX_SOL_SOCKET && name == LX_SO_LINGER) {
		int32_t l[2] = { (int32_t)(s->opt_val[OPT_LINGER] >> 32), (int32_t)(uint32_t)s->opt_val[OPT_LINGER] };
		return put_int_opt(c->thread, l, sizeof(l), c->a[3], c->a[4]);
	}
	if (level == LX_IPPROTO_TCP && s->stream)
		return stream_getsockopt(c, s, name);
	if (level != LX_SOL_SOCKET)
		return -LX_ENOPROTOOPT;
	switch (name) {
	case LX_SO_TYPE: v = s->stream ? LX_SOCK_STREAM : LX_SOCK_DGRAM; break;
	case LX_SO_DOMAIN: v = LX_AF_INET; break;
	case LX_SO_PROTOCOL: v = s->stream ? 6 : 17; break;
	case LX_SO_KEEPALIVE: v = (int32_t)s->opt_val[OPT_KEEPALIVE]; break;
	case LX_SO_ERROR: v = s->error, s->error = 0; ready_changed(s); break;
	case LX_SO_BROADCAST: v = s->broadcast; break;
	case LX_SO_REUSEADDR: case LX_SO_REUSEPORT: v = s->reuseaddr; break;
	case LX_SO_RCVBUF: v = s->rcvbuf ? 2 * s->rcvbuf : DEFAULT_BUF; break;
	case LX_SO_SNDBUF: v = s->sndbuf ? 2 * s->sndbuf : DEFAULT_BUF; break;
	case LX_SO_ACCEPTCONN: v = s->listening; break;
	default: return -LX_ENOPROTOOPT;
	}
	return put_int_opt(c->thread, &v, 4, c->a[3], c->a[4]);
}

static int64_t do_shutdown(struct lcall *c, struct sock *s)
{
	uint64_t how = c->a[1];
	if (how > 2)
		return -LX_EINVAL;
	if (!s->connected)
		return -LX_ENOTCONN;
	s->shut_rd |= how != 1;
	s->shut_wr |= how != 0;
	struct sk_msg m = { .type = SK_SHUTDOWN, .arg = how };
	engine_request(s, &m, 0);
	calls_retry(s->id); /* blocked receives now see the end */
	return 0;
}

static bool data_call(uint32_t nr)
{
	return nr == LX_SYS_read || nr == LX_SYS_write || nr == LX_SYS_readv || nr == LX_SYS_writev || nr == LX_SYS_sendto ||
	       nr == LX_SYS_sendmsg || nr == LX_SYS_recvfrom || nr == LX_SYS_recvmsg || nr == LX_SYS_sendfile;
}

/* The library's options (lib/net/sock_ax.h). */
static int64_t ax_getsockopt(struct lcall *c, struct sock *s)
{
	int32_t name = (int32_t)c->a[2];
	if (name != AX_ACCEPT_TAKE && name != AX_SOCKBUF)
		return -LX_ENOPROTOOPT;
	uint64_t act_va = act_map(c->pid, c->thread);
	if (name == AX_ACCEPT_TAKE) {
		if (!s->listening)
			return -LX_EINVAL;
		struct ax_listener l = { .act_va = act_va, .key = (uint32_t)(s - socks) };
		if (s->accept_take_pid && s->accept_take_pid != c->pid)
			act_listen_drop(s); /* the other process's epoll asks the kernel from now on */
		s->accept_take_pid = l.act_va ? c->pid : 0;
		l.slot = l.act_va ? act_listen_open(s) : 0;
		return put_int_opt(c->thread, &l, sizeof(l), c->a[3], c->a[4]);
	}
	if (s->lib_pid && s->lib_pid != c->pid)
		return -LX_EBUSY; /* another process's library has it */
	/* taken to be connected by a connect descriptor (AX_TAKE_CONNECT in rx_off) */
	uint32_t intent = 0;
	int32_t have = 0;
	if (ax_vcopy(c->thread, (const void *)c->a[4], EP_NONE, &have, 4) < 0 ||
	    (have >= (int32_t)(offsetof(struct ax_sockbuf, rx_off) + 4) &&
	     ax_vcopy(c->thread, (const void *)(c->a[3] + offsetof(struct ax_sockbuf, rx_off)), EP_NONE, &intent, 4) < 0))
		return -LX_EFAULT;
	int64_t va = sock_map_force(s, c->thread, c->pid);
	if (va < 0)
		return va;
	if (intent == AX_TAKE_CONNECT && s->stream && !s->connected && !s->was_connected && !s->listening &&
	    !s->connecting)
		s->connecting = s->lib_connect = true;
	struct ax_sockbuf b = { .va = (uint64_t)va, .bytes = s->bytes, .rx_off = s->rx_off, .stream = s->stream,
				.act_va = act_va, .bit = (uint32_t)(s - socks), .eng = s->eng };
	s->lib_dirty |= s->lib_pid != c->pid;
	s->lib_pid = c->pid;
	ready_changed(s); /* its status into the page */
	return put_int_opt(c->thread, &b, sizeof(b), c->a[3], c->a[4]);
}

static int64_t ax_setsockopt(struct lcall *c, struct sock *s)
{
	int32_t name = (int32_t)c->a[2];
	if (name == AX_KICK) {
		s->tx_hint = s->rx_hint = true;
		ready_changed(s);
		return 0;
	}
	if (name == AX_WAKE)
		return act_set_wake(s, c->pid);
	if (name == AX_RECLAIM) {
		act_reclaim(c->pid);
		return 0;
	}
	if (name != AX_SOCKBUF)
		return -LX_ENOPROTOOPT;
	uint32_t back[2] = { 0, 0 }; /* the stream offset, AX_BACK_FIN */
	uint64_t blen = c->a[4] >= 8 ? 8 : 4;
	if (c->a[4] < 4 || ax_vcopy(c->thread, (const void *)c->a[3], EP_NONE, back, blen) < 0)
		return c->a[4] < 4 ? -LX_EINVAL : -LX_EFAULT;
	uint32_t off = back[0];
	if (s->lib_pid != c->pid)
		return -LX_EINVAL;
	/* our view of the rings again from what is published (the library moved them) */
	if (sockbuf_attach(&s->sb, s->mem, s->bytes, SB_APP))
		return -LX_EIO; /* the library left impossible indices */
	act_forget_sock(s);
	if (s->lib_connect) /* its connect descriptor was never queued, or not yet answered */
		s->connecting = s->lib_connect = false;
	if (s->stream && (back[1] & AX_BACK_FIN))
		s->fin_sent = s->shut_wr = true; /* the library queued the FIN piece */
	s->lib_pid = 0, s->rx_off = s->stream ? off : 0;
	s->lib_dirty = true;
	ready_changed(s);
	return 0;
}

int64_t calls_serve(struct lcall *c, struct sock *s)
{
	if (s->lib_pid && data_call(c->nr))
		return -LX_EBADFD; /* the library moves this socket's data (docs/sockets.md) */
	if ((c->nr == LX_SYS_getsockopt || c->nr == LX_SYS_setsockopt) && (int32_t)c->a[1] == SOL_AXOLOTL)
		return c->nr == LX_SYS_getsockopt ? ax_getsockopt(c, s) : ax_setsockopt(c, s);
	if (s->stream) {
		int64_t r = stream_serve(c, s);
		if (r != CALL_NOT_STREAM)
			return r;
	}
	switch (c->nr) {
	case LX_SYS_bind:
		return do_bind(c, s);
	case LX_SYS_connect:
		return do_connect(c, s);
	case LX_SYS_sendto:
	case LX_SYS_sendmsg:
	case LX_SYS_write:
	case LX_SYS_writev:
		return do_send(c, s);
	case LX_SYS_recvfrom:
	case LX_SYS_recvmsg:
	case LX_SYS_read:
	case LX_SYS_readv:
		return do_recv(c, s);
	case LX_SYS_getsockname:
		return put_sin(c->thread, &s->local, c->a[1], c->a[2]);
	case LX_SYS_getpeername:
		return s->connected ? put_sin(c->thread, &s->peer, c->a[1], c->a[2]) : -LX_ENOTCONN;
	case LX_SYS_setsockopt:
		return do_setsockopt(c, s);
	case LX_SYS_getsockopt:
		return do_getsockopt(c, s);
	case LX_SYS_shutdown:
		return do_shutdown(c, s);
	case LX_SYS_listen:
	case LX_SYS_accept:
	case LX_SYS_accept4:
		return -LX_EOPNOTSUPP;
	}
	return -LX_EOPNOTSUPP; /* recvmmsg, sendmmsg: not yet */
}

void calls_event(struct sock *s, uint64_t ev, int64_t result)
{
	if (ev & EV_FIN)
		s->fin_queued = true;
	if ((ev & EV_ERR) && result < 0 && result > -4096)
		s->error = (int32_t)-result;
	if (s->error == LX_ECONNRESET && s->fin_queued)
		s->error = LX_EPIPE; /* reset after the peer's FIN (CLOSE_WAIT): EPIPE, as Linux */
	if (ev & (EV_RX | EV_ACCEPT | EV_HUP | EV_ERR | EV_FIN))
		s->ready_told = false; /* an arrival: vfs hears of it even if the bits stay (EPOLLET) */
	if (ev & EV_HUP)
		s->hup = true;
	if (ev & EV_ACCEPT) { /* tcp's count of the queue (it also changes when one is taken) */
		uint32_t was = s->pending;
		s->pending = result > 0 && result < (1 << 20) ? (uint32_t)result : 0;
		if (s->pending > was && s->accept_take_pid)
			act_arrival(s); /* a connection came: the library's next EAGAIN is ours again */
	}
	calls_retry(s->id);
	ready_changed(s);
	if (s->accept_take_pid)
		act_listen_state(s);
	if (s->lib_pid && (ev & ~(uint64_t)EV_LIB))
		act_event(s);
}

void calls_hold(struct lcall *c)
{
	if (!hold(c, false))
		answer(c->thread, -LX_EAGAIN); /* too many blocked callers */
}

/* Serves held call h again; true if it is no longer held. */
static bool serve_again(struct held *h)
{
	struct sock *s = sock_find(h->c.sock);
	h->tried_ns = ax_time_ns();
	int64_t r = s ? calls_serve(&h->c, s) : -LX_EBADF;
	if (s)
		ready_changed(s);
	if (r == CALL_HELD)
		return false;
	h->used = false; /* CALL_TAKEN: it waits for an answer in a slot of its own now */
	vfsside_poll(); /* readiness first, as in syscall.c */
	if (r != CALL_TAKEN && r != CALL_DONE)
		answer(h->c.thread, r);
	return true;
}

bool calls_noretry; /* `service inject syscall noretry`: events no longer serve held calls */

void calls_retry(uint32_t sock)
{
	if (calls_noretry)
		return;
	for (bool progress = true; progress;) {
		progress = false;
		for (int i = 0; i < held_top; i++) {
			struct held *h = &held[i];
			if (h->used && !h->answer && (!sock || h->c.sock == sock))
				progress |= serve_again(h);
		}
	}
}

void calls_answered(uint64_t serial, const struct sk_msg *a)
{
	struct sock *s = sock_find(a->sock);
	struct inaddr got = { 0, a->port };
	memcpy(&got.addr, a->addr, 4);
	if (s && a->result == 0 && (a->flags == SK_BIND || a->flags == SK_CONNECT || a->flags == SK_LISTEN)) {
		if (a->family == LX_AF_INET) /* the local address the engine chose */
			s->bound = true, s->local = got;
	}
	if (s)
		ready_changed(s);
	struct held *h = NULL;
	for (int i = 0; serial && i < held_top && !h; i++)
		if (held[i].used && held[i].c.serial == serial)
			h = &held[i];
	if (!h && s && s->stream && a->flags == SK_CONNECT) {
		stream_connect_done(s, a); /* a non-blocking connect, or one a signal ended */
		return;
	}
	if (h && s && s->stream) {
		h->used = false;
		stream_answered(&h->c, s, a);
		calls_retry(a->sock);
		return;
	}
	if (!serial) { /* an implicit bind */
		if (s && a->flags == SK_BIND) {
			s->binding = false;
			if (a->result < 0)
				s->error = (int32_t)-a->result;
			calls_retry(s->id);
		}
		return;
	}
	if (h) {
		h->used = false;
		if (s && a->result == 0 && h->c.nr == LX_SYS_connect) {
			s->connected = !h->c.a[5];
			s->peer = s->connected ? (struct inaddr){ (uint32_t)h->c.a[3], (uint16_t)h->c.a[4] } : (struct inaddr){ 0, 0 };
		}
		answer(h->c.thread, a->result);
		calls_retry(a->sock); /* sends waiting for the bind */
	}
}

/* A held call ends without its result: what it started is undone or goes on alone. */
static void end_held(struct held *h, int64_t r)
{
	h->used = false;
	struct sock *s = sock_find(h->c.sock);
	if (!(s && s->stream && stream_cancelled(&h->c, r)))
		answer(h->c.thread, r);
}

void calls_cancel(endpoint_t thread)
{
	/* A datagram call waiting for the engine's answer (bind, connect) finishes first, as
	 * on Linux; a stream's connect is interrupted (it goes on: a non-blocking one now). */
	for (int i = 0; i < held_top; i++) {
		struct held *h = &held[i];
		struct sock *s = h->used ? sock_find(h->c.sock) : NULL;
		if (h->used && h->c.thread == thread && (!h->answer || (s && s->stream && h->c.nr == LX_SYS_connect)))
			end_held(h, -LX_ERESTARTSYS);
	}
}

void calls_drop_sock(uint32_t sock)
{
	for (int i = 0; i < held_top; i++)
		if (held[i].used && held[i].c.sock == sock)
			end_held(&held[i], -LX_EBADF);
}

uint64_t calls_timer(void)
{
	uint64_t now = 0, next = UINT64_MAX;
	while (held_top > 0 && !held[held_top - 1].used)
		held_top--;
	for (int i = 0; i < held_top; i++) {
		struct held *h = &held[i];
		if (!h->used)
			continue;
		if (!now)
			now = ax_time_ns();
		if (!h->answer && now - h->tried_ns >= HELD_SWEEP_NS && serve_again(h))
			continue; /* the sweep (HELD_SWEEP_NS) */
		if (!h->answer)
			next = h->tried_ns + HELD_SWEEP_NS < next ? h->tried_ns + HELD_SWEEP_NS : next;
		if (!h->c.deadline)
			continue;
		if (h->c.deadline > now) {
			next = h->c.deadline < next ? h->c.deadline : next;
			continue;
		}
		end_held(h, h->c.done ? (int64_t)h->c.done : -LX_EAGAIN);
	}
	return next == UINT64_MAX ? 0 : next - now;
}
