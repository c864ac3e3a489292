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
 * print). */
#include "syscall.h"
#include "sock_ax.h"
#include "netq_proto.h"

_Static_assert((int)ENG_UDP == (int)AXE_UDP && (int)ENG_TCP == (int)AXE_TCP && (int)ENGINES == (int)AXE_N, "one engine numbering");

#define MAX_ACT 64 /* as many as an engine follows (lib/lwip/xact.c) */

static struct act {
	uint32_t pid;             /* 0: a free entry */
	int64_t mo;
	struct ax_activity *mem;  /* our mapping */
	uint64_t app_va;          /* the process's mapping */
	int64_t handle[ENGINES];  /* the grant to the engine's current instance, 0: none */
	endpoint_t granted_to[ENGINES];
} acts[MAX_ACT];

static struct act *find(uint32_t pid)
{
	for (int i = 0; pid && i < MAX_ACT; i++)
		if (acts[i].pid == pid)
			return &acts[i];
	return NULL;
}

static struct act *make(uint32_t pid, endpoint_t thread)
{
	struct act *a = NULL;
	for (int i = 0; i < MAX_ACT && !a; i++)
		if (!acts[i].pid)
			a = &acts[i];
	if (!a)
		return NULL;
	int64_t h = ax_mo_create(1, 0);
	int64_t va = h > 0 ? ax_mo_map(h, 0, 0, 1, KP_R | KP_W) : -1;
	int64_t app = va > 0 ? lx_map_shared(h, 4096, thread) : -1;
	if (app <= 0) {
		ax_printf("syscall: no activity page for process %#x (%ld)\n", pid, (long)(h <= 0 ? h : va <= 0 ? va : app));
		if (va > 0)
			ax_mo_unmap((uint64_t)va);
		if (h > 0)
			ax_mo_destroy(h);
		return NULL;
	}
	*a = (struct act){ .pid = pid, .mo = h, .mem = (struct ax_activity *)va, .app_va = (uint64_t)app };
	memset(a->mem, 0, 4096);
	a->mem->pid = pid;
	a->mem->version = AX_ACT_VERSION;
	a->mem->magic = AX_ACT_MAGIC;
	return a;
}

uint64_t act_map(uint32_t pid, endpoint_t thread)
{
	struct act *a = find(pid);
	if (!a)
		a = make(pid, thread);
	return a ? a->app_va : 0;
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

void act_engine_gone(int eng)
{
	for (int i = 0; i < MAX_ACT; i++)
		acts[i].handle[eng] = 0, acts[i].granted_to[eng] = 0;
}

/* ---- the console's `socklib` (NETQ_SHOW NQ_SOCKLIB): per process, the calls its library
 * answered in user space and those that needed system calls; then the totals. ---- */

static const char *const call_names[AXC_N] = AX_CALL_NAMES;

/* Line n of the table into buf (false: past the end). Rows: a title, one per (process,
 * call) counted, one per call of all processes, the total. */
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
