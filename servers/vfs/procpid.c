/* /proc/PID and /proc/self's per-process files: stat, status, cmdline, environ, comm, maps,
 * and the exe and cwd links. A
 * directory per slot of vfs's process table, named by the Linux pid of the process in the
 * slot: procfs_sync renames them at each lookup under /proc and each listing of it; an
 * empty slot's is hidden and named "#slot", so no stale name shadows a live one. */
#include "procfs.h"
#include "lx_abi.h"
#include "heap.h"

static VFS_KEPT struct rnode *pid_dirs[MAX_CLIENTS];
/* /proc/PID/fd: nodes 0 .. fd_made - 1 (up to the highest open descriptor; procfs_sync keeps
 * them so, the closed ones are hidden as under /proc/self/fd) */
static VFS_KEPT struct rnode *fd_dirs[MAX_CLIENTS];
static VFS_KEPT int fd_made[MAX_CLIENTS];

static void sync_fds(int slot)
{
	struct client *c = vfs_client_at(slot);
	struct rnode *d = fd_dirs[slot], *n;
	int want = 0;
	for (int fd = MAX_FDS - 1; c && c->used && fd >= 0 && !want; fd--)
		if (c->fd[fd])
			want = fd + 1;
	char name[12];
	d->ro = false; /* (ours to change) */
	while (fd_made[slot] < want) {
		ksnprintf(name, sizeof(name), "%d", fd_made[slot]);
		if (procfs_make(d, name, LX_S_IFLNK, PROC_FD, &n))
			break; /* no memory: the rest waits for the next look */
		n->dev = (uint32_t)slot, n->ro = true;
		fd_made[slot]++;
	}
	while (fd_made[slot] > want) {
		ksnprintf(name, sizeof(name), "%d", fd_made[slot] - 1);
		struct rnode *last = NULL;
		for (n = d->child; n && !last; n = n->next)
			if (!strcmp(n->name, name))
				last = n;
		if (last) {
			last->ro = false;
			ramfs_remove(last);
		}
		fd_made[slot]--;
	}
	d->ro = true;
}

bool procfs_pid_hidden(const struct rnode *n)
{
	struct client *c = vfs_client_at((int)n->dev);
	return !c || !c->used || c->lxpid <= 0;
}

void procfs_sync(bool fds)
{
	char name[16];
	for (int i = 0; i < MAX_CLIENTS; i++) {
		struct rnode *d = pid_dirs[i];
		struct client *c = vfs_client_at(i);
		if (!d)
			continue;
		int32_t pid = vfs_client_lxpid(c);
		ksnprintf(name, sizeof(name), pid > 0 ? "%d" : "#%d", pid > 0 ? pid : i);
		if (!strcmp(d->name, name))
			continue;
		char *nn = vfs_strdup(name);
		if (nn) {
			ax_free(d->name);
			d->name = nn;
		}
	}
	for (int i = 0; fds && i < MAX_CLIENTS; i++)
		if (fd_dirs[i])
			sync_fds(i);
}

/* The process a per-process file is about: the caller's for /proc/self, else its slot's. */
struct client *procfs_client(const struct rnode *n)
{
	if (n->dev == SELF_SLOT)
		return vfs_current;
	struct client *c = vfs_client_at((int)n->dev);
	return c && c->used ? c : NULL;
}

/* argv's strings (envp's with env) of the process, read from its memory where exec put them
 * (KI_LX_ARGS), as Linux reads /proc/PID/cmdline: their length in buf, at most size. */
static int strings_of(const struct client *c, bool env, char *buf, size_t size)
{
	int64_t a = kcall2(KC_INFO, KI_LX_ARGS, c->pid | (uint64_t)env << 32);
	int64_t e = kcall2(KC_INFO, KI_LX_ARGS, c->pid | (env ? 2ull : 1ull) << 32);
	if (a <= 0 || e <= a)
		return 0;
	uint64_t len = (uint64_t)(e - a) < size ? (uint64_t)(e - a) : size;
	return ax_vcopy((endpoint_t)c->pid, (const void *)a, EP_NONE, buf, len) < 0 ? 0 : (int)len;
}

/* Its command name, at most 15 characters as Linux keeps: the last component of the name
 * its execve was given (a link's, not its target's), else of the file it runs, else (a
 * program pm started from a boot module) of its argv[0]. */
static void comm_of(const struct client *c, char comm[16])
{
	if (c->comm[0]) { /* set by its execve */
		memcpy(comm, c->comm, 16);
		comm[15] = 0;
		return;
	}
	char a0[64] = "?";
	int n = c->exe ? 0 : strings_of(c, false, a0, sizeof(a0) - 1);
	if (n > 0)
		a0[n] = 0; /* (argv[0] ends at its NUL) */
	ksnprintf(comm, 16, "%s", vfs_last_name(c->exe ? c->exe : a0));
}

static int32_t ppid_of(const struct client *c)
{
	struct client *p = c->parent ? vfs_client(c->parent, false) : NULL;
	return p ? vfs_client_lxpid(p) : c->parent ? 1 : 0; /* (its parent ended: pm gave it to pid 1) */
}

static char state_of(const struct client *c)
{
	if (c == vfs_current)
		return 'R'; /* it is reading this (its thread waits for us only for that) */
	/* its first thread, by the table any process may read (KI_THREAD_STAT), if still it */
	uint64_t slot = c->pid & 0xffff;
	if (kcall2(KC_INFO, KI_THREAD_STAT, slot | (uint64_t)KTS_ENDPOINT << 32) != (int64_t)(c->pid & 0xffffffffu))
		return 'Z';
	int64_t st = kcall2(KC_INFO, KI_THREAD_STAT, slot | (uint64_t)KTS_STATE << 32);
	return st < 0 ? 'Z' : (st & 0xff) == 3 ? 'S' : 'R';
}

/* /proc/PID/maps: the process's mappings as the kernel has them (KI_LX_MAP), lowest first,
 * in Linux's format. The kernel knows no file names: the stack, the vDSO and vvar are
 * named, the program's image (the mappings below the area where mappings without an address
 * go) carries the name of the file it runs; other mappings have none. */
#define MAPS_MAX 512
#define MAP_AREA_BASE 0x100000000000ull /* kernel/proc/proc.c */
static int maps_of(const struct client *c, char *buf, size_t size)
{
	static uint64_t va[MAPS_MAX], pages[MAPS_MAX];
	int n = 0;
	for (uint64_t i = 0; n < MAPS_MAX; i++) {
		int64_t v = kcall2(KC_INFO, KI_LX_MAP, c->pid | i << 32);
		int64_t np = v < 0 ? v : kcall2(KC_INFO, KI_LX_MAP_PAGES, c->pid | i << 32);
		if (v < 0 || np < 0)
			break;
		int k = n++; /* insertion by address */
		while (k > 0 && (va[k - 1] & ~0xfffull) > ((uint64_t)v & ~0xfffull)) {
			va[k] = va[k - 1], pages[k] = pages[k - 1];
			k--;
		}
		va[k] = (uint64_t)v, pages[k] = (uint64_t)np;
	}
	int len = 0;
	for (int i = 0; i < n; i++) {
		uint64_t bits = va[i] & 0xfff, start = va[i] & ~0xfffull, end = start + pages[i] * 4096;
		const char *name = bits & KIM_STACK ? "[stack]"
				   : bits & KIM_SYS ? (start == 0x7fff80000000ull ? "[vvar]" : "[vdso]")
				   : start < MAP_AREA_BASE && c->exe ? c->exe : "";
		char line[RAMFS_PATH_MAX + 96];
		int k = ksnprintf(line, sizeof(line), "%08llx-%08llx %c%c%c%c 00000000 00:00 0%s%s\n",
				  (unsigned long long)start, (unsigned long long)end, bits & KIM_R ? 'r' : '-',
				  bits & KIM_W ? 'w' : '-', bits & KIM_X ? 'x' : '-', bits & KIM_SHARED ? 's' : 'p',
				  name[0] ? "                          " : "", name);
		if (k < 0 || (size_t)(len + k) >= size)
			break; /* (the rest does not fit: the file ends at a whole line) */
		memcpy(buf + len, line, (size_t)k);
		len += k;
	}
	return len;
}

/* The text of /proc/PID/{stat,status,cmdline,environ,comm,maps} into buf: its length. */
int procfs_pid_file(const struct rnode *n, char *buf, size_t size)
{
	struct client *c = procfs_client(n);
	if (!c)
		return 0;
	if (n->magic == PROC_PID_MAPS)
		return maps_of(c, buf, size);
	if (n->magic == PROC_PID_CMDLINE || n->magic == PROC_PID_ENVIRON)
		return strings_of(c, n->magic == PROC_PID_ENVIRON, buf, size);
	char comm[16];
	comm_of(c, comm);
	if (n->magic == PROC_PID_COMM)
		return ksnprintf(buf, size, "%s\n", comm);
	int32_t pid = vfs_client_lxpid(c), ppid = ppid_of(c);
	if (n->magic == PROC_PID_STATUS)
		return ksnprintf(buf, size,
				 "Name:\t%s\nUmask:\t%04o\nState:\t%c\nTgid:\t%d\nPid:\t%d\nPPid:\t%d\nTracerPid:\t0\n"
				 "Uid:\t%u\t%u\t%u\t%u\nGid:\t%u\t%u\t%u\t%u\nFDSize:\t%d\n",
				 comm, c->umask, state_of(c), pid, pid, ppid, c->uid, c->fsuid, c->fsuid, c->fsuid, c->gid,
				 c->fsgid, c->fsgid, c->fsgid, MAX_FDS); /* (vfs knows the real and file-system ids: the
									     effective and saved ones are shown as the latter) */
	if (n->magic != PROC_PID_STAT)
		return 0;
	int64_t cpu_us = kcall2(KC_INFO, KI_PROC_CPU_US, c->pid);
	unsigned long long ticks = cpu_us > 0 ? (unsigned long long)cpu_us / 10000 : 0;
	return ksnprintf(buf, size, /* Linux's 52 fields; what vfs does not know is 0 */
			 "%d (%s) %c %d 0 0 0 -1 0 0 0 0 0 %llu 0 0 0 20 0 1 0 0 0 0 %llu 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 "
			 "0 0 0 0 0 0 0 0 0 0 0\n",
			 pid, comm, state_of(c), ppid, ticks, 18446744073709551615ull);
}

/* stat, status, cmdline, comm and environ in dir, about the process in slot (SELF_SLOT: the caller). */
int procfs_pid_files(struct rnode *dir, uint32_t slot)
{
	static const struct { const char *name; uint16_t magic; } files[] = {
		{ "stat", PROC_PID_STAT }, { "status", PROC_PID_STATUS }, { "cmdline", PROC_PID_CMDLINE }, { "comm", PROC_PID_COMM },
		{ "environ", PROC_PID_ENVIRON }, { "maps", PROC_PID_MAPS },
	};
	static const struct { const char *name; uint16_t magic; } links[] = { { "exe", PROC_EXE }, { "cwd", PROC_CWD } };
	struct rnode *n;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		int r = procfs_make(dir, files[i].name, LX_S_IFREG | 0444, files[i].magic, &n);
		if (r)
			return r;
		n->dev = slot, n->ro = true;
	}
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		int r = procfs_make(dir, links[i].name, LX_S_IFLNK, links[i].magic, &n);
		if (r)
			return r;
		n->dev = slot, n->ro = true;
	}
	dir->ro = true;
	return 0;
}

int procfs_pid_dirs_init(struct rnode *proc)
{
	char name[16];
	for (int i = 0; i < MAX_CLIENTS; i++) {
		ksnprintf(name, sizeof(name), "#%d", i);
		int r = procfs_make(proc, name, LX_S_IFDIR | 0555, PROC_PIDDIR, &pid_dirs[i]);
		if (r)
			return r;
		pid_dirs[i]->dev = (uint32_t)i;
		if ((r = procfs_make(pid_dirs[i], "fd", LX_S_IFDIR | 0500, 0, &fd_dirs[i])) ||
		    (r = procfs_pid_files(pid_dirs[i], (uint32_t)i))) /* (which closes the directory: ro) */
			return r;
		fd_dirs[i]->ro = true;
	}
	return 0;
}
