/* The socket table: each socket's buffer object (lib/net/sockbuf.h), made when syscall
 * first sees the socket (its first passed call, or an accept), mapped into each process that
 * calls on it when asked (shared, read/write: KC_LX_MMAP with LXM_SHARE) and granted to its
 * engine, udp or tcp (engine.c). */
#include "syscall.h"
#include "lx_abi.h"
#include "keep.h"

/* Geometry: datagram sockets, stream sockets (a TCP window of 128 KiB fits half the RX ring). */
static const uint32_t geometry[2][4] = { { 256, 256 * 1024, 64, 128 * 1024 }, { 512, 256 * 1024, 256, 256 * 1024 } };
#define LX_PROT_RW 3

struct sock *socks;
int sock_top;
bool sys_map_apps;

/* After our restart: each socket's buffer mapped here again; what the old instance had in
 * flight with the engines is gone (their answers go to channels nobody reads now), so each
 * socket is opened again at its engine (SKF_REATTACH: it keeps its connection), a close is
 * asked again, and a bind or connect the old instance waited for is forgotten. */
void sock_keep(void *part, bool adopted)
{
	socks = part;
	for (int i = 0; adopted && i < MAX_SOCKS; i++) {
		struct sock *s = &socks[i];
		if (!s->id)
			continue;
		void *mem = ax_keep_remap(s->mo, s->mem, s->bytes);
		if (!mem || sockbuf_attach(&s->sb, mem, s->bytes, SB_APP)) {
			ax_printf("syscall: socket %u's buffers are lost (%s)\n", s->id, mem ? "corrupt" : "cannot map");
			if (mem)
				ax_mo_unmap((uint64_t)mem);
			*s = (struct sock){ 0 }; /* (its next call fails EBADF) */
			continue;
		}
		s->mem = mem;
		s->opened = false, s->engine_handle = 0;
		s->reclose = s->closing;
		s->closing = false;
		s->binding = false;
		if (s->connecting && !s->lib_connect)
			s->connecting = false, s->error = s->nb_connect ? LX_ECONNABORTED : 0;
		s->ready_told = false;
		s->tx_hint = s->rx_hint = true;
		sock_top = i + 1;
	}
}

/* The scans (two per loop turn, one per call) look at the slots below sock_top only: a few
 * with a few sockets instead of MAX_SOCKS. sock_get raises it; once per loop turn it comes
 * down past the freed slots at the top. */
void sock_trim(void)
{
	while (sock_top > 0 && !socks[sock_top - 1].id)
		sock_top--;
}

struct sock *sock_find(uint32_t id)
{
	for (int i = 0; id && i < sock_top; i++)
		if (socks[i].id == id)
			return &socks[i];
	return NULL;
}

/* A new buffer object for a socket of this kind, mapped here, its rings initialised. */
static bool buf_make(bool stream, struct sockbuf_obj *b)
{
	const uint32_t *g = geometry[stream];
	size_t bytes = (sockbuf_size(g[0], g[1], g[2], g[3]) + 4095) & ~(size_t)4095;
	int64_t h = ax_mo_create(bytes / 4096, MOF_LAZY); /* pages made as the socket uses them */
	int64_t va = h > 0 ? ax_mo_map(h, 0, 0, bytes / 4096, KP_R | KP_W) : h;
	if (va <= 0) {
		if (h > 0)
			ax_mo_destroy(h);
		return false;
	}
	*b = (struct sockbuf_obj){ .mo = h, .mem = (void *)va, .bytes = bytes, .stream = stream };
	return true;
}

void sockbuf_obj_destroy(struct sockbuf_obj *b)
{
	ax_mo_unmap((uint64_t)b->mem);
	ax_mo_destroy(b->mo); /* the creator's destroy revokes every grant */
	*b = (struct sockbuf_obj){ 0 };
}

struct sock *sock_get(uint32_t id, bool make, bool stream, uint32_t spare_pid, int64_t *err)
{
	struct sock *s = sock_find(id);
	if (s || !id || !make)
		return s ? s : (*err = -LX_EBADF, NULL); /* not made here: an earlier syscall's */
	for (int i = 0; i < MAX_SOCKS && !s; i++)
		if (!socks[i].id)
			s = &socks[i];
	*err = -LX_ENOMEM;
	if (!s)
		return NULL;
	/* a buffer spare_pid's library kept mapped from a closed socket (lazy closing), else a
	 * new one */
	struct sockbuf_obj b;
	bool spare = spare_pid && act_take_spare(spare_pid, stream, &b);
	if (!spare && !buf_make(stream, &b))
		return NULL;
	const uint32_t *g = geometry[stream];
	if (sockbuf_init(b.mem, b.bytes, g[0], g[1], g[2], g[3]) || sockbuf_attach(&s->sb, b.mem, b.bytes, SB_APP)) {
		sockbuf_obj_destroy(&b);
		return NULL;
	}
	s->id = id, s->mo = b.mo, s->mem = b.mem, s->bytes = b.bytes;
	if (s - socks >= sock_top)
		sock_top = (int)(s - socks) + 1;
	s->stream = stream, s->eng = stream ? ENG_TCP : ENG_UDP;
	if (spare) /* already in the process: sock_map_force answers this address */
		s->mapped_pid[0] = spare_pid, s->mapped_va[0] = b.app_va;
	return s; /* engine.c opens it at its engine */
}

int64_t lx_map_shared(int64_t mo, uint64_t bytes, endpoint_t thread)
{
	uint64_t pf = LX_PROT_RW | (uint64_t)(LX_MAP_SHARED | LXM_SHARE) << 32;
	return kcall6(KC_LX_MMAP, thread, (uint64_t)mo, 0, bytes, pf, 0);
}

int64_t sock_map_force(struct sock *s, endpoint_t thread, uint32_t pid)
{
	int free = -1;
	for (int i = 0; i < MAX_MAPPED; i++) {
		if (s->mapped_pid[i] == pid)
			return (int64_t)s->mapped_va[i];
		if (!s->mapped_pid[i] && free < 0)
			free = i;
	}
	if (free < 0)
		return -LX_EBUSY; /* shared by many processes: the later ones use system calls only */
	int64_t va = lx_map_shared(s->mo, s->bytes, thread);
	if (va < 0) {
		ax_printf("syscall: mapping socket %u's buffers into process %#x: %ld\n", s->id, pid, (long)va);
		return -LX_ENOMEM;
	}
	s->mapped_pid[free] = pid, s->mapped_va[free] = (uint64_t)va;
	return va;
}

void sock_map_into(struct sock *s, endpoint_t thread, uint32_t pid)
{
	/* Nothing in an application reads its socket's buffers unless lib/sock takes the socket
	 * over (AX_SOCKBUF maps them then); and nothing unmaps them from the application when
	 * the socket closes. So, ahead of time, only when asked (docs/decisions.md). */
	if (sys_map_apps)
		sock_map_force(s, thread, pid);
}

uint64_t sock_mapped_va(const struct sock *s, uint32_t pid)
{
	for (int i = 0; pid && i < MAX_MAPPED; i++)
		if (s->mapped_pid[i] == pid)
			return s->mapped_va[i];
	return 0;
}

void sock_free(struct sock *s)
{
	act_forget_sock(s);
	if (s->engine_handle)
		s->engine_handle = 0; /* udp drops its grant on SK_CLOSE; destroy revokes it too */
	struct sockbuf_obj b = { .mo = s->mo, .mem = s->mem, .bytes = s->bytes, .stream = s->stream,
				 .app_va = sock_mapped_va(s, s->lib_pid) };
	/* parked if its library kept its mapping (and no other process maps it) */
	bool others = false;
	for (int i = 0; i < MAX_MAPPED; i++)
		others |= s->mapped_pid[i] && s->mapped_pid[i] != s->lib_pid;
	if (others || !b.app_va || !act_park(s->lib_pid, (uint32_t)(s - socks), &b))
		sockbuf_obj_destroy(&b);
	*s = (struct sock){ 0 };
}

void sock_forget_process(uint32_t pid)
{
	for (int i = 0; i < sock_top; i++) {
		struct sock *s = &socks[i];
		if (!s->id)
			continue;
		for (int j = 0; j < MAX_MAPPED; j++)
			if (s->mapped_pid[j] == pid)
				s->mapped_pid[j] = 0, s->mapped_va[j] = 0;
		if (s->accept_take_pid == pid) {
			act_listen_drop(s);
			s->accept_take_pid = 0; /* the new image's accepts stay ours unless it asks */
		}
		if (s->lib_pid != pid)
			continue;
		/* its library went with the old image: ours again, from the published indices */
		act_forget_sock(s);
		if (sockbuf_attach(&s->sb, s->mem, s->bytes, SB_APP))
			s->error = 5; /* EIO: the library left impossible indices */
		s->lib_pid = 0, s->rx_off = 0, s->lib_dirty = true;
		ready_changed(s);
	}
}
