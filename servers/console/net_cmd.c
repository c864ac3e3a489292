/* Network commands of the console (net_cmd.h). A server is found by its service name
 * through rs (ax_svc_lookup) and asked with plain calls; every answer is checked before
 * it is printed (a line is NUL-padded text of at most NETQ_TEXT bytes, and shown with
 * anything unprintable replaced). */
#include "net_cmd.h"
#include "axrt.h"
#include "heartbeat.h"
#include "service.h"
#include "../../lib/net/netq_proto.h"

#define MAX_LINES 4096
#define NQ_ENOENT 2

/* The network services netstat asks, in this order; the absent ones are skipped. */
static const char *const net_services[] = { "ip", "pf", "udp", "tcp", "e1000", "e1000e", "virtio-net", "ixgbe" };

/* The server's endpoint, or 0 after saying it is not running. */
static endpoint_t server(const char *cmd, const char *name, bool quiet)
{
	int64_t ep = ax_svc_lookup(name, NULL);
	if (ep > 0)
		return (endpoint_t)ep;
	if (!quiet)
		ax_printf("%s: %s is not running\n", cmd, name);
	return 0;
}

/* The error of an answer: 0 if its type is one of ours, else the negative errno from the
 * type or w[6]; a failed call is the kernel's error. */
static int64_t answer_error(int64_t call, const struct kmsg *m)
{
	if (call < 0)
		return call;
	if (m->type == NETQ_LINE || m->type == NETQ_END || m->type == NETQ_OK)
		return 0;
	if ((int32_t)m->type < 0)
		return (int32_t)m->type;
	return (int64_t)m->w[6] < 0 ? (int64_t)m->w[6] : -KE_INVAL;
}

static const char *reason(int64_t e, char *tmp, size_t n)
{
	switch (-e) {
	case NQ_ENOENT: return "not served here";
	case KE_DEADSRCDST: return "the server is gone";
	case KE_INVAL: return "invalid argument";
	case KE_PERM: return "not allowed";
	case KE_NOSYS: return "not supported";
	case KE_AGAIN: return "try again";
	case KE_NOMEM: return "out of room";
	}
	ksnprintf(tmp, n, "error %lld", (long long)e);
	return tmp;
}

static void fail(const char *cmd, const char *name, int64_t e)
{
	char tmp[32];
	ax_printf("%s: %s: %s\n", cmd, name, reason(e, tmp, sizeof(tmp)));
}

/* A NUL-padded text field as a printable string. */
static void text(char *out, const void *field, size_t cap)
{
	memcpy(out, field, cap);
	out[cap] = 0;
	for (char *p = out; *p; p++)
		if (*p < 0x20 || *p > 0x7e)
			*p = '?';
}

/* Prints every line of a topic from one server, each after prefix; the line count, or a
 * negative error (printed unless quiet_enoent and the topic is not served). */
static int64_t show(const char *cmd, const char *name, endpoint_t ep, uint64_t topic, const char *prefix)
{
	for (uint64_t n = 0; n < MAX_LINES; n++) {
		ax_heartbeat(); /* a long table (netstat's sockets) is slow to print, not hung */
		struct kmsg m = { .type = NETQ_SHOW, .w = { topic, n } };
		int64_t e = answer_error(ax_call(ep, &m), &m);
		if (e < 0) {
			fail(cmd, name, e);
			return e;
		}
		if (m.type != NETQ_LINE)
			return (int64_t)n;
		char line[NETQ_TEXT + 1];
		text(line, m.w, NETQ_TEXT);
		ax_printf("%s%s\n", prefix, line);
	}
	return MAX_LINES;
}

static int show_cmd(const char *cmd, const char *name, uint64_t topic, int argc)
{
	if (argc != 1) {
		ax_printf("usage: %s\n", cmd);
		return 2;
	}
	endpoint_t ep = server(cmd, name, false);
	if (!ep)
		return 1;
	return show(cmd, name, ep, topic, "") < 0;
}

int ifconfig_main(int argc, char **argv) { (void)argv; return show_cmd("ifconfig", "ip", NQ_IFACES, argc); }
int route_main(int argc, char **argv) { (void)argv; return show_cmd("route", "ip", NQ_ROUTES, argc); }
int arp_main(int argc, char **argv) { (void)argv; return show_cmd("arp", "ip", NQ_ARP, argc); }
int socklib_main(int argc, char **argv) { (void)argv; return show_cmd("socklib", "syscall", NQ_SOCKLIB, argc); }

int netstat_main(int argc, char **argv)
{
	(void)argv;
	if (argc != 1) {
		ax_printf("usage: netstat\n");
		return 2;
	}
	int found = 0, failed = 0;
	for (size_t i = 0; i < sizeof(net_services) / sizeof(net_services[0]); i++) {
		endpoint_t ep = server("netstat", net_services[i], true);
		if (!ep)
			continue;
		found++;
		ax_printf("%s:\n", net_services[i]);
		failed += show("netstat", net_services[i], ep, NQ_COUNTERS, "  ") < 0;
		/* the socket engines list their sockets and connections too */
		if (!strcmp(net_services[i], "udp") || !strcmp(net_services[i], "tcp"))
			failed += show("netstat", net_services[i], ep, NQ_SOCKETS, "  ") < 0;
	}
	if (!found)
		ax_printf("netstat: no network service is running\n");
	return !found || failed;
}

/* Dotted quad -> IPv4 in network order (as stored in memory, so in the low 32 bits of a
 * word on this little-endian machine). */
static bool parse_addr(const char *s, uint32_t *out)
{
	uint32_t v = 0;
	for (int part = 0; part < 4; part++) {
		uint32_t x = 0;
		int digits = 0;
		for (; *s >= '0' && *s <= '9'; s++, digits++)
			x = x * 10 + (uint32_t)(*s - '0');
		if (!digits || digits > 3 || x > 255 || *s != (part < 3 ? '.' : 0))
			return false;
		s += part < 3;
		v |= x << (8 * part);
	}
	*out = v;
	return true;
}

static bool parse_num(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	if (!s || !*s)
		return false;
	for (const char *p = s; *p; p++)
		if (*p < '0' || *p > '9' || p - s > 9)
			return false;
	*out = ax_atou(s);
	return *out >= lo && *out <= hi;
}

static void sleep_ms(uint64_t ms)
{
	static const uint64_t never_rung = 0;
	ax_heartbeat(); /* waiting for ip is not hanging */
	ax_wait_timeout(&never_rung, 0, ms * 1000000);
}

static void print_ms(char *out, size_t n, uint64_t us)
{
	ksnprintf(out, n, "%llu.%03llu", (unsigned long long)(us / 1000), (unsigned long long)(us % 1000));
}

int ping_main(int argc, char **argv)
{
	uint64_t count = 4, size = 56, interval = 1000;
	const char *target = NULL;
	for (int i = 1; i < argc; i++) {
		const char *o = argv[i];
		bool ok = true;
		if (!strcmp(o, "-c"))
			ok = ++i < argc && parse_num(argv[i], 1, 100, &count);
		else if (!strcmp(o, "-s"))
			ok = ++i < argc && parse_num(argv[i], 0, 65000, &size);
		else if (!strcmp(o, "-i"))
			ok = ++i < argc && parse_num(argv[i], 10, 10000, &interval);
		else if (!target && o[0] != '-')
			target = o;
		else
			ok = false;
		if (!ok) {
			ax_printf("usage: ping [-c COUNT (1-100)] [-s SIZE (0-65000)] [-i MS (10-10000)] ADDR\n");
			return 2;
		}
	}
	uint32_t addr;
	if (!target || !parse_addr(target, &addr)) {
		ax_printf(target ? "ping: not an IPv4 address: %s\n" : "usage: ping [-c COUNT] [-s SIZE] [-i MS] ADDR\n",
			  target);
		return 2;
	}
	endpoint_t ep = server("ping", "ip", false);
	if (!ep)
		return 1;
	struct kmsg m = { .type = NETQ_PING, .w = { addr, count, size, interval } };
	int64_t e = answer_error(ax_call(ep, &m), &m);
	if (e < 0) {
		fail("ping", "ip", e);
		return 1;
	}
	uint64_t session = m.w[0], received = 0, transmitted = 0, min = ~0ull, max = 0, sum = 0;
	ax_printf("PING %s (%s) %llu(%llu) bytes of data.\n", target, target, (unsigned long long)size,
		  (unsigned long long)size + 28);
	/* Each sequence number until ip says replied or lost; ip declares a loss itself, the
	 * deadline here only guards against an ip that never does. */
	for (uint64_t seq = 1; seq <= count; seq++) {
		uint64_t deadline = ax_time_ns() + (interval * (seq + 1) + 10000) * 1000000ull;
		for (;;) {
			m = (struct kmsg){ .type = NETQ_PING_STATUS, .w = { session, seq } };
			e = answer_error(ax_call(ep, &m), &m);
			if (e < 0) {
				fail("ping", "ip", e);
				return 1;
			}
			if (m.w[4] > transmitted)
				transmitted = m.w[4] > count ? count : m.w[4];
			if (m.w[0] == NQP_REPLY) {
				char t[24];
				uint64_t rtt = m.w[1];
				print_ms(t, sizeof(t), rtt);
				/* Linux counts the ICMP header (8 bytes) with the payload */
				ax_printf("%llu bytes from %s: icmp_seq=%llu ttl=%llu time=%s ms\n", (unsigned long long)m.w[2] + 8,
					  target, (unsigned long long)seq, (unsigned long long)m.w[3], t);
				received++;
				sum += rtt;
				min = rtt < min ? rtt : min;
				max = rtt > max ? rtt : max;
				break;
			}
			if (m.w[0] == NQP_LOST || ax_time_ns() > deadline)
				break;
			sleep_ms(10);
		}
	}
	if (transmitted < count)
		transmitted = count; /* every one was asked for; a lost one counts as sent */
	ax_printf("--- %s ping statistics ---\n", target);
	ax_printf("%llu packets transmitted, %llu received, %llu%% packet loss\n", (unsigned long long)transmitted,
		  (unsigned long long)received, (unsigned long long)((transmitted - received) * 100 / transmitted));
	if (received) {
		char a[24], b[24], c[24];
		print_ms(a, sizeof(a), min);
		print_ms(b, sizeof(b), sum / received);
		print_ms(c, sizeof(c), max);
		ax_printf("rtt min/avg/max = %s/%s/%s ms\n", a, b, c);
	}
	return received ? 0 : 1;
}

static void pf_usage(void)
{
	ax_printf("usage: pf rules | pf states | pf counters | pf add RULE | pf del N | pf flush | pf reload\n");
}

/* A NETQ_PF call; prints pf's refusal (its text, if it sent one). The answer's w[0], or -1. */
static int64_t pf_call(endpoint_t ep, struct kmsg *m)
{
	int64_t e = answer_error(ax_call(ep, m), m);
	if (e < 0) {
		char why[49];
		text(why, m->w, 48);
		if (why[0] && e != -KE_DEADSRCDST)
			ax_printf("pf: %s\n", why);
		else
			fail("pf", "pf", e);
		return -1;
	}
	return (int64_t)m->w[0];
}

int pf_main(int argc, char **argv)
{
	if (argc < 2) {
		pf_usage();
		return 2;
	}
	const char *sub = argv[1];
	bool show_sub = !strcmp(sub, "rules") || !strcmp(sub, "states") || !strcmp(sub, "counters");
	bool known = show_sub || !strcmp(sub, "add") || !strcmp(sub, "del") || !strcmp(sub, "flush") ||
		     !strcmp(sub, "reload");
	if (!known || (show_sub && argc != 2)) {
		pf_usage();
		return 2;
	}
	endpoint_t ep = server("pf", "pf", false);
	if (!ep)
		return 1;
	if (show_sub) {
		uint64_t topic = !strcmp(sub, "rules") ? NQ_PF_RULES : !strcmp(sub, "states") ? NQ_PF_STATES : NQ_COUNTERS;
		return show("pf", "pf", ep, topic, "") < 0;
	}
	struct kmsg m = { .type = NETQ_PF };
	if (!strcmp(sub, "add")) {
		/* The rest of the line, words joined by one space, up to 48 characters. */
		char rule[64];
		size_t n = 0;
		for (int i = 2; i < argc; i++) {
			size_t l = strlen(argv[i]);
			if (n + l + (n > 0) > 48) {
				ax_printf("pf: rule too long for pf add (at most 48 characters); put it in pf.conf\n");
				return 2;
			}
			if (n)
				rule[n++] = ' ';
			memcpy(rule + n, argv[i], l);
			n += l;
		}
		if (!n) {
			pf_usage();
			return 2;
		}
		m.w[0] = NQF_ADD;
		memcpy(&m.w[1], rule, n);
		int64_t r = pf_call(ep, &m);
		if (r < 0)
			return 1;
		ax_printf("pf: rule %lld added\n", (long long)r);
		return 0;
	}
	if (!strcmp(sub, "del")) {
		uint64_t num;
		if (argc != 3 || !parse_num(argv[2], 1, 1000000, &num)) {
			pf_usage();
			return 2;
		}
		m.w[0] = NQF_DEL, m.w[1] = num;
		if (pf_call(ep, &m) < 0)
			return 1;
		ax_printf("pf: rule %llu deleted\n", (unsigned long long)num);
		return 0;
	}
	if (argc != 2) {
		pf_usage();
		return 2;
	}
	bool flush = !strcmp(sub, "flush");
	m.w[0] = flush ? NQF_FLUSH : NQF_RELOAD;
	int64_t r = pf_call(ep, &m);
	if (r < 0)
		return 1;
	if (flush)
		ax_printf("pf: rules flushed: everything passes\n");
	else
		ax_printf("pf: %lld rules from pf.conf\n", (long long)r);
	return 0;
}
