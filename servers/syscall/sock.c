/* The socket table: each socket's buffer object (lib/net/sockbuf.h), made when syscall
 * first sees the socket (its first passed call, or an accept), mapped into each process that
 * calls on it when asked (shared, read/write: KC_LX_MMAP with LXM_SHARE) and granted to its
 * engine, udp or tcp (engine.c). */
#include "syscall.h"

/* Geometry: datagram sockets, stream sockets (a TCP window of 128 KiB fits half the RX ring). */
static const uint32_t geometry[2][4] = { { 256, 256 * 1024, 64, 128 * 1024 }, { 512, 256 * 1024, 256, 256 * 1024 } };
#define LX_PROT_RW 3
#define LX_MAP_SHARED 1

struct sock socks[MAX_SOCKS];
bool sys_map_apps;

struct sock *sock_find(uint32_t id)
{
	for (int i = 0; id && i < MAX_SOCKS; i++)
		if (socks[i].id == id)
			return &socks[i];
	return NULL;
}

struct sock *sock_get(uint32_t id, bool make, bool stream, int64_t *err)
{
	struct sock *s = sock_find(id);
	if (s || !id || !make)
		return s ? s : (*err = -E_BADF, NULL); /* not made here: an earlier syscall's */
	for (int i = 0; i < MAX_SOCKS && !s; i++)
		if (!socks[i].id)
			s = &socks[i];
	*err = -E_NOMEM;
	if (!s)
		return NULL;
	const uint32_t *g = geometry[stream];
	size_t bytes = (sockbuf_size(g[0], g[1], g[2], g[3]) + 4095) & ~(size_t)4095;
	int64_t h = ax_mo_create(bytes / 4096, 0);
	int64_t va = h > 0 ? ax_mo_map(h, 0, 0, bytes / 4096, KP_R | KP_W) : h;
	if (va <= 0) {
		if (h > 0)
			ax_mo_destroy(h);
		return NULL;
	}
	if (sockbuf_init((void *)va, bytes, g[0], g[1], g[2], g[3]) ||
	    sockbuf_attach(&s->sb, (void *)va, bytes, SB_APP)) {
		ax_mo_unmap((uint64_t)va);
		ax_mo_destroy(h);
		return NULL;
	}
	s->id = id, s->mo = h, s->mem = (void *)va, s->bytes = bytes;
	s->stream = stream, s->eng = stream ? ENG_TCP : ENG_UDP;
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
		return -E_BUSY; /* shared by many processes: the later ones use system calls only */
	int64_t va = lx_map_shared(s->mo, s->bytes, thread);
	if (va < 0) {
		ax_printf("syscall: mapping socket %u's buffers into process %#x: %ld\n", s->id, pid, (long)va);
		return -E_NOMEM;
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

void sock_free(struct sock *s)
{
	act_forget_sock(s);
	if (s->engine_handle)
		s->engine_handle = 0; /* udp drops its grant on SK_CLOSE; destroy revokes it too */
	ax_mo_unmap((uint64_t)s->mem);
	ax_mo_destroy(s->mo); /* the creator's destroy revokes every grant */
	*s = (struct sock){ 0 };
}
