/* pftest: a stand-in for ip in pf's system test (tests/system/test_pf.py), run by rs as the
 * service `ip` (binary=pftest). It owns ip/pf.req and ip/pf.ans exactly as ip does
 * (lib/net/pf_proto.h), sends crafted headers and checks pf's verdicts against the rules
 * of the test's pf.conf (and, run as `pftest udp` under the name udp, a socket table in ds):
 *   block in proto udp to any port 7777
 *   block in proto udp from 10.0.2.9
 *   pass out proto udp to 10.0.2.9 keep state
 * It keeps a request in flight every 50 ms (a stream to port 53) and, like ip, resubmits
 * every unanswered request when pf attaches again after a restart. It also answers the
 * console's NETQ_SHOW for interfaces, routes, ARP and counters, and NETQ_PING with a fake
 * echo session, so the console's ip commands can be tested without ip.
 *   service inject ip check   runs the checks again, expecting `block in proto udp to any
 *                             port 9999` to have been added (by the console) meanwhile
 *   service inject ip corrupt writes an impossible head index into ip/pf.req
 *   service inject ip perm    asks pf to flush its rules (pf must refuse: not the console)
 *   service inject ip stats   prints what was sent and answered
 * Output: `PFTEST check N: PASS (K verdicts)` or `PFTEST check N: FAIL ...`,
 * `PFTEST pf attached (N): resubmitting P pending`, `PFTEST restart: P pending answered`. */
#include "axrt.h"
#include "chan_name.h"
#include "chan_axolotl.h"
#include "evloop.h"
#include "service.h"
#include "spsc.h"
#include "../../lib/net/pf_proto.h"
#include "../../lib/net/netq_proto.h"
#include "../../lib/net/sock_proto.h"
#include "ds_client.h"

#define A(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (uint32_t)(d))
#define LOCAL A(10, 0, 2, 15)
#define PEER A(10, 0, 2, 9)
#define PENDING 512
#define REQ_WAKE_BIT (1ull << 9)

struct pending {
	bool used;
	uint32_t expect;  /* PF_PASS or PF_BLOCK */
	uint32_t check;   /* the check it belongs to, 0 = the stream */
	int kase;
	bool resubmitted; /* sent again to a restarted pf */
	struct pf_req req;
};

static struct {
	struct spsc req, ans;
	struct chan_export req_ex, ans_ex;
	struct chan_axolotl_peer pf;
	struct chan_platform plat;
	bool attached;
	uint32_t attaches;
	uint64_t next_id;
	struct pending p[PENDING];
	uint32_t npending;
	/* the check in progress */
	uint32_t check, check_left, check_bad, check_total;
	char why[128];
	/* resubmission after a restart: ids that must still be answered */
	uint32_t resub_left, resub_total;
	bool resub_reported;
	uint64_t next_stream, stream_sent, answers, unknown, wrong_stream;
	uint64_t ping_t0;
	uint32_t ping_count, ping_interval, ping_size, ping_addr;
	bool udp_mode;
} t;

static void put_be16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8), p[1] = (uint8_t)v; }
static void put_be32(uint8_t *p, uint32_t v) { put_be16(p, (uint16_t)(v >> 16)), put_be16(p + 2, (uint16_t)v); }

static struct pf_req udp(uint8_t dir, uint32_t src, uint16_t sp, uint32_t dst, uint16_t dp)
{
	struct pf_req r = { .dir = dir, .ifindex = 0, .pkt_len = 60, .hdr_len = 60 };
	r.hdr[0] = 0x45;
	put_be16(r.hdr + 2, 60);
	r.hdr[8] = 64;
	r.hdr[9] = 17;
	put_be32(r.hdr + 12, src);
	put_be32(r.hdr + 16, dst);
	put_be16(r.hdr + 20, sp);
	put_be16(r.hdr + 22, dp);
	put_be16(r.hdr + 24, 40);
	return r;
}

/* Queues a request (kept until answered); false if the table or the channel is full. */
static bool send(struct pf_req r, uint32_t expect, uint32_t check, int kase)
{
	r.id = ++t.next_id;
	struct pending *p = &t.p[r.id % PENDING];
	if (p->used)
		return false;
	*p = (struct pending){ .used = true, .expect = expect, .check = check, .kase = kase, .req = r };
	t.npending++;
	if (t.attached && spsc_push(&t.req, &r) != 0)
		ax_printf("PFTEST pf.req full\n");
	return true;
}

static void kick(void)
{
	if (t.attached)
		chan_kick(&t.req, &t.plat);
}

/* A round of crafted requests; expect9999 says whether the console added the 9999 rule,
 * rebuilt whether pf has restarted since udp's socket table was put in ds (so its
 * connection table holds that socket). */
static void run_check(bool expect9999, bool rebuilt)
{
	if (t.check_left) {
		ax_printf("PFTEST check %u still running\n", t.check);
		return;
	}
	t.check++;
	t.check_bad = 0;
	t.why[0] = 0;
	int k = 0;
	uint32_t c = t.check;
#define CASE(req, v) (send((req), (v), c, ++k) ? t.check_left++ : 0)
	CASE(udp(PF_IN, A(10, 0, 2, 2), 5000, LOCAL, 7777), PF_BLOCK);      /* 1: the blocked port */
	CASE(udp(PF_IN, A(10, 0, 2, 2), 5000, LOCAL, 53), PF_PASS);         /* 2: another port */
	CASE(udp(PF_OUT, LOCAL, 7777, A(10, 0, 2, 2), 5000), PF_PASS);      /* 3: out is not blocked */
	uint16_t lp = (uint16_t)(40000 + ax_svc.restarts * 100 + c); /* a new connection each time */
	CASE(udp(PF_IN, PEER, 5000, LOCAL, lp), PF_BLOCK);                   /* 4: PEER, no state yet */
	CASE(udp(PF_OUT, LOCAL, lp, PEER, 5000), PF_PASS);                   /* 5: makes the state */
	CASE(udp(PF_IN, PEER, 5000, LOCAL, lp), PF_PASS);                    /* 6: the answer, by state */
	CASE(udp(PF_IN, PEER, 5001, LOCAL, lp), PF_BLOCK);                   /* 7: another port of PEER */
	struct pf_req bad = udp(PF_IN, A(10, 0, 2, 2), 5000, LOCAL, 53);
	bad.hdr[0] = 0x46; /* header longer than the bytes */
	bad.hdr_len = 22;
	bad.pkt_len = 22;
	CASE(bad, PF_BLOCK);                                                 /* 8: garbage */
	bad = udp(7, A(10, 0, 2, 2), 5000, LOCAL, 53);
	CASE(bad, PF_BLOCK);                                                 /* 9: no such direction */
	bad = udp(PF_IN, A(10, 0, 2, 2), 5000, LOCAL, 53);
	bad.hdr_len = 2000;
	CASE(bad, PF_BLOCK);                                                 /* 10: impossible length */
	CASE(udp(PF_IN, A(10, 0, 2, 2), 5000, LOCAL, 9999), expect9999 ? PF_BLOCK : PF_PASS); /* 11 */
	/* 12: PEER answering the socket the stand-in udp has in ds (connected to PEER:53): only a
	 * restarted pf, which rebuilt its table from udp's sockets, lets it in */
	CASE(udp(PF_IN, PEER, 53, LOCAL, 6000), rebuilt ? PF_PASS : PF_BLOCK);
#undef CASE
	t.check_total = (uint32_t)k;
	kick();
}

static void answered(const struct pf_ans *a)
{
	struct pending *p = &t.p[a->id % PENDING];
	if (!p->used || p->req.id != a->id) {
		t.unknown++; /* a duplicate after a resubmission, as ip would drop it */
		return;
	}
	t.answers++;
	if (p->check) {
		if (a->verdict != p->expect) {
			if (!t.check_bad++)
				ksnprintf(t.why, sizeof(t.why), "case %d: verdict %u, expected %u (rule %u)", p->kase,
					  a->verdict, p->expect, a->rule);
		}
		if (p->check == t.check && t.check_left && --t.check_left == 0) {
			if (t.check_bad)
				ax_printf("PFTEST check %u: FAIL %s\n", t.check, t.why);
			else
				ax_printf("PFTEST check %u: PASS (%u verdicts)\n", t.check, t.check_total);
		}
	} else if (a->verdict != PF_PASS) {
		t.wrong_stream++;
	}
	if (p->resubmitted && t.resub_left && --t.resub_left == 0 && !t.resub_reported) {
		t.resub_reported = true;
		ax_printf("PFTEST restart: %u pending answered\n", t.resub_total);
	}
	p->used = false;
	t.npending--;
}

static bool poll(struct ax_evloop *l)
{
	(void)l;
	int n = 0;
	struct pf_ans a;
	for (int e; n < 256 && (e = spsc_pop_part(&t.ans, &a, sizeof(a))) != CHAN_EAGAIN; n++) {
		if (e == CHAN_ECORRUPT) {
			ax_printf("PFTEST pf.ans corrupt\n");
			break;
		}
		answered(&a);
	}
	uint64_t now = ax_time_ns();
	if (now >= t.next_stream) {
		t.next_stream = now + 50000000;
		if (send(udp(PF_IN, A(10, 0, 2, 2), 53, LOCAL, 5353), PF_PASS, 0, 0)) {
			t.stream_sent++;
			kick();
		}
	}
	return n > 0;
}

/* pf imported pf.ans (it imports pf.req first): from now on wake that instance, and give it
 * everything still unanswered, as ip does after a pf restart. */
static void on_attach(struct chan_export *e, endpoint_t importer)
{
	if (e != &t.ans_ex)
		return;
	t.pf.ep = importer;
	t.attached = true;
	t.attaches++;
	uint32_t n = 0;
	for (uint64_t id = t.next_id > PENDING ? t.next_id - PENDING + 1 : 1; id <= t.next_id; id++) {
		struct pending *p = &t.p[id % PENDING];
		if (!p->used || p->req.id != id)
			continue;
		p->resubmitted = t.attaches > 1;
		if (spsc_push(&t.req, &p->req) == 0)
			n++;
	}
	if (t.attaches > 1) {
		t.resub_total = t.resub_left = n;
		t.resub_reported = false;
		ax_printf("PFTEST pf attached (%u): resubmitting %u pending\n", t.attaches, n);
		if (n == 0)
			ax_printf("PFTEST restart: 0 pending answered\n");
	} else {
		ax_printf("PFTEST pf attached (1)\n");
	}
	kick();
	if (t.attaches == 1)
		run_check(false, ax_svc.restarts > 0); /* the test restarts ip only after pf */
}

/* NETQ_SHOW lines of the fake interfaces. */
static const char *show_line(uint64_t topic, uint64_t n, char *buf, size_t cap)
{
	static const char *const ifaces[] = { "0 e1000 10.0.2.15/24 mac 52:54:00:12:34:56 mtu 1500 up",
					       "  rx 10 packets 1200 bytes tx 8 packets 900 bytes" };
	static const char *const routes[] = { "default via 10.0.2.2 if 0", "10.0.2.0/24 if 0" };
	static const char *const arp[] = { "10.0.2.2 52:55:0a:00:02:02 if 0" };
	switch (topic) {
	case NQ_IFACES: return n < 2 ? ifaces[n] : NULL;
	case NQ_ROUTES: return n < 2 ? routes[n] : NULL;
	case NQ_ARP: return n < 1 ? arp[n] : NULL;
	case NQ_COUNTERS:
		if (t.udp_mode)
			return n == 0 ? "sockets 1" : NULL;
		if (n == 0)
			ksnprintf(buf, cap, "pf_requests %llu", (unsigned long long)t.next_id);
		else if (n == 1)
			ksnprintf(buf, cap, "pf_answers %llu", (unsigned long long)t.answers);
		else
			return NULL;
		return buf;
	}
	return NULL;
}

static void on_message(struct ax_evloop *l, struct kmsg *m)
{
	(void)l;
	if (chan_export_serve(m))
		return;
	endpoint_t to = m->source;
	struct kmsg r = { .type = NETQ_OK };
	if (m->type == NETQ_SHOW) {
		char buf[NETQ_TEXT + 1];
		if (m->w[0] != NQ_IFACES && m->w[0] != NQ_ROUTES && m->w[0] != NQ_ARP && m->w[0] != NQ_COUNTERS) {
			r.type = (uint32_t)-2;
			r.w[6] = (uint64_t)-2;
		} else {
			const char *s = show_line(m->w[0], m->w[1], buf, sizeof(buf));
			r.type = s ? NETQ_LINE : NETQ_END;
			if (s)
				memcpy(r.w, s, strlen(s) < NETQ_TEXT ? strlen(s) : NETQ_TEXT);
		}
	} else if (m->type == NETQ_PING) {
		t.ping_addr = (uint32_t)m->w[0];
		t.ping_count = (uint32_t)m->w[1];
		t.ping_size = (uint32_t)m->w[2];
		t.ping_interval = (uint32_t)m->w[3];
		t.ping_t0 = ax_time_ns();
		r.w[0] = 7;
		if (!t.ping_count || t.ping_count > 100 || t.ping_interval < 10) {
			r.type = (uint32_t)-KE_INVAL;
			r.w[6] = (uint64_t)-KE_INVAL;
		}
	} else if (m->type == NETQ_PING_STATUS) {
		/* seq s (from 1) goes out at (s - 1) * interval and is answered 0.512 ms later;
		 * 10.0.2.99 never answers (lost 1 s after it went out). */
		uint64_t ms = (ax_time_ns() - t.ping_t0) / 1000000, seq = m->w[1];
		uint64_t sent = ms / t.ping_interval + 1;
		sent = sent > t.ping_count ? t.ping_count : sent;
		bool dead = (t.ping_addr >> 24) == 99; /* network order: the last byte is the high one */
		if (m->w[0] != 7) {
			r.type = (uint32_t)-2;
			r.w[6] = (uint64_t)-2;
		} else if (seq == 0 || seq > sent) {
			r.w[0] = NQP_WAIT;
		} else if (dead) {
			r.w[0] = ms >= (seq - 1) * t.ping_interval + 1000 ? NQP_LOST : NQP_WAIT;
		} else {
			r.w[0] = NQP_REPLY, r.w[1] = 512, r.w[2] = t.ping_size, r.w[3] = 255;
		}
		r.w[4] = sent;
	} else {
		r.type = (uint32_t)-KE_NOSYS;
		r.w[6] = (uint64_t)-KE_NOSYS;
	}
	ax_reply(to, &r);
}

static void inject(struct ax_evloop *l, const char *word)
{
	(void)l;
	if (!strcmp(word, "check"))
		run_check(true, true);
	else if (!strcmp(word, "corrupt")) {
		atomic_store(&t.req.sh->head, atomic_load(&t.req.sh->tail) + 4 * PF_SLOTS);
		t.attached = false; /* the channel is dead; a new instance exports new ones */
		chan_kick(&t.req, &t.plat);
		ax_notify(t.pf.ep, REQ_WAKE_BIT);
		ax_printf("PFTEST wrote an impossible head index into ip/pf.req\n");
	} else if (!strcmp(word, "perm")) {
		/* Only the console may change pf's rules: a flush from here must be refused. */
		int64_t pf = ax_svc_lookup("pf", NULL);
		struct kmsg m = { .type = NETQ_PF, .w = { NQF_FLUSH } };
		int64_t r = pf > 0 ? ax_call((endpoint_t)pf, &m) : pf;
		ax_printf("PFTEST perm: call %lld, reply type %d, w6 %lld\n", (long long)r, (int)(int32_t)m.type,
			  (long long)m.w[6]);
	} else if (!strcmp(word, "stats"))
		ax_printf("PFTEST stats: %llu requests, %llu answers, %llu unknown ids, %llu stream blocked, %u pending\n",
			  (unsigned long long)t.next_id, (unsigned long long)t.answers, (unsigned long long)t.unknown,
			  (unsigned long long)t.wrong_stream, t.npending);
	else
		ax_printf("PFTEST: no fault named %s\n", word);
}

static int64_t export(struct chan_export *ex, const char *key, uint32_t slot, int role, struct spsc *q)
{
	*ex = (struct chan_export){ .rights = KP_R | KP_W, .peer = "pf", .on_attach = on_attach };
	ax_strpad(ex->key, sizeof(ex->key), key);
	int64_t r = chan_create(ex, slot, PF_SLOTS, role, q);
	return r == 0 ? chan_export(ex) : r;
}

/* `pftest udp`: a stand-in for udp whose socket table in ds (lib/net/sock_proto.h) holds one
 * socket, 10.0.2.15:6000 connected to 10.0.2.9:53, for pf to rebuild its table from. */
static int udp_main(void)
{
	struct sk_dsrec r = { .sock = 5, .laddr = __builtin_bswap32(LOCAL), .lport = __builtin_bswap16(6000),
			      .rport = __builtin_bswap16(53), .raddr = __builtin_bswap32(PEER), .flags = SKF_DGRAM };
	int64_t e = dsc_put("s.0", &r, sizeof(r));
	if (e == 0)
		e = dsc_put("nslots", "1", 1);
	ax_printf("PFTEST udp: socket table in ds (%lld)\n", (long long)e);
	t.udp_mode = true;
	struct ax_evloop l = { .on_message = on_message };
	return (int)ax_evloop_run(&l);
}

int main(int argc, char **argv)
{
	ax_svc_init(argc, argv);
	if (argc > 1 && !strcmp(argv[1], "udp"))
		return udp_main();
	int64_t e = export(&t.req_ex, "pf.req", PF_REQ_SLOT, SPSC_PRODUCER, &t.req);
	if (e == 0)
		e = export(&t.ans_ex, "pf.ans", PF_ANS_SLOT, SPSC_CONSUMER, &t.ans);
	if (e < 0) {
		ax_printf("PFTEST cannot export the channels: %lld\n", (long long)e);
		return 1;
	}
	t.pf.bits = REQ_WAKE_BIT;
	chan_axolotl_platform(&t.plat, &t.pf);
	t.next_id = (uint64_t)ax_svc.restarts << 40;
	ax_printf("PFTEST exported ip/pf.req and ip/pf.ans\n");
	struct ax_evloop l = { .on_message = on_message, .poll = poll, .inject = inject, .wait_ns = 10000000,
			       .doorbell = (const volatile uint64_t *)(const void *)&t.ans.sh->bell,
			       .sleeping = &t.ans.sh->sleeping };
	return (int)ax_evloop_run(&l);
}
