/* A strict line parser: every line is a comment, blank, or
 *   service NAME key=value|flag ...
 * and anything else is an error naming the line, so a typo never silently drops a
 * privilege or a service. No libc beyond the freestanding headers. */
#include "sysconf.h"

#define LINE_MAX_LEN 512

struct cursor {
	const char *p, *end;
};

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r'; }

static void copy_str(char *dst, size_t cap, const char *s, size_t n)
{
	size_t i = 0;
	for (; i < n && i + 1 < cap; i++)
		dst[i] = s[i];
	dst[i] = 0;
}

static void set_err(struct sysconf_error *e, int line, const char *a, const char *b, size_t blen)
{
	if (!e)
		return;
	e->line = line;
	size_t i = 0;
	for (; *a && i + 1 < sizeof(e->msg); a++)
		e->msg[i++] = *a;
	for (size_t j = 0; b && j < blen && i + 1 < sizeof(e->msg); j++)
		e->msg[i++] = (b[j] >= 0x20 && b[j] < 0x7f) ? b[j] : '?';
	e->msg[i] = 0;
}

static bool tok_eq(const char *s, size_t n, const char *lit)
{
	size_t i = 0;
	for (; i < n && lit[i]; i++)
		if (s[i] != lit[i])
			return false;
	return i == n && !lit[i];
}

/* Unsigned number: decimal or 0x hex, the whole token, at most max. */
static bool parse_num(const char *s, size_t n, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	unsigned base = 10;
	if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		base = 16, s += 2, n -= 2;
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned d;
		char c = s[i];
		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (base == 16 && c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (base == 16 && c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			return false;
		if (d > max || v > (max - d) / base) /* v * base + d <= max, without overflow */
			return false;
		v = v * base + d;
	}
	*out = v;
	return true;
}

/* Splits a comma-separated list: returns the next item's length and advances s and n past it. */
static size_t next_item(const char **s, size_t *n, const char **item)
{
	size_t i = 0;
	while (i < *n && (*s)[i] != ',')
		i++;
	*item = *s;
	size_t used = i < *n ? i + 1 : i;
	*s += used, *n -= used;
	return i;
}

static const char *parse_ports(struct svc_conf *c, const char *v, size_t n)
{
	while (n) {
		const char *it;
		size_t len = next_item(&v, &n, &it), dash = 0;
		while (dash < len && it[dash] != '-')
			dash++;
		uint64_t lo, hi;
		if (!parse_num(it, dash, 0xffff, &lo))
			return "bad port: ";
		hi = lo;
		if (dash < len && !parse_num(it + dash + 1, len - dash - 1, 0xffff, &hi))
			return "bad port: ";
		if (hi < lo)
			return "port range ends before it starts: ";
		if (c->nports == SVC_MAX_PORTS)
			return "too many port ranges: ";
		c->ports[c->nports].lo = (uint16_t)lo;
		c->ports[c->nports++].hi = (uint16_t)hi;
	}
	return NULL;
}

static const char *parse_irqs(struct svc_conf *c, const char *v, size_t n)
{
	while (n) {
		const char *it;
		size_t len = next_item(&v, &n, &it);
		uint64_t irq;
		if (!parse_num(it, len, 15, &irq))
			return "IRQ must be 0-15: ";
		c->irqs |= (uint16_t)(1u << irq);
	}
	return NULL;
}

/* VVVV:DDDD or VVVV:DDDD#n: a device by vendor and device id (four hex digits each). */
static const char *parse_pci_id(struct svc_conf *c, const char *it, size_t len)
{
	char hex[8] = "0x";
	uint64_t ven, dev, idx = 0;
	size_t hash = 9;
	if (len < 9)
		return "PCI id must be VVVV:DDDD or VVVV:DDDD#N: ";
	copy_str(hex + 2, 5, it, 4);
	bool ok = parse_num(hex, 6, 0xffff, &ven);
	copy_str(hex + 2, 5, it + 5, 4);
	ok = ok && parse_num(hex, 6, 0xffff, &dev);
	if (ok && len > 9)
		ok = it[hash] == '#' && parse_num(it + hash + 1, len - hash - 1, 255, &idx);
	if (!ok || ven == 0xffff || ven == 0)
		return "PCI id must be VVVV:DDDD or VVVV:DDDD#N: ";
	if (c->npci_ids == SVC_MAX_PCI_IDS)
		return "too many PCI ids (8 at most): ";
	c->pci_ids[c->npci_ids].vendor = (uint16_t)ven;
	c->pci_ids[c->npci_ids].device = (uint16_t)dev;
	c->pci_ids[c->npci_ids++].index = (uint8_t)idx;
	return NULL;
}

/* The first bad id of c's list, kept with its line (the service is not started). */
static void pci_id_error(struct svc_conf *c, int line, const char *msg, const char *tok, size_t len)
{
	if (c->pci_error[0])
		return;
	struct sysconf_error e;
	set_err(&e, line, msg, tok, len);
	copy_str(c->pci_error, sizeof(c->pci_error), e.msg, sizeof(e.msg));
	c->pci_error_line = line;
}

/* bus:dev.fn in hex, as lspci prints it, or VVVV:DDDD[#n] (a colon after 4 digits). A bad id
 * marks the service alone (pci_error: rs does not start it) instead of failing the file:
 * an id list is what grows as NIC models are added, and one driver's list must not keep
 * the console and every other service down. A bad bus:dev.fn fails the file as any key. */
static const char *parse_pci(struct svc_conf *c, const char *v, size_t n, int line)
{
	if (tok_eq(v, n, "all")) {
		c->pci_all = true;
		return NULL;
	}
	while (n) {
		const char *it;
		size_t len = next_item(&v, &n, &it), colon = 0, dot;
		while (colon < len && it[colon] != ':')
			colon++;
		if (colon == 4) {
			const char *e = parse_pci_id(c, it, len);
			if (e)
				pci_id_error(c, line, e, it, len);
			continue;
		}
		dot = colon;
		while (dot < len && it[dot] != '.')
			dot++;
		char hex[8] = "0x";
		uint64_t bus, dev, fn;
		if (colon == len || dot == len || colon > 2 || dot - colon - 1 > 2 || len - dot - 1 != 1)
			return "PCI address must be bus:dev.fn: ";
		copy_str(hex + 2, 4, it, colon);
		bool ok = parse_num(hex, 2 + colon, 0xff, &bus);
		copy_str(hex + 2, 4, it + colon + 1, dot - colon - 1);
		ok = ok && parse_num(hex, 2 + (dot - colon - 1), 0x1f, &dev);
		ok = ok && parse_num(it + dot + 1, 1, 7, &fn);
		if (!ok)
			return "PCI address must be bus:dev.fn: ";
		if (c->npci == SVC_MAX_PCI)
			return "too many PCI devices: ";
		c->pci[c->npci++] = (uint32_t)(bus << 8 | dev << 3 | fn);
	}
	return NULL;
}

static const char *parse_mmio(struct svc_conf *c, const char *v, size_t n)
{
	size_t plus = 0;
	while (plus < n && v[plus] != '+')
		plus++;
	uint64_t pa, pages;
	if (plus == n || !parse_num(v, plus, (1ull << 52) - 1, &pa) ||
	    !parse_num(v + plus + 1, n - plus - 1, 1u << 18, &pages) || !pages || (pa & 0xfff))
		return "mmio must be PAGE_ALIGNED_ADDRESS+PAGES: ";
	if (c->nmmio == SVC_MAX_MMIO)
		return "too many mmio ranges: ";
	c->mmio[c->nmmio].pa = pa;
	c->mmio[c->nmmio++].pages = pages;
	return NULL;
}

static const char *parse_kcalls(struct svc_conf *c, const char *v, size_t n)
{
	while (n) {
		const char *it;
		size_t len = next_item(&v, &n, &it);
		if (tok_eq(it, len, "vcopy"))
			c->kcalls |= SVC_KC_VCOPY;
		else if (tok_eq(it, len, "poweroff"))
			c->kcalls |= SVC_KC_POWEROFF;
		else
			return "unknown kernel call: ";
	}
	return NULL;
}

/* One key=value or flag; returns an error prefix (the token is appended) or NULL. */
static const char *parse_attr(struct svc_conf *c, const char *k, size_t kn, const char *v, size_t vn, bool has_v,
			      int line)
{
	uint64_t x;
	if (!has_v) {
		if (tok_eq(k, kn, "dedicated"))
			return c->dedicated = true, NULL;
		if (tok_eq(k, kn, "dma"))
			return c->dma = true, NULL;
		if (tok_eq(k, kn, "control"))
			return c->control = true, NULL;
		if (tok_eq(k, kn, "keep"))
			return c->keep = true, NULL;
		if (tok_eq(k, kn, "optional"))
			return c->optional = true, NULL;
		return "unknown flag: ";
	}
	if (!vn)
		return "empty value: ";
	if (tok_eq(k, kn, "binary")) {
		if (vn >= sizeof(c->binary))
			return "binary name too long: ";
		copy_str(c->binary, sizeof(c->binary), v, vn);
	} else if (tok_eq(k, kn, "args")) {
		if (vn >= sizeof(c->args))
			return "args too long: ";
		copy_str(c->args, sizeof(c->args), v, vn);
	} else if (tok_eq(k, kn, "cpu")) {
		if (tok_eq(v, vn, "any"))
			c->cpu = SVC_CPU_ANY;
		else if (parse_num(v, vn, 1023, &x))
			c->cpu = (int32_t)x;
		else
			return "cpu must be a number or any: ";
	} else if (tok_eq(k, kn, "priority")) {
		if (!parse_num(v, vn, 7, &x))
			return "priority must be 0-7: ";
		c->priority = (uint8_t)x;
	} else if (tok_eq(k, kn, "ioports")) {
		return parse_ports(c, v, vn);
	} else if (tok_eq(k, kn, "irq")) {
		return parse_irqs(c, v, vn);
	} else if (tok_eq(k, kn, "pci")) {
		return parse_pci(c, v, vn, line);
	} else if (tok_eq(k, kn, "mmio")) {
		return parse_mmio(c, v, vn);
	} else if (tok_eq(k, kn, "kcalls")) {
		return parse_kcalls(c, v, vn);
	} else if (tok_eq(k, kn, "restart")) {
		if (tok_eq(v, vn, "always"))
			c->restart = SVC_RESTART_ALWAYS;
		else if (tok_eq(v, vn, "on-failure"))
			c->restart = SVC_RESTART_ON_FAILURE;
		else if (tok_eq(v, vn, "never"))
			c->restart = SVC_RESTART_NEVER;
		else
			return "restart must be always, on-failure or never: ";
	} else if (tok_eq(k, kn, "heartbeat")) {
		if (!parse_num(v, vn, 3600000, &x))
			return "heartbeat must be milliseconds: ";
		c->heartbeat_ms = (uint32_t)x;
	} else if (tok_eq(k, kn, "backoff")) {
		if (!parse_num(v, vn, 3600000, &x) || !x)
			return "backoff must be milliseconds > 0: ";
		c->backoff_ms = (uint32_t)x;
	} else {
		return "unknown key: ";
	}
	return NULL;
}

static bool valid_name(const char *s, size_t n)
{
	if (!n || n >= sizeof(((struct svc_conf *)0)->name))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_'))
			return false;
	}
	return true;
}

/* Next token of a line: a word, key=value, or key="quoted value". */
static bool next_token(struct cursor *cu, const char **k, size_t *kn, const char **v, size_t *vn, bool *has_v,
		       const char **bad)
{
	while (cu->p < cu->end && is_space(*cu->p))
		cu->p++;
	if (cu->p == cu->end)
		return false;
	*k = cu->p;
	while (cu->p < cu->end && !is_space(*cu->p) && *cu->p != '=')
		cu->p++;
	*kn = (size_t)(cu->p - *k);
	*has_v = cu->p < cu->end && *cu->p == '=';
	*v = NULL, *vn = 0;
	if (!*has_v)
		return true;
	cu->p++;
	if (cu->p < cu->end && *cu->p == '"') {
		*v = ++cu->p;
		while (cu->p < cu->end && *cu->p != '"')
			cu->p++;
		if (cu->p == cu->end) {
			*bad = "unterminated quote";
			return false;
		}
		*vn = (size_t)(cu->p++ - *v);
		if (cu->p < cu->end && !is_space(*cu->p)) {
			*bad = "text after a closing quote";
			return false;
		}
	} else {
		*v = cu->p;
		while (cu->p < cu->end && !is_space(*cu->p))
			cu->p++;
		*vn = (size_t)(cu->p - *v);
	}
	return true;
}

static int parse_line(const char *s, size_t n, int line, struct svc_conf *c, const char **msg, const char **tok,
		      size_t *tokn)
{
	struct cursor cu = { s, s + n };
	const char *k, *v, *bad = NULL;
	size_t kn, vn;
	bool has_v;
	*tok = NULL, *tokn = 0;
	if (!next_token(&cu, &k, &kn, &v, &vn, &has_v, &bad))
		return bad ? (*msg = bad, -1) : 0; /* blank */
	if (*k == '#')
		return 0;
	if (!tok_eq(k, kn, "service") || has_v)
		return *msg = "expected `service NAME ...`, got: ", *tok = k, *tokn = kn, -1;
	if (!next_token(&cu, &k, &kn, &v, &vn, &has_v, &bad) || has_v || !valid_name(k, kn))
		return *msg = bad ? bad : "bad service name", -1;
	*c = (struct svc_conf){ .cpu = SVC_CPU_ANY, .priority = 2, .backoff_ms = 100 };
	copy_str(c->name, sizeof(c->name), k, kn);
	copy_str(c->binary, sizeof(c->binary), k, kn);
	while (next_token(&cu, &k, &kn, &v, &vn, &has_v, &bad)) {
		if (*k == '#')
			break;
		const char *e = parse_attr(c, k, kn, v, vn, has_v, line);
		if (e)
			return *msg = e, *tok = k, *tokn = (size_t)((has_v ? v + vn : k + kn) - k), -1;
	}
	if (bad)
		return *msg = bad, -1;
	if (c->dedicated && c->cpu == SVC_CPU_ANY)
		return *msg = "dedicated needs cpu=N", -1;
	return 1;
}

int sysconf_parse(const char *text, size_t len, struct svc_conf *out, int max, struct sysconf_error *err)
{
	int count = 0, line = 0;
	for (size_t pos = 0; pos < len;) {
		size_t end = pos;
		while (end < len && text[end] != '\n')
			end++;
		line++;
		const char *msg = NULL, *tok;
		size_t tokn;
		if (end - pos > LINE_MAX_LEN) {
			set_err(err, line, "line too long", NULL, 0);
			return -1;
		}
		for (size_t i = pos; i < end; i++) {
			if (text[i] == 0 || ((unsigned char)text[i] < 0x20 && text[i] != '\t' && text[i] != '\r')) {
				set_err(err, line, "control character in line", NULL, 0);
				return -1;
			}
		}
		struct svc_conf c;
		int r = parse_line(text + pos, end - pos, line, &c, &msg, &tok, &tokn);
		if (r < 0) {
			set_err(err, line, msg, tok, tokn);
			return -1;
		}
		if (r > 0) {
			size_t nl = 0;
			while (c.name[nl])
				nl++;
			for (int i = 0; i < count; i++) {
				if (tok_eq(c.name, nl, out[i].name)) {
					set_err(err, line, "service defined twice: ", c.name, nl);
					return -1;
				}
			}
			if (count == max) {
				set_err(err, line, "too many services", NULL, 0);
				return -1;
			}
			out[count++] = c;
		}
		pos = end + 1;
	}
	return count;
}
