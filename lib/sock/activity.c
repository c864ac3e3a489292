/* lib/sock: the activity page, application side (activity.h). */
#include "activity.h"
#include <stdatomic.h>
#include <sys/socket.h>
#include "sock.h"

_Thread_local uint64_t axsock_nsys;
uint64_t axsock_kicks, axsock_marks;
static struct ax_activity own; /* counters before (or without) the page */
static struct ax_activity *page = &own;
static bool have_page;

void axsock_act_page(uint64_t va)
{
	if (have_page || !va)
		return;
	struct ax_activity *p = (struct ax_activity *)(uintptr_t)va;
	if (p->magic != AX_ACT_MAGIC || p->version != AX_ACT_VERSION)
		return; /* not one we understand: every data call kicks */
	for (int c = 0; c < AXC_N; c++) /* what was counted before the page existed */
		p->calls[c].user += own.calls[c].user, p->calls[c].sys += own.calls[c].sys;
	page = p, have_page = true;
}

static void kick(int fd)
{
	axsock_nsys++;
	axsock_kicks++;
	axsock_counts.syscalls++;
	setsockopt(fd, SOL_AXOLOTL, AX_KICK, NULL, 0);
}

void axsock_activity(int fd, uint32_t eng, uint32_t bit)
{
	axsock_marks++;
	if (!have_page || eng >= AXE_N || bit >= AX_ACT_SOCKS) {
		kick(fd);
		return;
	}
	atomic_fetch_or_explicit(&page->bits[eng][bit / 64], 1ull << (bit % 64), memory_order_relaxed);
	atomic_fetch_add_explicit(&page->eng[eng].word, 1, memory_order_release);
	/* The word before the flag, as the engine raises its flag before its last look: one of
	 * the two sees the other (lib/chan's doorbell rule). */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&page->idle[eng].sleeping, memory_order_relaxed))
		kick(fd);
}

void axsock_count(enum ax_call c, bool user)
{
	if ((unsigned)c >= AXC_N)
		c = AXC_OTHER;
	if (user)
		page->calls[c].user++;
	else
		page->calls[c].sys++;
}

const struct ax_activity *axsock_act(void)
{
	return page;
}
