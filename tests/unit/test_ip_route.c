/* ip's routing table (servers/ip/route.c): longest prefix, connected nets and gateways,
 * the route= argument. */
#include "unit.h"
#include "lx_abi.h"
#include "route.h"
#include "hdr.h"
#include <arpa/inet.h>

static uint32_t A(const char *s)
{
	uint32_t a;
	inet_pton(LX_AF_INET, s, &a);
	return a;
}

static void longest_prefix_wins(void)
{
	struct rtable t = { .n = 0 };
	CHECK(rt_add(&t, A("10.0.2.0"), A("255.255.255.0"), 0, 0, RT_CONNECTED) == 0);
	CHECK(rt_add(&t, 0, 0, A("10.0.2.2"), 0, RT_DHCP) == 0);
	CHECK(rt_add(&t, A("192.168.0.0"), A("255.255.0.0"), A("10.0.2.3"), 0, RT_STATIC) == 0);
	CHECK(rt_add(&t, A("192.168.7.0"), A("255.255.255.0"), A("10.1.0.1"), 1, RT_STATIC) == 0);
	const struct route *r = rt_lookup(&t, A("10.0.2.2"));
	REQUIRE(r);
	CHECK_EQ_U64(r->gw, 0);
	r = rt_lookup(&t, A("8.8.8.8"));
	REQUIRE(r);
	CHECK_EQ_U64(r->gw, A("10.0.2.2"));
	r = rt_lookup(&t, A("192.168.1.1"));
	REQUIRE(r);
	CHECK_EQ_U64(r->gw, A("10.0.2.3"));
	r = rt_lookup(&t, A("192.168.7.9"));
	REQUIRE(r);
	CHECK_EQ_U64(r->ifindex, 1);
}

static void no_default_no_route(void)
{
	struct rtable t = { .n = 0 };
	rt_add(&t, A("10.0.2.0"), A("255.255.255.0"), 0, 0, RT_CONNECTED);
	CHECK(rt_lookup(&t, A("10.0.3.1")) == NULL);
	CHECK(rt_lookup(&t, A("10.0.2.255")) != NULL);
}

static void add_replaces_delete_by_interface_and_full(void)
{
	struct rtable t = { .n = 0 };
	CHECK(rt_add(&t, 0, 0, A("10.0.2.2"), 0, RT_DHCP) == 0);
	CHECK(rt_add(&t, 0, 0, A("10.0.2.9"), 0, RT_DHCP) == 0);
	CHECK_EQ_I64(t.n, 1);
	CHECK_EQ_U64(t.r[0].gw, A("10.0.2.9"));
	CHECK(rt_add(&t, A("10.0.2.1"), A("255.255.255.0"), 0, 0, RT_CONNECTED) < 0); /* host bits */
	CHECK(rt_add(&t, A("10.0.0.0"), A("255.0.255.0"), 0, 0, RT_CONNECTED) < 0);   /* holes */
	rt_add(&t, A("10.0.2.0"), A("255.255.255.0"), 0, 1, RT_CONNECTED);
	CHECK_EQ_I64(rt_del_if(&t, 0, RT_DHCP), 1);
	CHECK_EQ_I64(t.n, 1);
	for (int i = 0; i < 100; i++)
		rt_add(&t, htonl(0x0a000000u + ((uint32_t)i << 8)), A("255.255.255.0"), 0, 0, RT_STATIC);
	CHECK_EQ_I64(t.n, RT_MAX);
}

static void route_argument(void)
{
	uint32_t net, mask, gw;
	REQUIRE(rt_parse("192.168.0.0/16,10.0.2.3", &net, &mask, &gw) == 0);
	CHECK_EQ_U64(net, A("192.168.0.0"));
	CHECK_EQ_U64(mask, A("255.255.0.0"));
	CHECK_EQ_U64(gw, A("10.0.2.3"));
	CHECK(rt_parse("192.168.0.1/16,10.0.2.3", &net, &mask, &gw) < 0);
	CHECK(rt_parse("192.168.0.0/33,10.0.2.3", &net, &mask, &gw) < 0);
	CHECK(rt_parse("192.168.0.0/16", &net, &mask, &gw) < 0);
	CHECK(rt_parse("192.168.0.0/16,10.0.2.3x", &net, &mask, &gw) < 0);
	CHECK(rt_parse("/16,10.0.2.3", &net, &mask, &gw) < 0);
}

static void format_lines(void)
{
	struct rtable t = { .n = 0 };
	const char *names[] = { "e1000", "virtio" };
	char b[56];
	rt_add(&t, A("10.0.2.0"), A("255.255.255.0"), 0, 0, RT_CONNECTED);
	rt_add(&t, 0, 0, A("10.0.2.2"), 0, RT_DHCP);
	REQUIRE(rt_format(&t, 0, names, b, sizeof(b)) == 0);
	CHECK_STR(b, "10.0.2.0/24 dev e1000 connected");
	REQUIRE(rt_format(&t, 1, names, b, sizeof(b)) == 0);
	CHECK_STR(b, "0.0.0.0/0 via 10.0.2.2 dev e1000 dhcp");
	CHECK(rt_format(&t, 2, names, b, sizeof(b)) < 0);
	char tiny[8];
	REQUIRE(rt_format(&t, 1, names, tiny, sizeof(tiny)) == 0);
	CHECK_STR(tiny, "0.0.0.0");
}

int main(void)
{
	unit_begin(__FILE__);
	RUN(longest_prefix_wins);
	RUN(no_default_no_route);
	RUN(add_replaces_delete_by_interface_and_full);
	RUN(route_argument);
	RUN(format_lines);
	return unit_end();
}
