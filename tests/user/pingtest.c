/* pingtest: asks ip to ping (NETQ_PING, lib/net/netq_proto.h) and prints each answer, for
 * tests/system/test_ip.py. Run by rs as a service with restart=never.
 *   pingtest ADDR [count=N] [size=B] [interval=MS] [rounds=R] [show]
 * Each round is one NETQ_PING session of N echoes; a round that ip forgets (ip restarted:
 * -ENOENT, or ip gone) is counted and a new one starts, until R rounds completed. `show`
 * prints ip's tables (interfaces, routes, ARP, counters) after the last round.
 * It first waits until ip's first interface has an address.
 * Lines: "pingtest: seq S reply B bytes ttl T rtt U us" | "pingtest: seq S lost" |
 * "pingtest: round R: N sent, M replies" | "pingtest: ip restarted during round R" |
 * "pingtest: done: R rounds, N replies, M lost". */
#include "axrt.h"
#include "service.h"
#include "../../lib/net/netq_proto.h"

static uint64_t argnum(int argc, char **argv, const char *key, uint64_t def)
{
	size_t n = strlen(key);
	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], key, n) && argv[i][n] == '=')
			return ax_atou(argv[i] + n + 1);
	return def;
}

static void sleep_ms(uint64_t ms)
{
	static const uint64_t never = 0;
	ax_wait_timeout(&never, 0, ms * 1000000u);
}

static int64_t ip_ep(void)
{
	for (int i = 0; i < 500; i++) {
		int64_t ep = ax_svc_lookup("ip", NULL);
		if (ep > 0)
			return ep;
		sleep_ms(20);
	}
	return -1;
}

/* One call to ip; 0 on a NETQ_* reply, -1 when ip is gone or answered an error. */
static int ask(struct kmsg *m)
{
	int64_t ep = ip_ep();
	if (ep <= 0)
		return -1;
	int64_t r = ax_call((endpoint_t)ep, m);
	if (r < 0 || (int32_t)m->type < 0) {
		ax_printf("pingtest: ip answered %lld, type %d\n", (long long)r, (int32_t)m->type);
		return -1;
	}
	return 0;
}

static void show(uint32_t topic, const char *title)
{
	ax_printf("pingtest: %s\n", title);
	for (uint64_t line = 0; line < 200; line++) {
		struct kmsg m = { .type = NETQ_SHOW, .w = { topic, line } };
		if (ask(&m) < 0 || m.type != NETQ_LINE)
			break;
		char text[NETQ_TEXT + 1];
		memcpy(text, m.w, NETQ_TEXT);
		text[NETQ_TEXT] = 0;
		ax_printf("pingtest: | %s\n", text);
	}
}

static int parse_ip(const char *s, uint32_t *out)
{
	uint8_t a[4];
	for (int i = 0; i < 4; i++) {
		if (*s < '0' || *s > '9')
			return -1;
		a[i] = (uint8_t)ax_atou(s);
		while (*s >= '0' && *s <= '9')
			s++;
		if (i < 3 && *s++ != '.')
			return -1;
	}
	memcpy(out, a, 4);
	return 0;
}

int main(int argc, char **argv)
{
	ax_svc_init(argc, argv);
	uint32_t addr;
	if (argc < 2 || parse_ip(argv[1], &addr) < 0) {
		ax_printf("pingtest: usage: pingtest ADDR [count=N] [size=B] [interval=MS] [rounds=R] [show]\n");
		return 2;
	}
	uint64_t count = argnum(argc, argv, "count", 3), size = argnum(argc, argv, "size", 56);
	uint64_t interval = argnum(argc, argv, "interval", 200), rounds = argnum(argc, argv, "rounds", 1);
	uint64_t replies = 0, lost = 0, done = 0;
	/* Wait (up to 60 s) until ip's first interface has an address (DHCP takes a moment). */
	for (int i = 0; i < 600; i++) {
		struct kmsg m = { .type = NETQ_SHOW, .w = { NQ_IFACES, 0 } };
		char text[NETQ_TEXT + 1];
		if (ask(&m) == 0 && m.type == NETQ_LINE) {
			memcpy(text, m.w, NETQ_TEXT);
			text[NETQ_TEXT] = 0;
			const char *sp = text;
			while (*sp && *sp != ' ')
				sp++;
			if (*sp && strncmp(sp, " 0.0.0.0/", 9)) {
				ax_printf("pingtest: ip has %s\n", text);
				break;
			}
		}
		sleep_ms(100);
	}
	while (done < rounds) {
		struct kmsg m = { .type = NETQ_PING, .w = { addr, count, size, interval } };
		if (ask(&m) < 0) {
			ax_printf("pingtest: ping refused (%d), retrying\n", (int32_t)m.type);
			sleep_ms(500);
			continue;
		}
		uint64_t sid = m.w[0], seq = 1, got = 0;
		bool forgotten = false;
		while (seq <= count) {
			struct kmsg s = { .type = NETQ_PING_STATUS, .w = { sid, seq } };
			if (ask(&s) < 0) {
				forgotten = true;
				break;
			}
			if (s.w[0] == NQP_WAIT) {
				sleep_ms(10);
				continue;
			}
			if (s.w[0] == NQP_REPLY) {
				ax_printf("pingtest: seq %llu reply %llu bytes ttl %llu rtt %llu us\n", (unsigned long long)seq,
					  (unsigned long long)s.w[2], (unsigned long long)s.w[3], (unsigned long long)s.w[1]);
				got++;
			} else {
				ax_printf("pingtest: seq %llu lost\n", (unsigned long long)seq);
				lost++;
			}
			seq++;
		}
		replies += got;
		if (forgotten) {
			ax_printf("pingtest: ip restarted during round %llu\n", (unsigned long long)done);
			sleep_ms(200);
			continue;
		}
		ax_printf("pingtest: round %llu: %llu sent, %llu replies\n", (unsigned long long)done,
			  (unsigned long long)count, (unsigned long long)got);
		done++;
	}
	ax_printf("pingtest: done: %llu rounds, %llu replies, %llu lost\n", (unsigned long long)rounds,
		  (unsigned long long)replies, (unsigned long long)lost);
	for (int i = 2; i < argc; i++)
		if (!strcmp(argv[i], "show")) {
			show(NQ_IFACES, "interfaces");
			show(NQ_ROUTES, "routes");
			show(NQ_ARP, "arp");
			show(NQ_COUNTERS, "counters");
		}
	return 0;
}
