/* pm's tables: processes (pids, parents, groups, sessions, zombies) and the tids of the
 * threads made by clone (for tkill/tgkill). */
#include "pm.h"
#include "keep.h"
#include "service.h"

#define MAX_LXTHREADS 256
/* Both tables live in memory the kernel keeps for our next instance (lib/axrt/keep.h):
 * after a crash it takes the processes over (pm.c). */
static struct pm_kept {
	struct lxproc procs[MAX_PROCS];
	int32_t next_pid;
	struct { int32_t tid, pid; endpoint_t ep; } threads[MAX_LXTHREADS];
	struct lxtimer timers[MAX_LXTIMERS];
} *kept;
struct lxproc *lx_procs;
struct lxtimer *lx_timers;

bool lx_table_init(void)
{
	bool adopted;
	uint64_t layout[] = { sizeof(struct lxproc), MAX_PROCS, sizeof(kept->threads[0]), MAX_LXTHREADS,
			      sizeof(struct lxtimer), MAX_LXTIMERS };
	kept = ax_keep_open(0x31504b4d50ull /* "PMKP1" */, ax_keep_layout(layout, 6), sizeof(*kept), &adopted);
	lx_procs = kept->procs;
	lx_timers = kept->timers;
	if (!adopted)
		kept->next_pid = 1;
	return adopted;
}

struct lxproc *lx_find(endpoint_t ep)
{
	for (int i = 0; i < MAX_PROCS; i++)
		if (lx_procs[i].used && lx_procs[i].ep == ep)
			return &lx_procs[i];
	return NULL;
}

struct lxproc *lx_find_pid(int32_t pid)
{
	for (int i = 0; i < MAX_PROCS; i++)
		if (lx_procs[i].used && lx_procs[i].pid == pid)
			return &lx_procs[i];
	return NULL;
}

int lx_nprocs(void)
{
	int n = 0;
	for (int i = 0; i < MAX_PROCS; i++)
		n += lx_procs[i].used && !lx_procs[i].zombie;
	return n;
}

struct lxproc *lx_alloc(void)
{
	for (int i = 0; i < MAX_PROCS; i++)
		if (!lx_procs[i].used)
			return &lx_procs[i];
	return NULL;
}

/* The next free pid; pids and tids share one space, as in Linux, and wrap at 4 million. */
int32_t lx_new_pid(void)
{
	for (;;) {
		int32_t pid = kept->next_pid;
		kept->next_pid = kept->next_pid >= 4194303 ? 2 : kept->next_pid + 1;
		int32_t owner;
		bool busy = lx_find_pid(pid) || lx_thread_ep(pid, &owner);
		for (int i = 0; i < MAX_PROCS && !busy; i++)
			busy = lx_procs[i].used && (lx_procs[i].pgid == pid || lx_procs[i].sid == pid);
		if (!busy)
			return pid;
	}
}

void lx_thread_add(int32_t tid, endpoint_t ep, int32_t pid)
{
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < MAX_LXTHREADS; i++)
			if (!kept->threads[i].tid) {
				kept->threads[i].tid = tid, kept->threads[i].ep = ep, kept->threads[i].pid = pid;
				return;
			}
		/* Full: forget the threads that have ended (a signal query fails for them). */
		for (int i = 0; i < MAX_LXTHREADS; i++)
			if (kcall6(KC_LX_SIGNAL, kept->threads[i].ep, 17, LXS_QUERY, 0, 0, 0) < 0)
				kept->threads[i].tid = 0;
	}
	/* Still full: this thread cannot be named by tkill, nothing else suffers. */
}

endpoint_t lx_thread_ep(int32_t tid, int32_t *pid)
{
	for (int i = 0; i < MAX_LXTHREADS; i++)
		if (kept->threads[i].tid == tid) {
			*pid = kept->threads[i].pid;
			return kept->threads[i].ep;
		}
	return 0;
}

void lx_threads_forget(int32_t pid)
{
	for (int i = 0; i < MAX_LXTHREADS; i++)
		if (kept->threads[i].pid == pid)
			kept->threads[i].tid = 0;
}
