/* pf's answers to the console (lib/net/netq_proto.h): its rules, its connection table and
 * its counters as text lines, and rule changes at run time. Long items are wrapped at
 * spaces into NETQ_TEXT-byte lines; continuation lines are indented. */
#include "pf.h"
#include "netq_proto.h"
#include "service.h"

#define ITEM_MAX 320

/* Item i of a topic as one text; false past the last. */
static bool rules_item(uint32_t i, char *out, size_t cap)
{
	if (i == 0) {
		if (pf_f.nrules == 0)
			ksnprintf(out, cap, "0 rules: everything passes");
		else
			ksnprintf(out, cap, "%d rules [matches]; last match wins; default pass", pf_f.nrules);
		return true;
	}
	if (i > (uint32_t)pf_f.nrules)
		return false;
	char text[PF_LINE_MAX];
	pf_rule_format(&pf_f.rules[i - 1], text, sizeof(text));
	ksnprintf(out, cap, "%3u %s [%llu]", i, text, (unsigned long long)pf_f.hits[i - 1]);
	return true;
}

static bool states_item(uint32_t i, char *out, size_t cap)
{
	if (i == 0) {
		ksnprintf(out, cap, "%u states (proto local remote phase expires)", pf_f.states.count);
		return true;
	}
	const struct pf_state *s = pf_state_nth(&pf_f.states, i - 1);
	if (!s)
		return false;
	static const char *const phases[] = { "opening", "est", "closing", "reset" };
	char l[16], r[16], proto[8];
	pf_addr_format(s->k.laddr, l);
	pf_addr_format(s->k.raddr, r);
	if (s->k.proto == PF_PROTO_UDP || s->k.proto == PF_PROTO_TCP || s->k.proto == PF_PROTO_ICMP)
		ksnprintf(proto, sizeof(proto), "%s", s->k.proto == PF_PROTO_UDP ? "udp" : s->k.proto == PF_PROTO_TCP ? "tcp" : "icmp");
	else
		ksnprintf(proto, sizeof(proto), "%u", s->k.proto);
	uint64_t now = ax_time_ns(), left = s->expires > now ? (s->expires - now) / PF_SEC : 0;
	ksnprintf(out, cap, "%s %s:%u %s:%u %s %llus", proto, s->k.laddr ? l : "*", s->k.lport, r, s->k.rport,
		  phases[s->phase & 3], (unsigned long long)left);
	return true;
}

static bool counters_item(uint32_t i, char *out, size_t cap)
{
	const struct pf_counters *c = &pf_f.c;
	const struct {
		const char *name;
		uint64_t v;
	} rows[] = {
		{ "passed_in", c->passed[PF_IN] }, { "passed_out", c->passed[PF_OUT] },
		{ "blocked_in", c->blocked[PF_IN] }, { "blocked_out", c->blocked[PF_OUT] },
		{ "bad_requests", c->bad }, { "states", pf_f.states.count },
		{ "states_made", c->states_made }, { "state_table_full", c->state_full },
		{ "passed_by_state", c->state_pass }, { "frags_following_first", c->frag_follow },
		{ "frags_first_unseen", c->frag_unknown }, { "rules", (uint64_t)pf_f.nrules },
		{ "notes", c->notes },
	};
	if (i >= sizeof(rows) / sizeof(rows[0]))
		return false;
	ksnprintf(out, cap, "%s %llu", rows[i].name, (unsigned long long)rows[i].v);
	return true;
}

/* Splits text into lines of at most NETQ_TEXT bytes at spaces; chunk k into out (NUL-padded
 * field). False past the last chunk. */
static bool chunk(const char *text, uint32_t k, char out[NETQ_TEXT])
{
	static const char indent[] = "      ";
	size_t len = strlen(text), pos = 0;
	for (uint32_t c = 0;; c++) {
		if (pos >= len)
			return false;
		size_t pre = c ? sizeof(indent) - 1 : 0, room = NETQ_TEXT - pre, n = len - pos;
		if (n > room) {
			n = room;
			for (size_t j = room; j > room / 2; j--)
				if (text[pos + j] == ' ') {
					n = j;
					break;
				}
		}
		if (c == k) {
			memset(out, 0, NETQ_TEXT);
			memcpy(out, indent, pre);
			memcpy(out + pre, text + pos, n);
			return true;
		}
		pos += n;
		while (pos < len && text[pos] == ' ')
			pos++;
	}
}

/* Where the last answer ended, so reading a long table line by line is not quadratic. */
static struct {
	uint64_t topic, next_line;
	uint32_t item, chunk;
} cur;

static bool line(uint64_t topic, uint64_t n, char out[NETQ_TEXT])
{
	bool (*item)(uint32_t, char *, size_t) = topic == NQ_PF_RULES ? rules_item : topic == NQ_PF_STATES ? states_item
												    : counters_item;
	uint32_t i = 0, k = 0;
	uint64_t at = 0;
	if (cur.topic == topic && cur.next_line == n && n)
		i = cur.item, k = cur.chunk, at = n;
	char text[ITEM_MAX];
	while (item(i, text, sizeof(text))) {
		for (;; k++, at++) {
			if (!chunk(text, k, out))
				break;
			if (at == n) {
				cur.topic = topic, cur.next_line = n + 1, cur.item = i, cur.chunk = k + 1;
				return true;
			}
		}
		i++, k = 0;
	}
	return false;
}

static void reply_err(struct kmsg *m, int64_t e, const char *text)
{
	endpoint_t to = m->source;
	*m = (struct kmsg){ .type = (uint32_t)(int32_t)e };
	if (text)
		ax_strpad(m->w, 48, text);
	m->w[6] = (uint64_t)e;
	ax_reply(to, m);
}

static void reply_ok(struct kmsg *m, uint64_t v)
{
	endpoint_t to = m->source;
	*m = (struct kmsg){ .type = NETQ_OK, .w = { v } };
	ax_reply(to, m);
}

static void show(struct kmsg *m)
{
	uint64_t topic = m->w[0], n = m->w[1];
	if (topic != NQ_PF_RULES && topic != NQ_PF_STATES && topic != NQ_COUNTERS) {
		reply_err(m, -PF_ENOENT, NULL);
		return;
	}
	endpoint_t to = m->source;
	char text[NETQ_TEXT];
	bool more = line(topic, n, text);
	*m = (struct kmsg){ .type = more ? NETQ_LINE : NETQ_END };
	if (more)
		memcpy(m->w, text, NETQ_TEXT);
	ax_reply(to, m);
}

/* Rules change only at the console's word (the service named console, through rs). */
static bool may_change(endpoint_t who)
{
	int64_t ep = ax_svc_lookup("console", NULL);
	return ep > 0 && (endpoint_t)ep == who;
}

static void change(struct kmsg *m)
{
	char err[PF_ERR_LEN];
	if (!may_change(m->source)) {
		reply_err(m, -KE_PERM, "only the console may change the rules");
		return;
	}
	switch (m->w[0]) {
	case NQF_ADD: {
		char text[49];
		memcpy(text, &m->w[1], 48);
		text[48] = 0;
		struct pf_rule r;
		int k = pf_parse_line(text, strlen(text), &r, err);
		if (k <= 0) {
			reply_err(m, -KE_INVAL, k == 0 ? "no rule given" : err);
			return;
		}
		int e = pf_rules_add(&r);
		if (e < 0)
			reply_err(m, e, "too many rules");
		else
			reply_ok(m, (uint64_t)pf_f.nrules);
		return;
	}
	case NQF_DEL: {
		uint64_t n = m->w[1];
		if (n == 0 || n > (uint64_t)pf_f.nrules) {
			reply_err(m, -PF_ENOENT, "no such rule");
			return;
		}
		pf_rules_del((int)n);
		reply_ok(m, (uint64_t)pf_f.nrules);
		return;
	}
	case NQF_FLUSH:
		pf_rules_replace(NULL, 0);
		reply_ok(m, 0);
		return;
	case NQF_RELOAD: {
		static struct pf_rule rules[PF_MAX_RULES];
		bool absent;
		int n = pf_conf_read(rules, PF_MAX_RULES, err, &absent);
		if (n < 0) {
			ax_printf("%s (the rules stay as they were)\n", err);
			reply_err(m, -KE_INVAL, err + 4); /* without "pf: " */
			return;
		}
		pf_rules_replace(rules, n);
		reply_ok(m, (uint64_t)n);
		return;
	}
	}
	reply_err(m, -KE_INVAL, "unknown operation");
}

bool pf_query(struct kmsg *m)
{
	if (m->type == NETQ_SHOW)
		show(m);
	else if (m->type == NETQ_PF)
		change(m);
	else
		return false;
	return true;
}
