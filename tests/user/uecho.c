/* Helper process for the user-space system tests (spawned by utest).
 *   uecho echo         reply to every call with w[0] + 1; type 2 = reply then exit
 *   uecho die-on-call  take one call and exit without replying
 *   uecho die-later    exit after a while without receiving anything
 *   uecho crash        write to address 0
 *   uecho exit N       exit with status N at once
 *   uecho notify-sink  OR up notifications until a call arrives; reply with the bits
 *   uecho spin N       report the CPU it runs on N times (messages to the parent) */
#include "axrt.h"

static long num(const char *s)
{
	long v = 0;
	while (*s >= '0' && *s <= '9')
		v = v * 10 + (*s++ - '0');
	return v;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "echo";
	struct kmsg m;
	if (!strcmp(mode, "echo")) {
		for (;;) {
			if (ax_receive(EP_ANY, &m) < 0 || m.source == EP_KERNEL)
				continue;
			endpoint_t from = m.source;
			m.w[0]++;
			uint32_t type = m.type;
			ax_reply(from, &m);
			if (type == 2)
				return 0;
		}
	}
	if (!strcmp(mode, "die-on-call")) {
		while (ax_receive(EP_ANY, &m) < 0 || m.source == EP_KERNEL)
			;
		return 7; /* the caller must get an error, not hang */
	}
	if (!strcmp(mode, "die-later")) {
		uint64_t t0 = ax_time_ns();
		while (ax_time_ns() - t0 < 200000000ull)
			ax_yield();
		return 8;
	}
	if (!strcmp(mode, "crash")) {
		*(volatile int *)0 = 1;
		return 9;
	}
	if (!strcmp(mode, "exit"))
		return argc > 2 ? (int)num(argv[2]) : 0;
	if (!strcmp(mode, "notify-sink")) {
		uint64_t bits = 0, notes = 0;
		for (;;) {
			if (ax_receive(EP_ANY, &m) < 0)
				continue;
			if (m.source == EP_KERNEL && m.type == KMSG_NOTIFY) {
				bits |= m.w[0];
				notes++;
				continue;
			}
			if (m.source == EP_KERNEL)
				continue;
			endpoint_t from = m.source;
			m.w[0] = bits;
			m.w[1] = notes;
			ax_reply(from, &m);
			return 0;
		}
	}
	if (!strcmp(mode, "spin")) {
		/* Ask the parent (the sender of the first message) for reports. */
		while (ax_receive(EP_ANY, &m) < 0 || m.source == EP_KERNEL)
			;
		endpoint_t parent = m.source;
		ax_reply(parent, &m);
		long n = argc > 2 ? num(argv[2]) : 100;
		for (long i = 0; i < n; i++) {
			uint64_t t0 = ax_rdtsc();
			while (ax_rdtsc() - t0 < 2000000)
				;
			m.type = 3;
			m.w[0] = ax_cpu();
			if (ax_send(parent, &m) < 0)
				return 1;
		}
		return 0;
	}
	ax_printf("uecho: unknown mode %s\n", mode);
	return 2;
}
