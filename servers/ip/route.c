/* ip's routing table (route.h). */
#include "route.h"
#include "hdr.h"

int rt_add(struct rtable *t, uint32_t net, uint32_t mask, uint32_t gw, uint8_t ifindex, uint8_t flags)
{
	if ((net & ~mask) || iph_plen(mask) < 0)
		return -1;
	int i = 0;
	while (i < t->n && !(t->r[i].net == net && t->r[i].mask == mask))
		i++;
	if (i == t->n) {
		if (t->n == RT_MAX)
			return -1;
		t->n++;
	}
	t->r[i] = (struct route){ net, mask, gw, ifindex, flags };
	return 0;
}

int rt_del_if(struct rtable *t, uint8_t ifindex, uint8_t flags)
{
	int k = 0, gone = 0;
	for (int i = 0; i < t->n; i++) {
		if (t->r[i].ifindex == ifindex && (t->r[i].flags & flags))
			gone++;
		else
			t->r[k++] = t->r[i];
	}
	t->n = k;
	return gone;
}

const struct route *rt_lookup(const struct rtable *t, uint32_t dst)
{
	const struct route *best = 0;
	int bestlen = -1;
	for (int i = 0; i < t->n; i++) {
		int len = iph_plen(t->r[i].mask);
		if ((dst & t->r[i].mask) == t->r[i].net && len > bestlen)
			best = &t->r[i], bestlen = len;
	}
	return best;
}

int rt_parse(const char *s, uint32_t *net, uint32_t *mask, uint32_t *gw)
{
	const char *p;
	if (iph_parse(s, net, &p) < 0 || *p++ != '/')
		return -1;
	int plen = 0, digits = 0;
	for (; *p >= '0' && *p <= '9' && digits < 3; p++, digits++)
		plen = plen * 10 + (*p - '0');
	if (!digits || iph_mask(plen, mask) < 0 || *p++ != ',')
		return -1;
	if (iph_parse(p, gw, &p) < 0 || *p)
		return -1;
	return (*net & ~*mask) ? -1 : 0;
}

static void put(char **p, const char *end, const char *s)
{
	while (*s && *p < end)
		*(*p)++ = *s++;
}

int rt_format(const struct rtable *t, int i, const char *const *ifnames, char *buf, unsigned cap)
{
	if (i < 0 || i >= t->n || cap < 2)
		return -1;
	const struct route *r = &t->r[i];
	char a[16], pl[4];
	char *p = buf, *end = buf + cap - 1;
	put(&p, end, iph_str(r->net, a));
	put(&p, end, "/");
	int n = iph_plen(r->mask);
	pl[0] = (char)('0' + n / 10), pl[1] = (char)('0' + n % 10), pl[2] = 0;
	put(&p, end, n >= 10 ? pl : pl + 1);
	if (r->gw) {
		put(&p, end, " via ");
		put(&p, end, iph_str(r->gw, a));
	}
	put(&p, end, " dev ");
	put(&p, end, ifnames && ifnames[r->ifindex] ? ifnames[r->ifindex] : "?");
	put(&p, end, r->flags & RT_CONNECTED ? " connected" : r->flags & RT_DHCP ? " dhcp" : " static");
	*p = 0;
	return 0;
}
