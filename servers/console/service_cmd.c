#include "service_cmd.h"
#include "axrt.h"
#include "rs_proto.h"
#include "service.h"

#define LIST_MAX 1024 /* rows at most, should rs never say "no more" */

/* One subcommand that names a service, and its optional second argument: a field of cap
 * bytes (NUL included) at w[3]. */
struct subcmd {
	const char *name;
	uint32_t type;
	const char *arg, *what; /* in the usage line, and in messages */
	size_t cap;
};

static const struct subcmd subcmds[] = {
	{ "start", RS_START, NULL, NULL, 0 },
	{ "stop", RS_STOP, NULL, NULL, 0 },
	{ "kill", RS_KILL, NULL, NULL, 0 },
	{ "restart", RS_RESTART, NULL, NULL, 0 },
	{ "update", RS_UPDATE, "BINARY", "binary name", RS_NAME_LEN },
};
#define NSUBCMDS (sizeof(subcmds) / sizeof(subcmds[0]))

/* rs is the parent of every service, the console included. */
static endpoint_t rs_endpoint(void) { return (endpoint_t)kcall1(KC_INFO, KI_PARENT); }

/* Calls rs; the kernel's error, or rs's result from w[6]. */
static int64_t rs_call(struct kmsg *m)
{
	endpoint_t rs = rs_endpoint();
	int64_t r = rs == EP_NONE || rs == EP_ANY ? -KE_DEADSRCDST : ax_call(rs, m);
	return r < 0 ? r : (int64_t)m->w[6];
}

static const char *reason(int64_t err, char *tmp, size_t n)
{
	switch (-err) {
	case KE_SRCH: return "no such service";
	case KE_PERM: return "not allowed";
	case KE_BUSY: return "busy";
	case KE_INVAL: return "invalid argument";
	case KE_AGAIN: return "try again";
	case KE_NOSYS: return "not supported";
	case KE_INTR: return "update failed and was rolled back (see the rs log)";
	case KE_DEADSRCDST: return "rs is gone";
	}
	ksnprintf(tmp, n, "error %lld", (long long)err);
	return tmp;
}

static void fail(const char *what, int64_t err)
{
	char tmp[32];
	ax_printf("service: %s: %s\n", what, reason(err, tmp, sizeof(tmp)));
}

static void usage(void)
{
	ax_printf("usage: service list | service log | service start|stop|kill|restart NAME | "
		  "service update NAME BINARY | service update all [SUFFIX] | "
		  "service inject NAME WORD [N] [seed=S] [at=ADDR]\n");
}

/* A NUL-padded field of a reply as a printable string (rs is trusted, but a row is printed
 * as it comes). */
static void field_str(char *out, const void *field, size_t cap)
{
	memcpy(out, field, cap);
	out[cap - 1] = 0;
	for (char *p = out; *p; p++)
		if (*p < 0x20 || *p > 0x7e)
			*p = '?';
}

static void print_row(const struct kmsg *m)
{
	static const char *const states[] = { [RS_ST_RUNNING] = "running", [RS_ST_WAITING] = "waiting",
					      [RS_ST_STOPPED] = "stopped", [RS_ST_UPDATING] = "updating",
					      [RS_ST_ABSENT] = "absent" };
	char name[RS_NAME_LEN], state[16], ep[16] = "-", cpu[16] = "any", up[32] = "-", build[16] = "-";
	field_str(name, m->w, RS_NAME_LEN);
	uint32_t restarts = (uint32_t)m->w[4], st = (uint8_t)(m->w[4] >> 32), endpoint = (uint32_t)m->w[3];
	bool dedicated = (m->w[4] >> 40) & 1;
	int32_t where = (int32_t)(uint32_t)(m->w[3] >> 32);
	if (st < sizeof(states) / sizeof(states[0]) && states[st])
		ksnprintf(state, sizeof(state), "%s", states[st]);
	else
		ksnprintf(state, sizeof(state), "?%u", st);
	if (endpoint) {
		ksnprintf(ep, sizeof(ep), "%#x", endpoint);
		/* Seconds with one decimal, truncated. */
		uint32_t ms = (uint32_t)m->w[5];
		ksnprintf(up, sizeof(up), "%u.%us", ms / 1000, ms / 100 % 10);
		if (m->w[5] >> 32)
			ksnprintf(build, sizeof(build), "%08x", (uint32_t)(m->w[5] >> 32));
	}
	if (where >= 0)
		ksnprintf(cpu, sizeof(cpu), "%d%s", where, dedicated ? "*" : "");
	ax_printf("%-16s %-9s %-10s %-5s %-9u %-8s %s\n", name, state, ep, cpu, restarts, up, build);
}

static int list(void)
{
	for (uint64_t i = 0; i < LIST_MAX; i++) {
		struct kmsg m = { .type = RS_LIST, .w = { i } };
		int64_t r = rs_call(&m);
		/* The header only once rs has answered: a refusal is one clear line. */
		if (i == 0 && (r == 0 || r == -KE_SRCH))
			ax_printf("%-16s %-9s %-10s %-5s %-9s %-8s %s\n", "NAME", "STATE", "ENDPOINT", "CPU", "RESTARTS",
				  "UPTIME", "BUILD");
		if (r == -KE_SRCH)
			return 0;
		if (r < 0) {
			fail("list", r);
			return 1;
		}
		print_row(&m);
	}
	return 0;
}

/* rs's event log, oldest first: "[seconds] text". Each event's text comes in chunks. */
static int log_events(void)
{
	for (uint64_t i = 0; i < LIST_MAX; i++) {
		char text[192] = { 0 }; /* rs keeps 160 bytes of each */
		uint64_t t = 0;
		for (size_t off = 0; off + RS_LOG_CHUNK < sizeof(text); off += RS_LOG_CHUNK) {
			struct kmsg m = { .type = RS_LOG, .w = { i, off } };
			int64_t r = rs_call(&m);
			if (r == -KE_SRCH && off == 0)
				return 0; /* past the last event */
			if (r < 0 && off == 0) {
				fail("log", r);
				return 1;
			}
			if (r < 0)
				break;
			t = m.w[0];
			memcpy(text + off, &m.w[2], RS_LOG_CHUNK);
			if (strlen(text + off) < RS_LOG_CHUNK)
				break; /* the text ended in this chunk */
		}
		ax_printf("[%5llu.%03llu] %s\n", (unsigned long long)(t / 1000000000ull),
			  (unsigned long long)(t / 1000000ull % 1000), text);
	}
	return 0;
}

/* Copies a command-line argument into a message field; false (and says why) if it does not
 * fit. */
static bool put_field(void *field, size_t cap, const char *what, const char *s)
{
	if (ax_strpad(field, cap, s) == 0)
		return true;
	ax_printf("service: %s too long (at most %u characters): %s\n", what, (unsigned)cap - 1, s);
	return false;
}

static int named(const struct subcmd *c, int argc, char **argv)
{
	if (argc != (c->arg ? 4 : 3)) {
		ax_printf("usage: service %s NAME%s%s\n", c->name, c->arg ? " " : "", c->arg ? c->arg : "");
		return 2;
	}
	struct kmsg m = { .type = c->type };
	const char *name = argv[2];
	if (!put_field(m.w, RS_NAME_LEN, "name", name) || (c->arg && !put_field(&m.w[3], c->cap, c->what, argv[3])))
		return 2;
	/* The console updating itself cannot wait for the outcome: it must get back to its loop
	 * to quiesce. rs answers at once; the new console says when it took over. */
	bool self = c->type == RS_UPDATE && !strcmp(name, ax_svc.label);
	if (self)
		m.type = RS_UPDATE_NOWAIT;
	int64_t r = rs_call(&m);
	if (r < 0) {
		fail(name, r);
		return 1;
	}
	if (self)
		ax_printf("service: %s: updating to %s (the new console says when it took over)\n", name, argv[3]);
	else if (c->type == RS_UPDATE)
		ax_printf("service: %s updated to %s\n", name, argv[3]);
	else
		ax_printf("service: %s OK\n", name);
	return 0;
}

/* service update all [SUFFIX]: every service (in rs's order, the configuration's: ds first,
 * the drivers before the stack above them) to NAME.SUFFIX, or to NAME (its first build),
 * one after another; services that cannot be updated say so and are skipped. The console
 * itself is left out: it cannot quiesce while it waits for rs; absent services too. */
static int update_all(const char *suffix)
{
	enum { MAX_NAMES = 64 }; /* rs runs at most 32 services */
	char names[MAX_NAMES][RS_NAME_LEN + 1];
	int n = 0;
	for (uint64_t i = 0; i < MAX_NAMES; i++) {
		struct kmsg m = { .type = RS_LIST, .w = { i } };
		if (rs_call(&m) < 0)
			break;
		field_str(names[n], m.w, RS_NAME_LEN);
		/* (an absent service, a driver without its device, has nothing to update) */
		if (strcmp(names[n], "console") && (uint8_t)(m.w[4] >> 32) != RS_ST_ABSENT)
			n++;
	}
	int updated = 0, refused = 0, failed = 0;
	for (int i = 0; i < n; i++) {
		char bin[RS_NAME_LEN + 8];
		ksnprintf(bin, sizeof(bin), "%s%s%s", names[i], suffix ? "." : "", suffix ? suffix : "");
		struct kmsg m = { .type = RS_UPDATE };
		if (!put_field(m.w, RS_NAME_LEN, "name", names[i]) || !put_field(&m.w[3], RS_NAME_LEN, "binary name", bin))
			return 2;
		int64_t r = rs_call(&m);
		if (r == 0)
			ax_printf("service: %s updated to %s\n", names[i], bin), updated++;
		else if (r == -KE_NOSYS || r == -KE_INVAL)
			ax_printf("service: %s: %s\n", names[i], r == -KE_NOSYS ? "cannot be updated, skipped" : "no such binary, skipped"),
				refused++;
		else
			fail(names[i], r), failed++;
	}
	ax_printf("service: update all: %d updated, %d skipped, %d failed\n", updated, refused, failed);
	return failed ? 1 : 0;
}

/* A number in decimal or 0x hexadecimal; false if s is not one. */
static bool parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0, base = 10;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		base = 16, s += 2;
	if (!*s)
		return false;
	for (; *s; s++) {
		uint64_t d = *s >= '0' && *s <= '9' ? (uint64_t)(*s - '0')
			   : base == 16 && (*s | 0x20) >= 'a' && (*s | 0x20) <= 'f' ? (uint64_t)((*s | 0x20) - 'a' + 10)
										  : 99;
		if (d >= base || v > (UINT64_MAX - d) / base)
			return false;
		v = v * base + d;
	}
	*out = v;
	return true;
}

/* service inject NAME WORD [N] [seed=S] [at=ADDR]: N, seed and at for code faults (rs_swifi). */
static int inject(int argc, char **argv)
{
	struct kmsg m = { .type = RS_INJECT };
	uint64_t count = 0, seed = 0, at = 0;
	bool ok = argc >= 4 && put_field(m.w, RS_NAME_LEN, "name", argv[2]) &&
		  put_field(&m.w[3], RS_WORD_LEN, "fault word", argv[3]);
	for (int i = 4; ok && i < argc; i++) {
		if (!strncmp(argv[i], "seed=", 5))
			ok = parse_u64(argv[i] + 5, &seed) && seed;
		else if (!strncmp(argv[i], "at=", 3))
			ok = parse_u64(argv[i] + 3, &at) && at && at < (1ull << 47);
		else
			ok = parse_u64(argv[i], &count) && count && count <= 0xffff;
	}
	if (!ok) {
		ax_printf("usage: service inject NAME WORD [N] [seed=S] [at=ADDR]\n");
		return 2;
	}
	m.w[5] = count | at << 16;
	m.w[6] = seed;
	int64_t r = rs_call(&m);
	if (r < 0) {
		fail(argv[2], r);
		return 1;
	}
	if (m.w[2] && !m.w[1]) {
		ax_printf("service: %s: no instruction fits %s\n", argv[2], argv[3]);
		return 1;
	}
	if (m.w[1])
		ax_printf("service: %s: %llu faults injected, seed=%llu (service log has each)\n", argv[2],
			  (unsigned long long)m.w[1], (unsigned long long)m.w[0]);
	else
		ax_printf("service: %s OK\n", argv[2]);
	return 0;
}

int service_main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "inject"))
		return inject(argc, argv);
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "update") && !strcmp(argv[2], "all"))
		return update_all(argc == 4 ? argv[3] : NULL);
	if (argc == 2 && !strcmp(argv[1], "list"))
		return list();
	if (argc == 2 && !strcmp(argv[1], "log"))
		return log_events();
	for (size_t i = 0; argc >= 2 && i < NSUBCMDS; i++)
		if (!strcmp(argv[1], subcmds[i].name))
			return named(&subcmds[i], argc, argv);
	usage();
	return 2;
}
