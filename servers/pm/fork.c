/* clone (threads and processes), fork, vfork and execve. The kernel does the mechanism
 * (KC_LX_FORK copies the address space, KC_LX_THREAD adds a thread, KC_LX_EXEC replaces
 * the image); pm picks the ids, tells vfs, writes the tids clone asks for, and reads
 * execve's arguments and file. */
#include "pm.h"
#include "lx_abi.h"
#include "vfs_proto.h"

#define CLONE_KNOWN (0xff | LX_CLONE_VM | LX_CLONE_FS | LX_CLONE_FILES | LX_CLONE_SIGHAND | LX_CLONE_VFORK | LX_CLONE_PARENT | \
		     LX_CLONE_THREAD | LX_CLONE_SYSVSEM | LX_CLONE_SETTLS | LX_CLONE_PARENT_SETTID | LX_CLONE_CHILD_CLEARTID | \
		     LX_CLONE_DETACHED | LX_CLONE_CHILD_SETTID)

static int64_t put_tid(endpoint_t who, uint64_t addr, int32_t tid)
{
	return ax_vcopy(EP_NONE, &tid, who, (void *)addr, 4) < 0 ? -LX_EFAULT : 0;
}

static int64_t new_thread(struct lxcall *c, uint64_t flags, uint64_t stack, uint64_t ptid, uint64_t ctid, uint64_t tls)
{
	if ((flags & (LX_CLONE_VM | LX_CLONE_SIGHAND)) != (LX_CLONE_VM | LX_CLONE_SIGHAND) || !stack)
		return -LX_EINVAL;
	int32_t tid = lx_new_pid();
	int64_t r = 0;
	if ((flags & LX_CLONE_PARENT_SETTID) && (r = put_tid(c->p->ep, ptid, tid)))
		return r;
	if ((flags & LX_CLONE_CHILD_SETTID) && (r = put_tid(c->p->ep, ctid, tid)))
		return r;
	uint64_t lxf = (flags & LX_CLONE_SETTLS ? LXT_SETTLS : 0) | (flags & LX_CLONE_CHILD_CLEARTID ? LXT_CLEARTID : 0);
	int64_t ep = kcall6(KC_LX_THREAD, c->thread, (uint64_t)tid, stack, tls, lxf, ctid);
	if (ep < 0)
		return ep == -KE_AGAIN || ep == -KE_NOMEM ? -LX_EAGAIN : -LX_EINVAL;
	lx_thread_add(tid, (endpoint_t)ep, c->p->pid);
	return tid;
}

int64_t lx_clone(struct lxcall *c, uint64_t flags, uint64_t stack, uint64_t ptid, uint64_t ctid, uint64_t tls)
{
	struct lxproc *p = c->p;
	if (flags & ~(uint64_t)CLONE_KNOWN)
		return -LX_EINVAL; /* namespaces, ptrace, pidfds: not offered */
	if (flags & LX_CLONE_THREAD)
		return new_thread(c, flags, stack, ptid, ctid, tls);
	if ((flags & LX_CLONE_VM) && !(flags & LX_CLONE_VFORK))
		return -LX_EINVAL; /* processes sharing memory without being threads: not offered */
	struct lxproc *q = lx_alloc();
	if (!q)
		return -LX_EAGAIN;
	int32_t pid = lx_new_pid();
	/* vfork's child gets a copy too: the parent waits until it execs or ends, so the
	 * program cannot tell (it may only exec or _exit anyway). */
	int64_t cep = kcall6(KC_LX_FORK, c->thread, (uint64_t)pid, stack, 0, 0, 0);
	if (cep < 0) {
		ax_printf("pm: %s (pid %d): fork refused by the kernel: error %lld\n", p->name, p->pid, (long long)cep);
		return cep == -KE_NOMEM ? -LX_ENOMEM : -LX_EAGAIN;
	}
	struct kmsg m = { .type = VFS_FORK, .w = { p->ep, (uint64_t)cep } };
	int64_t r = lx_vfs_call(&m);
	if (r != -KE_SRCH && (r < 0 || (int64_t)m.w[0] < 0)) { /* (no vfs at all: nothing to copy) */
		ax_printf("pm: %s (pid %d): fork: vfs refused: error %lld\n", p->name, p->pid,
			  (long long)(r < 0 ? r : (int64_t)m.w[0]));
		ax_kill((endpoint_t)cep);
		return r < 0 ? -LX_EAGAIN : (int64_t)m.w[0];
	}
	*q = (struct lxproc){ .ep = (endpoint_t)cep, .pid = pid, .ppid = flags & LX_CLONE_PARENT ? p->ppid : p->pid,
			      .pgid = p->pgid, .sid = p->sid, .used = true, .exit_signal = (uint8_t)(flags & 0xff),
			      };
	memcpy(q->name, p->name, sizeof(q->name));
	memcpy(q->limits, p->limits, sizeof(q->limits));
	q->no_new_privs = p->no_new_privs, q->timerslack_ns = p->timerslack_ns; /* (inherited, as Linux) */
	lx_creds_fork(q, p);
	if (flags & LX_CLONE_PARENT_SETTID)
		put_tid(p->ep, ptid, pid);
	if (flags & LX_CLONE_CHILD_SETTID)
		put_tid((endpoint_t)cep, ctid, pid);
	if (kcall1(KC_START, (uint64_t)cep) < 0) {
		ax_kill((endpoint_t)cep);
		q->used = false;
		return -LX_EAGAIN;
	}
	if (flags & LX_CLONE_VFORK) {
		q->vfork_parent = c->thread;
		return PM_HOLD;
	}
	return pid;
}

/* execve's arguments: argc, envc, the file name, argv strings, envp strings. */
#define ARGS_MAX (64 * 1024)
static char block[ARGS_MAX + 1024];
static char strs[ARGS_MAX]; /* argv then envp strings as read from the caller */

/* Appends the NUL-terminated string at user address u to buf; -errno on failure. */
static int64_t read_string(endpoint_t who, uint64_t u, char *buf, size_t *pos, size_t max)
{
	for (;;) {
		char chunk[128];
		size_t want = sizeof(chunk);
		/* Never read across a page we were not asked about: stop at the page end. */
		if ((u & 4095) + want > 4096)
			want = 4096 - (u & 4095);
		if (ax_vcopy(who, (const void *)u, EP_NONE, chunk, want) < 0)
			return -LX_EFAULT;
		for (size_t i = 0; i < want; i++) {
			if (*pos >= max)
				return -LX_E2BIG;
			buf[(*pos)++] = chunk[i];
			if (!chunk[i])
				return 0;
		}
		u += want;
	}
}

/* Reads a NULL-terminated vector of strings; counts them in *n. */
static int64_t read_vector(endpoint_t who, uint64_t uvec, size_t *pos, uint32_t *n)
{
	*n = 0;
	for (uint64_t i = 0; uvec; i++) {
		uint64_t ptr;
		if (ax_vcopy(who, (const void *)(uvec + i * 8), EP_NONE, &ptr, 8) < 0)
			return -LX_EFAULT;
		if (!ptr)
			return 0;
		if (*n >= 8192)
			return -LX_E2BIG;
		int64_t r = read_string(who, ptr, strs, pos, sizeof(strs));
		if (r)
			return r;
		(*n)++;
	}
	return 0;
}

/* Asks vfs for an executable file's bytes: size, or -errno; *h = our handle. */
static int64_t open_exec(struct lxproc *p, const char *path, int64_t *h, uint64_t setid[2])
{
	struct kmsg m = { .type = VFS_EXEC_OPEN, .w = { p->ep, ax_self(), (uint64_t)path } };
	int64_t r = lx_vfs_call(&m);
	if (r == -KE_SRCH)
		return -2; /* ENOENT: no file system */
	if (r < 0)
		return -LX_EAGAIN;
	*h = (int64_t)m.w[1];
	setid[0] = (int64_t)m.w[0] >= 0 ? m.w[2] : 0, setid[1] = (int64_t)m.w[0] >= 0 ? m.w[3] : 0;
	return (int64_t)m.w[0];
}

/* If the file starts with "#!", the interpreter line: *interp and *arg (or ""), true. */
static bool shebang(int64_t h, char *line, size_t max, char **interp, char **arg)
{
	int64_t va = ax_mo_map(h, 0, 0, 1, KP_R);
	if (va < 0)
		return false;
	const char *b = (const char *)va;
	bool is = b[0] == '#' && b[1] == '!';
	size_t n = 0;
	for (size_t i = 2; is && i < 4096 && b[i] != '\n' && n + 1 < max; i++)
		line[n++] = b[i];
	line[n] = 0;
	kcall1(KC_MO_UNMAP, (uint64_t)va);
	if (!is)
		return false;
	char *s = line;
	while (*s == ' ' || *s == '\t')
		s++;
	*interp = s;
	while (*s && *s != ' ' && *s != '\t')
		s++;
	if (*s)
		*s++ = 0;
	while (*s == ' ' || *s == '\t')
		s++;
	*arg = s;
	for (char *e = s + strlen(s); e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r');)
		*--e = 0;
	return **interp != 0;
}

static size_t put(size_t at, const char *s)
{
	size_t n = strlen(s) + 1;
	if (at + n > sizeof(block))
		return sizeof(block) + 1;
	memcpy(block + at, s, n);
	return at + n;
}

int64_t lx_execve(struct lxcall *c, uint64_t upath, uint64_t uargv, uint64_t uenvp)
{
	struct lxproc *p = c->p;
	char path[4096], line[256];
	size_t plen = 0, pos = 0;
	uint32_t argc, envc;
	int64_t r = read_string(p->ep, upath, path, &plen, sizeof(path));
	if (r)
		return r == -LX_E2BIG ? -36 /* ENAMETOOLONG */ : r;
	if (!path[0])
		return -2; /* ENOENT */
	if ((r = read_vector(p->ep, uargv, &pos, &argc)))
		return r;
	size_t argv_end = pos;
	if ((r = read_vector(p->ep, uenvp, &pos, &envc)))
		return r;
	uint64_t setid[2];
	int64_t h = 0, size = open_exec(p, path, &h, setid);
	if (size < 0)
		return size;
	/* The block: counts, the file to load, then argv (an interpreter's line first), envp. */
	const char *file = path;
	char *interp = NULL, *iarg = NULL;
	uint32_t nargs = argc;
	size_t at = 8;
	if (shebang(h, line, sizeof(line), &interp, &iarg)) {
		kcall1(KC_MO_DESTROY, (uint64_t)h);
		if ((size = open_exec(p, interp, &h, setid)) < 0) /* (a script's own bits count for nothing, as Linux) */
			return size;
		file = interp;
		at = put(at, interp);
		at = put(at, interp);
		nargs = 2 + (iarg[0] ? 1 : 0) + (argc > 1 ? argc - 1 : 0);
		if (iarg[0])
			at = put(at, iarg);
		at = put(at, path);
		/* argv[0] gives way to the interpreter and the script's path */
		size_t skip = argc ? strlen(strs) + 1 : 0;
		if (at + argv_end - skip <= sizeof(block))
			memcpy(block + at, strs + skip, argv_end - skip);
		at += argv_end - skip;
	} else {
		at = put(at, path);
		if (!argc) { /* Linux gives the program an empty argv[0] rather than none */
			at = put(at, "");
			nargs = 1;
		}
		if (at + argv_end <= sizeof(block))
			memcpy(block + at, strs, argv_end);
		at += argv_end;
	}
	if (at + pos - argv_end > sizeof(block)) {
		kcall1(KC_MO_DESTROY, (uint64_t)h);
		return -LX_E2BIG;
	}
	memcpy(block + at, strs + argv_end, pos - argv_end);
	at += pos - argv_end;
	uint32_t counts[2] = { nargs, envc };
	memcpy(block, counts, 8);
	r = kcall6(KC_LX_EXEC, c->thread, (uint64_t)h, (uint64_t)size, (uint64_t)block, at, 0);
	kcall1(KC_MO_DESTROY, (uint64_t)h);
	if (r < 0)
		return r == -LX_ENOEXEC ? r : r == -KE_NOMEM ? -LX_ENOMEM : r == -KE_INVAL ? -LX_E2BIG : r;
	struct kmsg m = { .type = VFS_EXEC, .w = { p->ep } }; /* close-on-exec descriptors go */
	lx_vfs_call(&m);
	lx_creds_exec(p, setid);
	lx_timers_drop(p); /* POSIX timers do not survive execve (alarms do) */
	const char *base = file;
	for (const char *q = file; *q; q++)
		if (*q == '/')
			base = q + 1;
	ksnprintf(p->name, sizeof(p->name), "%s", base);
	if (p->vfork_parent) {
		lx_answer(p->vfork_parent, p->pid);
		p->vfork_parent = 0;
	}
	return 0;
}
