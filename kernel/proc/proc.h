/* Processes and threads. All fields are protected by the kernel lock (proc/klock.h)
 * unless noted. */
#pragma once
#include "lib/types.h"
#include "lx_abi.h"
#include "linux/hooks.h"
#include "arch/trap.h"
#include "proc/memobj.h"
#include "proc/devpriv.h"
#include <axolotl/kcall.h>

#define MAX_THREADS 1024 /* endpoint slots */
/* Per process; both tables start small and double as needed (a network server holds one
 * handle and one mapping per socket buffer). */
#define MAX_MAPPINGS 8192
#define MAX_HANDLES 4096 /* memory-object handles */
#define THREAD_KSTACK_PAGES 4
#define NPRIO 8

enum thread_state { T_FREE = 0, T_READY, T_RUNNING, T_BLOCKED, T_DEAD };
/* B_FUTEX: in a Linux futex wait (linux/futex.c); B_ZOMBIE: a Linux process's first thread
 * after its own exit, kept until the process ends (nothing wakes it). */
enum block_reason { B_NONE = 0, B_SEND, B_RECEIVE, B_REPLY, B_WAIT, B_FUTEX, B_ZOMBIE };

struct mapping {
	uint64_t va, npages;
	struct memobj *mo;   /* NULL: device memory at phys (KC_MMIO_MAP) */
	uint64_t first_page; /* offset into the object */
	uint64_t phys;
	uint32_t prot;       /* PROT_* below */
	uint32_t handle;     /* handle it was mapped through, 0 if none */
	bool shared;         /* Linux MAP_SHARED: a fork child shares it instead of copying */
	bool sys;            /* the kernel's object every process shares (vDSO, vvar; linux/vdso.c):
	                        shared at fork, never made writable, not zeroed by madvise */
};

/* A process's right to a memory object. */
struct mo_handle {
	struct memobj *mo; /* NULL: free slot */
	uint32_t rights;   /* KP_* */
	bool creator;      /* created here: its destroy revokes every grant */
	endpoint_t granter; /* process (first-thread endpoint) that granted it */
};
#define PROT_R 1
#define PROT_W 2
#define PROT_X 4


struct kmsg_node {
	struct kmsg m;
	struct kmsg_node *next;
};

struct proc {
	char name[32];
	struct aspace *as;
	struct thread *main;       /* first thread (kept, as a zombie, until the process ends) */
	endpoint_t id;             /* the first thread's endpoint: names the process for good */
	uint32_t nthreads;
	endpoint_t parent;         /* receives exit and fault reports */
	struct mapping *maps;      /* nmaps used of maps_cap (proc_maps_room grows it) */
	uint32_t nmaps, maps_cap;
	struct mo_handle *handles; /* handles_cap slots; handle h is slot h - 1 */
	uint32_t handles_cap;
	uint64_t kcalls_allowed;   /* bit per native call number (bit 63: all above 62) */
	struct devpriv dev;        /* device privileges (proc/devpriv.c) */
	uint64_t arg_start, arg_end, env_end; /* where its image's argv and envp strings were put
	                                         on the stack (KI_LX_ARGS: /proc/PID/cmdline) */
	endpoint_t linux_servers[LINUX_SERVERS]; /* its POSIX servers (KPRIV_LINUX), 0: none */
	uint8_t linux_route[KMSG_LINUX_MAX];     /* server slot per Linux call (KC_LINUX_ROUTE) */
	struct lx_proc *lx;        /* Linux process state (linux/lxstate.h), or NULL */
	uint32_t nlive;            /* threads not yet exited (a zombie first thread is not) */
	uint64_t cpu_us;           /* CPU time of its threads, ended ones too, to their last switch */
	uint64_t linux_calls;      /* Linux system calls that reached the kernel (KI_LINUX_CALLS) */
	bool stopped;              /* spawned with SPAWN_STOPPED, not started yet */
	bool keep_handles;         /* its parent keeps its handles past its end (KC_LEGACY) */
	bool exiting;
	uint64_t rip_seen;         /* user RIPs sampled so far; the last TEXT_SAMPLES kept (text.c) */
	uint64_t rip_samples[TEXT_SAMPLES];
};

struct thread {
	uint64_t ksp;              /* saved kernel stack pointer while switched out (offset 0) */
	uint64_t kstack_top;
	uint64_t kstack_base;
	struct proc *proc;
	uint32_t slot, gen;
	enum thread_state state;
	enum block_reason blocked_on;
	uint8_t prio;
	int32_t cpu;               /* run queue it belongs to */
	int32_t pinned;            /* CPU it must run on, or -1 */
	struct thread *rq_next;
	uint32_t woken_by;         /* who made it ready last (swtrace.h): an endpoint, 0 the kernel itself, SWT_IRQ */
	struct trap_frame *uframe; /* user state saved at kernel entry */

	/* IPC (proc/ipc.c) */
	endpoint_t ipc_peer;       /* who we send to / receive from / await a reply from */
	uint64_t ipc_ubuf;         /* user address of the message buffer */
	struct kmsg ipc_msg;       /* message being sent, or just received (kernel copy) */
	bool ipc_call;             /* the send is the first half of a call */
	struct thread *sendq;      /* threads blocked sending to us */
	struct thread *sendq_next;
	uint64_t notify_pending;
	struct kmsg_node *kmsgs;   /* kernel messages not yet received */
	uint32_t nkmsgs;
	int64_t ipc_result;
	volatile bool mwaiting;    /* in KC_WAIT's MWAIT loop, kernel lock released */
	uint64_t fs_base;          /* user FS base (Linux arch_prctl: thread-local storage) */
	uint64_t cpu_us;           /* CPU time used before its current run (sched.c) */
	uint64_t runs;             /* times a CPU switched to it (KI_THREAD_STAT) */
	uint64_t kcalls, notifies; /* native kernel calls it made, and of them KC_NOTIFY */
	struct lx_thread lxt;      /* its Linux state (linux/hooks.h), unused in native threads */
	uint8_t fpu[512] __attribute__((aligned(16))); /* x87/SSE state (FXSAVE image) */
};

extern struct thread threads[MAX_THREADS];

static inline endpoint_t thread_ep(const struct thread *t) { return (t->gen << 16) | t->slot; }
/* The live thread an endpoint names, or NULL if it is stale or dead. */
struct thread *ep_lookup(endpoint_t ep);

struct kc_spawn;
/* Creates a process from an ELF image in kernel memory; starts its first thread. */
struct proc *proc_spawn_elf(const void *image, size_t len, const char *name, const char *args,
			    endpoint_t parent, int32_t cpu, uint8_t prio, bool stopped, int *err);
/* Ends a process: every thread dies, memory is released, the parent gets a report. */
void proc_exit(struct proc *p, int64_t status);
/* Called when a thread faults in user mode. */
void proc_fault(struct trap_frame *f);
/* Maps a memory object range into a process; handle is recorded (0: none). */
int proc_map(struct proc *p, uint64_t va, struct memobj *mo, uint64_t first_page, uint64_t npages,
	     uint32_t prot, uint32_t handle);
/* Maps physical (device) memory; cache is PTE_PCD|PTE_PWT for uncached. */
int proc_map_phys(struct proc *p, uint64_t va, uint64_t pa, uint64_t npages, uint32_t prot, uint64_t cache);
/* Removes mapping i of p (unmaps, flushes, drops the object reference). */
void proc_unmap_index(struct proc *p, uint32_t i);
/* Room in p's mapping table for one more (grown if needed; pointers into p->maps are stale
 * afterwards): false at MAX_MAPPINGS or when the kernel heap is out. */
bool proc_maps_room(struct proc *p);
/* Page-table flags (write, no-execute) for PROT_* bits. */
uint64_t proc_prot_flags(uint32_t prot);
/* A free, page-aligned user range of npages for mappings without a fixed address, or 0. */
uint64_t proc_find_va(struct proc *p, uint64_t npages);
/* The process whose first thread or any thread is ep, or NULL (EP_NONE: the caller's). */
struct proc *proc_of(struct thread *me, endpoint_t ep);
/* The process of ep if it is a child of me's process (not itself), else NULL with *err
 * -EDEADSRCDST (no such thread) or -EPERM. */
struct proc *proc_child(struct thread *me, endpoint_t ep, int64_t *err);
/* CPU time used by p's threads so far, in microseconds (each thread's current run not
 * counted until it leaves the CPU). */
uint64_t proc_cpu_us(const struct proc *p);
/* The same with the current run of each of its threads on a CPU at now (µs since boot). */
uint64_t proc_cpu_us_now(const struct proc *p, uint64_t now);
/* Queues a kernel-generated message for a thread (never blocks). */
void kmsg_post(struct thread *t, const struct kmsg *m);
/* The object behind p's handle h if it carries rights (KP_*), else NULL (memcall.c). */
struct memobj *proc_handle_object(struct proc *p, uint64_t h, uint32_t rights);
/* A new thread of p (blocked, not set up), or NULL if every slot is taken. */
struct thread *thread_alloc(struct proc *p);
/* Prepares t's kernel stack so that its first switch enters user mode at rip/rsp. */
void thread_setup_user(struct thread *t, uint64_t rip, uint64_t rsp);
/* Drops every mapping and handle of a process whose address space is going away. */
void proc_unmap_all(struct proc *p);
/* Ends every thread of p but keep (NULL: all, and p is exiting). */
void proc_kill_threads(struct proc *p, struct thread *keep);
/* Boots the first user process (the first boot module). */
