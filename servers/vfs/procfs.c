/* /proc, read-only: meminfo, mounts, uptime, stat, axolotl/kstat (the kernel's activity
 * counters) and axolotl/threads (every thread's CPU, state, runs and CPU time; all made
 * afresh at every open); /proc/self, which shows the process whose call is being served:
 * fd/N (links to its open files; only the open ones are there), exe (the file it last
 * executed), cwd, and the per-process files of procpid.c, as /proc/PID has them (exe and
 * cwd too; fd/ only under self); cpuinfo
 * and sys/ (procsys.c). The nodes are made once, with a magic number; ramfs asks us
 * (ramfs_hooks) whether one is there and where the links lead. */
#include "procfs.h"
#include "lx_abi.h"
#include "heap.h"
#include "kstat_text.h"

struct client *vfs_current;
static VFS_KEPT uint64_t total_frames;
static char text[65536]; /* (the switch trace fills it) */

/* The descriptor number of a /proc/self/fd/N node. */
static uint64_t fd_number(const struct rnode *n)
{
	uint64_t v = 0;
	for (const char *p = n->name; *p; p++)
		v = v * 10 + (uint64_t)(*p - '0');
	return v;
}

/* The open file an fd/N node names: the caller's under /proc/self, its slot's under /proc/PID. */
static struct ofile *fd_file(const struct rnode *n)
{
	struct client *c = procfs_client(n);
	return c ? vfs_file(c, fd_number(n)) : NULL;
}

static bool hidden(const struct rnode *n)
{
	if (n->magic == PROC_PIDDIR)
		return procfs_pid_hidden(n);
	return n->magic == PROC_FD && !fd_file(n);
}

static int follow(const struct rnode *link, struct rnode **direct, const char **target)
{
	struct client *c = procfs_client(link); /* self's: the caller; a PID's: that process */
	struct ofile *f;
	if (!c)
		return -LX_ENOENT;
	switch (link->magic) {
	case PROC_FD:
		if (!(f = fd_file(link)))
			return -LX_ENOENT;
		*direct = f->node;
		return 0;
	case PROC_CWD:
		*direct = c->cwd;
		return 0;
	case PROC_EXE:
		if (!c->exe)
			return -LX_ENOENT;
		*target = c->exe;
		return 0;
	}
	return 0;
}

/* What a file descriptor link reads as: a path, or Linux's names for pipes and the like. */
static int64_t file_name(const struct rnode *n, char *buf, size_t size)
{
	if (vfs_kind(n) == LX_S_IFIFO)
		return ksnprintf(buf, size, "pipe:[%llu]", (unsigned long long)n->ino);
	if (vfs_kind(n) == 0 && n->dev == ANON_SOCKET)
		return ksnprintf(buf, size, "socket:[%llu]", (unsigned long long)n->ino);
	if (vfs_kind(n) == 0)
		return ksnprintf(buf, size, "anon_inode:[%s]",
				 n->dev == ANON_EPOLL ? "eventpoll" : n->dev == ANON_TIMERFD ? "timerfd" : "eventfd");
	if (n->unlinked)
		return ksnprintf(buf, size, "/%s (deleted)", n->name); /* its old directory may be gone */
	return vfs_node_path(n, buf, size);
}

int64_t procfs_readlink(struct client *c, const struct rnode *n, char *buf, size_t size)
{
	struct ofile *f;
	if (n->magic != PROC_FD && !(c = procfs_client(n)))
		return -LX_ENOENT;
	switch (n->magic) {
	case PROC_FD:
		return (f = fd_file(n)) ? file_name(f->node, buf, size) : -LX_ENOENT;
	case PROC_CWD:
		return file_name(c->cwd, buf, size);
	case PROC_EXE:
		return c->exe ? ksnprintf(buf, size, "%s", c->exe) : -LX_ENOENT;
	}
	return -LX_EINVAL;
}

/* A generated file's text, made now (at open). */
void procfs_refresh(struct rnode *n)
{
	int len = 0;
	uint64_t up = ax_time_ns() / 10000000; /* hundredths of a second */
	uint64_t free_kb = (uint64_t)kcall2(KC_INFO, KI_FREE_FRAMES, 0) * 4, total_kb = total_frames * 4;
	switch (n->magic) {
	case PROC_MEMINFO:
		len = ksnprintf(text, sizeof(text),
				"MemTotal:       %8llu kB\nMemFree:        %8llu kB\nMemAvailable:   %8llu kB\n"
				"Buffers:               0 kB\nCached:                0 kB\nSwapTotal:             0 kB\n"
				"SwapFree:              0 kB\n",
				(unsigned long long)total_kb, (unsigned long long)free_kb, (unsigned long long)free_kb);
		break;
	case PROC_MOUNTS:
		len = ksnprintf(text, sizeof(text), "ramfs / ramfs rw 0 0\nproc /proc proc ro,nosuid,nodev,noexec 0 0\n");
		break;
	case PROC_UPTIME:
		len = ksnprintf(text, sizeof(text), "%llu.%02llu 0.00\n", (unsigned long long)(up / 100),
				(unsigned long long)(up % 100));
		break;
	case PROC_STAT: /* the lines of Linux's that we can fill: make bench reads ctxt and intr */
		len = ksnprintf(text, sizeof(text), "ctxt %lld\nintr %lld\nbtime 0\n",
				(long long)kcall2(KC_INFO, KI_STAT, KST_SWITCHES),
				(long long)(kcall2(KC_INFO, KI_STAT, KST_DEVICE_IRQS) + kcall2(KC_INFO, KI_STAT, KST_TICKS)));
		break;
	case PROC_KSTAT:
		len = kstat_format(text, sizeof(text));
		break;
	case PROC_THREADS:
		len = threads_format(text, sizeof(text));
		break;
	case PROC_SWITCHES:
		len = switches_format(text, sizeof(text));
		break;
	case PROC_CPUINFO:
		len = procfs_cpuinfo(text, sizeof(text));
		break;
	case PROC_PID_STAT:
	case PROC_PID_STATUS:
	case PROC_PID_CMDLINE:
	case PROC_PID_ENVIRON:
	case PROC_PID_COMM:
	case PROC_PID_MAPS:
		len = procfs_pid_file(n, text, sizeof(text));
		break;
	default:
		return;
	}
	if (len < 0 || (size_t)len >= sizeof(text) || ramfs_truncate(n, 0) || ramfs_write(n, 0, text, (uint64_t)len) < 0)
		ramfs_truncate(n, 0);
}

int procfs_make(struct rnode *dir, const char *name, uint32_t mode, uint16_t magic, struct rnode **out)
{
	size_t len = strlen(name);
	int r = (mode & LX_S_IFMT) == LX_S_IFLNK ? ramfs_symlink(dir, name, len, "?", 1, out) : ramfs_create(dir, name, len, mode, out);
	if (r == 0)
		(*out)->magic = magic;
	return r;
}

int procfs_init(struct rnode *root)
{
	struct rnode *proc, *self, *fd, *ax, *n;
	char name[8];
	total_frames = (uint64_t)kcall2(KC_INFO, KI_FREE_FRAMES, 0); /* what was free at our start */
	int r = procfs_make(root, "proc", LX_S_IFDIR | 0555, 0, &proc);
	r = r ? r : procfs_make(proc, "meminfo", LX_S_IFREG | 0444, PROC_MEMINFO, &n);
	r = r ? r : procfs_make(proc, "mounts", LX_S_IFREG | 0444, PROC_MOUNTS, &n);
	r = r ? r : procfs_make(proc, "uptime", LX_S_IFREG | 0444, PROC_UPTIME, &n);
	r = r ? r : procfs_make(proc, "stat", LX_S_IFREG | 0444, PROC_STAT, &n);
	r = r ? r : procfs_make(proc, "cpuinfo", LX_S_IFREG | 0444, PROC_CPUINFO, &n);
	r = r ? r : procfs_sys_init(proc);
	r = r ? r : procfs_make(proc, "axolotl", LX_S_IFDIR | 0555, 0, &ax);
	r = r ? r : procfs_make(ax, "kstat", LX_S_IFREG | 0444, PROC_KSTAT, &n);
	r = r ? r : procfs_make(ax, "threads", LX_S_IFREG | 0444, PROC_THREADS, &n);
	r = r ? r : procfs_make(ax, "switches", LX_S_IFREG | 0444, PROC_SWITCHES, &n);
	r = r ? r : procfs_make(proc, "self", LX_S_IFDIR | 0555, 0, &self);
	r = r ? r : procfs_make(self, "fd", LX_S_IFDIR | 0500, 0, &fd);
	r = r ? r : procfs_pid_files(self, SELF_SLOT);
	r = r ? r : procfs_pid_dirs_init(proc);
	for (int i = MAX_FDS - 1; i >= 0 && !r; i--) { /* made last first: listed in order */
		ksnprintf(name, sizeof(name), "%d", i);
		if (!(r = procfs_make(fd, name, LX_S_IFLNK, PROC_FD, &n)))
			n->dev = SELF_SLOT;
	}
	if (r)
		return r;
	proc->ro = self->ro = fd->ro = ax->ro = true;
	for (struct rnode *d = proc; d; d = d == proc ? self : d == self ? fd : d == fd ? ax : NULL)
		for (n = d->child; n; n = n->next)
			n->ro = true;
	return 0;
}

void procfs_hooks(void)
{
	ramfs_hooks.hidden = hidden;
	ramfs_hooks.follow = follow;
}
