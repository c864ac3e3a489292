/* lwIP hooks of ip's instance (lwipopts.h). */
#pragma once
struct pbuf;
struct netif;
/* Before lwIP's ip4_input: nonzero if ip took the packet (it waits for pf's verdict or was
 * dropped as malformed). */
int ip_hook_ip4_input(struct pbuf *p, struct netif *inp);
struct ip4_addr;
/* Routes beyond the connected networks (config.c): the routing table's interface and
 * gateway for dest. */
struct netif *ip_hook_route(const struct ip4_addr *dest);
const struct ip4_addr *ip_hook_gw(struct netif *n, const struct ip4_addr *dest);
