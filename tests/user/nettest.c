/* nettest: a stand-in for ip in the e1000 tests (tests/system/test_e1000.py). Run by rs as
 * the service `ip` (binary=nettest, dma), it does what ip does towards a driver
 * (lib/net/netdev_proto.h): exports ip/IF.down, ip/IF.up and an RX pool ip/rx.IF, announces
 * a TX pool with ND_POOL, gives RX buffers after each ND_RESET. Then it speaks to QEMU's
 * user network: an ARP request for 10.0.2.2 from 10.0.2.15, and ICMP echoes (one every
 * 200 ms, alternately checksummed in software and offloaded to the device, header and
 * payload in two segments), checking every reply. Injectable (`service inject ip WORD`):
 * `garbage` sends the driver malformed messages and checks they come back as errors,
 * `counters` prints the driver's counters (NETQ_SHOW), `poll` and `irq` send ND_CONF.
 *   nettest [if=e1000] [icmp_l4=0] [restarted=N] */
#include "axrt.h"
#include "chan_name.h"
#include "chan_axolotl.h"
#include "doorbell.h"
#include "evloop.h"
#include "service.h"
#include "ds_client.h"
#include "pool.h"
#include "../../lib/net/netdev_proto.h"
#include "../../lib/net/netq_proto.h"

#define RX_BUFS 192
#define TX_BUFS 64
#define PING_NS 200000000ull
#define WAKE_BIT (1ull << 40)
#define GARBAGE_ID 0xbad00000ull
#define PING_ID 0x4158

static const uint8_t my_ip[4] = { 10, 0, 2, 15 }, gw_ip[4] = { 10, 0, 2, 2 };

static struct {
	char ifname[24];
	struct chan_export ex_down, ex_up, ex_rx, ex_tx;
	struct spsc down, up;
	struct chan_axolotl_peer drv;
	struct chan_platform plat;
	int64_t rx_h, tx_h;
	void *rx_mem, *tx_mem;
	struct pool_owner rx, tx;
	uint32_t incarnation;
	uint8_t mac[6], gw_mac[6];
	bool have_mac, have_gw;
	uint32_t resets;
	struct { uint64_t id; struct chan_ptr p[2]; uint32_t n; } inflight[TX_BUFS];
	uint16_t seq;
	uint64_t sent_ns[64]; /* send times by seq % 64 */
	uint64_t rtt_sum_us, rtt_max_us;
	uint64_t next_ping, sent, replies, offloaded_replies, bad_replies, tx_errors, pool_errors;
	uint64_t replies_at_reset, replies_at_garbage, garbage_ids_back;
	bool garbage_sent, said_resumed, said_garbage_ok, said_conf;
	uint64_t replies_at_conf;
	bool no_icmp_l4; /* icmp_l4=0: devices that offload only TCP/UDP checksums (QEMU's e1000e) */
	uint32_t rx_flags_seen;
} n;

static uint8_t rx_priv[POOL_PRIV_SIZE(RX_BUFS)] __attribute__((aligned(8)));
static uint8_t tx_priv[POOL_PRIV_SIZE(TX_BUFS)] __attribute__((aligned(8)));

static void on_attach(struct chan_export *e, endpoint_t importer)
{
	if (e == &n.ex_down)
		n.drv.ep = importer;
}

/* A MOF_DMA pool of nbufs 2048-byte buffers, exported as key for the driver alone. */
static int64_t make_pool(struct chan_export *ex, const char *key, uint32_t kind, uint32_t nbufs, int64_t *h,
			 void **mem, struct pool_owner *o, void *priv, size_t privlen)
{
	uint64_t pages = (POOL_HDR_SIZE + (uint64_t)nbufs * 2048 + 4095) / 4096;
	*h = ax_mo_create(pages, MOF_DMA);
	int64_t va = *h > 0 ? ax_mo_map(*h, 0, 0, pages, KP_R | KP_W) : *h;
	if (va < 0)
		return va;
	*mem = (void *)va;
	if (pool_init(o, POOLID(kind, n.incarnation), *mem, pages * 4096, 2048, nbufs, priv, privlen) < 0)
		return -KE_INVAL;
	*ex = (struct chan_export){ .handle = *h, .bytes = pages * 4096, .rights = KP_R, .peer = n.ifname };
	ax_strpad(ex->key, sizeof(ex->key), key);
	return 0;
}

static int64_t make_chan(struct chan_export *ex, const char *key, int role, struct spsc *q)
{
	*ex = (struct chan_export){ .rights = KP_R | KP_W, .peer = n.ifname, .on_attach = on_attach };
	ax_strpad(ex->key, sizeof(ex->key), key);
	return chan_create(ex, NETDEV_SLOT, NETDEV_SLOTS, role, q);
}

/* Publishes the four names, retrying for a while: at boot our ds label may not be
 * registered yet. */
static int64_t export_all(void)
{
	static const uint64_t never = 0;
	struct chan_export *ex[] = { &n.ex_rx, &n.ex_tx, &n.ex_up, &n.ex_down };
	int64_t r = 0;
	for (int i = 0; i < 4; i++) {
		for (int tries = 0; tries < 100 && (r = chan_export(ex[i])) < 0; tries++)
			ax_wait_timeout(&never, 0, 20000000);
		if (r < 0)
			return r;
	}
	return 0;
}

static bool push(const void *m)
{
	bool ok = spsc_push_part(&n.down, m, sizeof(struct netdev_msg)) == 0;
	if (ok)
		chan_kick(&n.down, &n.plat);
	return ok;
}

static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8), p[1] = (uint8_t)v; }
static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }

static uint16_t csum(const uint8_t *p, uint32_t len)
{
	uint32_t s = 0;
	for (uint32_t i = 0; i + 1 < len; i += 2)
		s += (uint32_t)get16(p + i);
	if (len & 1)
		s += (uint32_t)p[len - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static uint8_t *buf(struct pool_owner *o, struct chan_ptr p) { return pool_resolve(&o->v, p); }

/* Sends a frame from up to two TX buffers; false if none is free or the channel is full. */
static bool send_frame(const uint8_t *hdr, uint32_t hlen, const uint8_t *pay, uint32_t plen, uint32_t flags,
		       uint32_t arg)
{
	int slot = -1;
	for (int i = 0; i < TX_BUFS && slot < 0; i++)
		if (!n.inflight[i].n)
			slot = i;
	struct netdev_msg m = { .type = ND_TX, .nseg = plen ? 2 : 1, .flags = flags, .arg = arg };
	if (slot < 0 || pool_alloc(&n.tx, hlen, &m.seg[0]) < 0)
		return false;
	if (plen && pool_alloc(&n.tx, plen, &m.seg[1]) < 0) {
		pool_free(&n.tx, m.seg[0]);
		return false;
	}
	memcpy(buf(&n.tx, m.seg[0]), hdr, hlen);
	if (plen)
		memcpy(buf(&n.tx, m.seg[1]), pay, plen);
	m.id = ((uint64_t)n.resets << 32) | (uint64_t)slot;
	if (!push(&m)) {
		pool_free(&n.tx, m.seg[0]);
		if (plen)
			pool_free(&n.tx, m.seg[1]);
		return false;
	}
	n.inflight[slot].id = m.id;
	n.inflight[slot].p[0] = m.seg[0];
	n.inflight[slot].p[1] = m.seg[1];
	n.inflight[slot].n = m.nseg;
	return true;
}

static void send_arp(void)
{
	uint8_t f[42] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	memcpy(f + 6, n.mac, 6);
	put16(f + 12, 0x0806);
	put16(f + 14, 1), put16(f + 16, 0x0800);
	f[18] = 6, f[19] = 4;
	put16(f + 20, 1);
	memcpy(f + 22, n.mac, 6), memcpy(f + 28, my_ip, 4);
	memcpy(f + 38, gw_ip, 4);
	if (send_frame(f, sizeof(f), NULL, 0, 0, 0))
		ax_printf("nettest: ARP request for 10.0.2.2 sent\n");
}

static void payload(uint8_t *p, uint16_t seq)
{
	for (int i = 0; i < 56; i++)
		p[i] = (uint8_t)(seq * 7 + i);
}

static void send_ping(void)
{
	uint8_t h[42], pay[56];
	uint16_t seq = ++n.seq;
	bool offload = !(seq & 1);
	memcpy(h, n.gw_mac, 6);
	memcpy(h + 6, n.mac, 6);
	put16(h + 12, 0x0800);
	uint8_t *ip = h + 14, *ic = h + 34;
	memset(ip, 0, 28);
	ip[0] = 0x45;
	put16(ip + 2, 20 + 8 + 56);
	put16(ip + 4, seq);
	ip[8] = 64, ip[9] = 1;
	memcpy(ip + 12, my_ip, 4), memcpy(ip + 16, gw_ip, 4);
	ic[0] = 8;
	put16(ic + 4, PING_ID), put16(ic + 6, seq);
	payload(pay, seq);
	if (!offload)
		put16(ip + 10, csum(ip, 20));
	if (!offload || n.no_icmp_l4) {
		uint8_t whole[64];
		memcpy(whole, ic, 8), memcpy(whole + 8, pay, 56);
		put16(ic + 2, csum(whole, 64));
	}
	/* Offloaded: the device fills the IP header checksum and, as an L4 checksum from byte 34
	 * into byte 36, the ICMP one (no pseudo-header for ICMP: the field starts at 0). */
	uint32_t flags = offload ? NDF_TX_CSUM_IP4 | (n.no_icmp_l4 ? 0 : NDF_TX_CSUM_L4) : 0;
	n.sent_ns[seq % 64] = ax_time_ns();
	if (send_frame(h, sizeof(h), pay, sizeof(pay), flags, 34u | 36u << 16))
		n.sent++;
}

static void on_rx(const struct netdev_msg *m)
{
	struct chan_ptr p = m->seg[0];
	const uint8_t *f = m->nseg == 1 ? buf(&n.rx, p) : NULL;
	if (!f || p.pool_id != n.rx.v.pool_id) {
		ax_printf("nettest: bad ND_RX from the driver\n");
		return;
	}
	n.rx_flags_seen |= m->flags;
	uint32_t len = p.len;
	if (len >= 42 && get16(f + 12) == 0x0806 && get16(f + 20) == 2 && !memcmp(f + 28, gw_ip, 4)) {
		if (!n.have_gw)
			ax_printf("nettest: ARP reply: 10.0.2.2 is at %02x:%02x:%02x:%02x:%02x:%02x\n", f[22], f[23], f[24],
				  f[25], f[26], f[27]);
		memcpy(n.gw_mac, f + 22, 6);
		n.have_gw = true;
	} else if (len >= 98 && get16(f + 12) == 0x0800 && f[23] == 1 && f[34] == 0 && get16(f + 38) == PING_ID) {
		uint16_t seq = get16(f + 40);
		uint8_t pay[56];
		payload(pay, seq);
		uint32_t ihl = (f[14] & 0xfu) * 4;
		bool ok = ihl == 20 && csum(f + 14, 20) == 0 && csum(f + 34, 64) == 0 && !memcmp(f + 42, pay, 56) &&
			  !memcmp(f + 26, gw_ip, 4);
		if (!ok) {
			n.bad_replies++;
			ax_printf("nettest: bad echo reply seq %u\n", seq);
			return;
		}
		n.replies++;
		uint64_t rtt = (ax_time_ns() - n.sent_ns[seq % 64]) / 1000;
		n.rtt_sum_us += rtt;
		if (rtt > n.rtt_max_us)
			n.rtt_max_us = rtt;
		if (seq % 2 == 0)
			n.offloaded_replies++;
		if (n.replies <= 4 || n.replies % 25 == 0)
			ax_printf("nettest: echo reply seq %u from 10.0.2.2 (%s, rx flags %#x), %llu replies\n", seq,
				  seq % 2 ? "software checksums" : "checksums offloaded", m->flags,
				  (unsigned long long)n.replies);
		if (n.resets > 1 && n.replies > n.replies_at_reset + 2 && !n.said_resumed) {
			n.said_resumed = true;
			ax_printf("nettest: pings resumed after driver reset %u\n", n.resets);
		}
		if (n.replies > n.replies_at_conf + 3 && !n.said_conf && n.replies_at_conf) {
			n.said_conf = true;
			ax_printf("nettest: pings continue after ND_CONF\n");
		}
		if (n.garbage_sent && n.replies > n.replies_at_garbage + 2 && !n.said_garbage_ok) {
			n.said_garbage_ok = true;
			ax_printf("nettest: pings continue after garbage: %llu garbage TX failed back, %llu pool errors\n",
				  (unsigned long long)n.garbage_ids_back, (unsigned long long)n.pool_errors);
		}
	}
}

static void give_rx(struct chan_ptr p)
{
	struct netdev_msg m = { .type = ND_RXBUF, .nseg = 1 };
	p.len = 2048;
	m.seg[0] = p;
	if (!push(&m))
		pool_free(&n.rx, p);
}

/* ND_RESET: everything given to the driver is ours again; announce, give, go on. */
static void on_reset(const struct netdev_msg *m)
{
	n.resets++;
	n.said_resumed = false;
	n.replies_at_reset = n.replies;
	memcpy(n.mac, &m->id, 6);
	n.have_mac = true;
	ax_printf("nettest: driver reset %u: MAC %02x:%02x:%02x:%02x:%02x:%02x, link %s\n", n.resets, n.mac[0],
		  n.mac[1], n.mac[2], n.mac[3], n.mac[4], n.mac[5], m->arg & NDL_UP ? "up" : "down");
	pool_init(&n.rx, n.rx.v.pool_id, n.rx_mem, n.ex_rx.bytes, 2048, RX_BUFS, rx_priv, sizeof(rx_priv));
	pool_init(&n.tx, n.tx.v.pool_id, n.tx_mem, n.ex_tx.bytes, 2048, TX_BUFS, tx_priv, sizeof(tx_priv));
	memset(n.inflight, 0, sizeof(n.inflight));
	struct netdev_pool np = { .type = ND_POOL, .pool_id = n.tx.v.pool_id };
	ax_strpad(np.label, sizeof(np.label), "ip");
	ax_strpad(np.key, sizeof(np.key), n.ex_tx.key);
	push(&np);
	for (int i = 0; i < RX_BUFS - 8; i++) {
		struct chan_ptr p;
		if (pool_alloc(&n.rx, 2048, &p) == 0)
			give_rx(p);
	}
	if (!n.have_gw)
		send_arp();
}

static void on_tx_done(const struct netdev_msg *m)
{
	if ((m->id & ~0xffffull) == GARBAGE_ID) {
		if ((int32_t)m->arg < 0)
			n.garbage_ids_back++;
		return;
	}
	if ((int32_t)m->arg < 0 && n.tx_errors++ < 5)
		ax_printf("nettest: TX %#llx failed: %d\n", (unsigned long long)m->id, (int32_t)m->arg);
	for (int i = 0; i < TX_BUFS; i++) {
		if (n.inflight[i].n && n.inflight[i].id == m->id) {
			for (uint32_t s = 0; s < n.inflight[i].n; s++)
				pool_free(&n.tx, n.inflight[i].p[s]);
			n.inflight[i].n = 0;
			return;
		}
	}
}

static bool poll(struct ax_evloop *l)
{
	(void)l;
	int moved = 0;
	struct netdev_msg m;
	for (; moved < 64; moved++) {
		int e = spsc_pop_part(&n.up, &m, sizeof(m));
		if (e == CHAN_EAGAIN)
			break;
		if (e < 0) {
			ax_printf("nettest: up channel corrupt\n");
			break;
		}
		switch (m.type) {
		case ND_RESET: on_reset(&m); break;
		case ND_RX: on_rx(&m); if (m.seg[0].pool_id == n.rx.v.pool_id) give_rx(m.seg[0]); break;
		case ND_TX_DONE: on_tx_done(&m); break;
		case ND_LINK: ax_printf("nettest: link %s\n", m.arg & NDL_UP ? "up" : "down"); break;
		case ND_POOL_ERR: n.pool_errors++; ax_printf("nettest: driver cannot use pool %#x\n", m.arg); break;
		default: ax_printf("nettest: unknown message %u from the driver\n", m.type); break;
		}
	}
	uint64_t now = ax_time_ns();
	if (n.have_mac && now >= n.next_ping) {
		n.next_ping = now + PING_NS;
		if (!n.have_gw)
			send_arp();
		else
			send_ping();
	}
	return moved > 0;
}

static void garbage(void)
{
	struct netdev_msg g[16];
	struct chan_ptr real;
	if (pool_alloc(&n.tx, 2048, &real) < 0)
		return;
	uint32_t tx = n.tx.v.pool_id, rx = n.rx.v.pool_id;
	memset(g, 0, sizeof(g));
	for (int i = 0; i < 16; i++)
		g[i].id = GARBAGE_ID | (uint64_t)i;
	g[0].type = ND_TX, g[0].nseg = 0;
	g[1].type = ND_TX, g[1].nseg = 7, g[1].seg[0] = real;
	g[2].type = ND_TX, g[2].nseg = 1, g[2].seg[0] = (struct chan_ptr){ 0xdeadbeef, 0, 60 };
	g[3].type = ND_TX, g[3].nseg = 1, g[3].seg[0] = (struct chan_ptr){ tx, 0xfffffff0u, 100 };
	g[4].type = ND_TX, g[4].nseg = 1, g[4].seg[0] = (struct chan_ptr){ tx, real.offset, 0 };
	g[5].type = ND_TX, g[5].nseg = 3;
	for (int s = 0; s < 3; s++)
		g[5].seg[s] = (struct chan_ptr){ tx, real.offset, 1000 }; /* 3000 bytes: too long */
	g[6].type = ND_TX, g[6].nseg = 1, g[6].seg[0] = (struct chan_ptr){ tx, real.offset + 2000, 100 }; /* crosses */
	g[7].type = ND_TX, g[7].nseg = 1, g[7].seg[0] = (struct chan_ptr){ tx, real.offset, 60 };
	g[7].flags = NDF_TX_CSUM_L4, g[7].arg = 300 | 400u << 16; /* buffer is zeros: not IPv4 either */
	g[8].type = ND_RXBUF, g[8].nseg = 1, g[8].seg[0] = (struct chan_ptr){ tx, real.offset, 2048 };
	g[9].type = ND_RXBUF, g[9].nseg = 1, g[9].seg[0] = (struct chan_ptr){ rx, 0, 100 };
	g[10].type = ND_RXBUF, g[10].nseg = 1, g[10].seg[0] = (struct chan_ptr){ rx, RX_BUFS * 2048u, 2048 };
	g[11].type = 999;
	struct netdev_pool *np = (struct netdev_pool *)&g[12];
	memset(np, 0, sizeof(g[12]));
	np->type = ND_POOL, np->pool_id = 0x05000001;
	ax_strpad(np->label, 16, "nosuch"), ax_strpad(np->key, 16, "pool");
	np = (struct netdev_pool *)&g[13];
	memset(np, 'A', sizeof(g[13]));
	np->type = ND_POOL;
	g[14].type = ND_RXBUF, g[14].nseg = 3;
	g[15].type = ND_CONF, g[15].id = 0xffffffffffull; /* a moderation far out of range: ignored */
	int sent = 0;
	for (int i = 0; i < 16; i++)
		sent += push(&g[i]);
	/* and noise: random slots */
	uint64_t x = ax_rdtsc() | 1;
	for (int i = 0; i < 32; i++) {
		uint64_t w[8];
		for (int j = 0; j < 8; j++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			w[j] = x;
		}
		static const uint16_t types[] = { ND_TX, ND_RXBUF, ND_POOL, 5, 77 }; /* not ND_CONF: valid anyway */
		((struct netdev_msg *)w)->type = types[i % 5];
		((struct netdev_msg *)w)->id = GARBAGE_ID | 0x100;
		sent += push(w);
	}
	n.garbage_sent = true;
	n.replies_at_garbage = n.replies;
	ax_printf("nettest: garbage sent: %d messages\n", sent);
}

static void counters(void)
{
	int64_t ep = ax_svc_lookup(n.ifname, NULL);
	for (uint64_t line = 0; ep > 0 && line < 64; line++) {
		struct kmsg m = { .type = NETQ_SHOW, .w = { NQ_COUNTERS, line } };
		if (ax_call((endpoint_t)ep, &m) < 0 || m.type != NETQ_LINE)
			break;
		char text[NETQ_TEXT + 1] = { 0 };
		memcpy(text, m.w, NETQ_TEXT);
		ax_printf("nettest: %s counter %s\n", n.ifname, text);
	}
	ax_printf("nettest: counters end; %llu sent, %llu replies (%llu offloaded), %llu bad, rx flags seen %#x, "
		  "round trip avg %llu us max %llu us\n",
		  (unsigned long long)n.sent, (unsigned long long)n.replies, (unsigned long long)n.offloaded_replies,
		  (unsigned long long)n.bad_replies, n.rx_flags_seen,
		  (unsigned long long)(n.replies ? n.rtt_sum_us / n.replies : 0), (unsigned long long)n.rtt_max_us);
}

static void inject(struct ax_evloop *l, const char *word)
{
	(void)l;
	if (!strcmp(word, "garbage"))
		garbage();
	else if (!strcmp(word, "counters"))
		counters();
	else if (!strcmp(word, "poll") || !strcmp(word, "irq")) {
		struct netdev_msg m = { .type = ND_CONF, .arg = word[0] == 'p' ? NDC_POLL : 0, .id = 30 };
		n.replies_at_conf = n.replies;
		n.said_conf = false;
		ax_printf("nettest: ND_CONF %s sent: %s\n", word, push(&m) ? "ok" : "channel full");
	}
	else
		ax_printf("nettest: no injectable fault named %s\n", word);
}

static void on_message(struct ax_evloop *l, struct kmsg *m)
{
	(void)l;
	if (!chan_export_serve(m))
		ax_reply(m->source, m);
}

int main(int argc, char **argv)
{
	ax_svc_init(argc, argv);
	ksnprintf(n.ifname, sizeof(n.ifname), "e1000");
	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], "if=", 3))
			ksnprintf(n.ifname, sizeof(n.ifname), "%s", argv[i] + 3);
		else if (!strcmp(argv[i], "icmp_l4=0"))
			n.no_icmp_l4 = true;
	n.incarnation = ax_svc.restarts + 1;
	char kd[16], ku[16], kr[16];
	ksnprintf(kd, 16, "%s.down", n.ifname);
	ksnprintf(ku, 16, "%s.up", n.ifname);
	ksnprintf(kr, 16, "rx.%s", n.ifname);
	n.drv.bits = WAKE_BIT;
	chan_axolotl_platform(&n.plat, &n.drv);
	/* The pools first, the channels last: the driver imports in that order of keys. */
	int64_t r = make_pool(&n.ex_rx, kr, POOLID_IP_RX, RX_BUFS, &n.rx_h, &n.rx_mem, &n.rx, rx_priv, sizeof(rx_priv));
	if (r == 0)
		r = make_pool(&n.ex_tx, "txpool", POOLID_IP_HEAP, TX_BUFS, &n.tx_h, &n.tx_mem, &n.tx, tx_priv,
			      sizeof(tx_priv));
	if (r == 0)
		r = make_chan(&n.ex_up, ku, SPSC_CONSUMER, &n.up);
	if (r == 0)
		r = make_chan(&n.ex_down, kd, SPSC_PRODUCER, &n.down);
	if (r == 0)
		r = export_all();
	if (r < 0) {
		ax_printf("nettest: cannot export channels and pools: %lld\n", (long long)r);
		return 1;
	}
	ax_printf("nettest: exported ip/%s, ip/%s, ip/%s and ip/txpool (restart %u)\n", kd, ku, kr, ax_svc.restarts);
	struct ax_evloop l = { .on_message = on_message, .poll = poll, .inject = inject, .wait_ns = 20000000,
			       .doorbell = (const volatile uint64_t *)(const void *)&n.up.sh->bell,
			       .sleeping = &n.up.sh->sleeping };
	return (int)ax_evloop_run(&l);
}
