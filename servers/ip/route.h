/* ip's routing table, pure C (host unit tests: tests/unit/test_ip_route.c): connected
 * networks, static routes and the default route, longest prefix first. Addresses and masks
 * in network byte order. */
#pragma once
#include <stdint.h>

#define RT_MAX 16
enum { RT_CONNECTED = 1, RT_STATIC = 2, RT_DHCP = 4 };

struct route {
	uint32_t net, mask, gw; /* gw 0: on-link */
	uint8_t ifindex, flags;
};
struct rtable {
	struct route r[RT_MAX];
	int n;
};

/* Adds or replaces (same net and mask) a route; 0, or -1 when full or net has host bits. */
int rt_add(struct rtable *t, uint32_t net, uint32_t mask, uint32_t gw, uint8_t ifindex, uint8_t flags);
/* Removes the routes of an interface that carry any of flags; how many. */
int rt_del_if(struct rtable *t, uint8_t ifindex, uint8_t flags);
/* The route for dst: the longest matching prefix, or NULL. */
const struct route *rt_lookup(const struct rtable *t, uint32_t dst);
/* "NET/N,GW" (a `route=` argument) -> net, mask, gw; 0 or -1. */
int rt_parse(const char *s, uint32_t *net, uint32_t *mask, uint32_t *gw);
/* Line i of the table as text; 0, or -1 past the end. */
int rt_format(const struct rtable *t, int i, const char *const *ifnames, char *buf, unsigned cap);
