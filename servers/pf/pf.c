/* pf: the stateful packet filter in a T junction off ip (README.md, lib/net/pf_proto.h).
 * ip puts the headers of every IPv4 packet it receives or sends into ip/pf.req and waits
 * for the verdict in ip/pf.ans; pf judges each request exactly once and answers every one.
 *   pf [restarted=N | update=1] [hb=H] */
#include "pf.h"
#include "chan_name.h"
#include "chan_axolotl.h"
#include "ds_client.h"
#include "service.h"
#include "spsc.h"
#include "heartbeat.h"

struct pf_filter pf_f;
#define NEVER (~0ull)

static struct {
	struct chan_import req_mem, ans_mem;
	struct spsc req, ans;
	struct chan_axolotl_peer ip;
	struct chan_platform plat;
	struct chan_watch ans_w;    /* ip reads ans (lib/chan/watch.h) */
	bool attached;
	uint64_t retry_at;          /* next import attempt while detached (ns) */
	uint32_t imports, fails;
	bool held;                  /* ans holds the verdict of the request at the queue's head */
	struct pf_ans held_ans;
	uint64_t full;              /* times pf.ans was full */
	uint64_t next_expire;
	const char *conf;           /* pf.conf mapped, or NULL */
	uint64_t conf_len;
} s;

int pf_conf_read(struct pf_rule *rules, int max, char err[PF_ERR_LEN], bool *absent)
{
	*absent = false;
	if (!s.conf) {
		int mod = ax_find_module("pf.conf");
		struct kc_module_info mi;
		if (mod < 0 || ax_module_info((uint32_t)mod, &mi) < 0) {
			*absent = true;
			return 0;
		}
		int64_t va = kcall1(KC_MODULE_MAP, (uint64_t)mod);
		if (va <= 0) {
			ksnprintf(err, PF_ERR_LEN, "pf: cannot map pf.conf (%lld)", (long long)va);
			return -1;
		}
		s.conf = (const char *)va;
		s.conf_len = mi.size;
	}
	return pf_parse_file(s.conf, s.conf_len, rules, max, err);
}

int pf_rules_replace(const struct pf_rule *rules, int n)
{
	pf_filter_set_rules(&pf_f, rules, n);
	pf_flows_rules_changed();
	pf_store_save();
	return 0;
}

int pf_rules_add(const struct pf_rule *r)
{
	if (pf_f.nrules == PF_MAX_RULES)
		return -KE_NOMEM;
	pf_f.hits[pf_f.nrules] = 0;
	pf_f.rules[pf_f.nrules++] = *r;
	pf_flows_rules_changed();
	pf_store_save();
	return 0;
}

int pf_rules_del(int number)
{
	if (number < 1 || number > pf_f.nrules)
		return -KE_INVAL;
	for (int i = number; i < pf_f.nrules; i++) {
		pf_f.rules[i - 1] = pf_f.rules[i];
		pf_f.hits[i - 1] = pf_f.hits[i];
	}
	pf_f.nrules--;
	pf_flows_rules_changed();
	pf_store_save();
	return 0;
}

static void detach(struct ax_evloop *l, uint64_t retry_ns)
{
	chan_unimport(&s.req_mem);
	chan_unimport(&s.ans_mem);
	pf_flows_detach();
	s.req_mem = (struct chan_import){ 0 };
	s.ans_mem = (struct chan_import){ 0 };
	s.attached = false;
	s.held = false; /* ip resubmits what it has pending to whoever imports next */
	l->doorbell = NULL;
	l->sleeping = NULL;
	l->wait_ns = 100000000;
	s.retry_at = retry_ns == NEVER ? NEVER : ax_time_ns() + retry_ns;
}

/* One attempt to import both channels (ip may not have exported them yet). */
static bool attach(struct ax_evloop *l)
{
	/* Each import is two blocking calls (ds, ip) that can take a while on a busy machine:
	 * beat around them, as waiting for a peer is not hanging. */
	ax_heartbeat();
	int64_t e = chan_import("ip", "pf.req", &s.req_mem);
	ax_heartbeat();
	if (e == 0)
		e = chan_import("ip", "pf.ans", &s.ans_mem);
	ax_heartbeat();
	if (e == 0 && (spsc_attach(&s.req, s.req_mem.va, s.req_mem.bytes, SPSC_CONSUMER) < 0 ||
		       spsc_attach(&s.ans, s.ans_mem.va, s.ans_mem.bytes, SPSC_PRODUCER) < 0 ||
		       s.req.slot_size != PF_REQ_SLOT || s.ans.slot_size != PF_ANS_SLOT))
		e = -KE_INVAL;
	if (e < 0) {
		if (s.fails++ % 600 == 0) /* the first time, then once a minute */
			ax_printf("pf: cannot import ip's channels yet (%lld), retrying every 100 ms\n", (long long)e);
		detach(l, 100000000);
		return false;
	}
	s.attached = true;
	s.fails = 0;
	s.ip.ep = s.ans_mem.owner;
	chan_watch_reset(&s.ans_w);
	pf_flows_attach();
	ax_heartbeat();
	l->doorbell = (const volatile uint64_t *)(const void *)&s.req.sh->bell;
	l->sleeping = &s.req.sh->sleeping;
	l->wait_ns = 0;
	ax_printf("pf: attached to ip/pf.req and ip/pf.ans (ip %#x, import %u)\n", (unsigned)s.ans_mem.owner,
		  ++s.imports);
	return true;
}

/* Judges what is queued: peek, judge once, push the verdict, and only then pop, so a full
 * answer queue loses nothing and no request is judged twice by this instance. */
static bool poll(struct ax_evloop *l)
{
	uint64_t now = ax_time_ns();
	if (now >= s.next_expire) {
		pf_state_expire(&pf_f.states, now);
		s.next_expire = now + 10 * PF_SEC;
	}
	if (!s.attached) {
		if (now >= s.retry_at)
			attach(l);
		if (!s.attached)
			return false;
	}
	l->wait_ns = 0;
	int n = 0, pushed = 0;
	for (; n < 256; n++) {
		struct pf_req req;
		int e = spsc_peek(&s.req, &req); /* a private copy: ip cannot change it under us */
		if (e == CHAN_EAGAIN)
			break;
		if (e == CHAN_ECORRUPT) {
			ax_printf("pf: ip/pf.req is corrupt (impossible index): detached until ip exports anew\n");
			detach(l, NEVER);
			return false;
		}
		if (req.flags & PF_REQ_NOTE) { /* ip passed it already: the state moves, no answer */
			uint32_t rule;
			pf_filter_judge(&pf_f, &req, now, &rule);
			pf_f.c.notes++;
			spsc_pop(&s.req, &req);
			continue;
		}
		if (!s.held) {
			uint32_t rule;
			uint32_t v = pf_filter_judge(&pf_f, &req, now, &rule);
			pf_flows_judged(&req, v, now);
			s.held_ans = (struct pf_ans){ req.id, v, rule };
			s.held = true;
		}
		e = spsc_push(&s.ans, &s.held_ans);
		if (e == CHAN_EAGAIN) {
			s.full++;
			l->wait_ns = 1000000; /* ip is behind: look again in 1 ms */
			break;
		}
		if (e == CHAN_ECORRUPT) {
			ax_printf("pf: ip/pf.ans is corrupt (impossible index): detached until ip exports anew\n");
			detach(l, NEVER);
			return false;
		}
		s.held = false;
		pushed++;
		spsc_pop(&s.req, &req);
	}
	if (pushed)
		chan_kick(&s.ans, &s.plat);
	if (chan_ax_watch(&s.ans_w, &s.ans, &s.plat) && !l->wait_ns)
		l->wait_ns = CHAN_WATCH_LOOK_NS; /* answers wait: look at ip's reading again */
	return n > 0 && l->wait_ns == 0;
}

/* ds: ip (re)published its channels (a restarted ip, or ds restarted): import them anew. */
static void on_notify(struct ax_evloop *l, uint64_t bits)
{
	if (!(bits & DS_NOTIFY_BIT))
		return;
	char label[DS_NAME_LEN], key[DS_NAME_LEN];
	bool ip_changed = false;
	while (ax_heartbeat(), dsc_check(label, key) == 0)
		if (!strcmp(label, "ip") && (!strcmp(key, "pf.req") || !strcmp(key, "pf.ans")))
			ip_changed = true;
	if (!ip_changed)
		return;
	/* The export's value is {magic "CHNX", owner endpoint, ...} (lib/chan/README.md): the
	 * same owner (our own import's news, ds republishing) needs nothing. */
	uint32_t v[6];
	uint32_t len = 0;
	if (s.attached && dsc_get("ip", "pf.ans", v, &len) == 0 && len == sizeof(v) && v[0] == CHAN_NAME_MAGIC &&
	    v[1] == s.ans_mem.owner && dsc_get("ip", "pf.req", v, &len) == 0 && len == sizeof(v) &&
	    v[1] == s.req_mem.owner)
		return;
	if (s.attached)
		detach(l, 0);
	attach(l);
}

static void on_message(struct ax_evloop *l, struct kmsg *m)
{
	(void)l;
	if (!pf_query(m))
		ax_reply(m->source, &(struct kmsg){ .type = (uint32_t)-KE_NOSYS, .w = { [6] = (uint64_t)-KE_NOSYS } });
}

static void inject(struct ax_evloop *l, const char *word)
{
	(void)l;
	ax_printf("pf: no injectable fault named %s\n", word);
}

/* The rules at start: from ds after a restart (what was in force, run-time changes
 * included), else from pf.conf. */
static void load_rules(void)
{
	static struct pf_rule rules[PF_MAX_RULES];
	if (ax_svc.restarts || ax_svc.update) {
		int n = pf_store_load(rules, PF_MAX_RULES);
		if (n >= 0) {
			pf_filter_set_rules(&pf_f, rules, n);
			ax_printf("pf: %d rules from ds (restart %u)\n", n, ax_svc.restarts);
			return;
		}
		ax_printf("pf: no usable rules in ds: reading pf.conf\n");
	}
	char err[PF_ERR_LEN];
	bool absent;
	int n = pf_conf_read(rules, PF_MAX_RULES, err, &absent);
	if (n < 0) {
		ax_printf("%s: the file is rejected, no rules (everything passes)\n", err);
		n = 0;
	} else if (absent) {
		ax_printf("pf: no pf.conf: no rules (everything passes)\n");
	} else {
		ax_printf("pf: %d rules from pf.conf\n", n);
	}
	pf_filter_set_rules(&pf_f, rules, n);
	pf_store_save();
}

int main(int argc, char **argv)
{
	ax_svc_init(argc, argv);
	ax_heartbeat();
	pf_filter_init(&pf_f);
	load_rules();
	if (ax_svc.restarts || ax_svc.update) {
		int made = pf_store_rebuild_states(&pf_f, ax_time_ns());
		ax_printf("pf: %d connection-table entries from udp's and tcp's sockets\n", made);
	}
	s.ip.bits = PF_ANS_WAKE_BIT;
	chan_axolotl_platform(&s.plat, &s.ip);
	ksnprintf(s.ans_w.name, sizeof(s.ans_w.name), "pf/ans");
	int64_t e = dsc_subscribe("ip", "pf.req");
	if (e == 0)
		e = dsc_subscribe("ip", "pf.ans");
	if (e < 0)
		ax_printf("pf: cannot watch ip's names in ds (%lld)\n", (long long)e);
	/* restartable: the rules are in ds, ip asks again what we did not answer */
	struct ax_evloop l = { .on_message = on_message, .on_notify = on_notify, .poll = poll, .inject = inject,
			       .wait_ns = 100000000, .restartable = true };
	attach(&l);
	return (int)ax_evloop_run(&l);
}
