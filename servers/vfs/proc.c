/* The processes vfs serves, keyed by process id (the same for all threads of a process and
 * across execve): their descriptor tables and working directories, and what pm tells us
 * about them (vfs_proto.h: fork, exec, end). */
#include "vfs.h"
#include "lx_abi.h"
#include "heap.h"

static VFS_KEPT struct client clients[MAX_CLIENTS];
static VFS_KEPT struct ofile *console_file;

void vfs_proc_init(struct rnode *console)
{
	console_file = ax_calloc(1, sizeof(*console_file));
	if (!console_file)
		return;
	*console_file = (struct ofile){ console, 0, 2 /* LX_O_RDWR */, 1 };
	console->opens++;
}

static struct client *find(uint64_t pid)
{
	for (int i = 0; i < MAX_CLIENTS; i++)
		if (clients[i].used && clients[i].pid == pid)
			return &clients[i];
	return NULL;
}

static struct client *slot(uint64_t pid)
{
	for (int i = 0; i < MAX_CLIENTS; i++)
		if (!clients[i].used) {
			clients[i] = (struct client){ .pid = pid, .used = true };
			return &clients[i];
		}
	return NULL;
}

struct client *vfs_client_at(int i) { return i >= 0 && i < MAX_CLIENTS ? &clients[i] : NULL; }

int32_t vfs_client_lxpid(struct client *c)
{
	if (c->used && c->lxpid <= 0) {
		int64_t p = kcall2(KC_INFO, KI_LX_PID, c->pid);
		c->lxpid = p > 0 ? (int32_t)p : 0;
	}
	return c->used ? c->lxpid : 0;
}

/* A process we have not seen starts with 0, 1 and 2 on the console, in /. */
struct client *vfs_client(uint64_t pid, bool make)
{
	struct client *c = find(pid);
	if (c || !make || !pid || !console_file || !(c = slot(pid)))
		return c;
	c->cwd = vfs_root;
	c->umask = 022;
	vfs_root->opens++; /* the working directory */
	for (int fd = 0; fd < 3; fd++) {
		c->fd[fd] = console_file;
		console_file->refs++;
	}
	return c;
}

char *vfs_strdup(const char *s)
{
	size_t n = s ? strlen(s) + 1 : 0;
	char *d = n ? ax_malloc(n) : NULL;
	if (d)
		memcpy(d, s, n);
	return d;
}

void vfs_forget(uint64_t pid)
{
	struct client *c = find(pid);
	if (!c)
		return;
	vfs_close_all(c);
	lock_wait_ended(c->pid);
	ramfs_release(c->cwd);
	ax_free(c->exe);
	ax_free(c->exe_next);
	c->used = false;
	if (vfs_current == c)
		vfs_current = NULL;
}

/* The child shares the parent's open files (offsets and flags too), as fork does. */
int64_t vfs_fork(uint64_t parent, uint64_t child)
{
	struct client *p = vfs_client(parent, true), *c;
	if (!p || !child)
		return -LX_ENOMEM;
	vfs_forget(child); /* a stale entry under the same id */
	if (!(c = slot(child)))
		return -LX_ENOMEM;
	for (int fd = 0; fd < MAX_FDS; fd++) {
		c->fd[fd] = p->fd[fd];
		c->cloexec[fd] = p->cloexec[fd];
		if (c->fd[fd])
			c->fd[fd]->refs++;
	}
	c->cwd = p->cwd;
	c->cwd->opens++;
	c->umask = p->umask;
	c->fsuid = p->fsuid, c->fsgid = p->fsgid, c->uid = p->uid, c->gid = p->gid, c->ngroups = p->ngroups;
	memcpy(c->groups, p->groups, sizeof(c->groups));
	c->exe = vfs_strdup(p->exe);
	memcpy(c->comm, p->comm, sizeof(c->comm));
	c->parent = parent;
	return 0;
}

int64_t vfs_exec_done(uint64_t pid)
{
	sock_exec_done(pid);
	struct client *c = find(pid);
	if (!c)
		return 0; /* it never used a file: nothing to close */
	if (c->comm_next[0]) {
		memcpy(c->comm, c->comm_next, sizeof(c->comm));
		c->comm_next[0] = 0;
	}
	if (c->exe_next) { /* the image execve opened is what runs now */
		ax_free(c->exe);
		c->exe = c->exe_next;
		c->exe_next = NULL;
	}
	for (uint64_t fd = 0; fd < MAX_FDS; fd++)
		if (c->fd[fd] && c->cloexec[fd])
			vfs_close_fd(c, fd);
	return 0;
}

void vfs_ring_clients(uint32_t add)
{
	for (int i = 0; i < MAX_CLIENTS; i++)
		if (clients[i].used)
			ax_wake_ring((endpoint_t)clients[i].pid, add); /* -EAGAIN: no library sleeps there */
}

int64_t vfs_set_comm(const struct kmsg *m)
{
	struct client *c = vfs_client(m->w[0], true);
	if (!c)
		return -LX_ENOMEM;
	memcpy(c->comm, &m->w[1], sizeof(c->comm));
	c->comm[sizeof(c->comm) - 1] = 0;
	return 0;
}
