/* pm's tables: processes (pids, parents, groups, sessions, zombies) and the tids of the
 * threads made by clone (for tkill/tgkill). */
#include "pm.h"

struct lxproc lx_procs[MAX_PROCS];
static int32_t next_pid = 1;

#define MAX_LXTHREADS 256
static struct { int32_t tid, pid; endpoint_t ep; } lxthreads[MAX_LXTHREADS];

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
		int32_t pid = next_pid;
		next_pid = next_pid >= 4194303 ? 2 : next_pid + 1;
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
			if (!lxthreads[i].tid) {
				lxthreads[i].tid = tid, lxthreads[i].ep = ep, lxthreads[i].pid = pid;
				return;
			}
		/* Full: forget the threads that have ended (a signal query fails for them). */
		for (int i = 0; i < MAX_LXTHREADS; i++)
			if (kcall6(KC_LX_SIGNAL, lxthreads[i].ep, 17, LXS_QUERY, 0, 0, 0) < 0)
				lxthreads[i].tid = 0;
	}
	/* Still full: this thread cannot be named by tkill, nothing else suffers. */
}

endpoint_t lx_thread_ep(int32_t tid, int32_t *pid)
{
	for (int i = 0; i < MAX_LXTHREADS; i++)
		if (lxthreads[i].tid == tid) {
			*pid = lxthreads[i].pid;
			return lxthreads[i].ep;
		}
	return 0;
}

void lx_threads_forget(int32_t pid)
{
	for (int i = 0; i < MAX_LXTHREADS; i++)
		if (lxthreads[i].pid == pid)
			lxthreads[i].tid = 0;
}
