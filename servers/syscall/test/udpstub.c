/* udpstub: a loopback stand-in for the udp engine, to test syscall without a network
 * (servers/syscall/README.md, "Testing"). Run as the service `udp` (system.conf
 * `service udp binary=udpstub`): it imports syscall/udp.req and syscall/udp.ev, says
 * SK_HELLO, and delivers every datagram sent to 127.0.0.1 or 0.0.0.0 (any address, in
 * fact) to the socket bound to its destination port, from 127.0.0.1:source port. It keeps
 * no state in ds: after a restart its sockets come back from syscall's SK_OPEN (REATTACH)
 * with their bind and connect replayed. Not the real udp (lwIP, branch udp). */
#include "axrt.h"
#include "lx_abi.h"
#include "evloop.h"
#include "service.h"
#include "chan_name.h"
#include "chan_axolotl.h"
#include "sockbuf.h"
#include "sock_proto.h"

#define MAX 64
#define LOOPBACK 0x0100007fu /* 127.0.0.1 in network order, read as little-endian */

static struct ssock {
	uint32_t id;
	void *va;
	uint64_t bytes;
	struct sockbuf sb;
	uint16_t lport, rport; /* network order */
	uint32_t raddr;
	bool reuse;
} socks[MAX];

static struct {
	struct chan_import ireq, iev;
	struct spsc req, ev;
	struct chan_axolotl_peer peer;
	struct chan_platform plat;
	uint16_t next_port;
	uint64_t delivered, dropped;
	bool kick;
} u;

static struct ssock *find(uint32_t id)
{
	for (int i = 0; id && i < MAX; i++)
		if (socks[i].id == id)
			return &socks[i];
	return NULL;
}

static uint16_t be16(uint16_t h) { return (uint16_t)(h << 8 | h >> 8); }

static struct ssock *bound_to(uint16_t port, const struct ssock *not)
{
	for (int i = 0; i < MAX; i++)
		if (socks[i].id && &socks[i] != not && socks[i].lport == port)
			return &socks[i];
	return NULL;
}

static void ev(const struct sk_msg *m)
{
	if (spsc_push(&u.ev, m) != 0)
		u.dropped++; /* syscall is behind: it re-examines the buffers on the next event */
	u.kick = true;
}

static void reply(const struct sk_msg *q, int64_t result, const struct ssock *s)
{
	struct sk_msg a = { .type = SK_ANSWER, .sock = q->sock, .req = q->req, .result = result };
	if (s && s->lport) {
		a.family = 2, a.port = s->lport;
		uint32_t lo = 0;
		memcpy(a.addr, &lo, 4);
	}
	ev(&a);
}

static int64_t do_bind(struct ssock *s, uint16_t port)
{
	if (!port) {
		for (int tries = 0; tries < 20000 && (!port || bound_to(port, s)); tries++) {
			port = be16(u.next_port);
			u.next_port = u.next_port >= 60999 ? 40000 : u.next_port + 1;
		}
	} else if (bound_to(port, s) && !s->reuse && s->lport != port) {
		return -LX_EADDRINUSE;
	}
	s->lport = port;
	return 0;
}

/* Moves s's TX datagrams to their receivers' RX. */
static void transmit(struct ssock *s)
{
	struct sockbuf_desc d;
	int err;
	const void *p;
	bool freed = false;
	while ((p = sockbuf_peek(&s->sb.tx, &d, &err))) {
		uint16_t port = d.family ? d.port : s->rport;
		struct ssock *to = bound_to(port, NULL);
		void *q = to ? sockbuf_alloc(&to->sb.rx, d.len, &err) : NULL;
		if (q) {
			memcpy(q, p, d.len);
			struct sockbuf_desc r = { .family = 2, .port = s->lport };
			uint32_t lo = LOOPBACK;
			memcpy(r.addr, &lo, 4);
			if (sockbuf_commit(&to->sb.rx, d.len, &r) == 0) {
				u.delivered++;
				ev(&(struct sk_msg){ .type = SK_EV, .sock = to->id, .arg = EV_RX });
			} else {
				u.dropped++;
			}
		} else {
			u.dropped++; /* nobody bound there, or its RX is full: UDP drops */
		}
		sockbuf_consume(&s->sb.tx, &d);
		freed = true;
	}
	if (freed)
		ev(&(struct sk_msg){ .type = SK_EV, .sock = s->id, .arg = EV_TXSPACE });
}

static void request(const struct sk_msg *m)
{
	struct ssock *s = find(m->sock);
	switch (m->type) {
	case SK_OPEN: {
		if (!s)
			for (int i = 0; i < MAX && !s; i++)
				if (!socks[i].id)
					s = &socks[i];
		if (!s || !m->arg2 || m->arg2 % 4096) {
			reply(m, -22, NULL);
			return;
		}
		if (s->va)
			ax_mo_unmap((uint64_t)s->va);
		int64_t va = ax_mo_map((int64_t)m->arg, 0, 0, m->arg2 / 4096, KP_R | KP_W);
		if (va < 0 || sockbuf_attach(&s->sb, (void *)va, m->arg2, SB_ENGINE)) {
			reply(m, va < 0 ? va : -22, NULL);
			*s = (struct ssock){ 0 };
			return;
		}
		s->id = m->sock, s->va = (void *)va, s->bytes = m->arg2;
		reply(m, 0, s);
		return;
	}
	case SK_BIND:
		reply(m, s ? do_bind(s, m->port) : -9, s);
		return;
	case SK_CONNECT:
		if (s) {
			s->rport = m->family ? m->port : 0;
			memcpy(&s->raddr, m->addr, 4);
			if (!s->lport)
				do_bind(s, 0);
		}
		reply(m, s ? 0 : -9, s);
		return;
	case SK_SETOPT:
		if (s && m->arg == SKO_REUSEADDR)
			s->reuse = m->arg2 != 0;
		reply(m, s ? 0 : -9, s);
		return;
	case SK_SHUTDOWN:
		reply(m, 0, s);
		return;
	case SK_CLOSE:
		if (s) {
			ax_mo_unmap((uint64_t)s->va);
			*s = (struct ssock){ 0 };
		}
		reply(m, 0, NULL);
		return;
	case SK_TX:
		if (s)
			transmit(s);
		return;
	case SK_RXDONE:
		return;
	}
}

static bool poll(struct ax_evloop *l)
{
	(void)l;
	struct sk_msg m;
	bool any = false;
	for (int n = 0; n < 256 && spsc_pop(&u.req, &m) == 0; n++) {
		request(&m);
		any = true;
	}
	if (u.kick) {
		u.kick = false;
		chan_kick(&u.ev, &u.plat);
	}
	return any;
}

static void inject(struct ax_evloop *l, const char *word)
{
	(void)l;
	if (!strcmp(word, "stats"))
		ax_printf("udpstub: %lu delivered, %lu dropped\n", (unsigned long)u.delivered, (unsigned long)u.dropped);
}

int main(int argc, char **argv)
{
	ax_svc_init(argc, argv);
	u.next_port = 40000;
	int64_t r;
	static const uint64_t never;
	for (int tries = 0; (r = chan_import("syscall", "udp.req", &u.ireq)) < 0 && tries < 500; tries++)
		ax_wait_timeout(&never, 0, 10000000); /* syscall not up yet */
	if (r < 0 || (r = chan_import("syscall", "udp.ev", &u.iev)) < 0 ||
	    spsc_attach(&u.req, u.ireq.va, u.ireq.bytes, SPSC_CONSUMER) < 0 ||
	    spsc_attach(&u.ev, u.iev.va, u.iev.bytes, SPSC_PRODUCER) < 0) {
		ax_printf("udpstub: cannot attach to syscall's channels (%ld)\n", (long)r);
		return 1;
	}
	u.peer.ep = u.iev.owner;
	u.peer.bits = 1ull << 42;
	chan_axolotl_platform(&u.plat, &u.peer);
	ev(&(struct sk_msg){ .type = SK_HELLO, .arg = ax_svc.restarts });
	chan_kick(&u.ev, &u.plat);
	ax_printf("udpstub: attached, restart %u\n", ax_svc.restarts);
	struct ax_evloop l = { .poll = poll, .inject = inject, .doorbell = (const volatile uint64_t *)(const void *)&u.req.sh->bell,
			       .sleeping = &u.req.sh->sleeping };
	return (int)ax_evloop_run(&l);
}
