/* lwIP hooks of ip's instance (lwipopts.h). */
#pragma once
struct pbuf;
struct netif;
/* Before lwIP's ip4_input: nonzero if ip took the packet (it waits for pf's verdict or was
 * dropped as malformed). */
int ip_hook_ip4_input(struct pbuf *p, struct netif *inp);
