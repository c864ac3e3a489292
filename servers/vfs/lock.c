/* File locks: fcntl's record locks (F_GETLK, F_SETLK, F_SETLKW; owned by the process and
 * dropped when it closes any descriptor of the file), open file description locks
 * (F_OFD_*; owned by the open file, dropped at its last close) and flock (whole-file,
 * owned by the open file). As on Linux, record and OFD locks conflict with each other and
 * flock locks only with flock locks. A lock that must wait is one of vfs's held calls
 * (VFS_BLOCK): it is tried again after every call and message vfs serves (an unlock, a
 * close, an exit), and a signal ends it with EINTR. A record lock whose wait would close a
 * cycle of processes waiting for each other's record locks fails with EDEADLK, as Linux
 * detects it (waits on OFD and flock locks are not followed). The tables are kept memory: a
 * restarted vfs keeps every lock. */
#include "vfs.h"
#include "lx_abi.h"

#define MAX_LOCKS 512
#define MAX_WAITS 64
#define TO_END UINT64_MAX /* a range's end: however far the file grows */

enum { LK_POSIX = 1, LK_OFD, LK_FLOCK };

struct lock {
	struct rnode *node; /* NULL: a free entry */
	uint64_t owner;     /* LK_POSIX: the process (client pid); else the open file's address */
	uint8_t kind, type;
	int32_t lxpid;      /* LK_POSIX: the holder's Linux pid, for F_GETLK */
	uint64_t start, end; /* bytes start..end, both included */
};
static VFS_KEPT struct lock locks[MAX_LOCKS];
/* Processes waiting in F_SETLKW, and the process whose record lock they wait for. */
static VFS_KEPT struct {
	uint64_t owner, blocker; /* owner 0: a free entry */
} waits[MAX_WAITS];

static int wait_of(uint64_t owner)
{
	for (int i = 0; i < MAX_WAITS; i++)
		if (waits[i].owner == owner)
			return i;
	return -1;
}

static void wait_clear(uint64_t owner)
{
	int i = wait_of(owner);
	if (i >= 0)
		waits[i].owner = 0;
}

/* Whether owner's wait for blocker would close a cycle: blocker waits, through others, for
 * owner. Else the wait is recorded (false also when the table is full: not followed). */
static bool would_deadlock(uint64_t owner, uint64_t blocker)
{
	uint64_t b = blocker;
	for (int steps = 0; steps < MAX_WAITS; steps++) {
		if (b == owner)
			return true;
		int i = wait_of(b);
		if (i < 0)
			break;
		b = waits[i].blocker;
	}
	int i = wait_of(owner);
	if (i < 0)
		i = wait_of(0);
	if (i >= 0)
		waits[i].owner = owner, waits[i].blocker = blocker;
	return false;
}

/* struct flock of x86-64 Linux */
struct lx_flock {
	int16_t type, whence;
	int32_t pad;
	int64_t start, len;
	int32_t pid, pad2;
};

static bool same_space(uint8_t a, uint8_t b) { return (a == LK_FLOCK) == (b == LK_FLOCK); }

/* The first lock of another owner that a lock (kind, owner, type, start..end) on n would
 * conflict with, or NULL. */
static struct lock *conflict(struct rnode *n, uint8_t kind, uint64_t owner, uint8_t type, uint64_t start, uint64_t end)
{
	for (int i = 0; i < MAX_LOCKS; i++) {
		struct lock *l = &locks[i];
		if (l->node != n || !same_space(l->kind, kind) || (l->kind == kind && l->owner == owner))
			continue;
		if (l->end < start || l->start > end)
			continue;
		if (type == LX_F_WRLCK || l->type == LX_F_WRLCK)
			return l;
	}
	return NULL;
}

static struct lock *free_entry(void)
{
	for (int i = 0; i < MAX_LOCKS; i++)
		if (!locks[i].node)
			return &locks[i];
	return NULL;
}

/* Takes start..end away from the owner's locks on n (splitting one that covers it on both
 * sides); false if a split found no free entry (nothing changed then). */
static bool carve(struct rnode *n, uint8_t kind, uint64_t owner, uint64_t start, uint64_t end)
{
	for (int i = 0; i < MAX_LOCKS; i++) {
		struct lock *l = &locks[i];
		if (l->node == n && l->kind == kind && l->owner == owner && l->start < start && l->end > end && !free_entry())
			return false;
	}
	for (int i = 0; i < MAX_LOCKS; i++) {
		struct lock *l = &locks[i];
		if (l->node != n || l->kind != kind || l->owner != owner || l->end < start || l->start > end)
			continue;
		if (l->start < start && l->end > end) { /* the middle goes: two pieces */
			struct lock *r = free_entry();
			*r = *l;
			r->start = end + 1;
			l->end = start - 1;
		} else if (l->start < start) {
			l->end = start - 1;
		} else if (l->end > end) {
			l->start = end + 1;
		} else {
			l->node = NULL;
		}
	}
	return true;
}

/* Sets (or with LX_F_UNLCK removes) a lock; 0, -LX_EAGAIN when another owner's conflicts and
 * wait is false, VFS_BLOCK when it must wait, -LX_ENOLCK when the table is full. */
static int64_t set(struct rnode *n, uint8_t kind, uint64_t owner, int32_t lxpid, uint8_t type, uint64_t start,
		   uint64_t end, bool wait)
{
	struct lock *c = type != LX_F_UNLCK ? conflict(n, kind, owner, type, start, end) : NULL;
	if (kind == LK_POSIX && !(c && wait))
		wait_clear(owner); /* (not waiting, or not any more) */
	if (c && wait && kind == LK_POSIX && c->kind == LK_POSIX && would_deadlock(owner, c->owner)) {
		wait_clear(owner);
		return -LX_EDEADLK;
	}
	if (c)
		return wait ? VFS_BLOCK : -LX_EAGAIN;
	if (!carve(n, kind, owner, start, end))
		return -LX_ENOLCK;
	if (type == LX_F_UNLCK)
		return 0;
	struct lock *l = free_entry();
	if (!l)
		return -LX_ENOLCK;
	*l = (struct lock){ n, owner, kind, type, lxpid, start, end };
	return 0;
}

/* The byte range of a struct flock relative to f (l_whence, l_start, l_len). */
static int64_t range_of(const struct ofile *f, const struct lx_flock *fl, uint64_t *start, uint64_t *end)
{
	int64_t base = fl->whence == 0 ? 0 : fl->whence == 1 ? (int64_t)f->off : fl->whence == 2 ? (int64_t)f->node->size : -1;
	if (base < 0)
		return -LX_EINVAL;
	int64_t s;
	if (__builtin_add_overflow(base, fl->start, &s))
		return -LX_EOVERFLOW;
	if (fl->len < 0) { /* the len bytes before s */
		if (s + fl->len < 0)
			return -LX_EINVAL;
		*start = (uint64_t)(s + fl->len), *end = (uint64_t)s - 1;
		return 0;
	}
	if (s < 0)
		return -LX_EINVAL;
	int64_t last;
	if (fl->len > 0 && __builtin_add_overflow(s, fl->len - 1, &last))
		return -LX_EOVERFLOW;
	*start = (uint64_t)s, *end = fl->len ? (uint64_t)last : TO_END;
	return 0;
}

static int32_t lxpid_of(struct client *c)
{
	int64_t p = kcall2(KC_INFO, KI_LX_PID, c->pid);
	return p > 0 ? (int32_t)p : 0;
}

int64_t lock_fcntl(struct client *c, struct ofile *f, uint64_t cmd, uint64_t arg)
{
	struct lx_flock fl;
	if (ax_vcopy(c->ep, (const void *)arg, EP_NONE, &fl, sizeof(fl)) < 0)
		return -LX_EFAULT;
	bool ofd = cmd >= LX_F_OFD_GETLK;
	uint8_t kind = ofd ? LK_OFD : LK_POSIX;
	uint64_t owner = ofd ? (uint64_t)(uintptr_t)f : c->pid;
	if ((fl.type != LX_F_RDLCK && fl.type != LX_F_WRLCK && fl.type != LX_F_UNLCK) || (ofd && fl.pid != 0))
		return -LX_EINVAL;
	uint64_t start, end;
	int64_t r = range_of(f, &fl, &start, &end);
	if (r)
		return r;
	if (cmd == LX_F_GETLK || cmd == LX_F_OFD_GETLK) {
		if (fl.type == LX_F_UNLCK)
			return -LX_EINVAL;
		struct lock *l = conflict(f->node, kind, owner, (uint8_t)fl.type, start, end);
		if (!l) {
			fl.type = LX_F_UNLCK;
		} else {
			fl.type = l->type, fl.whence = 0, fl.start = (int64_t)l->start;
			fl.len = l->end == TO_END ? 0 : (int64_t)(l->end - l->start + 1);
			fl.pid = l->kind == LK_POSIX ? l->lxpid : -1;
		}
		return ax_vcopy(EP_NONE, &fl, c->ep, (void *)arg, sizeof(fl)) < 0 ? -LX_EFAULT : 0;
	}
	if ((fl.type == LX_F_RDLCK && (f->flags & LX_O_ACCMODE) == LX_O_WRONLY) ||
	    (fl.type == LX_F_WRLCK && (f->flags & LX_O_ACCMODE) == 0))
		return -LX_EBADF; /* a read lock needs a readable file, a write lock a writable one */
	bool wait = cmd == LX_F_SETLKW || cmd == LX_F_OFD_SETLKW;
	return set(f->node, kind, owner, ofd ? -1 : lxpid_of(c), (uint8_t)fl.type, start, end, wait);
}

int64_t lock_flock(struct client *c, struct ofile *f, uint64_t op)
{
	(void)c;
	uint64_t how = op & ~(uint64_t)LX_LOCK_NB;
	if (how != LX_LOCK_SH && how != LX_LOCK_EX && how != LX_LOCK_UN)
		return -LX_EINVAL;
	uint8_t type = how == LX_LOCK_SH ? LX_F_RDLCK : how == LX_LOCK_EX ? LX_F_WRLCK : LX_F_UNLCK;
	return set(f->node, LK_FLOCK, (uint64_t)(uintptr_t)f, -1, type, 0, TO_END, !(op & LX_LOCK_NB));
}

/* Drops owner's locks of kind on n (every kind but LK_POSIX when n is NULL: by the open
 * file's address). The waiters are tried again after the call or message (vfs.c). */
static void drop_owner(struct rnode *n, uint8_t kind, uint64_t owner)
{
	for (int i = 0; i < MAX_LOCKS; i++) {
		struct lock *l = &locks[i];
		if (l->node && l->owner == owner && (n ? l->node == n && l->kind == kind : l->kind != LK_POSIX))
			l->node = NULL;
	}
}

void lock_closed(struct client *c, struct ofile *f) { drop_owner(f->node, LK_POSIX, c->pid); }

void lock_wait_ended(uint64_t pid) { wait_clear(pid); }

void lock_wait_cancelled(uint64_t pid, const struct vcall *v)
{
	if (v->nr == LX_SYS_fcntl && v->a[1] == LX_F_SETLKW)
		wait_clear(pid);
}

void lock_file_gone(struct ofile *f) { drop_owner(NULL, 0, (uint64_t)(uintptr_t)f); }
