/* Sockets before the network stack: IPv4 and IPv6 sockets with Linux's semantics on a host
 * that has no network interface up yet. socket, bind (the wildcard and loopback addresses;
 * LX_EADDRINUSE between our own sockets; port 0 picks an ephemeral port), listen,
 * getsockname, setsockopt/getsockopt (stored and returned) behave as on Linux; accept and
 * datagram receives wait (or EAGAIN) because no packet can arrive; connect and sends fail as
 * they do with no route (ENETUNREACH, ECONNREFUSED on loopback, EPIPE on an unconnected
 * stream). So servers start and sit in their event loops. The network stack takes these
 * descriptors over: when the system has a `syscall` service (running, or down until rs
 * restarts it), an LX_AF_INET socket is passed: vfs keeps its descriptor and hands every
 * call on it to `syscall` with KC_LX_PASS (waiting while syscall is down)
 * (lib/net/syscall_proto.h), which answers the application itself
 * (docs/decisions.md). */
#include "vfs.h"
#include "lx_abi.h"
#include "heap.h"
#include "service.h"
#include "syscall_proto.h"
#include "chan_name.h"
#include "spsc.h"

#include "unix.h"

#define MAX_OPTS 16
#define MAX_SOCKS 1024

struct vsock {
	int family, type, proto;
	struct usock *un; /* AF_UNIX: the socket (unix.c) */
	uint32_t passed;  /* syscall's socket: the id its calls carry (0: served here) */
	bool introduced;  /* syscall has had a call on it (it made the socket then) */
	bool ready_known; /* syscall told its readiness: `ready` (POLL* bits) */
	uint32_t ready;
	struct rnode *node;
	bool bound, listening;
	uint8_t addr[28]; /* sockaddr_in or sockaddr_in6, port in network order at 2 */
	struct { int32_t level, name; uint32_t len; uint8_t val[16]; } opt[MAX_OPTS];
};

static VFS_KEPT struct vsock *socks[MAX_SOCKS]; /* every socket, for address conflicts */
/* Slots are taken lowest first; the scans stop at socks_top, one past the highest taken. */
static VFS_KEPT int socks_top;

static void sock_slot_set(int slot, struct vsock *s)
{
	socks[slot] = s;
	if (s && slot >= socks_top)
		socks_top = slot + 1;
	while (socks_top > 0 && !socks[socks_top - 1])
		socks_top--;
}
static VFS_KEPT uint16_t next_port; /* set by sock_init */

/* The sockets passed to syscall. */
static endpoint_t syscall_ep;  /* 0: not looked up, or none running */
static VFS_KEPT uint32_t next_passed_id;
#define MAX_CLOSES 64
/* What syscall has not heard yet: closed passed sockets (SYSCALL_CLOSE), processes that
 * exec'd (SYSCALL_EXEC); sent newest first, all before the next passed call */
static struct notice {
	uint32_t type;
	uint64_t w0;
} closes[MAX_CLOSES] VFS_KEPT;
static VFS_KEPT int nclose;

/* syscall/vfs.ev: readiness records from syscall (imported when we first find syscall). */
static struct chan_import ready_imp;
static struct spsc ready_q;
static bool ready_ok;
/* Records for sockets we do not know yet (an accepted one whose call is on its way). */
#define ORPHANS 64
static struct sysp_ready orphans[ORPHANS];
static unsigned next_orphan;

static void import_ready(void)
{
	if (ready_ok) {
		chan_unimport(&ready_imp);
		ready_ok = false;
	}
	if (chan_import("syscall", "vfs.ev", &ready_imp) == 0) {
		ready_ok = spsc_attach(&ready_q, ready_imp.va, ready_imp.bytes, SPSC_CONSUMER) == 0;
		if (!ready_ok)
			chan_unimport(&ready_imp);
	}
}

#define SYSCALL_GONE_NS 15000000000ull /* longer than rs's longest back-off (10 s) */
static bool syscall_awaited; /* a call was held because syscall was gone */
static bool syscall_gone_told; /* said so once; again after syscall came back */

static endpoint_t find_syscall(void)
{
	if (!syscall_ep) {
		int64_t ep = ax_svc_lookup("syscall", NULL);
		syscall_ep = ep > 0 ? (endpoint_t)ep : 0;
		if (syscall_ep) {
			import_ready();
			syscall_gone_told = false;
		}
	}
	return syscall_ep;
}

/* Whether ep is syscall: the one we know, or a new one (it restarted, or we did and have not
 * looked it up yet). */
static bool from_syscall(endpoint_t ep)
{
	if (ep && ep == find_syscall())
		return true;
	syscall_ep = 0;
	return ep && ep == find_syscall();
}

/* Whether a service is part of this system: running, or configured and down now (crashed and
 * waiting for rs's restart, or stopped). A socket made while the stack is down is the
 * stack's all the same: its calls wait for syscall (pass_args), as they do for a socket
 * made before; made here, it would never reach the network. */
static bool configured(const char *name)
{
	int64_t r = ax_svc_lookup(name, NULL);
	return r > 0 || r == -KE_AGAIN;
}

static struct vsock *passed_sock(uint32_t id)
{
	for (int i = 0; id && i < socks_top; i++)
		if (socks[i] && socks[i]->passed == id)
			return socks[i];
	return NULL;
}

static void set_ready(struct vsock *s, uint32_t bits)
{
	s->ready = bits, s->ready_known = true;
	if (s->node)
		s->node->events++; /* epoll's edge-triggered registrations see a change */
}

void sock_ready_input(void)
{
	if (sock_ready_drain())
		vfs_kick();
}

/* syscall exports vfs.ev as it starts; on a slow boot we can find syscall (rs knows it)
 * before ds has the channel, and the import fails. Without the channel vfs never hears a
 * socket's readiness: a listening one then polls as an unconnected stream, LX_POLLHUP, and
 * lighttpd spun on it (a one-vCPU -icount boot). So the import is tried again, at most
 * every 5 ms, whenever the channel is missing and we drain it: when syscall rings us (it
 * pushed records) and when a socket whose readiness we never heard is polled. */
static void import_ready_again(void)
{
	static uint64_t last_ns;
	if (ready_ok || !syscall_ep)
		return;
	uint64_t now = ax_time_ns();
	if (now - last_ns < 5000000ull)
		return;
	last_ns = now;
	import_ready();
	if (ready_ok)
		ax_printf("vfs: syscall/vfs.ev imported late: socket readiness flows now\n");
}

bool sock_ready_drain(void)
{
	struct sysp_ready r;
	bool any = false;
	import_ready_again();
	for (int n = 0; ready_ok && n < SYSP_READY_SLOTS; n++) {
		int e = spsc_pop(&ready_q, &r);
		if (e == CHAN_EAGAIN)
			break;
		if (e < 0) {
			ax_printf("vfs: syscall/vfs.ev is corrupt (%d): importing it again\n", e);
			import_ready();
			break;
		}
		struct vsock *s = passed_sock(r.id);
		if (s)
			set_ready(s, r.bits);
		else
			orphans[next_orphan++ % ORPHANS] = r;
		any = true;
	}
	return any;
}

static uint32_t new_passed_id(void)
{
	uint32_t id = next_passed_id++;
	next_passed_id += !next_passed_id; /* never 0 */
	return id;
}

/* Hands the call being served to syscall with the socket id in place of the descriptor
 * (and args in place of its arguments, if given). */
static void flush_one_blocking(void);

static int64_t pass_args(struct ofile *f, struct vsock *s, const uint64_t *args)
{
	struct vcall *v = vfs_cur_call;
	/* closes go first: a bind after a close must find the port free */
	while (nclose)
		flush_one_blocking();
	struct kmsg m = { .type = v->nr };
	memcpy(m.w, args ? args : v->a, sizeof(v->a));
	uint32_t flags = (f->flags & LX_O_NONBLOCK ? SYSP_NONBLOCK : 0) | (s->introduced ? 0 : SYSP_NEW) |
			 (s->type == LX_SOCK_STREAM ? SYSP_STREAM : 0);
	m.w[0] = s->passed | (uint64_t)flags << 32;
	if (v->nr == LX_SYS_accept || v->nr == LX_SYS_accept4) /* the accepted socket's id */
		m.w[4] = new_passed_id();
	for (int tries = 0; tries < 2; tries++) {
		endpoint_t ep = find_syscall();
		if (!ep)
			break;
		int64_t r = kcall6(KC_LX_PASS, v->thread, ep, (uint64_t)&m, 0, 0, 0);
		if (r == 0) {
			s->introduced = true;
			return VFS_PASSED;
		}
		if (r != -KE_DEADSRCDST)
			return -LX_EINVAL;
		syscall_ep = 0; /* restarted? look again */
	}
	/* syscall is gone: a restart brings it back (with every socket: it keeps them) within
	 * rs's back-off, so the call waits for it, as the kernel makes a call wait for a
	 * restarting server; ENETDOWN only when none came for SYSCALL_GONE_NS. */
	uint64_t now = ax_time_ns();
	if (!v->syscall_gone_at)
		v->syscall_gone_at = now;
	if (!syscall_gone_told) {
		ax_printf("vfs: syscall is not running: socket calls wait for it (ENETDOWN after %llu s)\n",
			  (unsigned long long)(SYSCALL_GONE_NS / 1000000000ull));
		syscall_gone_told = true;
	}
	if (now - v->syscall_gone_at < SYSCALL_GONE_NS) {
		syscall_awaited = true;
		return VFS_BLOCK;
	}
	return -100; /* ENETDOWN: the socket's server is gone, and its sockets with it */
}

bool sock_syscall_awaited(void)
{
	bool w = syscall_awaited;
	syscall_awaited = false;
	return w;
}

static int64_t pass(struct ofile *f, struct vsock *s) { return pass_args(f, s, NULL); }
static struct vsock *sock_of(const struct ofile *f);
static void close_passed(uint32_t id);

/* sendfile's staging: the in file's bytes, read here, which syscall copies from our memory
 * into the socket; freed when syscall passes the call back. */
struct stage {
	struct ofile *in;      /* held (a reference) until then */
	bool inherited;        /* a predecessor's: syscall may never pass its call back to us */
	uint64_t bytes;
	unsigned char data[];
};
#define MAX_STAGES 32
static VFS_KEPT struct stage *stages[MAX_STAGES];

static void stage_free(int slot)
{
	vfs_put(stages[slot]->in);
	ax_free(stages[slot]);
	stages[slot] = NULL;
}

/* A free staging slot, or -1. A predecessor's stagings go when none is free: their calls
 * were passed to syscall before a restart and may never come back. */
static int stage_slot(void)
{
	for (int i = 0; i < MAX_STAGES; i++)
		if (!stages[i])
			return i;
	int slot = -1;
	for (int i = 0; i < MAX_STAGES; i++)
		if (stages[i]->inherited)
			stage_free(i), slot = i;
	return slot;
}

void sock_init(bool adopted)
{
	if (!adopted) {
		next_port = 32768, next_passed_id = 1;
		return;
	}
	for (int i = 0; i < MAX_STAGES; i++)
		if (stages[i])
			stages[i]->inherited = true;
	/* The readiness we kept may be stale (it changed while no vfs listened): import
	 * syscall's channel now, and syscall, seeing a new importer, tells every socket's
	 * readiness again. Waiting for the next passed call would leave an epoll_wait on a
	 * listening socket asleep for good (lighttpd did not accept after a rolled-back update). */
	find_syscall();
}

int64_t sock_sendfile(struct client *c, struct ofile *out, struct ofile *in)
{
	const uint64_t *a = vfs_cur_call->a;
	struct vsock *s = sock_of(out);
	if (!in)
		return -LX_EBADF;
	if (!s || !s->passed || vfs_kind(in->node) != LX_S_IFREG || (in->flags & 3) == 1 /* LX_O_WRONLY */)
		return -LX_EINVAL; /* only a regular file into a network socket */
	uint64_t off = in->off;
	if (a[2] && ax_vcopy(c->ep, (const void *)a[2], EP_NONE, &off, 8) < 0)
		return -LX_EFAULT;
	if ((int64_t)off < 0)
		return -LX_EINVAL;
	uint64_t count = a[3] < SYSP_SENDFILE_MAX ? a[3] : SYSP_SENDFILE_MAX;
	if (off >= in->node->size || !count)
		return 0;
	int slot = stage_slot();
	struct stage *st = slot < 0 ? NULL : ax_malloc(sizeof(*st) + count);
	if (!st)
		return -LX_EAGAIN; /* many sendfiles at once: the caller tries again */
	int64_t n = ramfs_read(in->node, off, st->data, count);
	if (n <= 0) {
		ax_free(st);
		return n;
	}
	st->in = in, st->bytes = (uint64_t)n, st->inherited = false;
	in->refs++;
	stages[slot] = st;
	uint64_t args[6] = { a[0], (uint64_t)st->data, (uint64_t)n, a[2], off, 0 };
	int64_t r = pass_args(out, s, args);
	if (r != VFS_PASSED)
		stage_free(slot);
	return r;
}

/* sendfile back from syscall: w[0] = result, w[1] = the staged bytes, w[2] = advance. */
static void sendfile_back(struct kmsg *m)
{
	for (int i = 0; i < MAX_STAGES; i++) {
		struct stage *st = stages[i];
		if (!st || (uint64_t)st->data != m->w[1])
			continue;
		int64_t r = (int64_t)m->w[0];
		if (r > (int64_t)st->bytes)
			r = -LX_EINVAL; /* impossible: syscall took more than it was given */
		if (m->w[2] && r > 0)
			st->in->off += (uint64_t)r;
		stage_free(i);
		vfs_answer(m->source, r);
		return;
	}
	vfs_answer(m->source, -LX_EINVAL); /* no such staging: nothing to free */
}

/* accept back from syscall: w[0] = the new socket's id (the one we gave), w[1] = accept4's
 * flags, w[2] = its readiness now. */
static void accept_back(struct kmsg *m)
{
	uint32_t id = (uint32_t)m->w[0];
	uint64_t flags = m->w[1];
	struct client *c = vfs_client(m->w[6] & 0xffffffffu, false);
	struct vsock *s = c && id && !passed_sock(id) ? ax_calloc(1, sizeof(*s)) : NULL;
	int slot = -1;
	for (int i = 0; s && i < MAX_SOCKS && slot < 0; i++)
		if (!socks[i])
			slot = i;
	if (!s || slot < 0) {
		ax_free(s);
		if (id)
			close_passed(id);
		vfs_answer(m->source, slot < 0 && s ? -24 /* EMFILE */ : -LX_ENOMEM);
		return;
	}
	*s = (struct vsock){ .family = LX_AF_INET, .type = LX_SOCK_STREAM, .proto = 6, .passed = id, .introduced = true,
			     .bound = true, .ready = (uint32_t)m->w[2], .ready_known = true };
	s->addr[0] = LX_AF_INET;
	sock_slot_set(slot, s);
	c->ep = m->source;
	int64_t fd = vfs_anon_fd(c, ANON_SOCKET, s, LX_O_RDWR | (uint32_t)(flags & LX_SOCK_NONBLOCK), flags & LX_SOCK_CLOEXEC, &s->node);
	if (fd < 0) {
		sock_slot_set(slot, NULL); /* closed (syscall told) and freed already */
	} else {
		for (unsigned i = 0; i < ORPHANS; i++) /* readiness that came before this call */
			if (orphans[(next_orphan + i) % ORPHANS].id == id)
				set_ready(s, orphans[(next_orphan + i) % ORPHANS].bits);
	}
	vfs_answer(m->source, fd);
}

void sock_passed_back(struct kmsg *m)
{
	if (!from_syscall((endpoint_t)(m->w[6] >> 32))) {
		vfs_answer(m->source, -LX_EINVAL); /* only syscall passes calls back to us */
		return;
	}
	uint32_t nr = m->type & 0x3ffu;
	if (nr == LX_SYS_accept4)
		accept_back(m);
	else if (nr == LX_SYS_sendfile)
		sendfile_back(m);
	else
		vfs_answer(m->source, -LX_EINVAL);
}

/* A passed socket whose descriptor is gone or never came: syscall forgets it. */
/* The oldest queued close, sent with a blocking send: syscall takes it within a few of its
 * busy turns (it looks for queued IPC every 16), and never waits for us, so this cannot
 * deadlock. Used only when the queue is full: dropping the close would leak the socket. */
static void flush_one_blocking(void)
{
	struct kmsg m = { .type = closes[nclose - 1].type, .w = { closes[nclose - 1].w0 } };
	endpoint_t ep = find_syscall();
	int64_t r = ep ? ax_send(ep, &m) : -KE_DEADSRCDST;
	if (r == -KE_DEADSRCDST)
		syscall_ep = 0; /* gone: its sockets went with it */
	else if (r < 0)
		ax_printf("vfs: telling syscall of a closed socket: %ld\n", (long)r);
	nclose--;
}

static void tell_syscall(uint32_t type, uint64_t w0)
{
	if (nclose == MAX_CLOSES)
		sock_flush_closes();
	if (nclose == MAX_CLOSES)
		flush_one_blocking(); /* syscall is busy (a close storm): wait for it */
	closes[nclose++] = (struct notice){ type, w0 };
	sock_flush_closes();
}

static void close_passed(uint32_t id)
{
	tell_syscall(SYSCALL_CLOSE, id);
}

void sock_exec_done(uint64_t pid)
{
	if (syscall_ep) /* (no syscall has seen a call of ours: it knows nothing of pid) */
		tell_syscall(SYSCALL_EXEC, pid);
}

bool sock_flush_closes(void)
{
	while (nclose) {
		struct kmsg m = { .type = closes[nclose - 1].type, .w = { closes[nclose - 1].w0 } };
		endpoint_t ep = find_syscall();
		int64_t r = ep ? ax_sendnb(ep, &m) : -KE_DEADSRCDST;
		if (r == -KE_AGAIN) {
			ax_notify(ep, SYSCALL_VFS_BIT); /* be in receive next time */
			return true; /* busy: again from the loop */
		}
		if (r < 0 && r != -KE_DEADSRCDST)
			ax_printf("vfs: telling syscall of a closed socket: %ld\n", (long)r);
		if (r == -KE_DEADSRCDST)
			syscall_ep = 0; /* gone: its sockets went with it */
		nclose--;
	}
	return false;
}

static struct vsock *sock_of(const struct ofile *f)
{
	return f && vfs_kind(f->node) == S_IFANON_ && f->node->dev == ANON_SOCKET ? f->node->priv : NULL;
}

static size_t addr_len(int family) { return family == LX_AF_INET ? 16 : 28; }
static uint16_t port_of(const struct vsock *s) { return (uint16_t)(s->addr[2] << 8 | s->addr[3]); }

int64_t sock_unix_fd(struct client *c, struct usock *u, uint64_t flags)
{
	struct vsock *s = ax_calloc(1, sizeof(*s));
	if (!s)
		return -LX_ENOMEM;
	s->family = LX_AF_UNIX, s->type = 0, s->proto = 0;
	/* u joins only once the descriptor exists: a failure frees s alone */
	int64_t fd = vfs_anon_fd(c, ANON_SOCKET, s, LX_O_RDWR | (uint32_t)(flags & LX_SOCK_NONBLOCK), flags & LX_SOCK_CLOEXEC, &s->node);
	if (fd < 0)
		return fd;
	s->un = u;
	s->type = unix_sock_type(u);
	unix_attach(u, s->node);
	return fd;
}

static int64_t unix_socket(struct client *c, uint64_t type, uint64_t proto)
{
	int base = (int)(type & 0xf);
	if (type & ~(uint64_t)(0xf | LX_SOCK_NONBLOCK | LX_SOCK_CLOEXEC))
		return -LX_EINVAL;
	if (!unix_type_ok(base))
		return -LX_ESOCKTNOSUPPORT;
	if (proto)
		return -LX_EPROTONOSUPPORT;
	struct usock *u = unix_new(base);
	if (!u)
		return -LX_ENOMEM;
	int64_t fd = sock_unix_fd(c, u, type);
	if (fd < 0)
		unix_closed(u);
	return fd;
}

static int64_t sock_create(struct client *c, uint64_t family, uint64_t type, uint64_t proto)
{
	int base = (int)(type & 0xf);
	if (family == LX_AF_UNIX)
		return unix_socket(c, type, proto);
	if (family != LX_AF_INET && family != LX_AF_INET6)
		return -LX_EAFNOSUPPORT; /* the rest are not offered */
	if (type & ~(uint64_t)(0xf | LX_SOCK_NONBLOCK | LX_SOCK_CLOEXEC))
		return -LX_EINVAL;
	if (base != LX_SOCK_STREAM && base != LX_SOCK_DGRAM)
		return -LX_ESOCKTNOSUPPORT;
	if (proto && proto != (base == LX_SOCK_STREAM ? 6u : 17u))
		return -LX_EPROTONOSUPPORT; /* TCP for a datagram socket or UDP for a stream: as Linux */
	int slot = -1;
	for (int i = 0; i < MAX_SOCKS && slot < 0; i++)
		if (!socks[i])
			slot = i;
	if (slot < 0)
		return -24; /* EMFILE: every socket slot taken */
	struct vsock *s = ax_calloc(1, sizeof(*s));
	if (!s)
		return -LX_ENOMEM;
	s->family = (int)family, s->type = base, s->proto = base == LX_SOCK_STREAM ? 6 : 17;
	s->addr[0] = (uint8_t)family;
	if (family == LX_AF_INET && configured("syscall") && (base == LX_SOCK_DGRAM || configured("tcp")))
		s->passed = new_passed_id();
	sock_slot_set(slot, s);
	int64_t fd = vfs_anon_fd(c, ANON_SOCKET, s, LX_O_RDWR | (uint32_t)(type & LX_SOCK_NONBLOCK), type & LX_SOCK_CLOEXEC, &s->node);
	if (fd < 0)
		sock_slot_set(slot, NULL); /* freed already */
	return fd;
}

void sock_closed(struct rnode *n)
{
	const struct vsock *s = n->priv;
	if (s && s->passed)
		close_passed(s->passed);
	if (s && s->un)
		unix_closed(s->un);
	for (int i = 0; i < socks_top; i++)
		if (socks[i] == n->priv)
			sock_slot_set(i, NULL);
	ax_free(n->priv);
	n->priv = NULL;
}

/* Reads a sockaddr of the socket's family: 0, or -EFAULT, -EINVAL, -EAFNOSUPPORT. */
static int64_t get_addr(struct client *c, const struct vsock *s, uint64_t uaddr, uint64_t len, uint8_t out[28])
{
	if (len < 2 || len > 128)
		return -LX_EINVAL;
	memset(out, 0, 28);
	if (ax_vcopy(c->ep, (const void *)uaddr, EP_NONE, out, len < 28 ? len : 28) < 0)
		return -LX_EFAULT;
	if (out[0] != s->family || out[1])
		return -LX_EAFNOSUPPORT;
	return len < addr_len(s->family) ? -LX_EINVAL : 0;
}

static bool is_any(const struct vsock *s, const uint8_t *a)
{
	for (size_t i = s->family == LX_AF_INET ? 4 : 8; i < (s->family == LX_AF_INET ? 8u : 24u); i++)
		if (a[i])
			return false;
	return true;
}

static bool is_loopback(const struct vsock *s, const uint8_t *a)
{
	if (s->family == LX_AF_INET)
		return a[4] == 127;
	for (int i = 8; i < 23; i++)
		if (a[i])
			return false;
	return a[23] == 1;
}

static bool port_taken(const struct vsock *s, uint16_t port, bool reuse)
{
	for (int i = 0; i < socks_top; i++) {
		const struct vsock *o = socks[i];
		if (o && o != s && o->bound && o->type == s->type && port_of(o) == port && !reuse)
			return true;
	}
	return false;
}

static const uint8_t *opt_get(const struct vsock *s, int level, int name, uint32_t *len)
{
	for (int i = 0; i < MAX_OPTS; i++)
		if (s->opt[i].len && s->opt[i].level == level && s->opt[i].name == name) {
			*len = s->opt[i].len;
			return s->opt[i].val;
		}
	return NULL;
}

static bool opt_flag(const struct vsock *s, int level, int name)
{
	uint32_t len;
	const uint8_t *v = opt_get(s, level, name, &len);
	return v && (v[0] | v[1] | v[2] | v[3]);
}

static int64_t bind_to(struct client *c, struct vsock *s, uint64_t uaddr, uint64_t len)
{
	uint8_t a[28];
	int64_t r = get_addr(c, s, uaddr, len, a);
	if (r)
		return r;
	if (s->bound)
		return -LX_EINVAL;
	if (!is_any(s, a) && !is_loopback(s, a))
		return -LX_EADDRNOTAVAIL; /* no interface has that address */
	uint16_t port = (uint16_t)(a[2] << 8 | a[3]);
	bool reuse = opt_flag(s, LX_SOL_SOCKET, LX_SO_REUSEPORT);
	if (!port) {
		for (int tries = 0; tries < 28232 && (!port || port_taken(s, port, false)); tries++) {
			port = next_port;
			next_port = next_port >= 60999 ? 32768 : next_port + 1;
		}
		a[2] = (uint8_t)(port >> 8), a[3] = (uint8_t)port;
	} else if (port_taken(s, port, reuse)) {
		return -LX_EADDRINUSE;
	}
	memcpy(s->addr, a, sizeof(a));
	s->bound = true;
	return 0;
}

/* Writes a sockaddr and its length the Linux way (truncated to the caller's buffer). */
static int64_t put_addr(struct client *c, const struct vsock *s, const uint8_t *a, uint64_t uaddr, uint64_t ulen)
{
	return vfs_put_sized(c, a, (uint32_t)addr_len(s->family), uaddr, ulen, true);
}

static int64_t setopt(struct client *c, struct vsock *s, int level, int name, uint64_t uval, uint64_t len)
{
	static const int32_t known[][2] = {
		{ LX_SOL_SOCKET, LX_SO_REUSEADDR }, { LX_SOL_SOCKET, 6 /* BROADCAST */ }, { LX_SOL_SOCKET, 7 /* SNDBUF */ },
		{ LX_SOL_SOCKET, 8 /* RCVBUF */ }, { LX_SOL_SOCKET, 9 /* KEEPALIVE */ }, { LX_SOL_SOCKET, 13 /* LINGER */ },
		{ LX_SOL_SOCKET, LX_SO_REUSEPORT }, { LX_SOL_SOCKET, 16 /* PASSCRED */ }, { LX_SOL_SOCKET, 20 /* RCVTIMEO */ }, { LX_SOL_SOCKET, 21 /* SNDTIMEO */ },
		{ 6, 1 /* TCP_NODELAY */ }, { 6, 2 /* MAXSEG */ }, { 6, 3 /* CORK */ }, { 6, 4 /* KEEPIDLE */ },
		{ 6, 5 /* KEEPINTVL */ }, { 6, 6 /* KEEPCNT */ }, { 6, 9 /* DEFER_ACCEPT */ }, { 6, 12 /* QUICKACK */ },
		{ 6, 13 /* CONGESTION */ }, { 6, 23 /* FASTOPEN */ }, { 0, 1 /* IP_TOS */ }, { 0, 2 /* IP_TTL */ },
		{ 41, 26 /* IPV6_V6ONLY */ }, { 17, 1 /* UDP_CORK */ },
	};
	bool ok = false;
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]) && !ok; i++)
		ok = known[i][0] == level && known[i][1] == name;
	if (!ok)
		return -LX_ENOPROTOOPT;
	if (len < 4 || len > 1024)
		return -LX_EINVAL;
	int slot = -1;
	for (int i = 0; i < MAX_OPTS && slot < 0; i++)
		if (!s->opt[i].len || (s->opt[i].level == level && s->opt[i].name == name))
			slot = i;
	if (slot < 0)
		return -LX_ENOMEM;
	uint8_t v[16] = { 0 };
	if (ax_vcopy(c->ep, (const void *)uval, EP_NONE, v, len < 16 ? len : 16) < 0)
		return -LX_EFAULT;
	s->opt[slot].level = level, s->opt[slot].name = name;
	s->opt[slot].len = len < 16 ? (uint32_t)len : 16;
	memcpy(s->opt[slot].val, v, sizeof(v));
	return 0;
}

static int64_t getopt(struct client *c, struct vsock *s, int level, int name, uint64_t uval, uint64_t ulen)
{
	int32_t ival = 0;
	uint32_t len = 4;
	const uint8_t *v = (const uint8_t *)&ival;
	if (level == LX_SOL_SOCKET && name == LX_SO_TYPE)
		ival = s->type;
	else if (level == LX_SOL_SOCKET && name == LX_SO_ERROR)
		ival = 0;
	else if (level == LX_SOL_SOCKET && name == LX_SO_DOMAIN)
		ival = s->family;
	else if (level == LX_SOL_SOCKET && name == LX_SO_PROTOCOL)
		ival = s->proto;
	else if (level == LX_SOL_SOCKET && name == LX_SO_ACCEPTCONN)
		ival = s->listening;
	else if (level == LX_SOL_SOCKET && (name == 7 || name == 8))
		ival = 212992; /* Linux's default buffer sizes */
	else if (!(v = opt_get(s, level, name, &len))) {
		if (setopt(c, s, level, name, 0, 0) == -LX_ENOPROTOOPT)
			return -LX_ENOPROTOOPT;
		v = (const uint8_t *)&ival, len = 4; /* a known option never set: 0 */
	}
	return vfs_put_sized(c, v, len, uval, ulen, false);
}

/* A receive or accept: nothing can arrive without a network, so wait or EAGAIN. */
static int64_t nothing_arrives(const struct ofile *f, uint64_t msg_flags)
{
	return (f->flags & LX_O_NONBLOCK) || (msg_flags & LX_MSG_DONTWAIT) ? -LX_EAGAIN : VFS_BLOCK;
}

int64_t sock_vector(struct client *c, struct ofile *f, uint64_t iov, uint64_t cnt, bool write)
{
	struct vsock *s = sock_of(f);
	return s && s->un ? unix_vector(c, f, s->un, iov, cnt, write) : VFS_NOT_MINE;
}

int64_t sock_transfer(struct client *c, struct ofile *f, uint64_t ubuf, uint64_t len, bool write)
{
	struct vsock *s = sock_of(f);
	if (s->un)
		return unix_transfer(c, f, s->un, ubuf, len, write);
	if (s->passed) { /* read, write, readv, writev go to syscall whole */
		uint32_t nr = vfs_cur_call ? vfs_cur_call->nr : ~0u;
		return nr <= 1 || nr == LX_SYS_readv || nr == LX_SYS_writev ? pass(f, s) : -29 /* ESPIPE: pread, pwrite */;
	}
	if (s->type == LX_SOCK_STREAM)
		return write ? -LX_EPIPE : -LX_ENOTCONN;
	return write ? -LX_EDESTADDRREQ : nothing_arrives(f, 0);
}

uint32_t sock_poll(const struct ofile *f)
{
	const struct vsock *s = sock_of(f);
	if (s->un)
		return unix_poll(s->un);
	if (s->passed && !s->ready_known)
		sock_ready_drain(); /* (imports the channel first if it was missing) */
	if (s->passed && s->ready_known)
		return s->ready;
	if (s->passed && s->type == LX_SOCK_DGRAM)
		return LX_POLLOUT | LX_POLLWRNORM; /* until syscall says more */
	if (s->listening)
		return 0;
	/* An unconnected stream socket is writable and hung up, as Linux reports it; a
	 * datagram socket can always take a send. */
	return s->type == LX_SOCK_STREAM ? LX_POLLOUT | LX_POLLWRNORM | LX_POLLHUP : LX_POLLOUT | LX_POLLWRNORM;
}

int64_t sock_call(struct client *c, struct vcall *v)
{
	const uint64_t *a = v->a;
	if (v->nr == LX_SYS_socket)
		return sock_create(c, a[0], a[1], a[2]);
	if (v->nr == LX_SYS_socketpair)
		return a[0] == LX_AF_UNIX ? unix_pair(c, a[1], a[3]) /* (protocol 0 or PF_UNIX: ignored, as Linux) */
		       : a[0] == LX_AF_INET || a[0] == LX_AF_INET6 ? -LX_EOPNOTSUPP : -LX_EAFNOSUPPORT;
	switch (v->nr) {
	case LX_SYS_connect: case LX_SYS_accept: case LX_SYS_sendto: case LX_SYS_recvfrom: case LX_SYS_sendmsg:
	case LX_SYS_recvmsg: case LX_SYS_shutdown: case LX_SYS_bind: case LX_SYS_listen: case LX_SYS_getsockname:
	case LX_SYS_getpeername: case LX_SYS_setsockopt: case LX_SYS_getsockopt: case LX_SYS_accept4:
	case LX_SYS_recvmmsg: case LX_SYS_sendmmsg:
		break;
	default:
		return VFS_NOT_MINE;
	}
	struct ofile *f = vfs_file(c, a[0]);
	struct vsock *s = sock_of(f);
	if (!f)
		return -LX_EBADF;
	if (!s)
		return -LX_ENOTSOCK;
	if (s->passed)
		return pass(f, s);
	if (s->un) {
		int64_t r = unix_call(c, v, f, s->un);
		if (r != VFS_NOT_MINE)
			return r;
		if (v->nr != LX_SYS_setsockopt && v->nr != LX_SYS_getsockopt)
			return -LX_EOPNOTSUPP;
	}
	uint8_t addr[28];
	int64_t r;
	switch (v->nr) {
	case LX_SYS_bind:
		return bind_to(c, s, a[1], a[2]);
	case LX_SYS_listen:
		if (s->type != LX_SOCK_STREAM)
			return -LX_EOPNOTSUPP;
		if (!s->bound) { /* listen without bind: an ephemeral port on every address */
			uint8_t any[28] = { (uint8_t)s->family };
			memcpy(s->addr, any, sizeof(any));
			uint16_t port = next_port++;
			s->addr[2] = (uint8_t)(port >> 8), s->addr[3] = (uint8_t)port;
			s->bound = true;
		}
		s->listening = true;
		return 0;
	case LX_SYS_accept:
	case LX_SYS_accept4:
		if (!s->listening)
			return -LX_EINVAL;
		if (v->nr == LX_SYS_accept4 && (a[3] & ~(uint64_t)(LX_SOCK_NONBLOCK | LX_SOCK_CLOEXEC)))
			return -LX_EINVAL;
		return nothing_arrives(f, 0);
	case LX_SYS_connect:
		if ((r = get_addr(c, s, a[1], a[2], addr)))
			return r;
		if (s->listening)
			return -LX_EISCONN;
		return is_loopback(s, addr) ? -LX_ECONNREFUSED : -LX_ENETUNREACH;
	case LX_SYS_sendto:
	case LX_SYS_sendmsg:
	case LX_SYS_sendmmsg:
		if (s->type == LX_SOCK_STREAM)
			return -LX_EPIPE;
		if (v->nr == LX_SYS_sendto && a[4]) {
			if ((r = get_addr(c, s, a[4], a[5], addr)))
				return r;
			return -LX_ENETUNREACH;
		}
		return v->nr == LX_SYS_sendto ? -LX_EDESTADDRREQ : -LX_ENETUNREACH;
	case LX_SYS_recvfrom:
	case LX_SYS_recvmsg:
	case LX_SYS_recvmmsg:
		if (s->type == LX_SOCK_STREAM)
			return -LX_ENOTCONN;
		return nothing_arrives(f, v->nr == LX_SYS_recvfrom ? a[3] : a[2]);
	case LX_SYS_shutdown:
		return a[1] > 2 ? -LX_EINVAL : -LX_ENOTCONN;
	case LX_SYS_getsockname:
		return put_addr(c, s, s->addr, a[1], a[2]);
	case LX_SYS_getpeername:
		return -LX_ENOTCONN;
	case LX_SYS_setsockopt:
		return setopt(c, s, (int32_t)a[1], (int32_t)a[2], a[3], a[4]);
	case LX_SYS_getsockopt:
		return getopt(c, s, (int32_t)a[1], (int32_t)a[2], a[3], a[4]);
	}
	return VFS_NOT_MINE;
}
