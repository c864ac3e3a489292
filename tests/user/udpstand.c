/* udpstand: stand-ins for ip and syscall, to drive the udp server alone (servers/udp/README.md,
 * tests/system/test_udp_engine.py). One binary, two services:
 *   ip      udpstand role=ip count=N   exports ip/udp.in, ip/rx.udp, ip/heap.udp; imports
 *           udp/out and udp/pool.ip; announces 10.0.2.15/24 as interface "e1000"; sends N
 *           datagrams from 10.0.2.2:5555 to port 7 (a window of 8, each with its sequence
 *           number and a pattern; every 500th is 8000 bytes, from the heap pool) and checks
 *           every echo byte by byte, with its IP and UDP checksums; also malformed packets
 *           and one to a port nobody has.
 *   syscall udpstand role=sys          exports syscall/udp.req and syscall/udp.ev; opens socket
 *           1 (bound to port 7) and echoes what it receives, as an application on the socket
 *           buffer; socket 2 checks an ephemeral bind and the broadcast option. After udp
 *           restarts (SK_HELLO) it reattaches both sockets with fresh grants.
 * Output lines the test reads: "udpstand-ip: N echoed", "udpstand-ip: done: ...",
 * "udpstand-sys: ...". */
#include "axrt.h"
#include "chan_name.h"
#include "chan_axolotl.h"
#include "ds_client.h"
#include "evloop.h"
#include "netdev_proto.h"
#include "ipx_proto.h"
#include "netq_proto.h"
#include "pool.h"
#include "service.h"
#include "sock_proto.h"
#include "sockbuf.h"

#define WAKE_BIT (1ull << 40)
#define MY_IP 0x0f02000au   /* 10.0.2.15, network order as stored */
#define PEER_IP 0x0202000au /* 10.0.2.2 */
#define BCAST_IP 0xff02000au
#define MAX_COUNT 60000
#define WINDOW 8
#define RXBUF 2048
#define NRX 64
#define HEAPBUF 16384
#define NHEAP 8
#define TEST_ID (1ull << 63)

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
static uint32_t sum(const uint8_t *p, size_t n, uint32_t s)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		s += (uint32_t)(p[n - 1] << 8);
	return s;
}
static uint16_t fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}
/* UDP checksum of the datagram at u (ulen bytes) between two addresses (as stored). */
static uint16_t udp_csum(uint32_t src, uint32_t dst, const uint8_t *u, size_t ulen)
{
	uint8_t ph[12];
	memcpy(ph, &src, 4), memcpy(ph + 4, &dst, 4);
	ph[8] = 0, ph[9] = 17, ph[10] = (uint8_t)(ulen >> 8), ph[11] = (uint8_t)ulen;
	return fold(sum(u, ulen, sum(ph, 12, 0)));
}
static void kick(struct spsc *q, endpoint_t ep)
{
	struct chan_axolotl_peer p = { .ep = ep, .bits = WAKE_BIT };
	struct chan_platform pl;
	chan_axolotl_platform(&pl, &p);
	chan_kick(q, &pl);
}
static void on_attach(struct chan_export *e, endpoint_t importer)
{
	*(endpoint_t *)e->ctx = importer;
}
static int64_t export_chan(struct chan_export *e, const char *key, int role, struct spsc *q, endpoint_t *peer_ep)
{
	*e = (struct chan_export){ .rights = KP_R | KP_W, .peer = "udp", .on_attach = on_attach, .ctx = peer_ep };
	ax_strpad(e->key, sizeof(e->key), key);
	int64_t r = chan_create(e, 64, 1024, role, q);
	return r ? r : chan_export(e);
}
static int64_t export_pool(struct chan_export *e, const char *key, struct pool_owner *o, uint32_t id,
			   uint32_t bufsz, uint32_t n, void *priv, size_t priv_len)
{
	uint64_t pages = (POOL_HDR_SIZE + (uint64_t)bufsz * n + 4095) / 4096;
	int64_t h = ax_mo_create(pages, 0);
	int64_t va = h > 0 ? ax_mo_map(h, 0, 0, pages, KP_R | KP_W) : h;
	if (va < 0)
		return va;
	if (pool_init(o, id, (void *)va, pages * 4096, bufsz, n, priv, priv_len) < 0)
		return -KE_INVAL;
	*e = (struct chan_export){ .handle = h, .bytes = pages * 4096, .rights = KP_R, .peer = "udp" };
	ax_strpad(e->key, sizeof(e->key), key);
	return chan_export(e);
}

/* ---- the ip stand-in ---- */
static struct {
	struct chan_export in_ex, rx_ex, heap_ex;
	struct spsc in, out;
	struct pool_owner rx, heap;
	uint32_t rx_priv[NRX * 2], heap_priv[NHEAP * 2];
	struct chan_import out_imp, pool_imp;
	struct pool_view upool;
	bool att;
	endpoint_t udp_ep;
	uint32_t udp_owner;
	int64_t udp_inc;
	bool iface_sent;
	uint64_t count, next_seq, echoed, corrupt, lost, unreach, tests_done, broadcasts, other_tx, dup;
	uint64_t out_seq[WINDOW], out_at[WINDOW];
	uint8_t seen[MAX_COUNT / 8 + 1];
	uint64_t last_report, started;
	bool done;
} ip;

static uint32_t dgram_len(uint64_t seq) { return seq % 500 == 499 ? 8000 : 4 + (uint32_t)(seq * 37 % 1400); }
static uint8_t pattern(uint64_t seq, uint32_t i) { return (uint8_t)(seq * 7 + i * 13); }

/* Builds an IP/UDP packet in a pool buffer and sends it up as IPX_RX; false if no room. */
static bool ip_send(uint64_t id, uint64_t seq, uint32_t len, uint16_t dport, int damage)
{
	if (spsc_count(&ip.in) >= (long)ip.in.nslots - 2)
		return false;
	struct pool_owner *o = len + 28 > RXBUF ? &ip.heap : &ip.rx;
	struct chan_ptr p;
	if (pool_alloc(o, len + 28, &p) < 0)
		return false;
	uint8_t *b = pool_resolve(&o->v, p);
	memset(b, 0, 28);
	b[0] = 0x45, b[8] = 64, b[9] = 17;
	uint16_t tot = (uint16_t)(len + 28);
	b[2] = (uint8_t)(tot >> 8), b[3] = (uint8_t)tot;
	uint32_t src = PEER_IP, dst = MY_IP;
	memcpy(b + 12, &src, 4), memcpy(b + 16, &dst, 4);
	uint16_t c = fold(sum(b, 20, 0));
	b[10] = (uint8_t)(c >> 8), b[11] = (uint8_t)c;
	uint8_t *u = b + 20;
	uint16_t sp = be16(5555), dp = be16(dport), ul = be16((uint16_t)(len + 8));
	memcpy(u, &sp, 2), memcpy(u + 2, &dp, 2), memcpy(u + 4, &ul, 2);
	uint8_t *d = u + 8;
	for (uint32_t i = 0; i < len; i++)
		d[i] = pattern(seq, i);
	if (len >= 4)
		memcpy(d, &seq, 4);
	c = udp_csum(src, dst, u, len + 8);
	u[6] = (uint8_t)(c >> 8), u[7] = (uint8_t)c;
	if (damage == 1)
		d[len - 1] ^= 0x55; /* bad UDP checksum */
	if (damage == 2)
		u[5] ^= 1; /* UDP length != IP payload */
	if (damage == 3)
		b[6] = 0x20; /* a fragment (MF) */
	if (damage == 4)
		p.len = 24; /* shorter than its IP length */
	struct ipx_msg m = { .type = IPX_RX, .id = id, .pkt = p };
	m.id = id | (uint64_t)(o == &ip.heap) << 62 | (uint64_t)p.offset << 24;
	spsc_push_part(&ip.in, &m, sizeof(m));
	return true;
}

static void ip_rx_done(const struct ipx_msg *m)
{
	struct pool_owner *o = (m->id >> 62 & 1) ? &ip.heap : &ip.rx;
	struct chan_ptr p = { o->v.pool_id, (uint32_t)(m->id >> 24 & 0xffffffff), 0 };
	if (pool_free(o, p) < 0)
		ax_printf("udpstand-ip: RX_DONE for a buffer not given (%#llx)\n", (unsigned long long)m->id);
	if ((m->id & TEST_ID) && (m->id & 0xff) == 9) {
		ip.tests_done++;
		if (m->arg == IPX_UNREACH_PORT)
			ip.unreach++;
	} else if (m->id & TEST_ID) {
		ip.tests_done++;
	}
}

/* A datagram udp sent: every header field, both checksums, the payload pattern. */
static void ip_tx(const struct ipx_msg *m)
{
	const uint8_t *b = pool_resolve(&ip.upool, m->pkt);
	uint32_t n = m->pkt.len;
	struct ipx_msg a = { .type = IPX_TX_DONE, .id = m->id };
	bool ok = b && n >= 28 && b[0] == 0x45 && b[9] == 17 && (uint32_t)(b[2] << 8 | b[3]) == n &&
		  fold(sum(b, 20, 0)) == 0;
	uint32_t src = 0, dst = 0;
	if (ok) {
		memcpy(&src, b + 12, 4), memcpy(&dst, b + 16, 4);
		const uint8_t *u = b + 20;
		uint16_t ulen = (uint16_t)(u[4] << 8 | u[5]);
		ok = src == MY_IP && ulen == n - 20 && (u[6] | u[7]) && udp_csum(src, dst, u, ulen) == 0;
		uint16_t sport = (uint16_t)(u[0] << 8 | u[1]), dport = (uint16_t)(u[2] << 8 | u[3]);
		if (ok && dst == BCAST_IP) {
			ip.broadcasts++;
			ax_printf("udpstand-ip: broadcast from port %u to port %u\n", sport, dport);
		} else if (ok && sport == 7 && dport == 5555 && dst == PEER_IP) {
			uint32_t len = ulen - 8u, seq = 0;
			const uint8_t *d = u + 8;
			if (len >= 4)
				memcpy(&seq, d, 4);
			ok = seq < ip.count && len == dgram_len(seq);
			for (uint32_t i = 4; ok && i < len; i++)
				ok = d[i] == pattern(seq, i);
			if (ok) {
				if (ip.seen[seq / 8] & (1u << (seq % 8))) {
					ip.dup++;
				} else {
					ip.seen[seq / 8] |= (uint8_t)(1u << (seq % 8));
					ip.echoed++;
					for (int w = 0; w < WINDOW; w++)
						if (ip.out_at[w] && ip.out_seq[w] == seq)
							ip.out_at[w] = 0;
				}
			}
		} else if (ok) {
			ip.other_tx++;
		}
	}
	if (!ok && ip.corrupt++ < 5)
		ax_printf("udpstand-ip: bad datagram from udp (%u bytes)\n", n);
	spsc_push_part(&ip.in, &a, sizeof(a));
}

static void ip_detach(void)
{
	chan_unimport(&ip.out_imp);
	chan_unimport(&ip.pool_imp);
	ip.att = false;
}

static void ip_attach(void)
{
	if (chan_import("udp", "out", &ip.out_imp) < 0 || chan_import("udp", "pool.ip", &ip.pool_imp) < 0 ||
	    spsc_attach(&ip.out, ip.out_imp.va, ip.out_imp.bytes, SPSC_CONSUMER) < 0 ||
	    pool_attach(&ip.upool, ip.pool_imp.va, ip.pool_imp.bytes) < 0) {
		ip_detach();
		return;
	}
	ip.att = true;
	ip.udp_owner = ip.out_imp.owner;
	struct ipx_msg h = { .type = IPX_HELLO, .arg = 0 };
	spsc_push_part(&ip.in, &h, sizeof(h));
	ax_printf("udpstand-ip: attached to udp/out and udp/pool.ip\n");
}

static void ip_counters(bool sockets)
{
	int64_t ep = ax_svc_lookup("udp", NULL);
	char line[400];
	size_t at = 0;
	for (uint64_t i = 0; ep > 0 && i < 32; i++) {
		struct kmsg m = { .type = NETQ_SHOW, .w = { NQ_COUNTERS, i } };
		if (ax_call((endpoint_t)ep, &m) < 0 || m.type != NETQ_LINE)
			break;
		char t[NETQ_TEXT + 1] = { 0 };
		memcpy(t, m.w, NETQ_TEXT);
		if (!strncmp(t, "no_port", 7) || !strncmp(t, "csum_err", 8) || !strncmp(t, "malformed", 9) ||
		    !strncmp(t, "bad_desc", 8) || !strncmp(t, "rx_", 3) || !strncmp(t, "stale", 5) ||
		    !strncmp(t, "tx_nomem", 8) || !strncmp(t, "not_ours", 8))
			at += (size_t)ksnprintf(line + at, sizeof(line) - at, "%s, ", t);
	}
	ax_printf("udpstand-ip: udp counters: %s\n", line);
	for (uint64_t i = 0; sockets && ep > 0 && i < 8; i++) {
		struct kmsg m = { .type = NETQ_SHOW, .w = { NQ_SOCKETS, i } };
		if (ax_call((endpoint_t)ep, &m) < 0 || m.type != NETQ_LINE)
			break;
		char t[NETQ_TEXT + 1] = { 0 };
		memcpy(t, m.w, NETQ_TEXT);
		ax_printf("udpstand-ip: udp socket: %s\n", t);
	}
}

static bool ip_poll(struct ax_evloop *l)
{
	bool work = false;
	uint64_t now = ax_time_ns();
	if (!ip.att)
		ip_attach();
	l->wait_ns = 2000000;
	l->doorbell = NULL; /* until attached: the old mapping is gone */
	if (!ip.att)
		return false;
	l->doorbell = (const volatile uint64_t *)(const void *)&ip.out.sh->bell;
	union { struct ipx_msg m; uint8_t raw[64]; } u;
	for (int i = 0; i < 128 && spsc_count(&ip.in) < (long)ip.in.nslots - 4; i++) {
		int e = spsc_pop(&ip.out, &u);
		if (e < 0)
			break;
		work = true;
		if (u.m.type == IPX_HELLO) {
			ax_printf("udpstand-ip: HELLO from udp incarnation %d\n", u.m.arg);
			/* The packets still queued in ip/udp.in go to the new udp, which answers them;
			 * the one the old udp may have had in hand when it died stays lost (a stand-in
			 * can afford that). */
			ip.udp_inc = u.m.arg;
			struct ipx_iface f = { .type = IPX_IFACE, .ifindex = 0, .up = 1, .addr = MY_IP,
					       .mask = 0x00ffffff, .gw = PEER_IP, .mtu = 1500 };
			ax_strpad(f.name, sizeof(f.name), "e1000");
			spsc_push_part(&ip.in, &f, sizeof(f));
			ip.iface_sent = true;
			if (!ip.started)
				ip.started = now;
		} else if (u.m.type == IPX_RX_DONE) {
			ip_rx_done(&u.m);
		} else if (u.m.type == IPX_TX) {
			ip_tx(&u.m);
		} else {
			ax_printf("udpstand-ip: unexpected message type %u\n", u.m.type);
		}
	}
	/* traffic: a window of datagrams, lost ones written off after 500 ms */
	if (ip.iface_sent && !ip.done && now - ip.started > 300000000) {
		if (ip.next_seq == 100 && ip.tests_done == 0) {
			ip_send(TEST_ID | 1, 1000001, 64, 7, 1);
			ip_send(TEST_ID | 2, 1000002, 64, 7, 2);
			ip_send(TEST_ID | 3, 1000003, 64, 7, 3);
			ip_send(TEST_ID | 4, 1000004, 64, 7, 4);
			ip_send(TEST_ID | 9, 1000009, 64, 9, 0);
			ip.tests_done = 0;
			ip.next_seq++;
			work = true;
		}
		for (int w = 0; w < WINDOW; w++) {
			if (ip.out_at[w] && now - ip.out_at[w] > 500000000)
				ip.out_at[w] = 0; /* given up (a late echo still counts) */
			if (!ip.out_at[w] && ip.next_seq < ip.count && ip.next_seq != 100) {
				if (!ip_send(ip.next_seq & 0xffffff, ip.next_seq, dgram_len(ip.next_seq), 7, 0))
					break;
				ip.out_seq[w] = ip.next_seq++;
				ip.out_at[w] = now | 1;
				work = true;
			}
		}
		if (ip.echoed >= ip.last_report + 1000) {
			ip.last_report = ip.echoed / 1000 * 1000;
			ax_printf("udpstand-ip: %llu echoed\n", (unsigned long long)ip.last_report);
		}
		bool idle = true;
		for (int w = 0; w < WINDOW; w++)
			idle &= !ip.out_at[w];
		if (ip.tests_done == 5) {
			ip.tests_done++;
			ip_counters(false);
		}
		if (ip.next_seq >= ip.count && idle) {
			ip.done = true;
			ip.lost = ip.count - ip.echoed;
			ax_printf("udpstand-ip: done: sent %llu, echoed %llu, corrupt %llu, lost %llu, duplicates %llu, "
				  "unreachable %llu, broadcasts %llu, other %llu\n",
				  (unsigned long long)ip.count, (unsigned long long)ip.echoed,
				  (unsigned long long)ip.corrupt, (unsigned long long)ip.lost, (unsigned long long)ip.dup,
				  (unsigned long long)ip.unreach, (unsigned long long)ip.broadcasts,
				  (unsigned long long)ip.other_tx);
			ip_counters(true);
		}
	}
	if (work)
		kick(&ip.in, ip.udp_ep ? ip.udp_ep : ip.udp_owner);
	return work;
}

static void ip_notify(struct ax_evloop *l, uint64_t bits)
{
	(void)l;
	if (!(bits & DS_NOTIFY_BIT))
		return;
	char label[DS_NAME_LEN], key[DS_NAME_LEN];
	while (dsc_check(label, key) == 0) {
		uint32_t v[6] = { 0 }, len = 0;
		if (ip.att && !strcmp(label, "udp") && dsc_get("udp", "out", v, &len) == 0 && v[1] != ip.udp_owner) {
			ax_printf("udpstand-ip: udp restarted: importing again\n");
			ip_detach();
		}
	}
}

static void on_msg(struct ax_evloop *l, struct kmsg *m)
{
	(void)l;
	if (!chan_export_serve(m))
		ax_reply(m->source, m);
}

static int ip_main(int argc, char **argv)
{
	ip.count = arg(argc, argv, "count", 3000);
	if (ip.count > MAX_COUNT)
		ip.count = MAX_COUNT;
	ip.udp_inc = -1;
	if (export_chan(&ip.in_ex, "udp.in", SPSC_PRODUCER, &ip.in, &ip.udp_ep) < 0 ||
	    export_pool(&ip.rx_ex, "rx.udp", &ip.rx, POOLID(POOLID_IP_RX, 0), RXBUF, NRX, ip.rx_priv, sizeof(ip.rx_priv)) < 0 ||
	    export_pool(&ip.heap_ex, "heap.udp", &ip.heap, POOLID(POOLID_IP_HEAP, 0), HEAPBUF, NHEAP, ip.heap_priv,
			sizeof(ip.heap_priv)) < 0) {
		ax_printf("udpstand-ip: cannot export\n");
		return 1;
	}
	dsc_subscribe("udp", "out");
	ax_printf("udpstand-ip: exported ip/udp.in, ip/rx.udp, ip/heap.udp; %llu datagrams to send\n",
		  (unsigned long long)ip.count);
	struct ax_evloop l = { .on_message = on_msg, .on_notify = ip_notify, .poll = ip_poll };
	return (int)ax_evloop_run(&l);
}

/* ---- the syscall stand-in ---- */
struct tsock {
	uint32_t id;
	int64_t h;
	void *va;
	uint64_t bytes;
	struct sockbuf sb;
};
static struct {
	struct chan_export req_ex, ev_ex;
	struct spsc req, ev;
	endpoint_t udp_ep;
	struct tsock s1, s2;
	uint64_t next_req, stage, echoed, reattached;
	bool tx_hint;
} sy;

static int64_t sock_make(struct tsock *t, uint32_t id, uint32_t size)
{
	size_t bytes = sockbuf_size(256, size, 256, size);
	uint64_t pages = (bytes + 4095) / 4096;
	t->id = id;
	t->h = ax_mo_create(pages, 0);
	int64_t va = t->h > 0 ? ax_mo_map(t->h, 0, 0, pages, KP_R | KP_W) : t->h;
	if (va < 0)
		return va;
	t->va = (void *)va, t->bytes = pages * 4096;
	if (sockbuf_init(t->va, t->bytes, 256, size, 256, size) < 0 || sockbuf_attach(&t->sb, t->va, t->bytes, SB_APP) < 0)
		return -KE_INVAL;
	return 0;
}

static void req(struct sk_msg m)
{
	m.req = ++sy.next_req;
	if (spsc_push_part(&sy.req, &m, sizeof(m)) < 0)
		ax_printf("udpstand-sys: request channel full\n");
}

static void sock_open(struct tsock *t, uint16_t flags)
{
	int64_t ep = ax_svc_lookup("udp", NULL);
	int64_t g = ep > 0 ? ax_mo_grant(t->h, (endpoint_t)ep, KP_R | KP_W) : ep;
	if (g < 0) {
		ax_printf("udpstand-sys: cannot grant socket %u: %lld\n", t->id, (long long)g);
		return;
	}
	req((struct sk_msg){ .type = SK_OPEN, .flags = (uint16_t)(SKF_DGRAM | flags), .sock = t->id,
			     .arg = (uint64_t)g, .arg2 = t->bytes });
}

static void sock_send(struct tsock *t, uint32_t addr, uint16_t port, const char *text)
{
	uint32_t n = (uint32_t)strlen(text);
	int err;
	void *p = sockbuf_alloc(&t->sb.tx, n, &err);
	if (!p)
		return;
	memcpy(p, text, n);
	struct sockbuf_desc d = { .family = 2, .port = be16(port) };
	memcpy(d.addr, &addr, 4);
	sockbuf_commit(&t->sb.tx, n, &d);
	req((struct sk_msg){ .type = SK_TX, .sock = t->id });
}

/* The application on socket 1: every datagram back where it came from. */
static bool echo(void)
{
	bool any = false;
	for (int i = 0; i < 64; i++) {
		struct sockbuf_desc d;
		int err;
		const void *data = sockbuf_peek(&sy.s1.sb.rx, &d, &err);
		if (!data)
			break;
		void *out = sockbuf_alloc(&sy.s1.sb.tx, d.len, &err);
		if (!out)
			break; /* TX full: later */
		memcpy(out, data, d.len);
		struct sockbuf_desc t = { .family = d.family, .port = d.port };
		memcpy(t.addr, d.addr, 16);
		if (sockbuf_commit(&sy.s1.sb.tx, d.len, &t) != 0)
			break;
		sockbuf_consume(&sy.s1.sb.rx, &d);
		sy.echoed++;
		any = true;
	}
	if (any)
		req((struct sk_msg){ .type = SK_TX, .sock = 1 });
	return any;
}

static void sys_event(const struct sk_msg *m)
{
	if (m->type == SK_HELLO) {
		ax_printf("udpstand-sys: HELLO from udp incarnation %llu\n", (unsigned long long)m->arg);
		if (sy.stage == 0) {
			sock_open(&sy.s1, 0);
			sy.stage = 1;
		} else {
			sock_open(&sy.s1, SKF_REATTACH);
			sock_open(&sy.s2, SKF_REATTACH);
			sy.reattached++;
			ax_printf("udpstand-sys: reattaching sockets 1 and 2\n");
		}
		return;
	}
	if (m->type == SK_EV) {
		if ((m->arg & EV_ERR) && m->sock == 2) {
			ax_printf("udpstand-sys: socket 2 error %lld\n", (long long)m->result);
			if (sy.stage == 6 && m->result == -13) { /* EACCES: broadcast needs the option */
				req((struct sk_msg){ .type = SK_SETOPT, .sock = 2, .arg = SKO_BROADCAST, .arg2 = 1 });
				sy.stage = 7;
			}
		}
		return;
	}
	if (m->type != SK_ANSWER)
		return;
	if (m->result < 0 && sy.stage < 8)
		ax_printf("udpstand-sys: request %llu (stage %llu) failed: %lld\n", (unsigned long long)m->req,
			  (unsigned long long)sy.stage, (long long)m->result);
	switch (sy.stage) {
	case 1: /* socket 1 open: bind port 7 */
		req((struct sk_msg){ .type = SK_BIND, .sock = 1, .family = 2, .port = be16(7) });
		sy.stage = 2;
		break;
	case 2:
		ax_printf("udpstand-sys: socket 1 bound to port %u\n", be16(m->port));
		sy.stage = 3; /* socket 2 once the echo runs (the interface is known then) */
		break;
	case 30: /* socket 2: an ephemeral port */
		req((struct sk_msg){ .type = SK_BIND, .sock = 2, .family = 2, .port = 0 });
		sy.stage = 4;
		break;
	case 4:
		ax_printf("udpstand-sys: socket 2 bound to ephemeral port %u (%s)\n", be16(m->port),
			  be16(m->port) >= 49152 ? "in range" : "OUT OF RANGE");
		sy.stage = 6;
		sock_send(&sy.s2, BCAST_IP, 9, "broadcast?");
		break;
	case 7: /* SO_BROADCAST set: the same send goes out now */
		ax_printf("udpstand-sys: broadcast option set\n");
		sock_send(&sy.s2, BCAST_IP, 9, "broadcast!");
		sy.stage = 8;
		break;
	default:
		break;
	}
}

static bool sys_poll(struct ax_evloop *l)
{
	bool work = false;
	union { struct sk_msg m; uint8_t raw[64]; } u;
	for (int i = 0; i < 128 && spsc_pop(&sy.ev, &u) == 0; i++) {
		work = true;
		sys_event(&u.m);
	}
	if (sy.stage >= 2)
		work |= echo();
	if (sy.stage == 3 && sy.echoed >= 50) {
		sock_open(&sy.s2, 0);
		sy.stage = 30;
	}
	if (work && sy.udp_ep)
		kick(&sy.req, sy.udp_ep);
	l->wait_ns = 5000000; /* the application side polls its RX queue too */
	return work;
}

static int sys_main(void)
{
	if (export_chan(&sy.req_ex, "udp.req", SPSC_PRODUCER, &sy.req, &sy.udp_ep) < 0 ||
	    export_chan(&sy.ev_ex, "udp.ev", SPSC_CONSUMER, &sy.ev, &sy.udp_ep) < 0 ||
	    sock_make(&sy.s1, 1, 256 * 1024) < 0 || sock_make(&sy.s2, 2, 16384) < 0) {
		ax_printf("udpstand-sys: cannot export or make socket buffers\n");
		return 1;
	}
	ax_printf("udpstand-sys: exported syscall/udp.req and syscall/udp.ev\n");
	struct ax_evloop l = { .on_message = on_msg, .poll = sys_poll,
			       .doorbell = (const volatile uint64_t *)(const void *)&sy.ev.sh->bell,
			       .sleeping = &sy.ev.sh->sleeping };
	return (int)ax_evloop_run(&l);
}

int main(int argc, char **argv)
{
	ax_svc_init(argc, argv);
	if (role_is(argc, argv, "ip"))
		return ip_main(argc, argv);
	if (role_is(argc, argv, "sys"))
		return sys_main();
	ax_printf("udpstand: role=ip or role=sys\n");
	return 1;
}
