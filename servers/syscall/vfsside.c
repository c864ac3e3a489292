/* What vfs learns from us (syscall_proto.h). vfs keeps the descriptors and answers poll,
 * select and epoll for every kind of file, sockets included, so it needs each socket's
 * readiness: we keep what we last told it per socket and push a struct sysp_ready whenever
 * that changes (syscall/vfs.ev, exported to vfs), then notify SYSCALL_READY_BIT. And the
 * calls whose end is vfs's business (accept makes a descriptor, sendfile moves a file
 * position and frees vfs's staging) are passed back to vfs with KC_LX_PASS. */
#include "syscall.h"
#include "lx_abi.h"
#include "keep.h"
#include "chan_name.h"
#include "service.h"
#include "spsc.h"

static struct {
	struct spsc q;
	struct chan_export ex;
	bool ok;
	bool created;          /* the channel is made; `ok` once ds published it */
	uint64_t export_at;    /* when to try publishing it again */
	endpoint_t vfs;        /* the importer: the vfs to notify */
	uint32_t ndirty;       /* sockets whose readiness may have changed */
	uint64_t overflows;    /* pushes that found the channel full (retried) */
} v;
static bool dirty[MAX_SOCKS];
static void on_attach(struct chan_export *x, endpoint_t importer);
/* The channel's object, in the kept object (keep.c): vfs keeps reading it across our
 * restart, so the next instance writes on where we stopped. */
static struct vfs_part {
	int64_t handle;
	uint64_t bytes;
} *part;

uint64_t vfsside_layout(void) { return sizeof(struct vfs_part) + 100 * sizeof(struct sysp_ready); }

void vfsside_keep(void *p, bool adopted)
{
	_Static_assert(sizeof(struct vfs_part) <= KEEP_VFS_BYTES, "fits its kept part");
	part = p;
	v.ex = (struct chan_export){ .rights = KP_R | KP_W, .peer = "vfs", .on_attach = on_attach };
	if (!adopted || !part->handle)
		return;
	int64_t r = chan_adopt(&v.ex, part->handle, part->bytes, SPSC_PRODUCER, &v.q);
	if (r) {
		ax_printf("syscall: syscall/vfs.ev left by the old instance is unusable (%ld): a new one\n", (long)r);
		return;
	}
	ax_keep_claim(part->handle);
	v.created = true;
	for (int i = 0; i < MAX_SOCKS; i++) /* vfs hears every socket's readiness again */
		if (socks[i].id)
			socks[i].ready_told = false, dirty[i] = true, v.ndirty++;
}

endpoint_t vfs_endpoint(void)
{
	if (!v.vfs) {
		int64_t r = ax_svc_lookup("vfs", NULL);
		v.vfs = r > 0 ? (endpoint_t)r : 0;
	}
	return v.vfs;
}

endpoint_t vfs_endpoint_again(void)
{
	v.vfs = 0;
	return vfs_endpoint();
}

static void on_attach(struct chan_export *x, endpoint_t importer)
{
	(void)x;
	v.vfs = importer;
	for (int i = 0; i < MAX_SOCKS; i++) /* a new vfs knows nothing: tell it all again */
		if (socks[i].id)
			socks[i].ready_told = false, dirty[i] = true, v.ndirty++;
}

void vfsside_init(void)
{
	ax_strpad(v.ex.key, sizeof(v.ex.key), "vfs.ev");
	int64_t r = v.created ? 0 : chan_create(&v.ex, sizeof(struct sysp_ready), SYSP_READY_SLOTS, SPSC_PRODUCER, &v.q);
	v.created = r == 0;
	if (!r)
		part->handle = v.ex.handle, part->bytes = v.ex.bytes;
	r = r ? r : chan_export(&v.ex);
	v.ok = r == 0;
	if (r)
		ax_printf("syscall: exporting syscall/vfs.ev failed (%ld): %s\n", (long)r,
			  v.created ? "trying again" : "poll never sees sockets ready");
}

bool vfsside_export_missing(void)
{
	if (!v.created || v.ok)
		return false;
	uint64_t now = ax_time_ns();
	if (now >= v.export_at) {
		v.ok = chan_export(&v.ex) == 0;
		v.export_at = now + 100000000;
		if (v.ok)
			ax_printf("syscall: syscall/vfs.ev published\n");
	}
	return !v.ok;
}

static uint32_t dgram_ready(struct sock *s)
{
	uint32_t bits = 0;
	if (sockbuf_ready(&s->sb.rx) || s->error || s->shut_rd)
		bits |= LX_POLLIN | LX_POLLRDNORM;
	if (sockbuf_space(&s->sb.tx) > 0)
		bits |= LX_POLLOUT | LX_POLLWRNORM;
	return bits | (s->error ? LX_POLLERR : 0);
}

uint32_t sock_ready_bits(struct sock *s)
{
	if (s->wake)
		return act_wake_bits();
	/* a library-owned socket's rings moved without us: our view again from what is
	 * published (impossible indices: the socket reports an error) */
	bool lost = s->lib_pid && sockbuf_attach(&s->sb, s->mem, s->bytes, SB_APP) != 0;
	return lost ? LX_POLLERR | LX_POLLIN | LX_POLLOUT : s->stream ? stream_ready(s) : dgram_ready(s);
}

void ready_changed(struct sock *s)
{
	int i = (int)(s - socks);
	if (i >= 0 && i < MAX_SOCKS && !dirty[i])
		dirty[i] = true, v.ndirty++;
}

bool vfsside_poll(void)
{
	if (!v.ndirty || !v.ok)
		return false;
	bool pushed = false, gained = false, full = false;
	for (int i = 0; i < MAX_SOCKS && v.ndirty; i++) {
		if (!dirty[i])
			continue;
		struct sock *s = &socks[i];
		if (s->id && !s->closing) {
			uint32_t bits = sock_ready_bits(s);
			if (s->lib_pid)
				act_status(s, bits);
			if (!s->ready_told || bits != s->ready) {
				struct sysp_ready r = { s->id, bits };
				if (spsc_push(&v.q, &r) != 0) {
					v.overflows++;
					full = true;
					break; /* the rest stay dirty: next turn */
				}
				gained |= !s->ready_told || (bits & ~s->ready);
				s->ready = bits, s->ready_told = true, pushed = true;
			}
		}
		dirty[i] = false, v.ndirty--;
	}
	/* Only a socket that gained a bit can end a wait in vfs: one that lost bits (a reader
	 * took the data) is told without a wake-up, and vfs reads it before its next look at
	 * readiness (it drains the channel before every poll, select, epoll and retry). A full
	 * channel wakes vfs too, so that it drains. */
	if ((gained || full) && vfs_endpoint())
		ax_notify(v.vfs, SYSCALL_READY_BIT);
	return pushed;
}

int64_t vfs_pass_back(endpoint_t thread, uint32_t nr, const uint64_t w[6])
{
	struct kmsg m = { .type = nr };
	memcpy(m.w, w, 6 * sizeof(uint64_t));
	for (int tries = 0; tries < 2; tries++) {
		endpoint_t ep = vfs_endpoint();
		int64_t r = ep ? kcall6(KC_LX_PASS, thread, ep, (uint64_t)&m, 0, 0, 0) : -KE_DEADSRCDST;
		if (r != -KE_DEADSRCDST)
			return r;
		v.vfs = 0; /* vfs restarted? look again */
	}
	return -KE_DEADSRCDST;
}
