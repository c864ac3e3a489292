/* lwIP's platform functions for a NO_SYS=1 instance in an Axolotl server (README.md): the
 * clock, random numbers, diagnostics, and atoi for netif.c. Compiled once per server, with
 * that server's lwipopts.h. */
#include "lwip/opt.h"
#include "lwip/sys.h"
#include <axrt.h>
#include <stdarg.h>

u32_t sys_now(void)
{
	return (u32_t)(ax_time_ns() / 1000000u);
}

/* xorshift64*, seeded from the TSC on first use: DHCP transaction ids, IP ids, ports.
 * Not for secrets. */
uint32_t lwip_port_rand(void)
{
	static uint64_t s;
	if (!s)
		s = ax_rdtsc() ^ 0x9e3779b97f4a7c15ull;
	s ^= s >> 12;
	s ^= s << 25;
	s ^= s >> 27;
	return (uint32_t)((s * 0x2545f4914f6cdd1dull) >> 32);
}

void lwip_port_diag(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ax_vprintf(fmt, ap);
	va_end(ap);
}

void lwip_port_assert(const char *msg, int line, const char *file)
{
	ax_printf("lwip: assertion \"%s\" failed at %s:%d\n", msg, file, line);
	ax_exit(134);
}

int atoi(const char *s)
{
	int neg = 0, v = 0;
	while (*s == ' ')
		s++;
	if (*s == '-' || *s == '+')
		neg = *s++ == '-';
	while (*s >= '0' && *s <= '9')
		v = v * 10 + (*s++ - '0');
	return neg ? -v : v;
}
