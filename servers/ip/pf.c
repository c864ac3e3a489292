/* The T junction to pf (pf_proto.h, README.md "pf"): every IPv4 packet in (from lwIP's
 * LWIP_HOOK_IP4_INPUT, before lwIP looks at it) and out (the netif's output, after routing
 * and fragmentation, before ARP and the driver) waits here for pf's verdict. Inbound packets
 * are validated first (hdr.c) so pf judges only well-formed headers. When pf restarts (it
 * imports pf.req again) every pending request is sent again. A packet of a flow pf has
 * passed within the last second, under the rules in force, passes at once by pf's flow
 * table (lib/net/pf_flow.h), which pf writes and we only read. */
#include "ip.h"
#include "lwip/etharp.h"
#include "lwip/ip4.h"
#include "lwip/stats.h"
#include "ip_hooks.h"
#include "pf_flow.h"

struct pend {
	struct pbuf *p;
	struct netif *n;
	ip4_addr_t dst;
	uint64_t id;
	uint8_t dir;
	bool sent;
};

static struct {
	struct chan_export req_e, ans_e;
	struct spsc req, ans;
	struct chan_axolotl_peer peer;
	struct chan_platform plat;
	struct chan_watch req_w; /* pf reads req (lib/chan/watch.h) */
	struct reqdb db;
	struct reqdb_entry ent[PF_SLOTS];
	struct pend pend[PF_SLOTS];
	uint32_t unsent;
	struct pbuf *reinject;
	/* pf's flow table (pf_flow.h): our memory, which pf alone writes */
	struct chan_export flows_e;
	struct pf_flow_table *flows;
} pf;

/* A closing packet passed by the table: pf hears of it (no answer); false if it cannot.
 * Not rung for it: pf reads the note before the next packet that waits for it, which every
 * new connection's SYN is, so its connection table is up to date before it grows, and a
 * connection's close costs pf no wake-up of its own. */
static bool note(const uint8_t *h, uint32_t n, uint8_t dir, uint8_t ifindex, uint32_t pkt_len)
{
	if (!pf.peer.ep || pf.unsent)
		return false; /* (notes go in order behind what waits to be sent) */
	struct pf_req r = { .dir = dir, .ifindex = ifindex, .pkt_len = pkt_len, .flags = PF_REQ_NOTE };
	r.hdr_len = (uint16_t)(n < PF_HDR_MAX ? n : PF_HDR_MAX);
	memcpy(r.hdr, h, r.hdr_len);
	return spsc_push(&pf.req, &r) == 0;
}

/* Whether pf's flow table passes the packet p (first bytes h[0..n)) without asking: a
 * packet of a passed flow, or its FIN or RST, which pf is told of by a note. */
static bool flows_pass(const uint8_t *h, uint32_t n, struct netif *nif, uint8_t dir, uint32_t pkt_len)
{
	struct pf_flow_key k;
	uint8_t ifindex = ip_if_of(nif)->index;
	if (!pf.flows)
		return false;
	if (pf_flow_key_of(h, n, dir, ifindex, &k) || pf_flow_key_synack(h, n, dir, ifindex, &k)) {
		if (!pf_flow_passes(pf.flows, &k, ax_time_ns()))
			return false;
		ip.c_pf_fast++;
		ip.c_pf_synack += k.zero == PF_FLOW_K_SYNACK;
		return true;
	}
	if (!pf_flow_key_closing(h, n, dir, ifindex, &k) || !pf_flow_passes(pf.flows, &k, ax_time_ns()) ||
	    !note(h, n, dir, ifindex, pkt_len))
		return false;
	ip.c_pf_noted++;
	return true;
}

/* The table's header, for people reading a dump (neither side uses it). */
static void flows_label(void)
{
	pf.flows->nslots = PF_FLOW_SLOTS;
	pf.flows->magic = PF_FLOW_MAGIC;
}

static void on_attach(struct chan_export *e, endpoint_t importer)
{
	if (e == &pf.flows_e) {
		/* A (new) pf takes the flow table: it starts empty (the old pf's grant is gone). */
		memset(pf.flows, 0, sizeof(*pf.flows));
		flows_label();
		ip.c_pf_tables++;
		return;
	}
	bool req = e == &pf.req_e;
	if (req) {
		/* A (new) pf: it may have taken requests and died, so all pending go again. */
		uint32_t n = 0;
		for (uint32_t i = 0; i < PF_SLOTS; i++)
			if (pf.pend[i].p && pf.pend[i].sent)
				pf.pend[i].sent = false, n++;
		pf.unsent += n;
		ip.c_pf_resubmit += n;
		if (pf.peer.ep && pf.peer.ep != importer)
			ax_printf("ip: pf restarted: resubmitting %u pending packets\n", n);
		pf.peer.ep = importer;
		chan_watch_reset(&pf.req_w);
		ip.retry = true;
	}
}

static int64_t export_ch(struct chan_export *e, const char *key, uint32_t slot, int role, struct spsc *q)
{
	int64_t r = chan_create(e, slot, PF_SLOTS, role, q);
	if (r < 0)
		return r;
	ax_strpad(e->key, sizeof(e->key), key);
	e->rights = KP_R | KP_W;
	e->peer = "pf";
	e->on_attach = on_attach;
	return chan_export(e);
}

/* The flow table's memory, exported read-write for pf alone. Without it every packet goes
 * to pf, as before. */
static void flows_export(void)
{
	uint64_t pages = (sizeof(struct pf_flow_table) + 4095) / 4096;
	int64_t h = ax_mo_create(pages, 0);
	int64_t va = h > 0 ? ax_mo_map(h, 0, 0, pages, KP_R | KP_W) : h;
	if (va > 0) {
		pf.flows_e = (struct chan_export){ .handle = h, .bytes = pages * 4096, .rights = KP_R | KP_W,
						   .peer = "pf", .on_attach = on_attach };
		ax_strpad(pf.flows_e.key, sizeof(pf.flows_e.key), "pf.flows");
		pf.flows = (struct pf_flow_table *)(uintptr_t)va;
		flows_label();
		if (chan_export(&pf.flows_e) == 0)
			return;
	}
	ax_printf("ip: no flow table for pf (%lld): every packet waits for pf\n", (long long)va);
	pf.flows = NULL;
}

int ip_pf_init(bool on)
{
	ip.pf_on = on;
	if (!on)
		return 0;
	reqdb_init(&pf.db, pf.ent, PF_SLOTS);
	pf.peer.bits = IP_WAKE_BIT;
	chan_axolotl_platform(&pf.plat, &pf.peer);
	ksnprintf(pf.req_w.name, sizeof(pf.req_w.name), "ip/pf.req");
	int64_t r = export_ch(&pf.req_e, "pf.req", PF_REQ_SLOT, SPSC_PRODUCER, &pf.req);
	if (r == 0)
		r = export_ch(&pf.ans_e, "pf.ans", PF_ANS_SLOT, SPSC_CONSUMER, &pf.ans);
	if (r == 0)
		atomic_store_explicit(&pf.ans.sh->sleeping, 1, memory_order_relaxed);
	if (r == 0)
		flows_export();
	return (int)r;
}

static bool push(struct pend *q)
{
	if (!pf.peer.ep)
		return false;
	struct pf_req r = { .id = q->id, .dir = q->dir, .pkt_len = q->p->tot_len };
	r.ifindex = ip_if_of(q->n)->index;
	r.hdr_len = pbuf_copy_partial(q->p, r.hdr, PF_HDR_MAX, 0);
	int e = spsc_push(&pf.req, &r);
	if (e == CHAN_ECORRUPT) {
		/* pf wrote an impossible index: start the channel afresh, resend everything. */
		ax_printf("ip: pf.req is corrupt: made a new one\n");
		spsc_init(pf.req.sh, pf.req_e.bytes, PF_REQ_SLOT, PF_SLOTS);
		spsc_attach(&pf.req, pf.req.sh, pf.req_e.bytes, SPSC_PRODUCER);
		for (uint32_t i = 0; i < PF_SLOTS; i++)
			if (pf.pend[i].p && pf.pend[i].sent)
				pf.pend[i].sent = false, pf.unsent++;
		e = spsc_push(&pf.req, &r);
	}
	return e == 0;
}

/* Holds p (the caller's reference) until pf answers; false if the table is full. */
static bool hold(struct pbuf *p, struct netif *n, const ip4_addr_t *dst, uint8_t dir)
{
	uint64_t id = reqdb_add(&pf.db, 1, NULL, NULL);
	if (id == REQDB_NONE) {
		ip.c_pf_drop++;
		return false;
	}
	struct pend *q = &pf.pend[(uint32_t)id];
	*q = (struct pend){ p, n, {0}, id, dir, false };
	if (dst)
		q->dst = *dst;
	q->sent = push(q);
	if (!q->sent) {
		pf.unsent++;
		ip.retry = true;
	} else {
		chan_kick(&pf.req, &pf.plat);
	}
	return true;
}

int ip_hook_ip4_input(struct pbuf *p, struct netif *inp)
{
	if (p == pf.reinject)
		return 0;
	uint8_t h[60];
	u16_t n = pbuf_copy_partial(p, h, sizeof(h), 0);
	enum iph_verdict v = iph_rx_check(h, n, p->tot_len);
	if (v != IP4_OK) {
		ip_if_of(inp)->c.rx_bad_hdr[v]++;
		IP_STATS_INC(ip.drop);
		pbuf_free(p);
		return 1;
	}
	if (!ip.pf_on || flows_pass(h, n, inp, PF_IN, p->tot_len))
		return 0;
	if (!hold(p, inp, NULL, PF_IN))
		pbuf_free(p);
	return 1;
}

err_t ip_pf_output(struct netif *n, struct pbuf *p, const ip4_addr_t *dst)
{
	uint8_t h[60];
	u16_t len = pf.flows ? pbuf_copy_partial(p, h, sizeof(h), 0) : 0;
	if (!ip.pf_on || (len && flows_pass(h, len, n, PF_OUT, p->tot_len)))
		return etharp_output(n, p, dst);
	pbuf_ref(p); /* the caller frees its own reference when we return */
	if (!hold(p, n, dst, PF_OUT))
		pbuf_free(p);
	return ERR_OK;
}

static void verdict(const struct pf_ans *a)
{
	if (!reqdb_take(&pf.db, a->id)) {
		ip.c_pf_bad++; /* late, duplicate or forged */
		return;
	}
	struct pend *q = &pf.pend[(uint32_t)a->id];
	struct pbuf *p = q->p;
	if (!q->sent)
		pf.unsent--;
	q->p = NULL;
	if (a->verdict != PF_PASS) {
		ip.c_pf_block++;
		pbuf_free(p);
		return;
	}
	ip.c_pf_pass++;
	if (q->dir == PF_IN) {
		pf.reinject = p;
		ip4_input(p, q->n); /* takes p */
		pf.reinject = NULL;
	} else {
		etharp_output(q->n, p, &q->dst);
		pbuf_free(p);
	}
}

bool ip_pf_poll(void)
{
	if (!ip.pf_on)
		return false;
	bool work = false;
	if (pf.peer.ep)
		chan_ax_watch(&pf.req_w, &pf.req, &pf.plat);
	atomic_store_explicit(&pf.ans.sh->sleeping, 1, memory_order_relaxed);
	for (int i = 0; i < 256; i++) {
		struct pf_ans a;
		int e = spsc_pop_part(&pf.ans, &a, sizeof(a));
		if (e == CHAN_EAGAIN)
			break;
		if (e < 0) {
			ax_printf("ip: pf.ans is corrupt: made a new one\n");
			spsc_init(pf.ans.sh, pf.ans_e.bytes, PF_ANS_SLOT, PF_SLOTS);
			spsc_attach(&pf.ans, pf.ans.sh, pf.ans_e.bytes, SPSC_CONSUMER);
			break;
		}
		work = true;
		verdict(&a);
	}
	if (pf.unsent && pf.peer.ep) {
		bool pushed = false;
		for (uint32_t i = 0; i < PF_SLOTS && pf.unsent; i++) {
			struct pend *q = &pf.pend[i];
			if (!q->p || q->sent)
				continue;
			if (!push(q)) {
				ip.retry = true;
				break;
			}
			q->sent = true;
			pf.unsent--;
			pushed = true;
		}
		if (pushed) {
			chan_kick(&pf.req, &pf.plat);
			work = true;
		}
	}
	return work;
}
