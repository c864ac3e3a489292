/* A live update of tcp keeps every connection (README.md, "Live update"): the socket table,
 * lwIP's pcbs, segments and pools, our heap and the send pool are kept memory at the same
 * addresses (lib/axrt/keep.h, ax_keep_image; lib/lwip/lwip.mk keeps lwIP's variables). What
 * the new instance must make again is the code addresses in that state: the callbacks on
 * each pcb and the free function of each received packet lwIP holds. Each instance leaves
 * its own addresses of those functions in the kept state, in one table; its successor finds
 * every old address there and puts its own of the same function in its place. */
#include "tcp.h"
#include "keep.h"
#include "service.h"
#include "lwip/pbuf.h"
#include "lwip/tcp.h"
#include "lwip/priv/tcp_priv.h"

/* The running instance's addresses of the functions lwIP may hold (stream.c, rx.c, lwIP's
 * own default receive). */
static AX_KEPT uintptr_t kept_fns[TS_NFNS];
static uintptr_t fns[TS_NFNS];
static uint32_t unknown;

static void our_fns(void)
{
	int n = ts_stream_fns(fns);
	n += ts_rx_fns(fns + n);
	fns[n++] = (uintptr_t)tcp_recv_null;
	(void)n;
}

/* The predecessor's address old: ours of the same function. An address not in the table
 * (it cannot be: every function we give lwIP is) becomes NULL (lwIP's default), counted. */
static uintptr_t tr(uintptr_t old)
{
	if (!old)
		return 0;
	for (int i = 0; i < TS_NFNS; i++)
		if (kept_fns[i] == old)
			return fns[i];
	unknown++;
	return 0;
}
#define TR(field) ((field) = (__typeof__(field))tr((uintptr_t)(field)))

static void fix_pbufs(struct pbuf *p)
{
	for (; p; p = p->next)
		if (p->flags & PBUF_FLAG_IS_CUSTOM)
			TR(((struct pbuf_custom *)p)->custom_free_function);
}

static void fix_segs(struct tcp_seg *s)
{
	for (; s; s = s->next)
		fix_pbufs(s->p);
}

static uint32_t fix_pcbs(struct tcp_pcb *p)
{
	uint32_t n = 0;
	for (; p; p = p->next, n++) {
		TR(p->recv), TR(p->sent), TR(p->connected), TR(p->poll), TR(p->errf);
		fix_pbufs(p->refused_data);
		fix_segs(p->unsent), fix_segs(p->unacked);
#if TCP_QUEUE_OOSEQ
		fix_segs(p->ooseq);
#endif
	}
	return n;
}

void ts_adopt_claim(void)
{
	for (int i = 0; i < ts.top; i++)
		if (ts.s[i].kind == TK_SOCK && ts.s[i].attached && ts.s[i].handle > 0)
			ax_keep_claim(ts.s[i].handle);
}

bool ts_adopt(void)
{
	our_fns();
	uint32_t pcbs = fix_pcbs(tcp_active_pcbs) + fix_pcbs(tcp_bound_pcbs) + fix_pcbs(tcp_tw_pcbs), socks = 0;
	for (struct tcp_pcb_listen *l = tcp_listen_pcbs.listen_pcbs; l; l = l->next, pcbs++)
		TR(l->accept);
	if (unknown)
		ax_printf("tcp: %u code addresses in the kept state were unknown: cleared\n", unknown);
	/* Each socket's buffer where it was (the table points into it); syscall grants it
	 * again after our hello, and a socket it no longer has is closed after a while (ts_gc). */
	uint64_t now = ax_time_ns() | 1;
	for (int i = 0; i < ts.top; i++) {
		struct ts_sock *s = &ts.s[i];
		if (s->kind != TK_SOCK)
			continue;
		socks++;
		s->restored_at = now;
		s->kept = true;
		if (!s->attached)
			continue;
		uint64_t pages = (s->bytes + 4095) / 4096;
		if (ax_mo_map(s->handle, (uint64_t)s->va, 0, pages, KP_R | KP_W) != (int64_t)s->va) {
			ax_printf("tcp: cannot map socket %u's buffer at %p again\n", s->sock, s->va);
			return false;
		}
	}
	ax_printf("tcp: took over %u sockets and %u connections and listeners of lwIP (instance %lu of this state)\n",
		  socks, pcbs, (unsigned long)ax_keep_generation());
	return true;
}

void ts_keep_fns(void)
{
	our_fns();
	memcpy(kept_fns, fns, sizeof(fns));
}

/* A live update: everything is at rest at the top of our loop. The kept state is marked so
 * (ax_keep_at_rest) and rs replaces us by the new binary, which adopts it. */
int64_t ts_quiesce(void)
{
	ax_keep_at_rest(true);
	return RS_QUIESCED_REPLACE;
}
