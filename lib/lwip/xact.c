/* The processes' activity pages, engine side (lib/net/sock_ax.h; docs/sockets.md "Telling
 * the stack"): syscall grants us a process's page (SK_ACT) and tells us which of our
 * sockets that process's library moves, and by which bit (SK_LIB). Each loop turn we look
 * at every page's word for our engine; when it moved we swap the bitmap out 64 bits at a
 * time and give each marked socket to the engine (ops->lib_work). The page is the
 * process's to write: a bit is only a hint, checked against our own table (a socket this
 * process's library does not move is never touched through it), so a process that
 * scribbles over its page loses only its own wake-ups. */
#include <stdatomic.h>
#include <string.h>
#include "xport.h"
#include "sock_ax.h"

#define XA_PAGES 64 /* processes using the library at once (syscall has as many) */

static struct xa_page {
	uint32_t pid;              /* 0: a free entry (else syscall's name of the process: its
	                              kernel id, which KC_WAKE takes) */
	bool ring;                 /* an event for one of its sockets this turn (xport_act_ring) */
	int64_t handle;            /* syscall's grant */
	struct ax_activity *p;
	uint64_t seen;             /* our word when we last looked */
	struct {
		uint32_t sock;     /* syscall's socket id, 0: none */
		int32_t cookie;    /* the engine's index for it (ops->lib_work) */
	} bit[AX_ACT_SOCKS];
} pages[XA_PAGES];
/* Pages are taken lowest first: the per-turn scans stop at the highest ever taken. */
static int pages_top;
static bool any_ring;

/* Whose page each library-owned socket is in, by syscall's socket id, for the events we
 * post (the wake-up of a waiting library): open addressing with linear probing, deletion
 * by moving the entries after it back. An entry is a hint, checked against the page's
 * table. An entry leaves when its bit (syscall's table slot) gets another socket or its
 * page goes: at most one per slot, 1024, so the table never fills. */
#define XA_MAP 4096
static struct xa_map {
	uint32_t sock;             /* 0: free */
	uint16_t page, bit;
} map[XA_MAP];

static uint32_t map_home(uint32_t sock) { return (sock * 2654435761u) >> 20; }

static struct xa_map *map_find(uint32_t sock)
{
	for (uint32_t i = map_home(sock), n = 0; n < XA_MAP && map[i].sock; i = (i + 1) % XA_MAP, n++)
		if (map[i].sock == sock)
			return &map[i];
	return NULL;
}

static void map_del(uint32_t sock)
{
	struct xa_map *e = map_find(sock);
	if (!e)
		return;
	uint32_t hole = (uint32_t)(e - map);
	map[hole].sock = 0;
	for (uint32_t i = (hole + 1) % XA_MAP; map[i].sock; i = (i + 1) % XA_MAP) {
		uint32_t home = map_home(map[i].sock);
		/* moves back unless its home lies after the hole, up to it (cyclically) */
		if ((i > hole && (home <= hole || home > i)) || (i < hole && home <= hole && home > i)) {
			map[hole] = map[i], map[i].sock = 0, hole = i;
		}
	}
}

static void map_put(uint32_t sock, uint16_t page, uint16_t bit)
{
	map_del(sock);
	uint32_t i = map_home(sock);
	for (uint32_t n = 0; n < XA_MAP && map[i].sock; n++)
		i = (i + 1) % XA_MAP;
	if (!map[i].sock)
		map[i] = (struct xa_map){ sock, page, bit };
	else
		xp.c.bad_act++; /* full (cannot be: one entry per syscall slot): no rings for it */
}

static struct ax_bell *bell; /* SK_BELL's page, NULL before */
static int64_t bell_handle;
static int mwait = -1;       /* on a dedicated core with MONITOR (-1: not asked yet) */
static endpoint_t self_ep;   /* ours, for the pages' idle[].ep */

/* Whether we sleep in KC_WAIT's MWAIT path: rs dedicated our core to us (dedicated=1) and
 * the CPU has MONITOR (docs/kernel-api.md §6). */
void xport_act_init(int argc, char **argv)
{
	bool dedicated = false;
	for (int i = 1; i < argc; i++)
		dedicated |= !strcmp(argv[i], "dedicated=1");
	mwait = dedicated && (kcall2(KC_INFO, KI_CPU_FEATURES, 0) & 1);
	self_ep = ax_self();
}

void xport_bell(const struct sk_msg *q)
{
	if (bell)
		ax_mo_unmap((uint64_t)bell);
	if (bell_handle > 0)
		ax_mo_destroy(bell_handle);
	bell = NULL, bell_handle = 0;
	int64_t v = q->arg ? ax_mo_map((int64_t)q->arg, 0, 0, 1, KP_R | KP_W) : -1;
	if (v <= 0) {
		if (q->arg)
			ax_mo_destroy((int64_t)q->arg);
		xp.c.bad_act += q->arg != 0;
		return;
	}
	bell = (struct ax_bell *)v, bell_handle = (int64_t)q->arg;
}

const volatile uint64_t *xport_act_doorbell(void)
{
	return mwait > 0 && bell ? (const volatile uint64_t *)(const void *)&bell->eng[xp.ops->act_eng].ring : NULL;
}

static struct xa_page *page_of(uint32_t pid)
{
	for (int i = 0; pid && i < pages_top; i++)
		if (pages[i].pid == pid)
			return &pages[i];
	return NULL;
}

static void drop(struct xa_page *g)
{
	for (int b = 0; b < AX_ACT_SOCKS; b++) /* its sockets leave the map with it */
		if (g->bit[b].sock)
			map_del(g->bit[b].sock);
	if (g->p)
		ax_mo_unmap((uint64_t)g->p);
	if (g->handle > 0)
		ax_mo_destroy(g->handle);
	memset(g, 0, sizeof(*g));
}

void xport_act(const struct sk_msg *q)
{
	uint32_t pid = (uint32_t)q->arg2;
	struct xa_page *g = page_of(pid);
	for (int i = 0; !g && pid && i < XA_PAGES; i++)
		if (!pages[i].pid)
			g = &pages[i];
	if (g && g - pages >= pages_top)
		pages_top = (int)(g - pages) + 1;
	if (!g) {
		xp.c.bad_act++;
		if (q->arg)
			ax_mo_destroy((int64_t)q->arg);
		return;
	}
	drop(g); /* a new grant replaces the old one */
	if (!q->arg)
		return;
	int64_t v = ax_mo_map((int64_t)q->arg, 0, 0, 1, KP_R | KP_W);
	struct ax_activity *p = v > 0 ? (struct ax_activity *)v : NULL;
	if (!p || p->magic != AX_ACT_MAGIC || p->version != AX_ACT_VERSION) {
		xp.c.bad_act++;
		if (p)
			ax_mo_unmap((uint64_t)v);
		ax_mo_destroy((int64_t)q->arg);
		return;
	}
	g->pid = pid, g->handle = (int64_t)q->arg, g->p = p;
	g->seen = atomic_load_explicit(&p->eng[xp.ops->act_eng].word, memory_order_relaxed) - 1;
}

void xport_lib(const struct sk_msg *q, int32_t cookie)
{
	uint32_t bit = (uint32_t)q->arg2;
	if (bit >= AX_ACT_SOCKS) {
		xp.c.bad_act++;
		return;
	}
	/* The bit is syscall's table slot: whoever held it, in any page, is this socket (moving
	 * to another process) or one that closed since. Either leaves the map: entries of
	 * closed sockets left there filled it after 4096 sockets, and later sockets found no
	 * room, so their waiting libraries were never rung (connections stalled until
	 * epoll_wait's timeout). */
	for (int i = 0; i < pages_top; i++)
		if (pages[i].bit[bit].sock) {
			map_del(pages[i].bit[bit].sock);
			pages[i].bit[bit].sock = 0;
		}
	map_del(q->sock);
	struct xa_page *g = page_of((uint32_t)q->arg);
	if (!q->arg || cookie < 0)
		return;
	if (!g) {
		xp.c.bad_act++;
		return;
	}
	g->bit[bit].sock = q->sock, g->bit[bit].cookie = cookie;
	map_put(q->sock, (uint16_t)(g - pages), (uint16_t)bit);
	/* Served now: the library may have moved data already, and a bit we swapped out
	 * before this message told us whose it is was dropped (an accepted connection's first
	 * answer sat in TX until lighttpd's idle timeout closed the connection). */
	xp.ops->lib_work(cookie, q->sock);
}

bool xport_act_poll(void)
{
	bool work = false;
	uint32_t e = xp.ops->act_eng;
	for (int i = 0; i < pages_top; i++) {
		struct xa_page *g = &pages[i];
		if (!g->p)
			continue;
		uint64_t w = atomic_load_explicit(&g->p->eng[e].word, memory_order_acquire);
		if (w == g->seen)
			continue;
		g->seen = w;
		for (int c = 0; c < AX_ACT_SOCKS / 64; c++) {
			uint64_t x = atomic_exchange_explicit(&g->p->bits[e][c], 0, memory_order_acquire);
			while (x) {
				int b = c * 64 + __builtin_ctzll(x);
				x &= x - 1;
				if (g->bit[b].sock) {
					xp.ops->lib_work(g->bit[b].cookie, g->bit[b].sock);
					work = true;
				}
			}
		}
	}
	return work;
}

void xport_act_sleeping(uint32_t v)
{
	if (v)
		v = xport_act_doorbell() ? AX_SLEEP_MWAIT : AX_SLEEP_NOTIFY;
	for (int i = 0; i < pages_top; i++) {
		if (!pages[i].p)
			continue;
		struct ax_idle *idle = &pages[i].p->idle[xp.ops->act_eng];
		/* whom the library notifies (written again if the process wrote over it) */
		if (v == AX_SLEEP_NOTIFY && atomic_load_explicit(&idle->ep, memory_order_relaxed) != self_ep) {
			atomic_store_explicit(&idle->bits, XP_WAKE_BIT, memory_order_relaxed);
			atomic_store_explicit(&idle->ep, self_ep, memory_order_relaxed);
		}
		atomic_store_explicit(&idle->sleeping, v, memory_order_relaxed);
	}
}

bool xport_act_waiting(void)
{
	for (int i = 0; i < pages_top; i++)
		if (pages[i].p && atomic_load_explicit(&pages[i].p->eng[xp.ops->act_eng].word, memory_order_relaxed) != pages[i].seen)
			return true;
	return false;
}

bool xport_lib_request(const struct sk_msg *q, int32_t cookie)
{
	switch (q->type) {
	case SK_ACT:
		xport_act(q);
		return true;
	case SK_BELL:
		xport_bell(q);
		return true;
	case SK_LIB:
		xport_lib(q, cookie);
		return true;
	default:
		return false;
	}
}

bool xport_act_event(const struct sk_msg *m)
{
	if (m->type != SK_EV)
		return false;
	const struct xa_map *e = map_find(m->sock);
	if (!e || pages[e->page].bit[e->bit].sock != m->sock || !pages[e->page].p)
		return false; /* not library-owned: syscall serves it */
	struct xa_page *g = &pages[e->page];
	if (m->arg & ~(uint64_t)EV_LIB) /* (served bits alone: nothing the library waits for) */
		g->ring = any_ring = true;
	if (m->arg & ~(uint64_t)(EV_RX | EV_TXSPACE | EV_LIB))
		return false; /* a status (error, hang-up, FIN, connect): syscall must know now */
	atomic_store_explicit(&g->p->app.lazy, 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst); /* the flag before the look (sock_ax.h) */
	return atomic_load_explicit(&g->p->app.kwaiting, memory_order_relaxed) == 0;
}

void xport_act_ring(void)
{
	if (!any_ring)
		return;
	any_ring = false;
	/* our writes to the rings before the look at `waiting`; the library counts itself in
	 * before its last look at the rings (one of the two sees the other's store) */
	atomic_thread_fence(memory_order_seq_cst);
	for (int i = 0; i < pages_top; i++) {
		struct xa_page *g = &pages[i];
		if (!g->ring)
			continue;
		g->ring = false;
		if (g->p && atomic_load_explicit(&g->p->app.waiting, memory_order_relaxed)) {
			int64_t r = ax_wake_ring(g->pid, AX_RING_STACK);
			xp.c.lib_rings += r >= 0;
		}
	}
}
