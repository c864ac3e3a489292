/* /proc, read-only: meminfo, mounts, uptime, stat, cpuinfo, PID/ and self/ {stat, status,
 * cmdline, comm}, sys/ (fixed values programs
 * read: kernel/ostype, osrelease, hostname, pid_max, ..., net/core/somaxconn,
 * fs/pipe-max-size, vm/overcommit_memory), axolotl/kstat (the kernel's activity
 * counters) and axolotl/threads (every thread's CPU, state, runs and CPU time; both made
 * afresh at every open), and
 * /proc/self, which shows the process whose call is being served: fd/N (links to its open
 * files; only the open ones are there), exe (the file it last executed) and cwd. Their
 * nodes are made once, with a magic number; ramfs asks us (ramfs_hooks) whether an fd/N
 * is there and where the links lead. */
#include "vfs.h"
#include "heap.h"
#include "kstat_text.h"

enum { PROC_MEMINFO = 1, PROC_MOUNTS, PROC_UPTIME, PROC_FD, PROC_EXE, PROC_CWD, PROC_STAT, PROC_KSTAT, PROC_THREADS,
       PROC_CPUINFO, PROC_PIDDIR, PROC_PID_STAT, PROC_PID_STATUS, PROC_PID_CMDLINE, PROC_PID_COMM, PROC_PID_ENVIRON };
#define SELF_SLOT 0xffffffffu /* rnode.dev of /proc/self's per-process files: the caller */

/* /proc/PID: a directory per slot of vfs's process table, named by the Linux pid of the
 * process in the slot (procfs_sync renames them; an empty slot's is hidden and named
 * "#slot" so no stale name shadows a live one). */
static VFS_KEPT struct rnode *pid_dirs[MAX_CLIENTS];

struct client *vfs_current;
static VFS_KEPT uint64_t total_frames;
static char text[32768];

static void cpuid(uint32_t leaf, uint32_t r[4])
{
	__asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(leaf), "c"(0));
}

/* /proc/cpuinfo: the fields programs parse, one block per CPU online (every CPU is alike,
 * so the boot CPU's CPUID answers for all). */
static int cpuinfo(char *buf, size_t size)
{
	uint32_t r[4], vendor[4] = { 0 }, brand[13] = { 0 };
	cpuid(0, r);
	vendor[0] = r[1], vendor[1] = r[3], vendor[2] = r[2];
	cpuid(1, r);
	uint32_t eax1 = r[0], ecx1 = r[2], edx1 = r[3];
	uint32_t family = (eax1 >> 8) & 15, model = (eax1 >> 4) & 15, stepping = eax1 & 15;
	if (family == 15)
		family += (eax1 >> 20) & 0xff;
	if (family == 6 || family >= 15)
		model |= ((eax1 >> 16) & 15) << 4;
	cpuid(0x80000000u, r);
	if (r[0] >= 0x80000004u)
		for (uint32_t i = 0; i < 3; i++)
			cpuid(0x80000002u + i, &brand[i * 4]);
	static const struct { uint8_t reg, bit; const char *name; } flags[] = {
		{ 3, 0, "fpu" }, { 3, 4, "tsc" }, { 3, 5, "msr" }, { 3, 6, "pae" }, { 3, 8, "cx8" }, { 3, 9, "apic" },
		{ 3, 15, "cmov" }, { 3, 19, "clflush" }, { 3, 23, "mmx" }, { 3, 24, "fxsr" }, { 3, 25, "sse" },
		{ 3, 26, "sse2" }, { 2, 0, "pni" }, { 2, 1, "pclmulqdq" }, { 2, 3, "monitor" }, { 2, 9, "ssse3" },
		{ 2, 13, "cx16" }, { 2, 19, "sse4_1" }, { 2, 20, "sse4_2" }, { 2, 22, "movbe" }, { 2, 23, "popcnt" },
		{ 2, 25, "aes" }, { 2, 26, "xsave" }, { 2, 28, "avx" }, { 2, 30, "rdrand" }, { 2, 31, "hypervisor" },
	};
	char fl[512];
	int fn = 0;
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (((flags[i].reg == 3 ? edx1 : ecx1) >> flags[i].bit) & 1)
			fn += ksnprintf(fl + fn, sizeof(fl) - (size_t)fn, "%s%s", fn ? " " : "", flags[i].name);
	int64_t ncpu = kcall2(KC_INFO, KI_NCPUS, 0);
	uint64_t mhz = (uint64_t)kcall2(KC_INFO, KI_TSC_HZ, 0) / 1000000;
	const char *b = (const char *)brand;
	while (*b == ' ')
		b++;
	int len = 0;
	for (int64_t i = 0; i < (ncpu > 0 ? ncpu : 1) && (size_t)len < size; i++)
		len += ksnprintf(buf + len, size - (size_t)len,
				 "processor\t: %lld\nvendor_id\t: %s\ncpu family\t: %u\nmodel\t\t: %u\nmodel name\t: %s\n"
				 "stepping\t: %u\ncpu MHz\t\t: %llu.000\nphysical id\t: 0\nsiblings\t: %lld\ncore id\t\t: %lld\n"
				 "cpu cores\t: %lld\napicid\t\t: %lld\nfpu\t\t: yes\nflags\t\t: %s\nbogomips\t: %llu.00\n\n",
				 (long long)i, (const char *)vendor, family, model, *b ? b : "unknown", stepping,
				 (unsigned long long)mhz, (long long)ncpu, (long long)i, (long long)ncpu, (long long)i, fl,
				 (unsigned long long)mhz * 2);
	return len;
}

/* The descriptor number of a /proc/self/fd/N node. */
static uint64_t fd_number(const struct rnode *n)
{
	uint64_t v = 0;
	for (const char *p = n->name; *p; p++)
		v = v * 10 + (uint64_t)(*p - '0');
	return v;
}

static struct ofile *fd_file(const struct rnode *n)
{
	return vfs_current ? vfs_file(vfs_current, fd_number(n)) : NULL;
}

static bool hidden(const struct rnode *n)
{
	if (n->magic == PROC_PIDDIR) {
		struct client *c = vfs_client_at((int)n->dev);
		return !c || !c->used || c->lxpid <= 0;
	}
	return n->magic == PROC_FD && !fd_file(n);
}

void procfs_sync(void)
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
}

/* The process a per-process file is about: the caller's for /proc/self, else its slot's. */
static struct client *file_client(const struct rnode *n)
{
	if (n->dev == SELF_SLOT)
		return vfs_current;
	struct client *c = vfs_client_at((int)n->dev);
	return c && c->used ? c : NULL;
}

/* Its command name: the file it runs, else (a program pm started from a boot module) its
 * argv[0], last component, at most 15 characters as Linux keeps. */
static void comm_of(const struct client *c, char comm[16])
{
	char a0[64] = "?";
	if (!c->exe) {
		int64_t a = kcall2(KC_INFO, KI_LX_ARGS, c->pid), e = kcall2(KC_INFO, KI_LX_ARGS, c->pid | 1ull << 32);
		uint64_t n = a > 0 && e > a ? (uint64_t)(e - a) : 0;
		if (n > sizeof(a0) - 1)
			n = sizeof(a0) - 1;
		if (n && ax_vcopy((endpoint_t)c->pid, (const void *)a, EP_NONE, a0, n) == 0)
			a0[n] = 0;
	}
	const char *e = c->exe ? c->exe : a0, *b = e;
	for (const char *p = e; *p; p++)
		if (*p == '/' && p[1])
			b = p + 1;
	ksnprintf(comm, 16, "%s", b);
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

/* The text of /proc/PID/{stat,status,cmdline,comm} into buf: its length. */
static int pid_file(const struct rnode *n, char *buf, size_t size)
{
	struct client *c = file_client(n);
	if (!c)
		return 0;
	int32_t pid = vfs_client_lxpid(c), ppid = ppid_of(c);
	char comm[16];
	comm_of(c, comm);
	int64_t cpu_us = kcall2(KC_INFO, KI_PROC_CPU_US, c->pid);
	unsigned long long ticks = cpu_us > 0 ? (unsigned long long)cpu_us / 10000 : 0;
	switch (n->magic) {
	case PROC_PID_COMM:
		return ksnprintf(buf, size, "%s\n", comm);
	case PROC_PID_STATUS:
		return ksnprintf(buf, size,
				 "Name:\t%s\nUmask:\t%04o\nState:\t%c\nTgid:\t%d\nPid:\t%d\nPPid:\t%d\nTracerPid:\t0\n"
				 "Uid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nFDSize:\t%d\n",
				 comm, c->umask, state_of(c), pid, pid, ppid, MAX_FDS);
	case PROC_PID_STAT: /* Linux's 52 fields; what vfs does not know is 0 */
		return ksnprintf(buf, size,
				 "%d (%s) %c %d 0 0 0 -1 0 0 0 0 0 %llu 0 0 0 20 0 1 0 0 0 0 %llu 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 "
				 "0 0 0 0 0 0 0 0 0 0 0\n",
				 pid, comm, state_of(c), ppid, ticks, 18446744073709551615ull);
	case PROC_PID_CMDLINE: /* argv's strings (envp's), read from the process as Linux does */
	case PROC_PID_ENVIRON: {
		bool env = n->magic == PROC_PID_ENVIRON;
		int64_t a = kcall2(KC_INFO, KI_LX_ARGS, c->pid | (uint64_t)env << 32);
		int64_t e = kcall2(KC_INFO, KI_LX_ARGS, c->pid | (env ? 2ull : 1ull) << 32);
		if (a <= 0 || e <= a)
			return 0;
		uint64_t len = (uint64_t)(e - a) < size ? (uint64_t)(e - a) : size;
		return ax_vcopy((endpoint_t)c->pid, (const void *)a, EP_NONE, buf, len) < 0 ? 0 : (int)len;
	}
	}
	return 0;
}

static int follow(const struct rnode *link, struct rnode **direct, const char **target)
{
	struct client *c = vfs_current;
	struct ofile *f;
	if (!c)
		return -E_NOENT;
	switch (link->magic) {
	case PROC_FD:
		if (!(f = fd_file(link)))
			return -E_NOENT;
		*direct = f->node;
		return 0;
	case PROC_CWD:
		*direct = c->cwd;
		return 0;
	case PROC_EXE:
		if (!c->exe)
			return -E_NOENT;
		*target = c->exe;
		return 0;
	}
	return 0;
}

/* What a file descriptor link reads as: a path, or Linux's names for pipes and the like. */
static int64_t file_name(const struct rnode *n, char *buf, size_t size)
{
	if (vfs_kind(n) == S_IFIFO_)
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
	switch (n->magic) {
	case PROC_FD:
		return (f = fd_file(n)) ? file_name(f->node, buf, size) : -E_NOENT;
	case PROC_CWD:
		return file_name(c->cwd, buf, size);
	case PROC_EXE:
		return c->exe ? ksnprintf(buf, size, "%s", c->exe) : -E_NOENT;
	}
	return -E_INVAL;
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
	case PROC_CPUINFO:
		len = cpuinfo(text, sizeof(text));
		break;
	case PROC_PID_STAT:
	case PROC_PID_STATUS:
	case PROC_PID_CMDLINE:
	case PROC_PID_ENVIRON:
	case PROC_PID_COMM:
		len = pid_file(n, text, sizeof(text));
		break;
	default:
		return;
	}
	if (len < 0 || (size_t)len >= sizeof(text) || ramfs_truncate(n, 0) || ramfs_write(n, 0, text, (uint64_t)len) < 0)
		ramfs_truncate(n, 0);
}

static int make(struct rnode *dir, const char *name, uint32_t mode, uint16_t magic, struct rnode **out)
{
	size_t len = strlen(name);
	int r = (mode & S_IFMT_) == S_IFLNK_ ? ramfs_symlink(dir, name, len, "?", 1, out) : ramfs_create(dir, name, len, mode, out);
	if (r == 0)
		(*out)->magic = magic;
	return r;
}

/* A file whose text never changes (the /proc/sys values programs read). */
static int fixed(struct rnode *dir, const char *name, const char *value)
{
	struct rnode *n;
	int r = make(dir, name, S_IFREG_ | 0444, 0, &n);
	if (r == 0 && ramfs_write(n, 0, value, strlen(value)) < 0)
		r = -E_NOMEM;
	if (r == 0)
		n->ro = true;
	return r;
}

/* /proc/sys: what daemons look at when they start, with Linux's names and our values. */
static int sysctl_init(struct rnode *proc)
{
	struct rnode *sys, *kernel, *net, *core, *fs, *vm, *d;
	int r = make(proc, "sys", S_IFDIR_ | 0555, 0, &sys);
	r = r ? r : make(sys, "kernel", S_IFDIR_ | 0555, 0, &kernel);
	r = r ? r : fixed(kernel, "ostype", "Linux\n");
	r = r ? r : fixed(kernel, "osrelease", "6.1.0-axolotl\n"); /* as uname (pm) */
	r = r ? r : fixed(kernel, "hostname", "axolotl\n");
	r = r ? r : fixed(kernel, "domainname", "(none)\n");
	r = r ? r : fixed(kernel, "pid_max", "4194304\n"); /* pm's pids wrap there */
	r = r ? r : fixed(kernel, "threads-max", "1024\n");
	r = r ? r : fixed(kernel, "ngroups_max", "65536\n");
	r = r ? r : make(sys, "net", S_IFDIR_ | 0555, 0, &net);
	r = r ? r : make(net, "core", S_IFDIR_ | 0555, 0, &core);
	r = r ? r : fixed(core, "somaxconn", "4096\n");
	r = r ? r : make(sys, "fs", S_IFDIR_ | 0555, 0, &fs);
	r = r ? r : fixed(fs, "pipe-max-size", "1048576\n"); /* pipe.c */
	r = r ? r : fixed(fs, "file-max", "65536\n");
	r = r ? r : fixed(fs, "nr_open", "1024\n"); /* vfs's descriptors per process */
	r = r ? r : make(sys, "vm", S_IFDIR_ | 0555, 0, &vm);
	r = r ? r : fixed(vm, "overcommit_memory", "0\n");
	for (struct rnode *dirs[] = { sys, kernel, net, core, fs, vm }, **p = dirs; !r && p < dirs + 6; p++)
		if ((d = *p))
			d->ro = true;
	return r;
}

/* stat, status, cmdline and comm in dir, about the process in slot (SELF_SLOT: the caller). */
static int pid_files(struct rnode *dir, uint32_t slot)
{
	static const struct { const char *name; uint16_t magic; } files[] = {
		{ "stat", PROC_PID_STAT }, { "status", PROC_PID_STATUS }, { "cmdline", PROC_PID_CMDLINE }, { "comm", PROC_PID_COMM },
		{ "environ", PROC_PID_ENVIRON },
	};
	struct rnode *n;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		int r = make(dir, files[i].name, S_IFREG_ | 0444, files[i].magic, &n);
		if (r)
			return r;
		n->dev = slot, n->ro = true;
	}
	dir->ro = true;
	return 0;
}

static int pid_dirs_init(struct rnode *proc)
{
	char name[16];
	for (int i = 0; i < MAX_CLIENTS; i++) {
		ksnprintf(name, sizeof(name), "#%d", i);
		int r = make(proc, name, S_IFDIR_ | 0555, PROC_PIDDIR, &pid_dirs[i]);
		if (r)
			return r;
		pid_dirs[i]->dev = (uint32_t)i;
		if ((r = pid_files(pid_dirs[i], (uint32_t)i)))
			return r;
	}
	return 0;
}

int procfs_init(struct rnode *root)
{
	struct rnode *proc, *self, *fd, *ax, *n;
	char name[8];
	total_frames = (uint64_t)kcall2(KC_INFO, KI_FREE_FRAMES, 0); /* what was free at our start */
	int r = make(root, "proc", S_IFDIR_ | 0555, 0, &proc);
	r = r ? r : make(proc, "meminfo", S_IFREG_ | 0444, PROC_MEMINFO, &n);
	r = r ? r : make(proc, "mounts", S_IFREG_ | 0444, PROC_MOUNTS, &n);
	r = r ? r : make(proc, "uptime", S_IFREG_ | 0444, PROC_UPTIME, &n);
	r = r ? r : make(proc, "stat", S_IFREG_ | 0444, PROC_STAT, &n);
	r = r ? r : make(proc, "cpuinfo", S_IFREG_ | 0444, PROC_CPUINFO, &n);
	r = r ? r : sysctl_init(proc);
	r = r ? r : make(proc, "axolotl", S_IFDIR_ | 0555, 0, &ax);
	r = r ? r : make(ax, "kstat", S_IFREG_ | 0444, PROC_KSTAT, &n);
	r = r ? r : make(ax, "threads", S_IFREG_ | 0444, PROC_THREADS, &n);
	r = r ? r : make(proc, "self", S_IFDIR_ | 0555, 0, &self);
	r = r ? r : make(self, "exe", S_IFLNK_, PROC_EXE, &n);
	r = r ? r : make(self, "cwd", S_IFLNK_, PROC_CWD, &n);
	r = r ? r : make(self, "fd", S_IFDIR_ | 0500, 0, &fd);
	r = r ? r : pid_files(self, SELF_SLOT);
	r = r ? r : pid_dirs_init(proc);
	for (int i = MAX_FDS - 1; i >= 0 && !r; i--) { /* made last first: listed in order */
		ksnprintf(name, sizeof(name), "%d", i);
		r = make(fd, name, S_IFLNK_, PROC_FD, &n);
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
