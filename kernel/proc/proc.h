/* Processes and threads. All fields are protected by the kernel lock (proc/klock.h)
 * unless noted. */
#pragma once
#include "lib/types.h"
#include "arch/trap.h"
#include "proc/memobj.h"
#include <axolotl/kcall.h>

#define MAX_THREADS 1024 /* endpoint slots */
#define MAX_MAPPINGS 256 /* per process */
#define THREAD_KSTACK_PAGES 4
#define NPRIO 8

enum thread_state { T_FREE = 0, T_READY, T_RUNNING, T_BLOCKED, T_DEAD };
enum block_reason { B_NONE = 0, B_SEND, B_RECEIVE, B_REPLY, B_WAIT };

struct mapping {
	uint64_t va, npages;
	struct memobj *mo;
	uint64_t first_page; /* offset into the object */
	uint32_t prot;       /* PROT_* below */
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
	struct thread *main;       /* first thread: its endpoint names the process */
	uint32_t nthreads;
	endpoint_t parent;         /* receives exit and fault reports */
	struct mapping maps[MAX_MAPPINGS];
	uint32_t nmaps;
	uint64_t kcalls_allowed;   /* bit per native call number (bit 63: all above 62) */
	bool exiting;
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
};

extern struct thread threads[MAX_THREADS];

static inline endpoint_t thread_ep(const struct thread *t) { return (t->gen << 16) | t->slot; }
/* The live thread an endpoint names, or NULL if it is stale or dead. */
struct thread *ep_lookup(endpoint_t ep);

struct kc_spawn;
void proc_init(void);
/* Creates a process from an ELF image in kernel memory; starts its first thread. */
struct proc *proc_spawn_elf(const void *image, size_t len, const char *name, const char *args,
			    endpoint_t parent, int32_t cpu, uint8_t prio, int *err);
/* Ends a process: every thread dies, memory is released, the parent gets a report. */
void proc_exit(struct proc *p, int64_t status);
/* Called when a thread faults in user mode. */
void proc_fault(struct trap_frame *f);
/* Maps a memory object range into a process. */
int proc_map(struct proc *p, uint64_t va, struct memobj *mo, uint64_t first_page, uint64_t npages,
	     uint32_t prot);
/* Queues a kernel-generated message for a thread (never blocks). */
void kmsg_post(struct thread *t, const struct kmsg *m);
/* Boots the first user process (the first boot module). */
void proc_start_init(void);
