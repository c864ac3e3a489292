/* udp's pure checks (pkt.h). */
#include "pkt.h"
#include "lx_abi.h"

int ksnprintf(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static uint32_t get32n(const uint8_t *p) /* network-order value as stored */
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint16_t get16n(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

int us_udp_check(const uint8_t *hdr, size_t have, size_t len, struct us_udpinfo *info)
{
	if (have > len)
		have = len;
	if (have < 20)
		return US_PKT_SHORT;
	if ((hdr[0] >> 4) != 4 || (hdr[0] & 15) < 5)
		return US_PKT_VERSION;
	size_t hlen = (size_t)(hdr[0] & 15) * 4;
	size_t tot = us_get16(hdr + 2);
	if (tot > len || tot < hlen + 8 || have < hlen + 8)
		return US_PKT_SHORT;
	if (hdr[9] != US_IPPROTO_UDP)
		return US_PKT_PROTO;
	if (us_get16(hdr + 6) & 0x3fff) /* MF or a fragment offset */
		return US_PKT_FRAGMENT;
	const uint8_t *u = hdr + hlen;
	uint16_t ulen = us_get16(u + 4);
	if (ulen < 8 || ulen != tot - hlen)
		return US_PKT_UDPLEN;
	info->src = get32n(hdr + 12);
	info->dst = get32n(hdr + 16);
	info->sport = get16n(u);
	info->dport = get16n(u + 2);
	info->hlen = (uint16_t)hlen;
	info->ulen = ulen;
	info->tot_len = (uint32_t)tot;
	return US_PKT_OK;
}

int us_icmp_parse(const uint8_t *msg, size_t len, struct us_icmperr *e)
{
	if (len < 20 || (msg[0] >> 4) != 4 || (msg[0] & 15) < 5)
		return -1;
	size_t hlen = (size_t)(msg[0] & 15) * 4;
	if (msg[9] != 1 /* ICMP */ || len < hlen + 8 + 20)
		return -1;
	const uint8_t *ic = msg + hlen;
	const uint8_t *in = ic + 8;
	if ((in[0] >> 4) != 4 || (in[0] & 15) < 5)
		return -1;
	size_t ihlen = (size_t)(in[0] & 15) * 4;
	if (len < hlen + 8 + ihlen + 8 || in[9] != US_IPPROTO_UDP)
		return -1;
	e->type = ic[0];
	e->code = ic[1];
	switch (e->type) {
	case 3: /* destination unreachable */
		e->err = e->code == 0 ? LX_ENETUNREACH : e->code == 3 ? LX_ECONNREFUSED :
			 e->code == 4 ? LX_EMSGSIZE : LX_EHOSTUNREACH;
		break;
	case 11: /* time exceeded */
		e->err = LX_EHOSTUNREACH;
		break;
	case 12: /* parameter problem */
		e->err = LX_EPROTO;
		break;
	default:
		return -1;
	}
	e->lsrc = get32n(in + 12);
	e->rdst = get32n(in + 16);
	e->lport = get16n(in + ihlen);
	e->rport = get16n(in + ihlen + 2);
	return 0;
}

int us_txd_check(uint16_t family, const uint8_t addr[16], uint16_t port, uint32_t len,
		 bool connected, uint32_t raddr, uint16_t rport, uint32_t *daddr, uint16_t *dport)
{
	if (len > US_UDP_MAX)
		return US_TXD_SIZE;
	if (family == 0) {
		if (!connected)
			return US_TXD_NODEST;
		*daddr = raddr;
		*dport = rport;
		return US_TXD_OK;
	}
	if (family != US_AF_INET)
		return US_TXD_FAMILY;
	uint32_t a = get32n(addr);
	if (port == 0)
		return US_TXD_PORT;
	if (a == 0)
		return US_TXD_ADDR;
	*daddr = a;
	*dport = port;
	return US_TXD_OK;
}

int us_txd_errno(int err)
{
	switch (err) {
	case US_TXD_FAMILY: return LX_EAFNOSUPPORT;
	case US_TXD_NODEST: return LX_EDESTADDRREQ;
	case US_TXD_SIZE: return LX_EMSGSIZE;
	default: return LX_EINVAL;
	}
}

void us_fmt_ip4(char *buf, uint32_t addr)
{
	const uint8_t *b = (const uint8_t *)&addr;
	ksnprintf(buf, 16, "%u.%u.%u.%u", b[0], b[1], b[2], b[3]);
}

void us_fmt_sock(char *buf, size_t n, const struct us_sockview *v)
{
	char la[16], ra[16], rem[24];
	us_fmt_ip4(la, v->laddr);
	us_fmt_ip4(ra, v->raddr);
	if (v->rport)
		ksnprintf(rem, sizeof(rem), "%s:%u", ra, us_ntohs(v->rport));
	else
		ksnprintf(rem, sizeof(rem), "*:*");
	ksnprintf(buf, n, "%u %u %s:%u %s %s%s", v->slot, v->sock, la, us_ntohs(v->lport), rem,
		  v->corrupt ? "bad" : v->attached ? "up" : "wait", v->broadcast ? " bc" : "");
}
