/* lib/sock: pread of regular files answered from vfs's file views (lib/posix/fview.h,
 * docs/sockets.md "Reading files without vfs"). A server like lighttpd keeps a file open
 * and preads it for every request: through vfs that is a round trip to another process,
 * two address-space switches, per request. Here the second pread of a descriptor asks vfs
 * for a view (one fcntl; the first pread goes to vfs, so a program that reads a file once
 * pays nothing extra), and later preads copy from it while its header says it is alive.
 * When vfs kills the view (the file was written or truncated, or the table needed the
 * slot) the next pread unmaps it, goes to vfs, and the one after asks again; a file killed
 * under us FV_MAX_DEATHS times stays with vfs until the descriptor is closed.
 *
 * Only pread: read(2) moves the open file's offset, which vfs keeps (shared by dup'ed
 * descriptors and across fork). A descriptor closed behind the library's back (a raw
 * close_range(2)) is not seen, as for sockets (README.md). */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "activity.h"
#include "fview.h"
#include "sock.h"
#include "state.h"

#define FV_ASK_AT 2      /* the pread of a descriptor that asks for a view */
#define FV_MAX_DEATHS 4  /* views killed under one descriptor before it stops asking */

enum { FV_NONE, FV_ASKING, FV_NEVER };

static struct fview_fd {
	_Atomic uintptr_t va;      /* the view mapped for fd, 0: none */
	_Atomic uint32_t readers;  /* preads looking at va now (forget waits for them) */
	_Atomic uint32_t preads;   /* preads through vfs since the last view or forget */
	_Atomic uint8_t state;     /* FV_* */
	_Atomic uint8_t deaths;    /* views killed under this descriptor */
} fds[AXSOCK_MAX_FDS];

struct axfile_counts axfile_counts;

static ssize_t sys_pread(int fd, void *buf, size_t n, off_t off)
{
	axsock_nsys++;
	axsock_counts.syscalls++;
	atomic_fetch_add_explicit(&axfile_counts.vfs, 1, memory_order_relaxed);
	long r = syscall(SYS_pread64, fd, buf, n, off);
	return r < 0 ? -errno : r;
}

static void unmap(uintptr_t va)
{
	const struct ax_fview *h = (const void *)va;
	axsock_nsys++;
	axsock_counts.syscalls++;
	syscall(SYS_munmap, (void *)va, h->bytes);
}

/* Takes fd's view away (if it is still old), once no pread looks at it: true if we did. */
static bool drop(struct fview_fd *f, uintptr_t old)
{
	if (!old || !atomic_compare_exchange_strong(&f->va, &old, 0))
		return false;
	while (atomic_load(&f->readers))
		sched_yield();
	unmap(old);
	return true;
}

/* In a fork's child: a thread of the parent that was copying is not in the child. */
static void forked(void)
{
	for (int i = 0; i < AXSOCK_MAX_FDS; i++)
		atomic_store(&fds[i].readers, 0);
}

static bool atfork_ready(void)
{
	static _Atomic int done; /* 0: not yet, 1: registered, 2: cannot */
	int d = atomic_load(&done);
	if (!d) {
		d = pthread_atfork(NULL, NULL, forked) == 0 ? 1 : 2;
		atomic_store(&done, d);
	}
	return d == 1;
}

/* One fcntl AX_F_VIEW for fd (the caller holds FV_ASKING). */
static void ask(int fd, struct fview_fd *f)
{
	axsock_nsys++;
	axsock_counts.syscalls++;
	long va = atfork_ready() ? syscall(SYS_fcntl, fd, AX_F_VIEW, 0) : -1;
	int err = va < 0 ? errno : 0;
	const struct ax_fview *h = va > 0 ? (const void *)va : NULL;
	uint8_t next = FV_NONE;
	if (h && (h->magic != AX_FVIEW_MAGIC || h->bytes < AX_FVIEW_DATA + h->size)) {
		unmap((uintptr_t)va); /* not a view we understand: vfs answers */
		next = FV_NEVER;
	} else if (h) {
		atomic_fetch_add_explicit(&axfile_counts.views, 1, memory_order_relaxed);
		atomic_store(&f->va, (uintptr_t)va);
	} else if (err != ENOMEM && err != EINTR) {
		next = FV_NEVER; /* not a regular file, too big, not readable, not Axolotl (EINVAL) */
	}
	atomic_store(&f->preads, 0);
	atomic_store(&f->state, next);
}

/* pread from fd's view: the bytes copied, or -1 when the view cannot answer. */
static ssize_t from_view(struct fview_fd *f, void *buf, size_t n, off_t off, uintptr_t *dead)
{
	ssize_t r = -1;
	atomic_fetch_add(&f->readers, 1);
	uintptr_t va = atomic_load(&f->va);
	const struct ax_fview *h = (const void *)va;
	if (h && !__atomic_load_n(&h->dead, __ATOMIC_ACQUIRE)) {
		uint64_t o = (uint64_t)off, k = o >= h->size ? 0 : h->size - o;
		k = k < n ? k : n;
		memcpy(buf, (const char *)va + AX_FVIEW_DATA + o, k);
		r = (ssize_t)k;
	}
	*dead = r < 0 ? va : 0;
	atomic_fetch_sub(&f->readers, 1);
	return r;
}

ssize_t axfile_pread(int fd, void *buf, size_t n, off_t off, bool views)
{
	if (!views || fd < 0 || fd >= AXSOCK_MAX_FDS || off < 0)
		return sys_pread(fd, buf, n, off);
	/* a bad buffer: the system call says EFAULT (the copy would fault in the program) */
	if (n && !axsock_user_range(buf, n))
		return -EFAULT;
	struct fview_fd *f = &fds[fd];
	uintptr_t dead;
	ssize_t r = from_view(f, buf, n, off, &dead);
	if (r >= 0) {
		atomic_fetch_add_explicit(&axfile_counts.user, 1, memory_order_relaxed);
		return r;
	}
	if (drop(f, dead) && atomic_fetch_add(&f->deaths, 1) + 1 >= FV_MAX_DEATHS)
		atomic_store(&f->state, FV_NEVER);
	r = sys_pread(fd, buf, n, off);
	uint8_t none = FV_NONE;
	if (r >= 0 && atomic_fetch_add(&f->preads, 1) + 1 >= FV_ASK_AT &&
	    atomic_compare_exchange_strong(&f->state, &none, FV_ASKING))
		ask(fd, f);
	return r;
}

void axfile_forget(int fd)
{
	if (fd < 0 || fd >= AXSOCK_MAX_FDS)
		return;
	struct fview_fd *f = &fds[fd];
	drop(f, atomic_load(&f->va));
	atomic_store(&f->preads, 0);
	atomic_store(&f->deaths, 0);
	atomic_store(&f->state, FV_NONE);
}
