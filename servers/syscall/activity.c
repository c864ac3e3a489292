/* The processes' activity pages (lib/net/sock_ax.h; docs/sockets.md "Telling the stack"):
 * one page per process whose library took a socket over, made and mapped into the process
 * at its first AX_SOCKBUF and granted to each engine that moves one of its sockets (SK_ACT,
 * pushed by engine.c before the socket's SK_LIB).
 *
 * A page lives as long as syscall: nothing tells us when a process ends, and the engines
 * and the process may still use it. A process id is its first thread's endpoint, which the
 * kernel does not hand out again soon; a process that gets no page (more than MAX_ACT have
 * used the library) is told address 0 and its library kicks after every call: slower, not
 * wrong. The page is the process's to write: we only read its counters (as numbers to
 * print), and check what it says of spares against our own records.
 *
 * Lazy closing (thesis §5.5.5): a buffer whose library kept its mapping at close is parked
 * here when the engine is done with it, and the next connection the process accepts from a
 * listener it takes over gets it (no new object, no new mapping); the library reclaims
 * spares when it has more than live sockets (sock_ax.h `spares`). After an exec (vfs's
 * SYSCALL_EXEC) the old image's spares and mappings are dropped, and the page is mapped
 * into the new image at its library's first call. */
#include "syscall.h"
#include "lx_abi.h"
#include "keep.h"
#include "sock_ax.h"
#include "netq_proto.h"

_Static_assert((int)ENG_UDP == (int)AXE_UDP && (int)ENG_TCP == (int)AXE_TCP && (int)ENGINES == (int)AXE_N, "one engine numbering");

#define MAX_ACT 64 /* as many as an engine follows (lib/lwip/xact.c) */

struct act {
	uint32_t pid;             /* 0: a free entry */
	int64_t mo;
	struct ax_activity *mem;  /* our mapping */
	uint64_t app_va;          /* the process's mapping */
	int64_t handle[ENGINES];  /* the grant to the engine's current instance, 0: none */
	endpoint_t granted_to[ENGINES];
	uint32_t wake_sock;       /* the process's wake socket (AX_WAKE), 0: none */
	struct sockbuf_obj parked[AX_ACT_SPARES]; /* by spare entry: buffers kept for it (mo 0: none) */
};
/* The bell (sock_ax.h), one for all processes: made with the first page. */
struct bell {
	int64_t mo;
	int64_t handle[ENGINES];
	endpoint_t granted_to[ENGINES];
};
/* Both in the kept object (keep.c): the pages outlive our restart. */
struct act_part {
	struct act acts[MAX_ACT];
	struct bell bell;
};
_Static_assert(sizeof(struct act_part) <= KEEP_ACT_BYTES, "activity table fits its kept part");
static struct act_part *part;
static struct act *acts;

uint64_t act_layout(void) { return sizeof(struct act_part); }

/* After our restart: the pages and parked buffers mapped here again; the engines are granted
 * the pages again (the same engine instance then holds two handles on a page: harmless). */
void act_keep(void *p, bool adopted)
{
	part = p;
	acts = part->acts;
	for (int i = 0; adopted && i < MAX_ACT; i++) {
		struct act *a = &acts[i];
		if (!a->pid)
			continue;
		a->mem = ax_keep_remap(a->mo, a->mem, AX_ACT_BYTES);
		if (!a->mem) {
			*a = (struct act){ 0 };
			continue;
		}
		for (int k = 0; k < AX_ACT_SPARES; k++)
			if (a->parked[k].mo && !(a->parked[k].mem = ax_keep_remap(a->parked[k].mo, a->parked[k].mem,
									       a->parked[k].bytes)))
				a->parked[k] = (struct sockbuf_obj){ 0 };
	}
	if (adopted && part->bell.mo)
		ax_keep_claim(part->bell.mo);
	for (int e = 0; adopted && e < ENGINES; e++)
		act_engine_gone(e);
}

static struct act *find(uint32_t pid)
{
	for (int i = 0; pid && i < MAX_ACT; i++)
		if (acts[i].pid == pid)
			return &acts[i];
	return NULL;
}

/* The bell into the process of thread (its address in the page's header; 0: none). */
static void map_bell(struct act *a, endpoint_t thread)
{
	if (!part->bell.mo) {
		int64_t b = ax_mo_create(1, 0);
		part->bell.mo = b > 0 ? b : 0;
	}
	int64_t bva = part->bell.mo ? lx_map_shared(part->bell.mo, 4096, thread) : -1;
	a->mem->bell_va = bva > 0 ? (uint64_t)bva : 0; /* none: the engines are kicked */
}

static struct act *make(uint32_t pid, endpoint_t thread)
{
	struct act *a = NULL;
	for (int i = 0; i < MAX_ACT && !a; i++)
		if (!acts[i].pid)
			a = &acts[i];
	if (!a)
		return NULL;
	int64_t h = ax_mo_create(AX_ACT_BYTES / 4096, 0);
	int64_t va = h > 0 ? ax_mo_map(h, 0, 0, AX_ACT_BYTES / 4096, KP_R | KP_W) : -1;
	int64_t app = va > 0 ? lx_map_shared(h, AX_ACT_BYTES, thread) : -1;
	if (app <= 0) {
		ax_printf("syscall: no activity page for process %#x (%ld)\n", pid, (long)(h <= 0 ? h : va <= 0 ? va : app));
		if (va > 0)
			ax_mo_unmap((uint64_t)va);
		if (h > 0)
			ax_mo_destroy(h);
		return NULL;
	}
	*a = (struct act){ .pid = pid, .mo = h, .mem = (struct ax_activity *)va, .app_va = (uint64_t)app };
	memset(a->mem, 0, AX_ACT_BYTES);
	a->mem->pid = pid;
	map_bell(a, thread);
	a->mem->version = AX_ACT_VERSION;
	a->mem->magic = AX_ACT_MAGIC;
	return a;
}

/* Lazy closing's counters, for `socklib`: buffers parked, handed to a new connection,
 * destroyed after parking (reclaimed by the library, or dropped with an old image). */
static uint64_t n_parked, n_reused, n_unparked;

static void unpark(struct act *a, int i)
{
	if (a->parked[i].mo) {
		sockbuf_obj_destroy(&a->parked[i]);
		n_unparked++;
	}
}

void act_exec(uint32_t pid)
{
	sock_forget_process(pid);
	struct act *a = find(pid);
	if (!a)
		return;
	a->app_va = 0; /* mapped again at the new image's first call (act_map) */
	for (int i = 0; i < AX_ACT_SPARES; i++) {
		unpark(a, i);
		atomic_store_explicit(&a->mem->spares[i].state, AX_SPARE_FREE, memory_order_relaxed);
	}
	atomic_store_explicit(&a->mem->app.waiting, 0, memory_order_relaxed);
	struct sock *w = sock_find(a->wake_sock);
	if (w)
		w->wake = false;
	a->wake_sock = 0;
}

uint64_t act_map(uint32_t pid, endpoint_t thread)
{
	struct act *a = find(pid);
	if (!a)
		return (a = make(pid, thread)) ? a->app_va : 0;
	if (!a->app_va) { /* a new image (act_exec): the page and the bell into it */
		int64_t app = lx_map_shared(a->mo, AX_ACT_BYTES, thread);
		a->app_va = app > 0 ? (uint64_t)app : 0;
		map_bell(a, thread);
	}
	return a->app_va;
}

bool act_park(uint32_t pid, uint32_t bit, const struct sockbuf_obj *b)
{
	struct act *a = find(pid);
	if (!a)
		return false;
	for (int i = 0; i < AX_ACT_SPARES; i++) {
		struct ax_spare *e = &a->mem->spares[i];
		uint32_t st = atomic_load_explicit(&e->state, memory_order_acquire);
		if ((st != AX_SPARE_KEEP && st != AX_SPARE_CLAIMED) || e->bit != bit || e->va != b->app_va)
			continue;
		unpark(a, i); /* a buffer parked here before: the library wrote over its entry */
		uint32_t keep = AX_SPARE_KEEP;
		if (st == AX_SPARE_KEEP &&
		    atomic_compare_exchange_strong_explicit(&e->state, &keep, AX_SPARE_PARKED, memory_order_acq_rel,
							    memory_order_acquire)) {
			a->parked[i] = *b;
			n_parked++;
			return true;
		}
		/* claimed (reclaimed before the engine was done with it): unmapped already */
		uint32_t claimed = AX_SPARE_CLAIMED;
		atomic_compare_exchange_strong_explicit(&e->state, &claimed, AX_SPARE_FREE, memory_order_acq_rel,
							memory_order_relaxed);
		return false;
	}
	return false;
}

bool act_take_spare(uint32_t pid, bool stream, struct sockbuf_obj *b)
{
	struct act *a = find(pid);
	if (!a)
		return false;
	for (int i = 0; i < AX_ACT_SPARES; i++) {
		if (!a->parked[i].mo)
			continue;
		struct ax_spare *e = &a->mem->spares[i];
		uint32_t st = AX_SPARE_PARKED;
		if (atomic_compare_exchange_strong_explicit(&e->state, &st, AX_SPARE_FREE, memory_order_acq_rel,
							    memory_order_acquire)) {
			if (a->parked[i].stream == stream) {
				*b = a->parked[i];
				a->parked[i] = (struct sockbuf_obj){ 0 };
				n_reused++;
				return true;
			}
			/* (only streams are accepted: a datagram buffer here is the library's lie) */
			atomic_store_explicit(&e->state, AX_SPARE_PARKED, memory_order_release);
			continue;
		}
		if (st == AX_SPARE_CLAIMED) { /* unmapped by the library: ours to destroy */
			unpark(a, i);
			atomic_compare_exchange_strong_explicit(&e->state, &st, AX_SPARE_FREE, memory_order_acq_rel,
								memory_order_relaxed);
		} else if (st != AX_SPARE_PARKED) {
			unpark(a, i); /* the library wrote over a parked entry: its loss */
		}
	}
	return false;
}

void act_reclaim(uint32_t pid)
{
	struct act *a = find(pid);
	for (int i = 0; a && i < AX_ACT_SPARES; i++) {
		struct ax_spare *e = &a->mem->spares[i];
		uint32_t st = AX_SPARE_CLAIMED;
		if (a->parked[i].mo && atomic_load_explicit(&e->state, memory_order_acquire) == AX_SPARE_CLAIMED) {
			unpark(a, i);
			atomic_compare_exchange_strong_explicit(&e->state, &st, AX_SPARE_FREE, memory_order_acq_rel,
								memory_order_relaxed);
		}
	}
}

int act_grant(uint32_t pid, int eng, endpoint_t ep, int64_t *handle)
{
	struct act *a = find(pid);
	if (!a)
		return -1;
	if (a->handle[eng] && a->granted_to[eng] == ep)
		return 0;
	int64_t h = ax_mo_grant(a->mo, ep, KP_R | KP_W);
	if (h <= 0) {
		ax_printf("syscall: granting process %#x's activity page: %ld\n", pid, (long)h);
		return -1;
	}
	a->handle[eng] = h, a->granted_to[eng] = ep;
	*handle = h;
	return 1;
}

int act_bell_grant(int eng, endpoint_t ep, int64_t *handle)
{
	if (!part->bell.mo)
		return -1;
	if (part->bell.handle[eng] && part->bell.granted_to[eng] == ep)
		return 0;
	int64_t h = ax_mo_grant(part->bell.mo, ep, KP_R | KP_W);
	if (h <= 0)
		return -1;
	part->bell.handle[eng] = h, part->bell.granted_to[eng] = ep;
	*handle = h;
	return 1;
}

void act_engine_gone(int eng)
{
	part->bell.handle[eng] = 0, part->bell.granted_to[eng] = 0;
	for (int i = 0; i < MAX_ACT; i++)
		acts[i].handle[eng] = 0, acts[i].granted_to[eng] = 0;
}

int64_t act_set_wake(struct sock *s, uint32_t pid)
{
	struct act *a = find(pid);
	if (!a)
		return -LX_EINVAL; /* no library here (no socket taken over yet) */
	if (s->stream || s->lib_pid)
		return -LX_EINVAL;
	struct sock *old = sock_find(a->wake_sock);
	if (old)
		old->wake = false;
	s->wake = true;
	a->wake_sock = s->id;
	ready_changed(s);
	return 0;
}

/* A wake socket reports LX_POLLIN always; it is registered edge-triggered, so what the library
 * hears is each arrival (a wake-up), never the level. */
uint32_t act_wake_bits(void) { return LX_POLLIN | LX_POLLRDNORM; }

void act_status(struct sock *s, uint32_t bits)
{
	struct act *a = find(s->lib_pid);
	uint32_t bit = (uint32_t)(s - socks);
	if (!a || bit >= AX_ACT_SOCKS)
		return;
	uint32_t st = (bits & (LX_POLLERR | LX_POLLHUP | LX_POLLRDHUP)) | (s->connected ? AXS_CONNECTED : 0) |
		      (uint32_t)(s->error & 0xffff) << AXS_ERR_SHIFT;
	uint32_t old = atomic_exchange_explicit(&AX_ACT_STATUS(a->mem)->st[bit], st, memory_order_seq_cst);
	/* A changed status wakes a library sleeping on its wake word (the rings' changes are
	 * the engines' to ring): the store before the look at `waiting`, as the library counts
	 * itself in before its last look at the statuses. */
	if (old != st && atomic_load_explicit(&a->mem->app.waiting, memory_order_seq_cst))
		ax_wake_ring(s->lib_pid, AX_RING_STACK);
}

/* A library blocked in vfs with its wake socket in the set (AX_WAKE) hears of an event:
 * the socket reports an arrival. */
static void wake_socket(struct act *a)
{
	if (!atomic_load_explicit(&a->mem->app.waiting, memory_order_relaxed))
		return;
	struct sock *w = sock_find(a->wake_sock);
	if (!w)
		return;
	atomic_fetch_add_explicit(&a->mem->app.wakes, 1, memory_order_relaxed);
	w->ready_told = false; /* an arrival: vfs reports it to the edge-triggered registration */
	ready_changed(w);
}

void act_event(struct sock *s)
{
	struct act *a = find(s->lib_pid);
	if (!a)
		return;
	act_status(s, sock_ready_bits(s));
	/* the status before the look at `waiting`, as the library counts itself in before its
	 * last look at its sockets (one of the two sees the other's store). Every event wakes
	 * a waiting library, whatever we last computed: the library's own moves (which we
	 * see late) may have hidden a change, and a needless wake-up costs one more look. */
	atomic_thread_fence(memory_order_seq_cst);
	wake_socket(a);
}

/* ---- listeners in the page (sock_ax.h `listen`) ---- */

/* After a store into pid's page that a waiting library must see: its wake word rung, or its
 * wake socket. The store before the look at `waiting` (the library counts itself in before
 * its last look at the page: one of the two sees the other's store). */
static void wake_library(struct act *a, uint32_t pid)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&a->mem->app.waiting, memory_order_relaxed))
		ax_wake_ring(pid, AX_RING_STACK);
	wake_socket(a);
}

static uint32_t listen_key(const struct sock *l) { return (uint32_t)(l - socks) + 1; }

static struct ax_listen *listen_entry(struct act *a, const struct sock *l)
{
	uint32_t key = listen_key(l);
	for (int i = 0; i < AX_ACT_LISTENERS; i++)
		if (atomic_load_explicit(&a->mem->listen[i].key, memory_order_relaxed) == key)
			return &a->mem->listen[i];
	return NULL;
}

uint32_t act_listen_open(const struct sock *l)
{
	struct act *a = find(l->accept_take_pid);
	if (!a)
		return 0;
	struct ax_listen *e = listen_entry(a, l);
	for (int i = 0; i < AX_ACT_LISTENERS && !e; i++)
		if (!atomic_load_explicit(&a->mem->listen[i].key, memory_order_relaxed))
			e = &a->mem->listen[i];
	if (!e)
		return 0; /* a full table: the kernel's set serves it */
	atomic_store_explicit(&e->bits, 0, memory_order_relaxed);
	e->rung = atomic_load_explicit(&e->seq, memory_order_relaxed);
	atomic_store_explicit(&e->key, listen_key(l), memory_order_release);
	act_listen_state(l);
	return (uint32_t)(e - a->mem->listen) + 1;
}

void act_listen_state(const struct sock *l)
{
	struct act *a = find(l->accept_take_pid);
	struct ax_listen *e = a ? listen_entry(a, l) : NULL;
	if (!e)
		return;
	uint32_t bits = l->error ? LX_POLLIN | LX_POLLRDNORM | LX_POLLERR : l->pending ? LX_POLLIN | LX_POLLRDNORM : 0;
	uint32_t old = atomic_exchange_explicit(&e->bits, bits, memory_order_seq_cst);
	uint32_t seq = atomic_load_explicit(&e->seq, memory_order_relaxed);
	if (!(bits & ~old) && seq == e->rung)
		return;
	e->rung = seq;
	wake_library(a, l->accept_take_pid);
}

void act_listen_drop(const struct sock *l)
{
	struct act *a = find(l->accept_take_pid);
	struct ax_listen *e = a ? listen_entry(a, l) : NULL;
	if (!e)
		return;
	atomic_store_explicit(&e->key, 0, memory_order_relaxed);
	wake_library(a, l->accept_take_pid); /* it must look: the listener goes to the kernel's set */
}

void act_accepted(const struct lcall *c, const struct sock *l, struct sock *n)
{
	struct act *a = find(c->pid);
	if (!a)
		return;
	int64_t va = sock_map_force(n, c->thread, c->pid);
	if (va < 0)
		return; /* stays with us: the library finds no entry and uses system calls */
	n->lib_pid = c->pid, n->lib_dirty = true;
	ready_changed(n);
	uint64_t i = atomic_fetch_add_explicit(&a->mem->accepted_n, 1, memory_order_relaxed) % AX_ACT_ACCEPTS;
	struct ax_accepted *e = &a->mem->accepted[i];
	/* a seqlock: odd while written, so a library reading meanwhile copies again */
	uint32_t seq = atomic_load_explicit(&e->seq, memory_order_relaxed) | 1;
	atomic_store_explicit(&e->seq, seq, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	e->listener = (uint32_t)(l - socks);
	e->addr = n->peer.addr, e->port = n->peer.port;
	e->b = (struct ax_sockbuf){ .va = (uint64_t)va, .bytes = n->bytes, .rx_off = 0, .stream = 1,
				    .act_va = a->app_va, .bit = (uint32_t)(n - socks), .eng = n->eng };
	e->arrivals = atomic_load_explicit(&a->mem->app.arrivals, memory_order_relaxed);
	e->more = l->pending;
	atomic_store_explicit(&e->seq, seq + 1, memory_order_release);
}

void act_arrival(const struct sock *l)
{
	struct act *a = find(l->accept_take_pid);
	if (!a)
		return;
	atomic_fetch_add_explicit(&a->mem->app.arrivals, 1, memory_order_release);
	struct ax_listen *e = listen_entry(a, l);
	if (e)
		atomic_fetch_add_explicit(&e->seq, 1, memory_order_relaxed); /* rung by act_listen_state */
}

void act_forget_sock(struct sock *s)
{
	if (s->accept_take_pid)
		act_listen_drop(s);
	if (s->wake)
		for (int i = 0; i < MAX_ACT; i++)
			if (acts[i].wake_sock == s->id)
				acts[i].wake_sock = 0;
	struct act *a = find(s->lib_pid);
	uint32_t bit = (uint32_t)(s - socks);
	if (a && bit < AX_ACT_SOCKS)
		atomic_store_explicit(&AX_ACT_STATUS(a->mem)->st[bit], 0, memory_order_relaxed);
}

/* ---- the console's `socklib` (NETQ_SHOW NQ_SOCKLIB): per process, the calls its library
 * answered in user space and those that needed system calls; then the totals. ---- */

static const char *const call_names[AXC_N] = AX_CALL_NAMES;

/* Line n of the table into buf (false: past the end). Rows: a title, one per (process,
 * call) counted, one per process (blocked threads, wake-ups), one per call of all
 * processes, lazy closing's counters, the total. */
static bool line(uint64_t n, char *buf)
{
	if (n == 0) {
		ksnprintf(buf, NETQ_TEXT, "process    call           user        sys");
		return true;
	}
	n--;
	uint64_t tu[AXC_N] = { 0 }, ts[AXC_N] = { 0 };
	for (int i = 0; i < MAX_ACT; i++) {
		if (!acts[i].pid)
			continue;
		for (int c = 0; c < AXC_N; c++) {
			uint64_t u = acts[i].mem->calls[c].user, s = acts[i].mem->calls[c].sys;
			tu[c] += u, ts[c] += s;
			if (!u && !s)
				continue;
			if (n-- == 0) {
				ksnprintf(buf, NETQ_TEXT, "%-10x %-11s %10llu %10llu", acts[i].pid, call_names[c],
					  (unsigned long long)u, (unsigned long long)s);
				return true;
			}
		}
	}
	/* each process's library threads blocked now (counted in before their last look) and
	 * the wake-ups we sent it: a thread that stays blocked while its sockets have data
	 * shows here */
	for (int i = 0; i < MAX_ACT; i++) {
		if (acts[i].pid && n-- == 0) {
			ksnprintf(buf, NETQ_TEXT, "process %x: %u threads blocked, %llu wake-ups", acts[i].pid,
				  atomic_load_explicit(&acts[i].mem->app.waiting, memory_order_relaxed),
				  (unsigned long long)atomic_load_explicit(&acts[i].mem->app.wakes, memory_order_relaxed));
			return true;
		}
	}
	uint64_t au = 0, as = 0;
	for (int c = 0; c < AXC_N; c++) {
		au += tu[c], as += ts[c];
		if (!tu[c] && !ts[c])
			continue;
		if (n-- == 0) {
			ksnprintf(buf, NETQ_TEXT, "%-10s %-11s %10llu %10llu", "all", call_names[c],
				  (unsigned long long)tu[c], (unsigned long long)ts[c]);
			return true;
		}
	}
	if (n == 0) {
		ksnprintf(buf, NETQ_TEXT, "spare buffers: %llu parked, %llu reused, %llu destroyed",
			  (unsigned long long)n_parked, (unsigned long long)n_reused, (unsigned long long)n_unparked);
		return true;
	}
	if (n == 1) {
		uint64_t pm = au + as ? au * 1000 / (au + as) : 0;
		ksnprintf(buf, NETQ_TEXT, "user space %llu of %llu calls (%llu.%llu%%)", (unsigned long long)au,
			  (unsigned long long)(au + as), (unsigned long long)(pm / 10), (unsigned long long)(pm % 10));
		return true;
	}
	return false;
}

void act_netq(struct kmsg *m)
{
	char buf[NETQ_TEXT + 8];
	memset(buf, 0, sizeof(buf));
	bool known = m->w[0] == NQ_SOCKLIB;
	bool have = known && line(m->w[1], buf);
	memset(m->w, 0, sizeof(m->w));
	m->type = !known ? (uint32_t)-2 /* -ENOENT */ : have ? NETQ_LINE : NETQ_END;
	if (have)
		memcpy(m->w, buf, NETQ_TEXT);
	ax_reply(m->source, m);
}
