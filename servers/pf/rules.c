/* pf rule parser and printer (rules.h). Strict: every word is known or the line is an error
 * naming it, so a typo never silently widens or narrows the filter. No libc. */
#include "rules.h"
#include "pf_proto.h"

int ksnprintf(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#define MAX_WORDS 32

struct word {
	const char *s;
	size_t n;
};

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

static bool eq(struct word w, const char *lit)
{
	size_t i = 0;
	for (; i < w.n; i++)
		if (!lit[i] || lit[i] != w.s[i])
			return false;
	return lit[i] == 0;
}

/* The word quoted for a message: printable, at most 24 characters. */
static void quote(struct word w, char out[32])
{
	size_t n = w.n > 24 ? 24 : w.n;
	for (size_t i = 0; i < n; i++)
		out[i] = w.s[i] >= 0x20 && w.s[i] <= 0x7e ? w.s[i] : '?';
	if (w.n > 24)
		out[n++] = '.', out[n++] = '.', out[n++] = '.';
	out[n] = 0;
}

/* Decimal number within [0, max], digits only. */
static bool number(struct word w, uint32_t max, uint32_t *out)
{
	if (w.n == 0 || w.n > 10)
		return false;
	uint64_t v = 0;
	for (size_t i = 0; i < w.n; i++) {
		if (w.s[i] < '0' || w.s[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(w.s[i] - '0');
	}
	if (v > max)
		return false;
	*out = (uint32_t)v;
	return true;
}

static uint32_t prefix_mask(uint8_t len) { return len == 0 ? 0 : 0xffffffffu << (32 - len); }

/* ADDR or ADDR/N (dotted quad, each part 0..255, N 0..32), or any. */
static bool address(struct word w, uint32_t *addr, uint8_t *len)
{
	if (eq(w, "any")) {
		*addr = 0, *len = 0;
		return true;
	}
	size_t i = 0, slash = w.n;
	for (; i < w.n; i++)
		if (w.s[i] == '/')
			slash = i;
	uint32_t a = 0, parts = 0;
	size_t start = 0;
	for (i = 0; i <= slash; i++) {
		if (i == slash || w.s[i] == '.') {
			uint32_t v;
			if (parts == 4 || !number((struct word){ w.s + start, i - start }, 255, &v) || i - start > 3)
				return false;
			a = a << 8 | v;
			parts++;
			start = i + 1;
		}
	}
	if (parts != 4)
		return false;
	uint32_t l = 32;
	if (slash < w.n && !number((struct word){ w.s + slash + 1, w.n - slash - 1 }, 32, &l))
		return false;
	*len = (uint8_t)l;
	*addr = a & prefix_mask(*len);
	return true;
}

/* P or P-Q with P <= Q. */
static bool port_range(struct word w, uint16_t *lo, uint16_t *hi)
{
	size_t dash = w.n;
	for (size_t i = 0; i < w.n; i++)
		if (w.s[i] == '-') {
			dash = i;
			break;
		}
	uint32_t a, b;
	if (!number((struct word){ w.s, dash }, 65535, &a))
		return false;
	b = a;
	if (dash < w.n && !number((struct word){ w.s + dash + 1, w.n - dash - 1 }, 65535, &b))
		return false;
	if (a > b)
		return false;
	*lo = (uint16_t)a, *hi = (uint16_t)b;
	return true;
}

static int fail(char err[PF_ERR_LEN], const char *what, struct word w)
{
	char q[32];
	quote(w, q);
	ksnprintf(err, PF_ERR_LEN, "%s '%s'", what, q);
	return -1;
}

static int fail_msg(char err[PF_ERR_LEN], const char *msg)
{
	ksnprintf(err, PF_ERR_LEN, "%s", msg);
	return -1;
}

int pf_parse_line(const char *s, size_t len, struct pf_rule *r, char err[PF_ERR_LEN])
{
	struct word w[MAX_WORDS];
	int n = 0;
	err[0] = 0;
	for (size_t i = 0; i < len;) {
		if (is_space(s[i])) {
			i++;
			continue;
		}
		if (s[i] == '#')
			break;
		if (n == MAX_WORDS)
			return fail_msg(err, "too many words");
		size_t b = i;
		for (; i < len && !is_space(s[i]) && s[i] != '#'; i++)
			if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
				return fail_msg(err, "control or non-ASCII character");
		w[n++] = (struct word){ s + b, i - b };
	}
	if (n == 0)
		return 0;
	*r = (struct pf_rule){ 0 };
	if (eq(w[0], "pass"))
		r->action = PF_PASS;
	else if (eq(w[0], "block"))
		r->action = PF_BLOCK;
	else
		return fail(err, "expected pass or block, not", w[0]);
	bool seen_from = false, seen_to = false, seen_on = false;
	int last_end = 0; /* 1: the last word group was from, 2: to (a port may follow) */
	for (int i = 1; i < n; i++) {
		struct word x = w[i];
		bool more = i + 1 < n;
		int end = 0;
		uint32_t v;
		if (eq(x, "in") || eq(x, "out")) {
			if (r->flags & (PFR_IN | PFR_OUT))
				return fail_msg(err, "direction given twice");
			r->flags |= eq(x, "in") ? PFR_IN : PFR_OUT;
		} else if (eq(x, "quick")) {
			if (r->flags & PFR_QUICK)
				return fail(err, "given twice:", x);
			r->flags |= PFR_QUICK;
		} else if (eq(x, "on")) {
			if (seen_on)
				return fail(err, "given twice:", x);
			seen_on = true;
			if (!more)
				return fail_msg(err, "'on' needs an interface number or any");
			x = w[++i];
			if (!eq(x, "any")) {
				if (!number(x, 255, &v))
					return fail(err, "bad interface number", x);
				r->flags |= PFR_ON;
				r->ifindex = (uint8_t)v;
			}
		} else if (eq(x, "proto")) {
			if (r->flags & PFR_PROTO)
				return fail(err, "given twice:", x);
			if (!more)
				return fail_msg(err, "'proto' needs udp, tcp, icmp or a number");
			x = w[++i];
			if (eq(x, "udp"))
				v = 17;
			else if (eq(x, "tcp"))
				v = 6;
			else if (eq(x, "icmp"))
				v = 1;
			else if (!number(x, 255, &v))
				return fail(err, "unknown protocol", x);
			r->flags |= PFR_PROTO;
			r->proto = (uint8_t)v;
		} else if (eq(x, "from") || eq(x, "to")) {
			bool from = eq(x, "from");
			if (from ? seen_from : seen_to)
				return fail(err, "given twice:", x);
			if (!more)
				return fail(err, "needs an address or any:", x);
			struct word a = w[++i];
			if (!address(a, from ? &r->src : &r->dst, from ? &r->src_len : &r->dst_len))
				return fail(err, "bad address", a);
			*(from ? &seen_from : &seen_to) = true;
			end = from ? 1 : 2;
		} else if (eq(x, "port")) {
			if (!last_end)
				return fail_msg(err, "'port' must follow from ADDR or to ADDR");
			if (!more)
				return fail_msg(err, "'port' needs a number or a range P-Q");
			struct word p = w[++i];
			bool ok = last_end == 1 ? port_range(p, &r->sport_lo, &r->sport_hi)
						: port_range(p, &r->dport_lo, &r->dport_hi);
			if (!ok)
				return fail(err, "bad port", p);
			r->flags |= last_end == 1 ? PFR_SPORT : PFR_DPORT;
		} else if (eq(x, "keep")) {
			if (!more || !eq(w[i + 1], "state"))
				return fail_msg(err, "'keep' must be followed by 'state'");
			if (r->flags & PFR_STATE)
				return fail_msg(err, "'keep state' given twice");
			i++;
			r->flags |= PFR_STATE;
		} else {
			return fail(err, "unknown word", x);
		}
		last_end = end;
	}
	if ((r->flags & (PFR_SPORT | PFR_DPORT)) && (r->flags & PFR_PROTO) && r->proto != 6 && r->proto != 17)
		return fail_msg(err, "ports need proto tcp or udp (or no proto)");
	return 1;
}

int pf_parse_file(const char *text, size_t len, struct pf_rule *rules, int max, char err[PF_ERR_LEN])
{
	int n = 0, line = 0;
	for (size_t i = 0; i < len;) {
		size_t b = i;
		while (i < len && text[i] != '\n')
			i++;
		line++;
		char why[PF_ERR_LEN];
		struct pf_rule r;
		int k = i - b > PF_LINE_MAX ? -1 : pf_parse_line(text + b, i - b, &r, why);
		if (i - b > PF_LINE_MAX)
			ksnprintf(why, sizeof(why), "line too long (at most %d characters)", PF_LINE_MAX);
		if (k < 0) {
			ksnprintf(err, PF_ERR_LEN, "pf: line %d: %s", line, why);
			return -1;
		}
		if (k == 1) {
			if (n == max) {
				ksnprintf(err, PF_ERR_LEN, "pf: line %d: too many rules (at most %d)", line, max);
				return -1;
			}
			rules[n++] = r;
		}
		if (i < len)
			i++; /* the newline */
	}
	err[0] = 0;
	return n;
}

bool pf_rule_valid(const struct pf_rule *r)
{
	if (r->action != PF_PASS && r->action != PF_BLOCK)
		return false;
	if ((r->flags & (PFR_IN | PFR_OUT)) == (PFR_IN | PFR_OUT) || r->pad)
		return false;
	if (!(r->flags & PFR_ON) && r->ifindex)
		return false;
	if (!(r->flags & PFR_PROTO) && r->proto)
		return false;
	if (r->src_len > 32 || r->dst_len > 32)
		return false;
	if ((r->src & ~prefix_mask(r->src_len)) || (r->dst & ~prefix_mask(r->dst_len)))
		return false;
	if (r->flags & PFR_SPORT ? r->sport_lo > r->sport_hi : r->sport_lo || r->sport_hi)
		return false;
	if (r->flags & PFR_DPORT ? r->dport_lo > r->dport_hi : r->dport_lo || r->dport_hi)
		return false;
	if ((r->flags & (PFR_SPORT | PFR_DPORT)) && (r->flags & PFR_PROTO) && r->proto != 6 && r->proto != 17)
		return false;
	return true;
}

void pf_addr_format(uint32_t a, char out[16])
{
	ksnprintf(out, 16, "%u.%u.%u.%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
}

struct out {
	char *p;
	size_t cap, len;
};

static void put(struct out *o, const char *s)
{
	for (; *s; s++, o->len++)
		if (o->len + 1 < o->cap)
			o->p[o->len] = *s;
	if (o->cap)
		o->p[o->len < o->cap ? o->len : o->cap - 1] = 0;
}

static void put_end(struct out *o, const char *kw, uint32_t addr, uint8_t len, bool has_port, uint16_t lo,
		    uint16_t hi)
{
	char tmp[48];
	if (!len && !has_port)
		return;
	put(o, kw);
	if (!len) {
		put(o, " any");
	} else {
		char a[16];
		pf_addr_format(addr, a);
		if (len == 32)
			ksnprintf(tmp, sizeof(tmp), " %s", a);
		else
			ksnprintf(tmp, sizeof(tmp), " %s/%u", a, len);
		put(o, tmp);
	}
	if (has_port) {
		if (lo == hi)
			ksnprintf(tmp, sizeof(tmp), " port %u", lo);
		else
			ksnprintf(tmp, sizeof(tmp), " port %u-%u", lo, hi);
		put(o, tmp);
	}
}

size_t pf_rule_format(const struct pf_rule *r, char *out, size_t cap)
{
	struct out o = { out, cap, 0 };
	char tmp[32];
	put(&o, r->action == PF_PASS ? "pass" : "block");
	if (r->flags & PFR_IN)
		put(&o, " in");
	if (r->flags & PFR_OUT)
		put(&o, " out");
	if (r->flags & PFR_QUICK)
		put(&o, " quick");
	if (r->flags & PFR_ON) {
		ksnprintf(tmp, sizeof(tmp), " on %u", r->ifindex);
		put(&o, tmp);
	}
	if (r->flags & PFR_PROTO) {
		if (r->proto == 17)
			put(&o, " proto udp");
		else if (r->proto == 6)
			put(&o, " proto tcp");
		else if (r->proto == 1)
			put(&o, " proto icmp");
		else {
			ksnprintf(tmp, sizeof(tmp), " proto %u", r->proto);
			put(&o, tmp);
		}
	}
	put_end(&o, " from", r->src, r->src_len, r->flags & PFR_SPORT, r->sport_lo, r->sport_hi);
	put_end(&o, " to", r->dst, r->dst_len, r->flags & PFR_DPORT, r->dport_lo, r->dport_hi);
	if (r->flags & PFR_STATE)
		put(&o, " keep state");
	return o.len < cap ? o.len : cap ? cap - 1 : 0;
}
