/* pf rule parser (servers/pf/rules.c): every word, the errors naming their line and word,
 * text -> binary -> text round trips, binary validation, and a mutation fuzz. */
#include "unit.h"
#include "rules.h"
#include "pf_proto.h"

static char err[PF_ERR_LEN];

static int line(const char *s, struct pf_rule *r) { return pf_parse_line(s, strlen(s), r, err); }

static void every_word(void)
{
	struct pf_rule r;
	REQUIRE(line("block in quick on 1 proto udp from 10.0.2.0/24 port 1000-2000 to 10.0.2.15 port 53 keep state", &r) == 1);
	CHECK_EQ_U64(r.action, PF_BLOCK);
	CHECK_EQ_U64(r.flags, PFR_IN | PFR_QUICK | PFR_ON | PFR_PROTO | PFR_SPORT | PFR_DPORT | PFR_STATE);
	CHECK_EQ_U64(r.ifindex, 1);
	CHECK_EQ_U64(r.proto, 17);
	CHECK_EQ_U64(r.src, 0x0a000200);
	CHECK_EQ_U64(r.src_len, 24);
	CHECK_EQ_U64(r.dst, 0x0a00020f);
	CHECK_EQ_U64(r.dst_len, 32);
	CHECK_EQ_U64(r.sport_lo, 1000);
	CHECK_EQ_U64(r.sport_hi, 2000);
	CHECK_EQ_U64(r.dport_lo, 53);
	CHECK_EQ_U64(r.dport_hi, 53);
	CHECK(pf_rule_valid(&r));
	REQUIRE(line("pass", &r) == 1);
	CHECK_EQ_U64(r.action, PF_PASS);
	CHECK_EQ_U64(r.flags, 0);
	REQUIRE(line("  pass out on any proto tcp from any to any  # all of it", &r) == 1);
	CHECK_EQ_U64(r.flags, PFR_OUT | PFR_PROTO);
	CHECK_EQ_U64(r.src_len + r.dst_len, 0);
	REQUIRE(line("pass proto icmp", &r) == 1);
	CHECK_EQ_U64(r.proto, 1);
	REQUIRE(line("pass proto 47 to 192.168.1.77/16", &r) == 1);
	CHECK_EQ_U64(r.proto, 47);
	CHECK_EQ_U64(r.dst, 0xc0a80000); /* host bits are dropped */
	CHECK_EQ_U64(r.dst_len, 16);
	REQUIRE(line("pass from any port 68 to 0.0.0.0/0 port 67", &r) == 1);
	CHECK_EQ_U64(r.flags, PFR_SPORT | PFR_DPORT);
	CHECK_EQ_U64(r.sport_lo, 68);
	CHECK_EQ_U64(line("# only a comment", &r), 0);
	CHECK_EQ_U64(line("   \t\r", &r), 0);
}

static void errors(void)
{
	struct pf_rule r;
	static const struct {
		const char *text, *msg;
	} bad[] = {
		{ "pass in frm any", "unknown word 'frm'" },
		{ "allow in", "expected pass or block, not 'allow'" },
		{ "pass in out", "direction given twice" },
		{ "pass on", "'on' needs an interface number or any" },
		{ "pass on 256", "bad interface number '256'" },
		{ "pass proto xyz", "unknown protocol 'xyz'" },
		{ "pass from 10.0.0.256", "bad address '10.0.0.256'" },
		{ "pass from 10.0.0", "bad address '10.0.0'" },
		{ "pass from 10.0.0.1/33", "bad address '10.0.0.1/33'" },
		{ "pass from 1.2.3.4.5", "bad address '1.2.3.4.5'" },
		{ "pass port 53", "'port' must follow from ADDR or to ADDR" },
		{ "pass to any port 70000", "bad port '70000'" },
		{ "pass to any port 9-3", "bad port '9-3'" },
		{ "pass to any port", "'port' needs a number or a range P-Q" },
		{ "pass proto icmp to any port 7", "ports need proto tcp or udp (or no proto)" },
		{ "pass keep", "'keep' must be followed by 'state'" },
		{ "pass keep going", "'keep' must be followed by 'state'" },
		{ "pass from any from any", "given twice: 'from'" },
		{ "pass quick quick", "given twice: 'quick'" },
		{ "pass from any to", "needs an address or any: 'to'" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_EQ_I64(line(bad[i].text, &r), -1);
		CHECK_STR(err, bad[i].msg);
	}
}

static void whole_file(void)
{
	struct pf_rule rules[8];
	const char *ok = "# pf.conf\n\nblock in proto udp to any port 7777\npass out keep state\n";
	CHECK_EQ_I64(pf_parse_file(ok, strlen(ok), rules, 8, err), 2);
	CHECK_EQ_U64(rules[0].dport_lo, 7777);
	CHECK_EQ_U64(rules[1].flags, PFR_OUT | PFR_STATE);
	const char *bad = "pass\n# two\npass in frm any\npass\n";
	CHECK_EQ_I64(pf_parse_file(bad, strlen(bad), rules, 8, err), -1);
	CHECK_STR(err, "pf: line 3: unknown word 'frm'");
	const char *many = "pass\npass\npass\n";
	CHECK_EQ_I64(pf_parse_file(many, strlen(many), rules, 2, err), -1);
	CHECK_STR(err, "pf: line 3: too many rules (at most 2)");
	/* no final newline; the length bounds the text (a mapped module has no NUL) */
	CHECK_EQ_I64(pf_parse_file("pass\nblock in", 13, rules, 8, err), 2);
	CHECK_EQ_I64(pf_parse_file("pass\nblock in", 10, rules, 8, err), 2);
	CHECK_EQ_U64(rules[1].action, PF_BLOCK);
	CHECK_EQ_I64(pf_parse_file("", 0, rules, 8, err), 0);
	char longline[400];
	memset(longline, ' ', sizeof(longline));
	memcpy(longline, "pass", 4);
	CHECK_EQ_I64(pf_parse_file(longline, sizeof(longline), rules, 8, err), -1);
	CHECK_STR(err, "pf: line 1: line too long (at most 256 characters)");
	CHECK_EQ_I64(pf_parse_file("pass\0in", 7, rules, 8, err), -1);
}

static void round_trip(void)
{
	static const char *texts[] = {
		"pass",
		"block in quick on 3 proto udp from 10.0.2.0/24 port 1000-2000 to 10.0.2.15 port 53 keep state",
		"pass out proto tcp to any port 80 keep state",
		"block proto 47",
		"pass from any port 68 to 255.255.255.255 port 67",
		"block in to 0.0.0.1",
		"pass in proto icmp from 128.0.0.0/1 keep state",
	};
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct pf_rule r, r2;
		char out[PF_LINE_MAX];
		REQUIRE(line(texts[i], &r) == 1);
		pf_rule_format(&r, out, sizeof(out));
		CHECK_STR(out, texts[i]);
		REQUIRE(line(out, &r2) == 1);
		CHECK(!memcmp(&r, &r2, sizeof(r)));
	}
	/* truncation keeps a NUL */
	struct pf_rule r;
	char small[8];
	REQUIRE(line(texts[1], &r) == 1);
	pf_rule_format(&r, small, sizeof(small));
	CHECK_STR(small, "block i");
}

static void validation(void)
{
	struct pf_rule r;
	REQUIRE(line("pass in proto udp to 10.0.0.0/8 port 53", &r) == 1);
	CHECK(pf_rule_valid(&r));
	struct pf_rule b = r;
	b.action = 7;
	CHECK(!pf_rule_valid(&b));
	b = r, b.dst |= 1; /* a host bit under the prefix */
	CHECK(!pf_rule_valid(&b));
	b = r, b.dst_len = 40;
	CHECK(!pf_rule_valid(&b));
	b = r, b.dport_lo = 60, b.dport_hi = 50;
	CHECK(!pf_rule_valid(&b));
	b = r, b.proto = 1;
	CHECK(!pf_rule_valid(&b));
	b = r, b.flags |= PFR_OUT;
	CHECK(!pf_rule_valid(&b));
	b = r, b.sport_lo = 1;
	CHECK(!pf_rule_valid(&b));
	b = r, b.ifindex = 2;
	CHECK(!pf_rule_valid(&b));
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void) { return rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17; }

/* Random mutations of a good file: the parser never reads outside the text, accepts or
 * rejects with a message naming a line, and every rule it accepts is valid and prints to a
 * text that parses back to the same rule. Random binary rules: validation never crashes and
 * a valid one round-trips too. */
static void fuzz(void)
{
	static const char seed[] = "block in quick on 1 proto udp from 10.0.2.0/24 port 1000-2000 to 10.0.2.15 port 53 keep state\n"
				   "pass out proto tcp to any port 80 keep state # web\npass proto icmp from any to 8.8.0.0/16\n";
	static const char *words[] = { "pass", "block", "in", "out", "quick", "on", "proto", "from", "to", "port",
				       "keep", "state", "any", "udp", "1.2.3.4/5", "65535", "-", "/", "#", "\n" };
	struct pf_rule rules[16];
	int accepted = 0;
	for (int i = 0; i < 100000; i++) {
		char buf[512];
		size_t n = sizeof(seed) - 1;
		memcpy(buf, seed, n);
		int m = 1 + (int)(next() % 4);
		for (int k = 0; k < m; k++) {
			uint64_t x = next();
			if (x & 1) {
				buf[(x >> 8) % n] = (char)(x >> 32);
			} else {
				const char *w = words[(x >> 8) % (sizeof(words) / sizeof(words[0]))];
				size_t at = (x >> 16) % n, wl = strlen(w);
				if (n + wl < sizeof(buf)) {
					memmove(buf + at + wl, buf + at, n - at);
					memcpy(buf + at, w, wl);
					n += wl;
				}
			}
		}
		size_t len = next() % (n + 1);
		char *copy = malloc(len ? len : 1); /* exactly len bytes: ASan sees any overread */
		memcpy(copy, buf, len);
		int r = pf_parse_file(copy, len, rules, 16, err);
		free(copy);
		if (r < 0) {
			REQUIRE(!strncmp(err, "pf: line ", 9));
			continue;
		}
		accepted++;
		for (int j = 0; j < r; j++) {
			REQUIRE(pf_rule_valid(&rules[j]));
			char out[PF_LINE_MAX];
			struct pf_rule back;
			pf_rule_format(&rules[j], out, sizeof(out));
			REQUIRE(line(out, &back) == 1);
			REQUIRE(!memcmp(&back, &rules[j], sizeof(back)));
		}
	}
	CHECK(accepted > 1000);
	int valid = 0;
	for (int i = 0; i < 200000; i++) {
		struct pf_rule r;
		uint64_t w[3] = { next(), next(), next() };
		memcpy(&r, w, sizeof(r));
		r.action = (uint8_t)(1 + r.action % 2);
		if (next() & 1)
			r.src_len = (uint8_t)(r.src_len % 33), r.src = 0;
		if (next() & 1)
			r.dst_len = (uint8_t)(r.dst_len % 33), r.dst = 0;
		if (next() & 1)
			r.pad = 0, r.ifindex = 0, r.proto = 0, r.sport_lo = r.sport_hi = r.dport_lo = r.dport_hi = 0,
			r.flags &= (uint8_t) ~(PFR_SPORT | PFR_DPORT);
		if (!pf_rule_valid(&r))
			continue;
		valid++;
		char out[PF_LINE_MAX];
		struct pf_rule back;
		pf_rule_format(&r, out, sizeof(out));
		REQUIRE(line(out, &back) == 1);
		REQUIRE(!memcmp(&back, &r, sizeof(back)));
	}
	CHECK(valid > 100);
}

int main(void)
{
	unit_begin(__FILE__);
	RUN(every_word);
	RUN(errors);
	RUN(whole_file);
	RUN(round_trip);
	RUN(validation);
	RUN(fuzz);
	return unit_end();
}
