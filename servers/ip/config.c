/* Interface configuration (static, DHCP, or restored from ds), the routing table built
 * from it, and the routing hooks lwIP asks (ip_hooks.h). */
#include "ip.h"
#include "ds_client.h"
#include "ip_hooks.h"
#include "lwip/netif.h"
#include "lwip/ip4_addr.h"

#define CFG_MAGIC 0x31676663u /* "cfg1" */
enum { CFGF_DHCP = 1, CFGF_BOUND = 2 };
struct ip_saved { /* ds: ip/if.NAME */
	uint32_t magic, addr, mask, gw, flags, pad;
};

static struct {
	uint32_t net[RT_MAX], mask[RT_MAX], gw[RT_MAX];
	int n;
} statics;
static ip4_addr_t gw_answer;

int ip_static_route(const char *arg)
{
	if (statics.n == RT_MAX || rt_parse(arg, &statics.net[statics.n], &statics.mask[statics.n], &statics.gw[statics.n]) < 0)
		return -1;
	statics.n++;
	return 0;
}

void ip_routes_update(void)
{
	ip.rt.n = 0;
	for (int i = 0; i < ip.nifs; i++) {
		struct ip_if *f = &ip.ifs[i];
		if (!f->cfg_addr)
			continue;
		uint8_t how = f->dhcp ? RT_DHCP : RT_STATIC;
		rt_add(&ip.rt, f->cfg_addr & f->cfg_mask, f->cfg_mask, 0, f->index, RT_CONNECTED);
		if (f->cfg_gw)
			rt_add(&ip.rt, 0, 0, f->cfg_gw, f->index, how);
	}
	for (int k = 0; k < statics.n; k++) {
		/* A static route goes out of the interface whose network holds its gateway. */
		const struct route *via = rt_lookup(&ip.rt, statics.gw[k]);
		if (via && !via->gw)
			rt_add(&ip.rt, statics.net[k], statics.mask[k], statics.gw[k], via->ifindex, RT_STATIC);
	}
}

struct netif *ip_hook_route(const ip4_addr_t *dest)
{
	const struct route *r = rt_lookup(&ip.rt, ip4_addr_get_u32(dest));
	if (!r || r->ifindex >= ip.nifs)
		return NULL;
	struct netif *n = &ip.ifs[r->ifindex].netif;
	return netif_is_up(n) && netif_is_link_up(n) ? n : NULL;
}

const ip4_addr_t *ip_hook_gw(struct netif *n, const ip4_addr_t *dest)
{
	const struct route *r = rt_lookup(&ip.rt, ip4_addr_get_u32(dest));
	if (!r || !r->gw || r->ifindex != ip_if_of(n)->index)
		return NULL;
	ip4_addr_set_u32(&gw_answer, r->gw);
	return &gw_answer;
}

void ip_state_save(struct ip_if *f)
{
	struct ip_saved s = { CFG_MAGIC, f->cfg_addr, f->cfg_mask, f->cfg_gw,
			      (f->dhcp ? CFGF_DHCP : 0) | (f->bound ? CFGF_BOUND : 0), 0 };
	char key[16];
	ksnprintf(key, sizeof(key), "if.%s", f->name);
	dsc_put(key, &s, sizeof(s));
}

bool ip_state_load(struct ip_if *f)
{
	struct ip_saved s;
	uint32_t len = 0;
	char key[16];
	ksnprintf(key, sizeof(key), "if.%s", f->name);
	if (dsc_get("ip", key, &s, &len) < 0 || len != sizeof(s) || s.magic != CFG_MAGIC || !s.addr ||
	    iph_plen(s.mask) < 0)
		return false;
	if (f->dhcp != !!(s.flags & CFGF_DHCP))
		return false; /* configured differently now: the arguments win */
	f->cfg_addr = s.addr, f->cfg_mask = s.mask, f->cfg_gw = s.gw;
	f->bound = f->dhcp;
	return true;
}

/* The interface has an address (static, restored or leased): routes, ds, transports. */
void ip_if_configured(struct ip_if *f)
{
	ip4_addr_t a, m, g;
	ip4_addr_set_u32(&a, f->cfg_addr);
	ip4_addr_set_u32(&m, f->cfg_mask);
	ip4_addr_set_u32(&g, f->cfg_gw);
	if (ip4_addr_get_u32(netif_ip4_addr(&f->netif)) != f->cfg_addr ||
	    ip4_addr_get_u32(netif_ip4_netmask(&f->netif)) != f->cfg_mask ||
	    ip4_addr_get_u32(netif_ip4_gw(&f->netif)) != f->cfg_gw)
		netif_set_addr(&f->netif, &a, &m, &g);
	ip_routes_update();
	ip_state_save(f);
	ip_ipx_iface_all();
}
