/* The channels to udp (lib/net/sock_proto.h): syscall owns and exports syscall/udp.req
 * (it produces) and syscall/udp.ev (it consumes); udp imports both.
 *
 * Requests wait in `reqs` until udp is ready (attached and said SK_HELLO) and the request
 * queue has room; each pushed one has a reqdb id. A socket's SK_OPEN always goes before any
 * of its other requests. When a new udp attaches, the old one's requests are aborted
 * (reqdb_abort_peer) and go again, every socket is opened again (SKF_REATTACH, a fresh
 * grant) with its bind, connect and options replayed, so applications keep their sockets. */
#include "syscall.h"
#include "chan_name.h"
#include "chan_axolotl.h"
#include "reqdb.h"
#include "spsc.h"

#define MAX_REQS 256

static struct {
	struct spsc req, ev;
	struct chan_export req_ex, ev_ex;
	struct chan_axolotl_peer peer;
	struct chan_platform plat;
	endpoint_t udp;          /* the importer of udp.req: the current udp, 0: none yet */
	bool hello;              /* it said SK_HELLO: requests may flow */
	struct reqdb db;
	struct reqdb_entry dbe[MAX_REQS];
	uint64_t next_seq;
	uint64_t bad;            /* malformed or unknown messages from udp */
} e;

static struct ereq {
	bool used;
	uint64_t id;             /* reqdb id while pushed, 0 while waiting */
	uint64_t seq;            /* order of making: pushed in this order */
	struct sk_msg m;
	uint64_t serial;         /* the held Linux call waiting for the answer, or 0 */
} reqs[MAX_REQS];

bool engine_ready(void) { return e.udp && e.hello; }

static void on_req_attach(struct chan_export *x, endpoint_t importer)
{
	(void)x;
	if (importer == e.udp)
		return;
	ax_printf("syscall: udp %#x attached (was %#x)\n", (unsigned)importer, (unsigned)e.udp);
	if (e.udp)
		reqdb_abort_peer(&e.db, e.udp); /* each goes again after the hello (abort_req) */
	e.udp = importer;
	e.peer.ep = importer;
	e.hello = false;
	for (int i = 0; i < MAX_SOCKS; i++)
		socks[i].opened = false, socks[i].engine_handle = 0;
}

static void abort_req(void *ctx, uint64_t id)
{
	(void)id;
	struct ereq *r = ctx;
	r->id = 0; /* waits to be pushed to the next udp */
	struct sock *s = sock_find(r->m.sock);
	if (r->m.type == SK_CLOSE) { /* the udp that held it is gone: nobody maps it now */
		r->used = false;
		if (s && s->closing)
			sock_free(s);
	}
}

void engine_init(void)
{
	reqdb_init(&e.db, e.dbe, MAX_REQS);
	e.peer.bits = SYSCALL_WAKE_BIT;
	chan_axolotl_platform(&e.plat, &e.peer);
	e.req_ex = (struct chan_export){ .rights = KP_R | KP_W, .peer = "udp", .on_attach = on_req_attach };
	e.ev_ex = (struct chan_export){ .rights = KP_R | KP_W, .peer = "udp" };
	ax_strpad(e.req_ex.key, sizeof(e.req_ex.key), "udp.req");
	ax_strpad(e.ev_ex.key, sizeof(e.ev_ex.key), "udp.ev");
	int64_t r = chan_create(&e.req_ex, SK_SLOT, SK_SLOTS, SPSC_PRODUCER, &e.req);
	r = r ? r : chan_create(&e.ev_ex, SK_SLOT, SK_SLOTS, SPSC_CONSUMER, &e.ev);
	r = r ? r : chan_export(&e.req_ex);
	r = r ? r : chan_export(&e.ev_ex);
	if (r)
		ax_printf("syscall: exporting syscall/udp.req and udp.ev failed (%ld): no udp\n", (long)r);
}

void engine_message(struct kmsg *m) { chan_export_serve(m); }

void engine_request(struct sock *s, struct sk_msg *m, uint64_t serial)
{
	for (int i = 0; i < MAX_REQS; i++)
		if (!reqs[i].used) {
			m->sock = s->id;
			reqs[i] = (struct ereq){ true, 0, e.next_seq++, *m, serial };
			return;
		}
	ax_printf("syscall: too many requests to udp: dropped one\n");
	struct sk_msg a = { .type = SK_ANSWER, .flags = m->type, .sock = s->id, .result = -E_AGAIN };
	calls_answered(serial, &a);
}

/* Hints and requests that are not answered go straight onto the queue. */
static bool push(const struct sk_msg *m) { return spsc_push(&e.req, m) == 0; }

/* SK_OPEN of s for the current udp (a fresh grant), then its state replayed. */
static bool open_sock(struct sock *s)
{
	if (spsc_count(&e.req) > SK_SLOTS - 8)
		return false; /* room for the whole group, or none of it now */
	if (!s->engine_handle) {
		int64_t h = ax_mo_grant(s->mo, e.udp, KP_R | KP_W);
		if (h <= 0) {
			ax_printf("syscall: granting socket %u's buffers to udp: %ld\n", s->id, (long)h);
			return false;
		}
		s->engine_handle = h;
	}
	struct sk_msg m = { .type = SK_OPEN, .flags = SKF_DGRAM | (s->ever_opened ? SKF_REATTACH : 0),
			    .sock = s->id, .arg = (uint64_t)s->engine_handle, .arg2 = s->bytes };
	uint64_t id = reqdb_add(&e.db, e.udp, NULL, NULL);
	m.req = id;
	push(&m);
	if (s->ever_opened) { /* udp may not have this socket's record: tell it all again */
		struct sk_msg o = { .type = SK_SETOPT, .sock = s->id };
		uint64_t opts[][2] = { { SKO_BROADCAST, s->broadcast }, { SKO_REUSEADDR, s->reuseaddr },
				       { SKO_RCVBUF, (uint64_t)s->rcvbuf }, { SKO_SNDBUF, (uint64_t)s->sndbuf } };
		for (int i = 0; i < 4; i++)
			if (opts[i][1]) {
				o.arg = opts[i][0], o.arg2 = opts[i][1], o.req = reqdb_add(&e.db, e.udp, NULL, NULL);
				push(&o);
			}
		if (s->bound) {
			struct sk_msg b = { .type = SK_BIND, .sock = s->id, .family = AF_INET, .port = s->local.port };
			memcpy(b.addr, &s->local.addr, 4);
			b.req = reqdb_add(&e.db, e.udp, NULL, NULL);
			push(&b);
		}
		if (s->connected) {
			struct sk_msg b = { .type = SK_CONNECT, .sock = s->id, .family = AF_INET, .port = s->peer.port };
			memcpy(b.addr, &s->peer.addr, 4);
			b.req = reqdb_add(&e.db, e.udp, NULL, NULL);
			push(&b);
		}
		s->tx_hint = true; /* whatever the old udp left in TX */
		s->rx_hint = true;
	}
	s->opened = s->ever_opened = true;
	return true;
}

void engine_close(struct sock *s)
{
	/* Requests not yet pushed die with the socket (their calls were answered already). */
	for (int i = 0; i < MAX_REQS; i++)
		if (reqs[i].used && !reqs[i].id && reqs[i].m.sock == s->id)
			reqs[i].used = false;
	s->closing = true;
	if (!s->opened || !engine_ready()) {
		sock_free(s); /* no udp maps it (a restarted udp's ds record: see README) */
		return;
	}
	struct sk_msg m = { .type = SK_CLOSE, .sock = s->id };
	engine_request(s, &m, 0); /* freed when answered */
}

static struct ereq *oldest_waiting(void)
{
	struct ereq *best = NULL;
	for (int i = 0; i < MAX_REQS; i++)
		if (reqs[i].used && !reqs[i].id && (!best || reqs[i].seq < best->seq))
			best = &reqs[i];
	return best;
}

/* Pushes what waits; true if anything went. */
static bool push_requests(void)
{
	bool any = false;
	if (!engine_ready())
		return false;
	for (int i = 0; i < MAX_SOCKS; i++) {
		struct sock *s = &socks[i];
		if (s->id && !s->opened && !s->closing) {
			if (!open_sock(s))
				return any;
			any = true;
		}
	}
	for (struct ereq *r; (r = oldest_waiting());) {
		struct sock *s = sock_find(r->m.sock);
		if (!s || !s->opened) { /* its socket went, or a close for a udp that never had it */
			r->used = false;
			if (s && s->closing)
				sock_free(s);
			continue;
		}
		uint64_t id = reqdb_add(&e.db, e.udp, abort_req, r);
		if (!id)
			break;
		r->m.req = id;
		if (!push(&r->m)) {
			reqdb_take(&e.db, id);
			break;
		}
		r->id = id;
		any = true;
	}
	for (int i = 0; i < MAX_SOCKS; i++) {
		struct sock *s = &socks[i];
		if (s->id && s->opened && s->tx_hint) {
			struct sk_msg m = { .type = SK_TX, .sock = s->id };
			if (!push(&m))
				break;
			s->tx_hint = false, any = true;
		}
		if (s->id && s->opened && s->rx_hint) {
			struct sk_msg m = { .type = SK_RXDONE, .sock = s->id };
			if (!push(&m))
				break;
			s->rx_hint = false, any = true;
		}
	}
	return any;
}

static void answered(const struct sk_msg *a)
{
	const struct reqdb_entry *x = reqdb_take(&e.db, a->req);
	if (!x) {
		e.bad++; /* late (from a dead udp's request) or forged */
		return;
	}
	struct ereq *r = x->ctx;
	if (!r) { /* our own: an open or a replay */
		if (a->result < 0)
			ax_printf("syscall: udp refused socket %u's open or restore: %ld\n", a->sock, (long)a->result);
		return;
	}
	r->used = false;
	struct sock *s = sock_find(r->m.sock);
	if (r->m.type == SK_CLOSE && s && s->closing)
		sock_free(s);
	else
		calls_answered(r->serial, &(struct sk_msg){ .type = SK_ANSWER, .flags = r->m.type, .sock = r->m.sock,
							    .result = a->result, .family = a->family, .port = a->port,
							    .addr = { a->addr[0], a->addr[1], a->addr[2], a->addr[3] } });
}

static void event(const struct sk_msg *m)
{
	struct sock *s = sock_find(m->sock);
	if (!s) {
		e.bad++;
		return;
	}
	if ((m->arg & EV_ERR) && m->result < 0 && m->result > -4096)
		s->error = (int32_t)-m->result;
	calls_retry(s->id);
}

bool engine_poll(void)
{
	bool any = push_requests();
	if (any)
		chan_kick(&e.req, &e.plat);
	struct sk_msg m;
	for (int n = 0; n < 256; n++) {
		int r = spsc_pop(&e.ev, &m); /* a private copy: check it before use */
		if (r == CHAN_EAGAIN)
			break;
		if (r < 0) {
			ax_printf("syscall: syscall/udp.ev is corrupt (%d): waiting for a new udp\n", r);
			e.hello = false;
			break;
		}
		any = true;
		if (sys_debug)
			ax_printf("syscall: from udp: type %u sock %u req %#lx result %ld arg %#lx\n", m.type, m.sock,
				  (unsigned long)m.req, (long)m.result, (unsigned long)m.arg);
		if (m.type == SK_ANSWER)
			answered(&m);
		else if (m.type == SK_EV)
			event(&m);
		else if (m.type == SK_HELLO && e.udp) {
			ax_printf("syscall: udp says hello (incarnation %lu)\n", (unsigned long)m.arg);
			if (e.hello) { /* the same importer again (it restarted within our notice) */
				reqdb_abort_peer(&e.db, e.udp);
				for (int i = 0; i < MAX_SOCKS; i++)
					socks[i].opened = false, socks[i].engine_handle = 0;
			}
			e.hello = true;
		} else
			e.bad++;
	}
	return any;
}

bool engine_may_sleep(void)
{
	atomic_store_explicit(&e.ev.sh->sleeping, 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);
	if (spsc_count(&e.ev) != 0) {
		atomic_store_explicit(&e.ev.sh->sleeping, 0, memory_order_relaxed);
		return false;
	}
	return true;
}
