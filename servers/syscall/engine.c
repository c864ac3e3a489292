/* The channels to the socket engines, udp and tcp (lib/net/sock_proto.h): syscall owns and
 * exports syscall/T.req (it produces) and syscall/T.ev (it consumes) for each; T imports both.
 *
 * Requests wait in `reqs` until their engine is ready (attached and said SK_HELLO) and its
 * request queue has room; each pushed one has a reqdb id. A socket's SK_OPEN always goes
 * before any of its other requests. When a new instance of an engine attaches, the old
 * one's requests are aborted (reqdb_abort_peer) and go again, every socket of that engine is
 * opened again (SKF_REATTACH, a fresh grant) with its state replayed (udp: bind, connect,
 * options; tcp: a listener's options, bind and listen — connections die with the old tcp),
 * so applications keep their sockets. */
#include "syscall.h"
#include "lx_abi.h"
#include "chan_name.h"
#include "chan_axolotl.h"
#include "reqdb.h"
#include "spsc.h"

#define MAX_REQS 256

static struct engine {
	const char *name;
	struct spsc req, ev;
	struct chan_export req_ex, ev_ex;
	struct chan_axolotl_peer peer;
	struct chan_platform plat;
	struct chan_watch req_w;  /* the engine reads T.req (lib/chan/watch.h) */
	endpoint_t ep;           /* the importer of T.req: the current instance, 0: none yet */
	bool hello;              /* it said SK_HELLO: requests may flow */
	bool kick;               /* something was pushed this turn: ring it */
	struct reqdb db;
	struct reqdb_entry dbe[MAX_REQS];
	uint64_t bad;            /* malformed or unknown messages from it */
	bool created, exported;  /* its channels made; published in ds (retried until they are) */
	uint64_t export_at;      /* when to try publishing them again */
} engines[ENGINES] = { [ENG_UDP] = { .name = "udp" }, [ENG_TCP] = { .name = "tcp" } };
static uint64_t next_seq;
bool engines_watched; /* requests wait in a channel: engine_poll should run again soon */

static struct ereq {
	bool used;
	uint64_t id;             /* reqdb id while pushed, 0 while waiting */
	uint64_t seq;            /* order of making: pushed in this order */
	struct sk_msg m;
	uint64_t serial;         /* the held Linux call waiting for the answer, or 0 */
} reqs[MAX_REQS];
/* The scans (each loop turn looks for the oldest waiting request) stop at reqs_top: slots
 * are taken lowest first, so it stays near the number in flight instead of MAX_REQS. */
static int reqs_top;

static bool ready(const struct engine *e) { return e->ep && e->hello; }
bool engine_ready(int eng) { return ready(&engines[eng]); }

/* Every socket of engine e is unopened: a new instance gets them all again. */
static void forget_opens(struct engine *e)
{
	for (int i = 0; i < sock_top; i++)
		if (socks[i].id && &engines[socks[i].eng] == e)
			socks[i].opened = false, socks[i].engine_handle = 0;
	act_engine_gone((int)(e - engines));
}

static void on_req_attach(struct chan_export *x, endpoint_t importer)
{
	struct engine *e = x->ctx;
	if (importer == e->ep)
		return;
	ax_printf("syscall: %s %#x attached (was %#x)\n", e->name, (unsigned)importer, (unsigned)e->ep);
	if (e->ep)
		reqdb_abort_peer(&e->db, e->ep); /* each goes again after the hello (abort_req) */
	e->ep = importer;
	e->peer.ep = importer;
	chan_watch_reset(&e->req_w);
	e->hello = false;
	forget_opens(e);
}

static void abort_req(void *ctx, uint64_t id)
{
	(void)id;
	struct ereq *r = ctx;
	r->id = 0; /* waits to be pushed to the engine's next instance */
	struct sock *s = sock_find(r->m.sock);
	if (r->m.type == SK_CLOSE) { /* the engine that held it is gone: nobody maps it now */
		r->used = false;
		if (s && s->closing)
			sock_free(s);
	}
}

void engine_init(void)
{
	for (int i = 0; i < ENGINES; i++) {
		struct engine *e = &engines[i];
		reqdb_init(&e->db, e->dbe, MAX_REQS);
		e->peer.bits = SYSCALL_WAKE_BIT;
		ksnprintf(e->req_w.name, sizeof(e->req_w.name), "syscall/%s.req", e->name);
		chan_axolotl_platform(&e->plat, &e->peer);
		e->req_ex = (struct chan_export){ .rights = KP_R | KP_W, .peer = e->name, .on_attach = on_req_attach, .ctx = e };
		e->ev_ex = (struct chan_export){ .rights = KP_R | KP_W, .peer = e->name };
		char key[16];
		ksnprintf(key, sizeof(key), "%s.req", e->name);
		ax_strpad(e->req_ex.key, sizeof(e->req_ex.key), key);
		ksnprintf(key, sizeof(key), "%s.ev", e->name);
		ax_strpad(e->ev_ex.key, sizeof(e->ev_ex.key), key);
		int64_t r = chan_create(&e->req_ex, SK_SLOT, SK_SLOTS, SPSC_PRODUCER, &e->req);
		r = r ? r : chan_create(&e->ev_ex, SK_SLOT, SK_SLOTS, SPSC_CONSUMER, &e->ev);
		e->created = r == 0;
		r = r ? r : chan_export(&e->req_ex);
		r = r ? r : chan_export(&e->ev_ex);
		e->exported = r == 0;
		if (r)
			ax_printf("syscall: exporting syscall/%s.req and .ev failed (%ld): %s\n", e->name, (long)r,
				  e->created ? "trying again" : "no such engine");
	}
}

/* Channels ds refused to publish (at boot ds may not know our name yet): again every
 * 100 ms. True while some are still missing. */
bool engine_export_missing(void)
{
	bool missing = false;
	uint64_t now = ax_time_ns();
	for (int i = 0; i < ENGINES; i++) {
		struct engine *e = &engines[i];
		if (!e->created || e->exported)
			continue;
		if (now >= e->export_at) {
			e->exported = chan_export(&e->req_ex) == 0 && chan_export(&e->ev_ex) == 0;
			e->export_at = now + 100000000;
			if (e->exported)
				ax_printf("syscall: syscall/%s.req and .ev published\n", e->name);
		}
		missing |= !e->exported;
	}
	return missing;
}

void engine_message(struct kmsg *m) { chan_export_serve(m); }

void engine_request(struct sock *s, struct sk_msg *m, uint64_t serial)
{
	for (int i = 0; i < MAX_REQS; i++)
		if (!reqs[i].used) {
			m->sock = s->id;
			reqs[i] = (struct ereq){ true, 0, next_seq++, *m, serial };
			if (i >= reqs_top)
				reqs_top = i + 1;
			return;
		}
	ax_printf("syscall: too many requests to the engines: dropped one\n");
	struct sk_msg a = { .type = SK_ANSWER, .flags = m->type, .sock = s->id, .result = -LX_EAGAIN };
	calls_answered(serial, &a);
}

static struct engine *engine_of(const struct sock *s) { return &engines[s->eng]; }

/* Hints and requests that are not answered go straight onto the queue. */
static bool push(struct engine *e, const struct sk_msg *m)
{
	bool ok = spsc_push(&e->req, m) == 0;
	e->kick |= ok;
	return ok;
}

/* Our own request (an open or a replay), answered to nobody. */
static void push_own(struct engine *e, struct sk_msg *m)
{
	m->req = reqdb_add(&e->db, e->ep, NULL, NULL);
	push(e, m);
}

static void replay_addr(struct engine *e, struct sock *s, uint16_t type, const struct inaddr *a)
{
	struct sk_msg b = { .type = type, .sock = s->id, .family = LX_AF_INET, .port = a->port };
	memcpy(b.addr, &a->addr, 4);
	push_own(e, &b);
}

/* SK_OPEN of s for the engine's current instance (a fresh grant), then its state replayed. */
static bool open_sock(struct sock *s)
{
	struct engine *e = engine_of(s);
	if (spsc_count(&e->req) > SK_SLOTS - 16)
		return false; /* room for the whole group, or none of it now */
	if (!s->engine_handle) {
		int64_t h = ax_mo_grant(s->mo, e->ep, KP_R | KP_W);
		if (h <= 0) {
			ax_printf("syscall: granting socket %u's buffers to %s: %ld\n", s->id, e->name, (long)h);
			return false;
		}
		s->engine_handle = h;
	}
	struct sk_msg m = { .type = SK_OPEN, .flags = (s->stream ? SKF_STREAM : SKF_DGRAM) | (s->ever_opened ? SKF_REATTACH : 0),
			    .sock = s->id, .arg = (uint64_t)s->engine_handle, .arg2 = s->bytes };
	push_own(e, &m);
	if (s->ever_opened) { /* the engine may not have this socket's record: tell it again */
		struct sk_msg o = { .type = SK_SETOPT, .sock = s->id };
		for (int i = 0; i < NOPTS; i++)
			if (s->opt_set & (1u << i)) {
				o.arg = opt_names[i], o.arg2 = s->opt_val[i];
				push_own(e, &o);
			}
		if (s->bound && (!s->stream || s->listening))
			replay_addr(e, s, SK_BIND, &s->local);
		if (s->connected && !s->stream)
			replay_addr(e, s, SK_CONNECT, &s->peer);
		if (s->listening) {
			struct sk_msg l = { .type = SK_LISTEN, .sock = s->id, .arg = (uint64_t)s->backlog };
			push_own(e, &l);
		}
		s->tx_hint = true; /* whatever the old instance left in TX */
		s->rx_hint = true;
	}
	s->lib_dirty = s->lib_pid != 0; /* a new instance hears who moves the data */
	s->opened = s->ever_opened = true;
	return true;
}

void engine_close(struct sock *s)
{
	/* Requests not yet pushed die with the socket (their calls were answered already). */
	for (int i = 0; i < reqs_top; i++)
		if (reqs[i].used && !reqs[i].id && reqs[i].m.sock == s->id)
			reqs[i].used = false;
	if (!s->opened && s->ever_opened && !s->reclose) {
		/* Opened at an engine that may still have it (we restarted, and the engine has not
		 * said hello yet): freed only after it let go. Opened again, then closed. */
		s->reclose = true;
		return;
	}
	s->closing = true;
	if (!s->opened || !ready(engine_of(s))) {
		sock_free(s); /* no engine maps it (a restarted engine's ds record: see README) */
		return;
	}
	struct sk_msg m = { .type = SK_CLOSE, .sock = s->id };
	engine_request(s, &m, 0); /* freed when answered */
}

/* SK_LIB: who moves s's data now (after the page's SK_ACT if the engine's instance has no
 * grant of it yet). False: no room, try again. */
static bool push_lib(struct engine *e, struct sock *s)
{
	if (spsc_count(&e->req) > SK_SLOTS - 4)
		return false;
	struct sk_msg m = { .type = SK_LIB, .sock = s->id, .arg = s->lib_pid, .arg2 = (uint64_t)(s - socks) };
	struct sk_msg a = { .type = SK_ACT, .arg2 = s->lib_pid };
	int64_t h = 0;
	int g = s->lib_pid ? act_grant(s->lib_pid, s->eng, e->ep, &h) : 0;
	if (g < 0)
		m.arg = 0; /* no page: the engine needs to know nothing (the library kicks) */
	if (g > 0) {
		struct sk_msg b = { .type = SK_BELL };
		int64_t bh = 0;
		if (act_bell_grant(s->eng, e->ep, &bh) > 0) {
			b.arg = (uint64_t)bh;
			push(e, &b);
		}
		a.arg = (uint64_t)h;
		push(e, &a);
	}
	return push(e, &m);
}

/* The oldest request waiting whose socket's engine is not held back (bit per engine). */
static struct ereq *oldest_waiting(unsigned held_back)
{
	struct ereq *best = NULL;
	for (int i = 0; i < reqs_top; i++) {
		if (!reqs[i].used || reqs[i].id || (best && reqs[i].seq > best->seq))
			continue;
		struct sock *s = sock_find(reqs[i].m.sock);
		if (s && (held_back & (1u << s->eng)))
			continue;
		best = &reqs[i];
	}
	return best;
}

/* Pushes what waits (in order of making; a request for an engine that is not ready, or
 * whose queue is full, holds back the later ones: order matters within a socket); true if
 * anything went. */
static bool push_requests(void)
{
	bool any = false;
	for (int i = 0; i < sock_top; i++) {
		struct sock *s = &socks[i];
		if (s->id && !s->opened && !s->closing && ready(engine_of(s)) && open_sock(s)) {
			any = true;
			if (s->reclose) { /* its close died with our old instance: asked again */
				s->reclose = false;
				engine_close(s);
			}
		}
	}
	unsigned held_back = 0; /* engines whose next request cannot go now: their later ones wait */
	for (struct ereq *r; (r = oldest_waiting(held_back));) {
		struct sock *s = sock_find(r->m.sock);
		if (!s || (!s->opened && s->closing)) { /* its socket went, or a close for an engine that never had it */
			r->used = false;
			if (s && s->closing)
				sock_free(s);
			continue;
		}
		struct engine *e = engine_of(s);
		uint64_t id = s->opened && ready(e) ? reqdb_add(&e->db, e->ep, abort_req, r) : 0;
		if (!id) {
			held_back |= 1u << s->eng;
			continue;
		}
		r->m.req = id;
		if (!push(e, &r->m)) {
			reqdb_take(&e->db, id);
			held_back |= 1u << s->eng;
			continue;
		}
		r->id = id;
		any = true;
	}
	for (int i = 0; i < sock_top; i++) {
		struct sock *s = &socks[i];
		if (!s->id || !s->opened || !ready(engine_of(s)))
			continue;
		if (s->lib_dirty) {
			if (!push_lib(engine_of(s), s))
				continue;
			s->lib_dirty = false, any = true;
		}
		if (s->tx_hint) {
			struct sk_msg m = { .type = SK_TX, .sock = s->id };
			if (!push(engine_of(s), &m))
				continue;
			s->tx_hint = false, any = true;
		}
		if (s->rx_hint) {
			struct sk_msg m = { .type = SK_RXDONE, .sock = s->id };
			if (!push(engine_of(s), &m))
				continue;
			s->rx_hint = false, any = true;
		}
	}
	return any;
}

static void answered(struct engine *e, const struct sk_msg *a)
{
	const struct reqdb_entry *x = reqdb_take(&e->db, a->req);
	if (!x) {
		e->bad++; /* late (from a dead instance's request) or forged */
		return;
	}
	struct ereq *r = x->ctx;
	if (!r) { /* our own: an open or a replay */
		if (a->result < 0)
			ax_printf("syscall: %s refused socket %u's open or restore: %ld\n", e->name, a->sock, (long)a->result);
		return;
	}
	r->used = false;
	struct sock *s = sock_find(r->m.sock);
	if (r->m.type == SK_CLOSE && s && s->closing)
		sock_free(s);
	else
		calls_answered(r->serial, &(struct sk_msg){ .type = SK_ANSWER, .flags = r->m.type, .sock = r->m.sock,
							    .result = a->result, .arg = a->arg, .arg2 = a->arg2,
							    .family = a->family, .port = a->port,
							    .addr = { a->addr[0], a->addr[1], a->addr[2], a->addr[3] } });
}

static void event(struct engine *e, const struct sk_msg *m)
{
	struct sock *s = sock_find(m->sock);
	if (!s || engine_of(s) != e) {
		e->bad++;
		return;
	}
	if (m->arg == EV_CONN && s->stream)
		stream_conn_event(s, m); /* the library's connect (SBD_CONNECT) ended */
	else
		calls_event(s, m->arg, m->result);
}

static bool poll_engine(struct engine *e)
{
	bool any = false;
	struct sk_msg m;
	for (int n = 0; n < 256; n++) {
		int r = spsc_pop(&e->ev, &m); /* a private copy: check it before use */
		if (r == CHAN_EAGAIN)
			break;
		if (r < 0) {
			ax_printf("syscall: syscall/%s.ev is corrupt (%d): waiting for a new %s\n", e->name, r, e->name);
			e->hello = false;
			break;
		}
		any = true;
		if (sys_debug)
			ax_printf("syscall: from %s: type %u sock %u req %#lx result %ld arg %#lx\n", e->name, m.type, m.sock,
				  (unsigned long)m.req, (long)m.result, (unsigned long)m.arg);
		if (m.type == SK_ANSWER)
			answered(e, &m);
		else if (m.type == SK_EV)
			event(e, &m);
		else if (m.type == SK_HELLO && e->ep) {
			ax_printf("syscall: %s says hello (incarnation %lu)\n", e->name, (unsigned long)m.arg);
			if (e->hello) { /* the same importer again (it restarted within our notice) */
				reqdb_abort_peer(&e->db, e->ep);
				forget_opens(e);
			}
			e->hello = true;
			/* What it did while it had no channel to us (data sent, room made in a TX
			 * ring, data received) was told into the channel of our predecessor, or of its
			 * own: readiness is looked at again for every socket, or a writer waiting for
			 * room never hears of it (a stream stalled for good after a restart). */
			for (int i = 0; i < sock_top; i++)
				if (socks[i].id && &engines[socks[i].eng] == e)
					ready_changed(&socks[i]);
		} else
			e->bad++;
	}
	return any;
}

bool engine_poll(void)
{
	engines_watched = false;
	while (reqs_top > 0 && !reqs[reqs_top - 1].used)
		reqs_top--;
	bool any = push_requests();
	for (int i = 0; i < ENGINES; i++) {
		struct engine *e = &engines[i];
		if (!e->ev.sh)
			continue; /* its channels could not be made */
		if (e->kick)
			chan_kick(&e->req, &e->plat);
		e->kick = false;
		any |= poll_engine(e);
		if (e->ep)
			engines_watched |= chan_ax_watch(&e->req_w, &e->req, &e->plat);
	}
	return any;
}

bool engine_may_sleep(void)
{
	for (int i = 0; i < ENGINES; i++)
		if (engines[i].ev.sh)
			atomic_store_explicit(&engines[i].ev.sh->sleeping, 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);
	bool empty = true;
	for (int i = 0; i < ENGINES; i++)
		empty &= !engines[i].ev.sh || spsc_count(&engines[i].ev) == 0;
	if (!empty)
		for (int i = 0; i < ENGINES; i++)
			if (engines[i].ev.sh)
				atomic_store_explicit(&engines[i].ev.sh->sleeping, 0, memory_order_relaxed);
	return empty;
}
