/* vfs: the file server of the POSIX personality (README.md). Shared between its files. */
#pragma once
#include "axrt.h"
#include "lx_abi.h"
#include "ramfs.h"
#include "vfs_alloc.h"

#define MAX_FDS 1024
#define MAX_CLIENTS 64
#include "vfs_proto.h"

/* Character devices (rnode.dev). */
enum { DEV_CONSOLE = 1, DEV_NULL, DEV_ZERO, DEV_FULL, DEV_RANDOM, DEV_URANDOM };
/* Nodes with no file type (Linux's anonymous inodes), rnode.dev says which. */
#define S_IFANON_ 0
enum { ANON_EVENTFD = 1, ANON_EPOLL, ANON_SOCKET, ANON_TIMERFD };

struct ofile {               /* an open file, shared by dup'ed descriptors */
	struct rnode *node;
	uint64_t off;
	uint32_t flags;          /* LX_O_ACCMODE | LX_O_APPEND | ... */
	uint32_t refs;
};

/* A process, keyed by its process id (KMSG_LINUX's w[6]), which all its threads share. */
struct client {
	uint64_t pid;
	endpoint_t ep;           /* the thread whose call is being served: its memory (KC_VCOPY) */
	struct ofile *fd[MAX_FDS];
	bool cloexec[MAX_FDS];
	struct rnode *cwd;
	uint32_t umask;          /* Linux applies it where files are made, so it lives here */
	char *exe, *exe_next;    /* the file it runs (/proc/self/exe), the one execve opened */
	char comm[16], comm_next[16]; /* the name execve was given, last component (/proc/PID/comm) */
	bool used;
	int32_t lxpid;           /* its Linux pid, asked of the kernel when /proc needs it (0: not yet) */
	uint64_t parent;         /* the process id of the one that forked it (VFS_FORK), 0: none */
	/* Credentials, from pm (VFS_CREDS; inherited with VFS_FORK); all zero: root. */
	uint32_t fsuid, fsgid;   /* what files are checked against and made with */
	uint32_t uid, gid;       /* real: access() */
	uint32_t ngroups, groups[VFS_CREDS_GROUPS];
};

extern struct rnode *vfs_root;

/* A call that must wait (an empty or full pipe): vfs keeps the caller blocked and tries
 * again later (vfs.c). */
#define VFS_BLOCK INT64_MIN
/* The call was handed to another server (KC_LX_PASS), which answers it: vfs must not. */
#define VFS_PASSED (INT64_MIN + 2)
/* A file's call function was given a call of another file's. */
#define VFS_NOT_MINE (INT64_MIN + 1)

static inline struct ofile *vfs_file(struct client *c, uint64_t fd) { return fd < MAX_FDS ? c->fd[fd] : NULL; }
static inline uint32_t vfs_kind(const struct rnode *n) { return n->mode & LX_S_IFMT; }

/* One Linux call being served. A call that answers VFS_BLOCK is kept and served again
 * (vfs.c) after every other call, and once more when its deadline passes. */
struct vcall {
	uint32_t nr;
	uint64_t a[6];
	endpoint_t thread;       /* the caller: its memory, and who gets the answer */
	uint64_t deadline;       /* end of a timed wait (KC_TIME ns), 0: none */
	bool again;              /* served before and kept: its timeout has started */
	bool expired;            /* the deadline passed: answer with what is ready now */
	uint64_t syscall_gone_at; /* a socket call found no syscall to pass it to: since when */
	int64_t fifo_fd;         /* an open of a named pipe waiting for its other side: the
	                            descriptor it made + 1 (path.c), closed if a signal ends it */
};

/* For a call that waits with a timeout (ns; < 0: none) and has nothing to report yet:
 * VFS_BLOCK, or 0 when it must answer now (a zero timeout, or the time ran out). */
int64_t vfs_wait(struct vcall *v, int64_t timeout_ns);

/* A value and its length to the caller the Linux way (socket options, addresses): at most
 * the length its buffer says (the int at ulen), the length written back as what was copied
 * (full: the whole value's, as getsockname). 0, -EFAULT, -EINVAL. */
int64_t vfs_put_sized(struct client *c, const void *v, uint32_t len, uint64_t ubuf, uint64_t ulen, bool full);
/* A new memory object of pages, mapped read/write here: its handle (and *va), or -ENOMEM. */
int64_t vfs_mo_make(uint64_t pages, uint64_t *va);

/* Permissions (perm.c). May c (its file-system ids; real ones with `real`) do mask (4 read,
 * 2 write, 1 execute or search) on n: 0 or -EACCES. Root may read and write anything and
 * execute what has an x bit (and search any directory); c NULL is the system itself. */
int64_t vfs_permit(const struct client *c, const struct rnode *n, uint32_t mask, bool real);
/* Whether c owns n or is root (chmod, utimes, the sticky bit). */
bool vfs_owner(const struct client *c, const struct rnode *n);
/* Whether c (not root) is in group gid. */
bool vfs_in_group(const struct client *c, uint32_t gid);
/* A name may go from (or be made in) directory dir: write and search on it, and with the
 * sticky bit only for the owner of the entry n (NULL: a new name) or of dir. 0, -EACCES, -EPERM. */
int64_t vfs_permit_entry(const struct client *c, const struct rnode *dir, const struct rnode *n);
/* A node c just made is c's (its file-system ids; the group of a set-group-ID directory). */
void vfs_own(const struct client *c, struct rnode *n);
/* VFS_CREDS and VFS_COMM from pm. */
int64_t vfs_set_creds(const struct kmsg *m);
int64_t vfs_set_comm(const struct kmsg *m);

/* Tries every held call again, answering those that can finish now (vfs.c): after input
 * arrived, a timer ran out. */
void vfs_kick(void);
/* How many held calls match (sysv.c's LX_GETNCNT and LX_GETZCNT). */
int vfs_held_count(bool (*match)(const struct vcall *v, void *arg), void *arg);
/* timerfd.c: timerfd_create, timerfd_settime, timerfd_gettime; a read of one; its poll
 * bits; its end; the loop's look at the deadlines (ns to the nearest, 0: none; *fired when
 * one expired, so the held calls are tried again). */
int64_t timerfd_create(struct client *c, uint64_t clock, uint64_t flags);
int64_t timerfd_settime(struct client *c, uint64_t fd, uint64_t flags, uint64_t new_va, uint64_t old_va);
int64_t timerfd_gettime(struct client *c, uint64_t fd, uint64_t cur_va);
int64_t timerfd_read(struct client *c, struct ofile *f, uint64_t ubuf, uint64_t len, bool write);
uint32_t timerfd_poll(const struct ofile *f);
void timerfd_closed(struct rnode *n);
uint64_t timerfd_timer(bool *fired);
/* lock.c: fcntl's record and OFD locks (cmd LX_F_*LK*, arg: the caller's struct flock) and
 * flock; their release when process c closes a descriptor of f (record locks) and at f's
 * last close (OFD and flock locks). */
int64_t lock_fcntl(struct client *c, struct ofile *f, uint64_t cmd, uint64_t arg);
int64_t lock_flock(struct client *c, struct ofile *f, uint64_t op);
void lock_closed(struct client *c, struct ofile *f);
void lock_file_gone(struct ofile *f);
/* Process pid ended, or its held call v (if an F_SETLKW) was ended by a signal: it does
 * not wait for a record lock any more. */
void lock_wait_ended(uint64_t pid);
void lock_wait_cancelled(uint64_t pid, const struct vcall *v);

/* The wall clock, ns since 1970 (vfs.c). */
uint64_t vfs_now(void);

/* Processes (proc.c): the client of a process id, made (descriptors 0-2 on the console,
 * cwd /) if new and make is set; NULL if unknown or the table is full. */
struct client *vfs_client(uint64_t pid, bool make);
/* The client in table slot i (used or not), and its Linux pid (asked once; 0 if none). */
struct client *vfs_client_at(int i);
int32_t vfs_client_lxpid(struct client *c);
/* /proc/PID: the directories' names brought up to date with the processes, and with fds
 * their fd/ directories too (a scan of every descriptor table: only when a path or listing
 * reaches an fd/ directory) (procpid.c). */
void procfs_sync(bool fds);
void vfs_forget(uint64_t pid);
/* Rings every process's wake word (KC_WAKE) with add: a new vfs knows no armed epoll set. */
void vfs_ring_clients(uint32_t add);
char *vfs_strdup(const char *s); /* NULL for NULL or no memory */
/* A path's last component ("b" of "/a/b", "b/" of "/a/b/"). */
const char *vfs_last_name(const char *path);
int64_t vfs_fork(uint64_t parent, uint64_t child);
int64_t vfs_exec_done(uint64_t pid);
void vfs_proc_init(struct rnode *console);

/* The process whose call is being served (vfs.c sets it): what /proc/self shows. */
extern struct client *vfs_current;

/* /proc (procfs.c): made under root; a generated file's text made afresh (at open); what a
 * magic link of /proc/self reads as (its length, -errno). */
int procfs_init(struct rnode *root);
/* The tree's hooks to /proc's code, set by every instance (code pointers are not kept). */
void procfs_hooks(void);
void procfs_refresh(struct rnode *n);
int64_t procfs_readlink(struct client *c, const struct rnode *n, char *buf, size_t size);

/* The devices of dev.c (DEV_FULL and up). */
void dev_init(void);
int64_t dev_transfer(struct client *c, const struct rnode *n, uint64_t ubuf, uint64_t len, bool write);

/* execve's image (exec.c): VFS_EXEC_OPEN for pm (endpoint pm, path at upath in mem's
 * memory); the size or -errno, *handle pm's handle of a read-only memory object. */
int64_t exec_open(struct client *c, endpoint_t mem, uint64_t upath, endpoint_t pm, int64_t *handle, uint64_t setid[2]);
void exec_init(bool adopted);
/* n's bytes are about to change, or n is freed: its cached image goes. */
void exec_node_changed(struct rnode *n);
/* mmap of a file (KC_LX_MMAP): a private copy, or (MAP_SHARED) the file's own object. */
int64_t file_mmap(struct client *c, struct vcall *v);
/* Shared file mappings (fmap.c): n's bytes in a memory object of ours (made on the first
 * call: the node becomes ramfs `backed`), our handle or -errno; the ramfs hook when a
 * backed node is freed; the objects mapped again after a restart. */
int64_t fmap_handle(struct rnode *n);
void fmap_unback(struct rnode *n);
void fmap_init(bool adopted);
/* File views (fview.c): fcntl AX_F_VIEW of f, answered with the view's address in the
 * caller or -errno; the ramfs hook's part (before n's bytes change or n is freed); the
 * table's objects claimed after a restart. */
int64_t fview_map(struct client *c, struct vcall *call, struct ofile *f);
void fview_node_changed(struct rnode *n);
void fview_init(bool adopted);

/* Paths (path.c). A NUL-terminated path from ep's memory at uptr into buf
 * (RAMFS_PATH_MAX bytes): 0 or -EFAULT, -ENAMETOOLONG. */
int64_t vfs_get_path(endpoint_t ep, uint64_t uptr, char *buf);
/* Resolves p relative to dirfd (LX_AT_FDCWD: the working directory); flags RAMFS_FOLLOW;
 * *parent and *last as ramfs_resolve's. */
int64_t vfs_resolve_at(struct client *c, int64_t dirfd, const char *p, int flags, struct rnode **out,
		       struct rnode **parent, const char **last);
/* The same for a path in the caller's memory, copied into buf first. */
int64_t vfs_lookup(struct client *c, int64_t dirfd, uint64_t upath, int flags, struct rnode **out,
		   struct rnode **parent, const char **last, char *buf);
int64_t vfs_node_path(const struct rnode *n, char *buf, size_t size);

/* Descriptors (calls.c). */
int64_t vfs_new_fd(struct client *c, struct ofile *f, bool cloexec);
/* A descriptor for a new anonymous file (an eventfd, epoll file or socket: dev) holding
 * priv, which its kind's close frees; on failure priv is freed too. *node (if asked) is
 * the file's node. */
int64_t vfs_anon_fd(struct client *c, uint32_t dev, void *priv, uint32_t flags, bool cloexec, struct rnode **node);
int64_t vfs_close_fd(struct client *c, uint64_t fd);
void vfs_drop(struct ofile *f); /* one reference less; the last closes the file */

/* Pipes (pipe.c). */
int64_t pipe_create(struct client *c, uint64_t ufds, uint64_t flags);
int64_t pipe_transfer(struct client *c, struct ofile *f, uint64_t ubuf, uint64_t len, bool write);
void pipe_end_closed(struct ofile *f);
void pipe_end_opened(struct ofile *f); /* a new open file on a pipe (/proc/self/fd/N) */
uint32_t pipe_poll(const struct ofile *f);
uint64_t pipe_unread(const struct ofile *f); /* bytes waiting in it */
/* Named pipes (mknod S_IFIFO): their ring, made at the first open of the node (0 or
 * -LX_ENOMEM), -LX_ENXIO for a non-blocking write-only open with no reader; whether an open
 * file's other side is there (a blocking open of one end waits for it); the descriptor of
 * a waiting open that a signal ended, closed. */
int64_t fifo_prepare(struct rnode *n, uint64_t flags);
bool fifo_partner(const struct ofile *f);
void fifo_open_cancelled(uint64_t pid, struct vcall *v);
/* F_GETPIPE_SZ (set false) and F_SETPIPE_SZ: the ring's size, or -errno. */
int64_t pipe_size(struct ofile *f, uint64_t want, bool set);

/* eventfd (eventfd.c): the call, reads and writes, what a poll sees, the last close. */
int64_t eventfd_create(struct client *c, uint64_t initval, uint64_t flags);
int64_t eventfd_transfer(struct client *c, struct ofile *f, uint64_t ubuf, uint64_t len, bool write);
uint32_t eventfd_poll(const struct ofile *f);
void eventfd_closed(struct rnode *n);

/* epoll (epoll.c): what a poll of an epoll file sees; an open file's last close (its
 * registrations go); the epoll file's own last close. */
uint32_t epoll_poll(const struct ofile *f);
void epoll_file_gone(const struct ofile *f);
void epoll_closed(struct rnode *n);
/* Sets armed by a sleeping socket library (AX_EPOLL_ARM) that became ready ring its process
 * (after every retry of the held calls); a new vfs rings every process once. */
void epoll_rings(void);
void epoll_restarted(void);

/* What a poll of any open file sees now (poll.c): POLL* bits. A signal mask given to
 * ppoll, pselect6 or epoll_pwait: 0 or -EINVAL for a bad size (masks are not applied). */
uint32_t vfs_poll(const struct ofile *f);
int64_t vfs_check_sigmask(uint64_t mask, uint64_t size);

/* The terminal (tty.c, tty.h): what a poll of a console file sees now, LX_POLLIN 0x1 and
 * LX_POLLOUT 0x4. */
uint32_t tty_poll(struct ofile *f);

/* The Linux file calls vfs serves (calls.c); the result for the caller's rax, or VFS_BLOCK. */
int64_t vfs_call(struct client *c, struct vcall *v);
/* The calls of path.c, meta.c, poll.c and epoll.c: a result, or VFS_NOT_MINE. */
int64_t path_call(struct client *c, struct vcall *v);
int64_t meta_call(struct client *c, struct vcall *v);
int64_t poll_call(struct client *c, struct vcall *v);
int64_t epoll_call(struct client *c, struct vcall *v);
void vfs_close_all(struct client *c);

/* Sockets before the network stack (socket.c). */
int64_t sock_call(struct client *c, struct vcall *v);
int64_t sock_transfer(struct client *c, struct ofile *f, uint64_t ubuf, uint64_t len, bool write);
/* readv/writev on a socket that keeps its messages whole (AF_UNIX), or VFS_NOT_MINE. */
int64_t sock_vector(struct client *c, struct ofile *f, uint64_t iov, uint64_t cnt, bool write);
uint32_t sock_poll(const struct ofile *f);
/* sendfile(out, in): to a socket passed to syscall only (-EINVAL otherwise). */
int64_t sock_sendfile(struct client *c, struct ofile *out, struct ofile *in);
/* syscall's readiness records arrived (SYSCALL_READY_BIT); a call syscall passed back. */
void sock_ready_input(void);
/* At start; adopted: the sockets are a predecessor's (kept), syscall's channel is found anew. */
void sock_init(bool adopted);
/* Whether calls wait for syscall to come back (held, to be served again soon); clears it. */
bool sock_syscall_awaited(void);
/* The same inside a call (no held call is retried): true if records came. */
bool sock_ready_drain(void);
void sock_passed_back(struct kmsg *m);
/* Answers a Linux call held by vfs (the thread gets r). */
void vfs_answer(endpoint_t to, int64_t r);
/* Gives back a reference to an open file (its last one closes it). */
void vfs_put(struct ofile *f);
void sock_closed(struct rnode *n);
/* Tells syscall about closed sockets it has not heard of yet; true while some remain
 * (vfs.c's loop then tries again soon). */
bool sock_flush_closes(void);
/* Process pid completed an execve: syscall hears it before the process's next socket call
 * (its socket library, if it had one, is gone with the old image). */
void sock_exec_done(uint64_t pid);
/* The call being served (vfs.c), for the socket calls passed on whole (read, write). */
extern struct vcall *vfs_cur_call;
