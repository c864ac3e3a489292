/* tcpstand: a stand-in for syscall, to drive the tcp server alone (servers/tcp/README.md,
 * tests/system/test_tcp_engine.py). Run as the service `syscall`: exports syscall/tcp.req and
 * syscall/tcp.ev, makes socket buffers (RX 512 descriptors / 256 KiB, TX 256 / 256 KiB, as
 * syscall does) and grants them to tcp.
 *   role=sys [mib=N]  over tcp's loopback: listener 1 on port 5000; socket 2 connects, the
 *           connection is accepted as socket 3, N MiB (default 4) go each way with checked
 *           content, each side half-closes (SBD_FIN) and sees the other's FIN, both close;
 *           socket 4 connects to port 5001 (nobody: refused). "tcpstand: phase 1 done" —
 *           the test kills tcp then; after its SK_HELLO listener 1 is reattached (bind and
 *           listen replayed) and socket 5 connects, is accepted as 6, 256 KiB each way.
 *   role=echo [port=P]  listener on P (default 7); every accepted connection's bytes are
 *           written back; the peer's FIN is answered by ours, then the socket is closed.
 * Output lines start with "tcpstand: ". */
#include "axrt.h"
#include "chan_name.h"
#include "chan_axolotl.h"
#include "ds_client.h"
#include "evloop.h"
#include "netq_proto.h"
#include "service.h"
#include "sock_proto.h"
#include "sockbuf.h"

#define WAKE_BIT (1ull << 40)
#define NSOCK 32
#define LOOP_IP 0x0100007fu /* 127.0.0.1 as stored */

static uint64_t arg(int argc, char **argv, const char *key, uint64_t def)
{
	size_t n = strlen(key);
	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], key, n) && argv[i][n] == '=')
			return ax_atou(argv[i] + n + 1);
	return def;
}
static bool role_is(int argc, char **argv, const char *r)
{
	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], "role=", 5) && !strcmp(argv[i] + 5, r))
			return true;
	return false;
}
static uint16_t be16(uint16_t v) { return (uint16_t)(v >> 8 | v << 8); }
static uint8_t pattern(uint64_t i, int dir) { return (uint8_t)(i * 131 + (i >> 11) * 7 + (uint64_t)dir * 17); }

struct tsock {
	uint32_t id;
	int64_t h;
	void *va;
	uint64_t bytes;
	struct sockbuf sb;
	bool open;
	/* a checked transfer: tx_total bytes of pattern tx_dir out, then FIN; pattern rx_dir in */
	uint64_t tx_total, tx_sent, rx_got, bad;
	int tx_dir, rx_dir;
	bool fin_queued, rx_fin, echo, closing;
	uint32_t rx_off; /* bytes of the oldest RX piece already taken (echo) */
};

static struct {
	struct chan_export req_ex, ev_ex;
	struct spsc req, ev;
	endpoint_t tcp_ep;
	struct tsock s[NSOCK];
	uint64_t next_req;
	uint8_t tag[1024];
	uint32_t tagsock[1024];
	bool echo_role;
	uint16_t port;
	uint64_t mib, stage, t0, incarnations, next_id;
	bool kicked;
	int connected, accepted;
} sy;

enum { T_NONE, T_OPEN, T_SETOPT, T_BIND, T_LISTEN, T_CONNECT, T_REFUSED, T_ACCEPT, T_CLOSE, T_BAD };

static void kick(void)
{
	if (!sy.tcp_ep)
		return;
	struct chan_axolotl_peer p = { .ep = sy.tcp_ep, .bits = WAKE_BIT };
	struct chan_platform pl;
	chan_axolotl_platform(&pl, &p);
	chan_kick(&sy.req, &pl);
}

static void req(struct sk_msg m, int tag)
{
	m.req = ++sy.next_req;
	sy.tag[m.req % 1024] = (uint8_t)tag;
	sy.tagsock[m.req % 1024] = m.sock;
	if (spsc_push_part(&sy.req, &m, sizeof(m)) < 0)
		ax_printf("tcpstand: request channel full\n");
	sy.kicked = true;
}

static struct tsock *sock_of(uint32_t id)
{
	return id && id < NSOCK ? &sy.s[id] : NULL;
}

/* A socket buffer as syscall makes one, granted to tcp; SK_OPEN (or a reattach). */
static void sock_open(uint32_t id, bool reattach)
{
	struct tsock *t = &sy.s[id];
	if (!reattach) {
		memset(t, 0, sizeof(*t));
		t->id = id;
		size_t bytes = sockbuf_size(512, 256 * 1024, 256, 256 * 1024);
		uint64_t pages = (bytes + 4095) / 4096;
		t->h = ax_mo_create(pages, 0);
		int64_t va = t->h > 0 ? ax_mo_map(t->h, 0, 0, pages, KP_R | KP_W) : t->h;
		if (va < 0 || sockbuf_init((void *)va, pages * 4096, 512, 256 * 1024, 256, 256 * 1024) < 0 ||
		    sockbuf_attach(&t->sb, (void *)va, pages * 4096, SB_APP) < 0) {
			ax_printf("tcpstand: cannot make socket %u's buffer\n", id);
			return;
		}
		t->va = (void *)va, t->bytes = pages * 4096;
	}
	int64_t ep = ax_svc_lookup("tcp", NULL);
	int64_t g = ep > 0 ? ax_mo_grant(t->h, (endpoint_t)ep, KP_R | KP_W) : ep;
	if (g < 0) {
		ax_printf("tcpstand: cannot grant socket %u: %lld\n", id, (long long)g);
		return;
	}
	t->open = true;
	req((struct sk_msg){ .type = SK_OPEN, .flags = (uint16_t)(SKF_STREAM | (reattach ? SKF_REATTACH : 0)),
			     .sock = id, .arg = (uint64_t)g, .arg2 = t->bytes }, T_OPEN);
}

static void sk(uint16_t type, uint32_t id, uint32_t addr, uint16_t port, uint64_t a1, uint64_t a2, int tag)
{
	struct sk_msg m = { .type = type, .sock = id, .arg = a1, .arg2 = a2, .family = 2, .port = be16(port) };
	memcpy(m.addr, &addr, 4);
	req(m, tag);
}

static void listen_on(uint32_t id, uint16_t port)
{
	sk(SK_SETOPT, id, 0, 0, SKO_REUSEADDR, 1, T_SETOPT);
	sk(SK_BIND, id, 0, port, 0, 0, T_BIND);
	sk(SK_LISTEN, id, 0, 0, 16, 0, T_LISTEN);
}

static void transfer(struct tsock *t, uint64_t bytes, int tx_dir, int rx_dir)
{
	t->tx_total = bytes, t->tx_dir = tx_dir, t->rx_dir = rx_dir;
	t->tx_sent = t->rx_got = t->bad = 0;
	t->fin_queued = t->rx_fin = false;
}

/* One socket's application side: write what is left and the FIN, read and check (or echo). */
static bool pump(struct tsock *t)
{
	bool tx = false, rx = false;
	int err;
	while (!t->echo && t->tx_sent < t->tx_total) {
		uint32_t room = sockbuf_room(&t->sb.tx);
		uint64_t n = t->tx_total - t->tx_sent;
		if (n > room)
			n = room;
		if (n > 65536)
			n = 65536;
		if (!n)
			break;
		uint8_t *p = sockbuf_alloc(&t->sb.tx, (uint32_t)n, &err);
		if (!p)
			break;
		for (uint64_t i = 0; i < n; i++)
			p[i] = pattern(t->tx_sent + i, t->tx_dir);
		struct sockbuf_desc d = { 0 };
		if (sockbuf_commit(&t->sb.tx, (uint32_t)n, &d) != 0)
			break;
		t->tx_sent += n;
		tx = true;
	}
	for (int k = 0; k < 256; k++) {
		struct sockbuf_desc d;
		const uint8_t *data = sockbuf_peek(&t->sb.rx, &d, &err);
		if (!data)
			break;
		if (d.flags & SBD_FIN) {
			t->rx_fin = true;
			sockbuf_consume(&t->sb.rx, &d);
			rx = true;
			continue;
		}
		if (t->echo) {
			uint32_t n = d.len - t->rx_off, room = sockbuf_room(&t->sb.tx);
			if (n > room)
				n = room;
			uint8_t *p = n ? sockbuf_alloc(&t->sb.tx, n, &err) : NULL;
			struct sockbuf_desc o = { 0 };
			if (!p)
				break;
			memcpy(p, data + t->rx_off, n);
			if (sockbuf_commit(&t->sb.tx, n, &o) != 0)
				break;
			tx = true;
			t->rx_off += n, t->rx_got += n;
			if (t->rx_off < d.len)
				break; /* TX full: the rest later */
			t->rx_off = 0;
		} else {
			for (uint32_t i = 0; i < d.len; i++)
				if (data[i] != pattern(t->rx_got + i, t->rx_dir) && t->bad++ < 3)
					ax_printf("tcpstand: socket %u: byte %llu is %#x, not %#x\n", t->id,
						  (unsigned long long)(t->rx_got + i), data[i], pattern(t->rx_got + i, t->rx_dir));
			t->rx_got += d.len;
		}
		sockbuf_consume(&t->sb.rx, &d);
		rx = true;
	}
	bool all_sent = t->echo ? t->rx_fin && !t->rx_off : t->tx_sent == t->tx_total;
	if (all_sent && !t->fin_queued && sockbuf_room(&t->sb.tx) > 0 && sockbuf_alloc(&t->sb.tx, 0, &err)) {
		struct sockbuf_desc d = { .flags = SBD_FIN };
		if (sockbuf_commit(&t->sb.tx, 0, &d) == 0)
			t->fin_queued = tx = true;
	}
	if (tx)
		sk(SK_TX, t->id, 0, 0, 0, 0, T_NONE);
	if (rx)
		sk(SK_RXDONE, t->id, 0, 0, 0, 0, T_NONE);
	return tx || rx;
}

static void counters(const char *who)
{
	int64_t ep = ax_svc_lookup("tcp", NULL);
	char line[400];
	size_t at = 0;
	line[0] = 0;
	for (uint64_t i = 0; ep > 0 && i < 64; i++) {
		struct kmsg m = { .type = NETQ_SHOW, .w = { NQ_COUNTERS, i } };
		if (ax_call((endpoint_t)ep, &m) < 0 || m.type != NETQ_LINE)
			break;
		char t[NETQ_TEXT + 1] = { 0 };
		memcpy(t, m.w, NETQ_TEXT);
		at += (size_t)ksnprintf(line + at, sizeof(line) - at, "%s, ", t);
		if (at > 300) { /* lines the console prints whole; the test joins them */
			ax_printf("tcpstand: %s tcp counters: %s\n", who, line);
			at = 0, line[0] = 0;
		}
	}
	if (at)
		ax_printf("tcpstand: %s tcp counters: %s\n", who, line);
	for (uint64_t i = 0; ep > 0 && i < 16; i++) {
		struct kmsg m = { .type = NETQ_SHOW, .w = { NQ_SOCKETS, i } };
		if (ax_call((endpoint_t)ep, &m) < 0 || m.type != NETQ_LINE)
			break;
		char t[NETQ_TEXT + 1] = { 0 };
		memcpy(t, m.w, NETQ_TEXT);
		ax_printf("tcpstand: tcp socket: %s\n", t);
	}
}

static uint64_t ms_since(uint64_t t) { return (ax_time_ns() - t) / 1000000; }

/* ---- role=sys: the engine test ---- */
static void sys_answer(const struct sk_msg *m)
{
	int tag = sy.tag[m->req % 1024];
	uint32_t id = sy.tagsock[m->req % 1024];
	if (tag == T_BAD) {
		ax_printf("tcpstand: bad request %llu: %lld\n", (unsigned long long)m->req, (long long)m->result);
		return;
	}
	if (m->result < 0 && tag != T_REFUSED)
		ax_printf("tcpstand: request %llu (tag %d, socket %u) failed: %lld\n", (unsigned long long)m->req, tag, id,
			  (long long)m->result);
	switch (tag) {
	case T_LISTEN:
		ax_printf("tcpstand: socket %u listening on port %u: %lld\n", id, be16(m->port), (long long)m->result);
		if (sy.stage == 0) {
			sy.stage = 1;
			/* requests in the wrong state, before anything connects */
			sk(SK_CONNECT, 1, LOOP_IP, 5000, 0, 0, T_BAD);  /* a listener: -EISCONN */
			sk(SK_ACCEPT, 4, 0, 0, 1, 0, T_BAD);            /* nothing pending: -EAGAIN */
			sk(SK_ACCEPT, 4, 0, 0, 2, 0, T_BAD);            /* not a listener: -EINVAL */
			sk(SK_BIND, 9, 0, 5002, 0, 0, T_BAD);           /* unknown socket: -EBADF */
			sk(SK_SETOPT, 4, 0, 0, 0x7777, 1, T_BAD);       /* unknown option: -ENOPROTOOPT */
			sk(SK_CONNECT, 2, LOOP_IP, 5000, 0, 0, T_CONNECT);
			sk(SK_CONNECT, 4, LOOP_IP, 5001, 0, 0, T_REFUSED);
		} else if (sy.stage == 10) {
			sy.stage = 11;
			sock_open(5, false);
			sk(SK_CONNECT, 5, LOOP_IP, 5000, 0, 0, T_CONNECT);
		}
		break;
	case T_BIND:
		if (sy.stage >= 10)
			ax_printf("tcpstand: listener rebound after the restart: %lld\n", (long long)m->result);
		break;
	case T_REFUSED:
		ax_printf("tcpstand: connect to a closed port: %lld\n", (long long)m->result);
		sk(SK_CLOSE, 4, 0, 0, 0, 0, T_CLOSE);
		break;
	case T_CONNECT:
		ax_printf("tcpstand: socket %u connected from port %u: %lld\n", id, be16(m->port), (long long)m->result);
		if (m->result == 0)
			sy.connected++;
		break;
	case T_ACCEPT: {
		uint32_t la = (uint32_t)m->arg;
		const uint8_t *a = (const uint8_t *)&la;
		ax_printf("tcpstand: socket %u accepted: peer port %u, local %u.%u.%u.%u:%u: %lld\n", id, be16(m->port),
			  a[0], a[1], a[2], a[3], be16((uint16_t)m->arg2), (long long)m->result);
		if (m->result == 0)
			sy.accepted++;
		break;
	}
	case T_CLOSE:
		ax_printf("tcpstand: socket %u closed: %lld\n", id, (long long)m->result);
		if (sock_of(id))
			sock_of(id)->open = false;
		break;
	default:
		break;
	}
}

static void sys_event(const struct sk_msg *m)
{
	if (m->type == SK_HELLO) {
		ax_printf("tcpstand: HELLO from tcp incarnation %llu\n", (unsigned long long)m->arg);
		if (sy.incarnations++ == 0) {
			sock_open(1, false);
			sock_open(2, false);
			sock_open(4, false);
			listen_on(1, 5000);
		} else {
			sock_open(1, true);
			listen_on(1, 5000); /* syscall replays a listener's options, bind and listen */
			sy.stage = 10;
		}
		return;
	}
	if (m->type == SK_EV) {
		if (m->arg & EV_ERR)
			ax_printf("tcpstand: socket %u error %lld%s\n", m->sock, (long long)m->result,
				  (m->arg & EV_HUP) ? " (hup)" : "");
		if ((m->arg & EV_ACCEPT) && m->sock == 1 && m->result > 0) {
			uint32_t id = sy.stage < 10 ? 3 : 6;
			if (!sy.s[id].open) {
				sock_open(id, false);
				sk(SK_ACCEPT, id, 0, 0, 1, 0, T_ACCEPT);
			}
		}
		return;
	}
	if (m->type == SK_ANSWER)
		sys_answer(m);
}

static void sys_progress(void)
{
	uint64_t size = sy.mib << 20;
	struct tsock *c = &sy.s[2], *a = &sy.s[3];
	if (sy.stage >= 10) {
		c = &sy.s[5], a = &sy.s[6];
		size = 256 * 1024;
	}
	if ((sy.stage == 1 || sy.stage == 11) && sy.connected && sy.accepted) {
		sy.stage++;
		sy.t0 = ax_time_ns();
		transfer(c, size, 0, 1);
		transfer(a, size, 1, 0);
	}
	if (sy.stage == 2 || sy.stage == 12) {
		pump(c);
		pump(a);
		if (c->rx_fin && a->rx_fin && c->fin_queued && a->fin_queued) {
			uint64_t ms = ms_since(sy.t0);
			ax_printf("tcpstand: %s: %llu bytes each way in %llu ms (%llu KiB/s), got %llu and %llu, "
				  "corrupt %llu, FIN seen by both\n", sy.stage == 2 ? "transfer" : "after the restart",
				  (unsigned long long)size, (unsigned long long)ms,
				  (unsigned long long)(ms ? 2 * size / 1024 * 1000 / ms : 0), (unsigned long long)c->rx_got,
				  (unsigned long long)a->rx_got, (unsigned long long)(c->bad + a->bad));
			sk(SK_CLOSE, c->id, 0, 0, 0, 0, T_CLOSE);
			sk(SK_CLOSE, a->id, 0, 0, 0, 0, T_CLOSE);
			sy.stage++;
		}
	}
	if (sy.stage == 3 && !c->open && !a->open && !sy.s[4].open) {
		counters("phase 1");
		ax_printf("tcpstand: phase 1 done\n");
		sy.stage = 4;
		sy.connected = sy.accepted = 0;
	}
	if (sy.stage == 13 && !c->open && !a->open) {
		sk(SK_CLOSE, 1, 0, 0, 0, 0, T_CLOSE);
		sy.stage = 14;
	}
	if (sy.stage == 14 && !sy.s[1].open) {
		counters("end");
		ax_printf("tcpstand: done\n");
		sy.stage = 15;
	}
}

/* ---- role=echo ---- */
static void echo_event(const struct sk_msg *m)
{
	if (m->type == SK_HELLO) {
		ax_printf("tcpstand: HELLO from tcp incarnation %llu\n", (unsigned long long)m->arg);
		if (sy.incarnations++ == 0) {
			sock_open(1, false);
			listen_on(1, sy.port);
			sy.next_id = 2;
		} else {
			sock_open(1, true);
			listen_on(1, sy.port);
		}
		return;
	}
	if (m->type == SK_EV) {
		if (m->arg & EV_ERR)
			ax_printf("tcpstand: socket %u error %lld\n", m->sock, (long long)m->result);
		struct tsock *t = sock_of(m->sock);
		if ((m->arg & EV_HUP) && t && t->echo && !t->closing) {
			t->closing = true;
			sk(SK_CLOSE, t->id, 0, 0, 0, 0, T_CLOSE);
		}
		if ((m->arg & EV_ACCEPT) && m->sock == 1 && m->result > 0 && sy.next_id < NSOCK) {
			uint32_t id = (uint32_t)sy.next_id++;
			sock_open(id, false);
			sy.s[id].echo = true;
			sk(SK_ACCEPT, id, 0, 0, 1, 0, T_ACCEPT);
		}
		return;
	}
	if (m->type != SK_ANSWER)
		return;
	int tag = sy.tag[m->req % 1024];
	uint32_t id = sy.tagsock[m->req % 1024];
	if (tag == T_LISTEN)
		ax_printf("tcpstand: echo listening on port %u: %lld\n", be16(m->port), (long long)m->result);
	if (tag == T_ACCEPT)
		ax_printf("tcpstand: echo socket %u accepted from port %u: %lld\n", id, be16(m->port), (long long)m->result);
	if (tag == T_CLOSE && sock_of(id)) {
		ax_printf("tcpstand: echo socket %u closed after %llu bytes\n", id, (unsigned long long)sy.s[id].rx_got);
		sy.s[id].open = false;
		ax_mo_unmap((uint64_t)sy.s[id].va);
		ax_mo_destroy(sy.s[id].h);
		counters("echo");
	}
}

static void echo_progress(void)
{
	for (uint32_t i = 2; i < NSOCK; i++) {
		struct tsock *t = &sy.s[i];
		if (!t->open || !t->echo || t->closing)
			continue;
		pump(t);
		if (t->rx_fin && t->fin_queued) {
			t->closing = true;
			sk(SK_CLOSE, t->id, 0, 0, 0, 0, T_CLOSE);
		}
	}
}

static bool poll(struct ax_evloop *l)
{
	bool work = false;
	union { struct sk_msg m; uint8_t raw[64]; } u;
	for (int i = 0; i < 128 && spsc_pop(&sy.ev, &u) == 0; i++) {
		work = true;
		if (sy.echo_role)
			echo_event(&u.m);
		else
			sys_event(&u.m);
	}
	if (sy.echo_role)
		echo_progress();
	else
		sys_progress();
	if (sy.kicked)
		kick();
	work |= sy.kicked;
	sy.kicked = false;
	l->wait_ns = 1000000; /* the application side polls its rings too */
	return work;
}

static void on_attach(struct chan_export *e, endpoint_t importer)
{
	(void)e;
	sy.tcp_ep = importer;
}

static int64_t export_chan(struct chan_export *e, const char *key, int role, struct spsc *q)
{
	*e = (struct chan_export){ .rights = KP_R | KP_W, .peer = "tcp", .on_attach = on_attach };
	ax_strpad(e->key, sizeof(e->key), key);
	int64_t r = chan_create(e, 64, 1024, role, q);
	return r ? r : chan_export(e);
}

static void on_msg(struct ax_evloop *l, struct kmsg *m)
{
	(void)l;
	if (!chan_export_serve(m))
		ax_reply(m->source, m);
}

int main(int argc, char **argv)
{
	ax_svc_init(argc, argv);
	sy.echo_role = role_is(argc, argv, "echo");
	sy.port = (uint16_t)arg(argc, argv, "port", 7);
	sy.mib = arg(argc, argv, "mib", 4);
	if (export_chan(&sy.req_ex, "tcp.req", SPSC_PRODUCER, &sy.req) < 0 ||
	    export_chan(&sy.ev_ex, "tcp.ev", SPSC_CONSUMER, &sy.ev) < 0) {
		ax_printf("tcpstand: cannot export\n");
		return 1;
	}
	ax_printf("tcpstand: exported syscall/tcp.req and syscall/tcp.ev (%s)\n", sy.echo_role ? "echo" : "engine test");
	struct ax_evloop l = { .on_message = on_msg, .poll = poll,
			       .doorbell = (const volatile uint64_t *)(const void *)&sy.ev.sh->bell,
			       .sleeping = &sy.ev.sh->sleeping };
	return (int)ax_evloop_run(&l);
}
