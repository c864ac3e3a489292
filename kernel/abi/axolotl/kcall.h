/* The native kernel-call ABI of Axolotl, shared by the kernel and user space.
 *
 * A native call is `syscall` with rax = KC_BASE | number; arguments in rdi, rsi, rdx, r10,
 * r8, r9 (the Linux register convention); the result comes back in rax, negative values
 * are -errno (Linux numbering). rax values below KC_BASE are Linux system calls: the kernel
 * serves a few itself (kernel/linux/linux.c) and forwards the rest to the process's POSIX
 * server (KPRIV_LINUX, KMSG_LINUX); without one they fail with -ENOSYS.
 * See docs/kernel-api.md. */
#pragma once
#include <stdint.h>

#define KC_BASE 0x0a000000u /* far above any Linux syscall number */

enum kcall {
	KC_DEBUG_WRITE = 0,  /* (const char *buf, size_t len): write to the kernel console */
	KC_EXIT = 1,         /* (int status): end the whole process */
	KC_YIELD = 2,        /* (): give up the CPU */
	KC_SELF = 3,         /* (): this thread's endpoint */
	KC_MODULE_INFO = 4,  /* (uint32_t index, struct kc_module_info *out) */
	KC_SPAWN = 5,        /* (const struct kc_spawn *args): start a boot module; returns endpoint */
	KC_SEND = 6,         /* (endpoint, const struct kmsg *) */
	KC_RECEIVE = 7,      /* (endpoint or EP_ANY, struct kmsg *out) */
	KC_CALL = 8,         /* (endpoint, struct kmsg *inout): send, then receive the reply */
	KC_REPLY = 9,        /* (endpoint, const struct kmsg *): non-blocking, to a caller waiting for it */
	KC_SENDNB = 10,      /* (endpoint, const struct kmsg *): non-blocking send */
	KC_NOTIFY = 11,      /* (endpoint, uint64_t bits): OR bits into the target's pending word */
	KC_TIME = 12,        /* (): nanoseconds since boot */
	KC_CPU = 13,         /* (): index of the CPU the caller runs on */
	KC_KILL = 14,        /* (endpoint): end the process of a child */
	KC_POWEROFF = 15,    /* (uint32_t status): stop the machine (QEMU: exit with status) */
	KC_INFO = 16,        /* (what, arg): a kernel counter, see KI_* */
	KC_SCHED = 17,       /* (endpoint, cpu or SPAWN_ANY_CPU, flags KS_*): place a thread */
	/* Memory objects (handles are small positive numbers, per process). */
	KC_MO_CREATE = 18,   /* (npages, flags MOF_*): a new zeroed object; returns a handle */
	KC_MO_MAP = 19,      /* (handle, va or 0, first_page, npages, prot KP_*): returns the va */
	KC_MO_UNMAP = 20,    /* (va): removes the mapping that starts at va */
	KC_MO_GRANT = 21,    /* (handle, endpoint, rights KP_*): returns the grantee's handle */
	KC_MO_REVOKE = 22,   /* (endpoint, its handle): take back a grant; its mappings go away */
	KC_MO_DESTROY = 23,  /* (handle): close it; the creator's destroy also revokes every grant */
	KC_MO_PHYS = 24,     /* (handle, page): physical address of a MOF_DMA object's page */
	KC_VCOPY = 25,       /* (src endpoint, src addr, dst endpoint, dst addr, len): copy between
	                        address spaces (EP_NONE means the caller) */
	KC_WAIT = 26,        /* (const volatile uint64_t *doorbell, uint64_t seen, timeout_ns or 0):
	                        sleep until *doorbell != seen, kernel IPC is pending or the timeout
	                        (tick granularity) passes; returns KW_* bits, 0 on timeout */
	/* Device privileges (see docs/kernel-api.md). */
	KC_PRIV = 27,        /* (endpoint, kind KPRIV_*, a, b): give a child one of our privileges */
	KC_IRQ_BIND = 28,    /* (irq, notify bits, KIRQ_* flags): the IRQ line notifies the caller, masked after each */
	KC_IRQ_UNMASK = 29,  /* (irq): accept the next interrupt of the line */
	KC_MMIO_MAP = 30,    /* (phys, npages, va or 0): map device registers uncached; returns va */
	KC_PCI_CFG = 31,     /* (bdf, offset, width 1/2/4 | KPCI_WRITE, value): returns the value read */
	KC_START = 32,       /* (endpoint): let a child spawned with SPAWN_STOPPED run */
	KC_MODULE_MAP = 33,  /* (uint32_t index): map a boot module's bytes read-only; returns va
	                        (its size from KC_MODULE_INFO); configuration files are modules */
	KC_LINUX_ROUTE = 34, /* (endpoint child, slot, const uint64_t bits[16]): the child's Linux
	                        calls whose bit is set go to its POSIX server in slot (KPRIV_LINUX) */
	/* The POSIX process manager's calls on its Linux children (docs/kernel-api.md §8b). Each
	 * acts on a thread of a process whose parent is the caller; `thread` is held blocked in
	 * a call forwarded to the caller, so its user registers are stable. */
	KC_LX_PID = 35,      /* (endpoint child, pid): the child is a Linux process with this pid
	                        (its first thread's tid): getpid/gettid answer it */
	KC_LX_FORK = 36,     /* (endpoint thread, pid, stack or 0): a copy of thread's process,
	                        stopped (KC_START), its one thread returning 0 from the call on
	                        `stack` if given; returns the new process id */
	KC_LX_THREAD = 37,   /* (endpoint thread, tid, stack, tls, flags LXT_*, clear_tid): a new
	                        thread in thread's process, returning 0 from the call; started */
	KC_LX_EXEC = 38,     /* (endpoint thread, handle, size, const void *args, args_len): replace
	                        thread's process image with the static ELF in memory object handle
	                        (size bytes); args = argc, envc (uint32 each), then argc + envc
	                        NUL-terminated strings; other threads end, handlers reset */
	KC_LX_SIGNAL = 39,   /* (endpoint process or thread, sig, flags LXS_*, sender pid, si_code,
	                        si_value): post a signal (with si_code SI_TIMER the pid is the
	                        timer's id and si_value is delivered); returns 0, or 1 if it was
	                        discarded as ignored */
	KC_LX_MMAP = 40,     /* (endpoint thread, handle or 0, addr, len, prot | flags << 32, offset): a
	                        POSIX server answering thread's mmap of a file maps a private copy of
	                        the object's pages from offset (0: zeros) with Linux's placement;
	                        returns the address or -errno; thread must be held in a Linux call
	                        to the caller; LXM_SHARE in flags maps the object itself, shared */
	KC_LX_PASS = 41,     /* (endpoint thread, endpoint dst, const struct kmsg *m): thread, held
	                        in a Linux call to the caller, now waits in a call to dst as if it had
	                        sent *m there itself (type KMSG_LINUX_PASSED | nr, w[6] = process id |
	                        passer << 32, source = thread); dst answers it with KC_REPLY */
	KC_LEGACY = 42,      /* (op LEG_*, endpoint a, endpoint b): a child's memory-object handles
	                        kept past its end for its next incarnation (docs/kernel-api.md §5.8) */
	KC_ALIVE = 43,       /* (timeout_ms): the root (boot module 0) says it is alive; a root that
	                        says nothing more for timeout_ms while it had the CPU is killed and
	                        started again (its watchdog; 0 disarms; §5.8); -EPERM for others */
	KC_TEXT = 44,        /* (endpoint child, op KT_*, va, void *buf, len): a parent reads or
	                        patches its child's own text (fault injection, proc/text.c) */
	KC_WAKE = 45,        /* (op WK_*, a, b): a Linux process's wake word (linux/wakeword.c) */
	KC_LX_MUNMAP = 46,   /* (endpoint thread, addr, len): a POSIX server answering thread's call
	                        (shmdt) removes a range of thread's mappings, as munmap would */
	KC_MSI_BIND = 47,    /* (bdf, nvec, const uint64_t bits[nvec], struct kc_msi out[nvec]): nvec
	                        (<= KMSI_MAX) message-signalled interrupt vectors for PCI function bdf
	                        (KPRIV_PCI), vector i notifying the caller with bits[i]; out[i] says
	                        what to program in the function's MSI-X (or MSI) entry i; returns
	                        nvec. Replaces the caller's earlier vectors for bdf; nvec 0 frees them */
	KC_COUNT
};
/* KC_WAKE operations. */
#define WK_SET 0  /* (va): the calling Linux process's wake word is the uint32 at va, in memory
                     mapped writable (0: none); it sleeps there with FUTEX_WAIT */
#define WK_RING 1 /* (process, add): a server adds add to process's word and wakes every
                     thread waiting on it; returns how many, -EAGAIN if it named no word */
/* KC_LEGACY operations. */
#define LEG_KEEP 1  /* (child, on): at the child's end its handles are kept for us, not released */
#define LEG_GIVE 2  /* (dead child, stopped child): the kept handles move in, same numbers; count */
#define LEG_DROP 3  /* (dead child): release them */
#define LEG_COUNT 4 /* (dead child): how many are kept, -ESRCH if none */
/* KC_TEXT operations. */
#define KT_READ 0    /* copy len (<= TEXT_READ_MAX) bytes of the child's executable memory at va */
#define KT_WRITE 1   /* write len (<= TEXT_PATCH_MAX) bytes there: only into text no other
                        process maps (-EBUSY); CPUs running the child serialize after it */
#define KT_SAMPLES 2 /* copy up to len / 8 user RIPs the child was last seen at (interrupts
                        and kernel calls from user mode), newest first; returns the count */
#define TEXT_READ_MAX 4096
#define TEXT_PATCH_MAX 16
#define TEXT_SAMPLES 64 /* user RIPs the kernel keeps per process */
/* KC_LX_THREAD flags. */
#define LXT_SETTLS 1     /* set the FS base to tls */
#define LXT_CLEARTID 2   /* zero clear_tid and wake a futex waiter there when the thread ends */
/* KC_LX_SIGNAL flags. */
#define LXS_THREAD 1     /* to that thread only (tgkill), not any thread of its process */
/* KC_LX_MMAP flag (in the Linux flags word, bit 31, unused by Linux): map the caller's
 * object itself, shared with the caller and every process mapping it (needs KP_W on the
 * handle for a writable mapping), instead of a private copy. */
#define LXM_SHARE 0x80000000u
#define LXS_QUERY 2      /* post nothing: answer 1 if sig would be discarded as ignored, the
                            disposition check behind SIGCHLD and SA_NOCLDWAIT */

#define KC_NR(n) (KC_BASE | (n))

/* Endpoints name threads: slot in the low 16 bits, generation above. A restarted or reused
 * slot gets a new generation, so a stale endpoint fails with -EDEADSRCDST. */
typedef uint32_t endpoint_t;
#define EP_ANY 0xffffffffu
#define EP_KERNEL 0xfffffffeu /* source of kernel-generated messages (exit/fault reports) */
#define EP_NONE 0u

/* 64-byte message. The kernel fills `source` on delivery; `type` is the sender's. */
struct kmsg {
	endpoint_t source;
	uint32_t type;
	uint64_t w[7];
};
_Static_assert(sizeof(struct kmsg) == 64, "kernel messages are 64 bytes");

/* Message types the kernel generates. */
#define KMSG_NOTIFY 0xffff0001u     /* w[0] = pending notification bits (now cleared) */
#define KMSG_PROC_EXIT 0xffff0002u  /* w[0] = endpoint of the process's first thread, w[1] = status,
                                       w[2] = CPU time it used, in microseconds */
#define KMSG_PROC_FAULT 0xffff0003u /* w[0] = endpoint, w[1] = vector, w[2] = error code,
                                       w[3] = rip, w[4] = fault address (cr2), w[5] = rsp */

/* KC_INFO counters. */
#define KI_FREE_FRAMES 0  /* free physical frames */
#define KI_MEMOBJS 1      /* memory objects alive */
#define KI_THREADS 2      /* threads alive */
#define KI_NCPUS 3        /* CPUs online */
#define KI_CPU_TICKS 4    /* timer ticks taken by CPU arg */
#define KI_CPU_FEATURES 5 /* bit 0: MONITOR/MWAIT on CPU arg */

#define KI_WAIT_MWAIT 6    /* KC_WAIT calls that slept in MWAIT */
#define KI_WAIT_BLOCK 7    /* KC_WAIT calls that blocked in the scheduler */
#define KI_PROC_CPU_US 10  /* CPU time used by the process of endpoint arg, its current runs included, in µs */
#define KI_PARENT 8        /* the caller's parent (receiver of its reports), EP_NONE if none */
#define KI_FREE_RUN 11     /* the longest run of free physical frames (what the largest DMA object
                              made now can have) */
#define KI_THREAD_STATE 12 /* the thread of endpoint arg: state (T_*: 1 ready, 2 running, 3 blocked)
                              in bits 0-7, why blocked (1 send, 2 receive, 3 reply, 4 wait,
                              5 futex) in 8-15, its CPU in 16-23; for rs's hang verdict
                              (these three: the caller's own threads and its children's) */
#define KI_THREAD_PEER 15  /* the endpoint a blocked thread of endpoint arg sends to, receives
                              from or awaits (EP_ANY for any), 0 if it is not blocked */
#define KI_THREAD_RIP 13   /* the user instruction pointer the thread of endpoint arg last
                              entered the kernel from (0 if it never did) */
#define KI_LINUX_CALLS 9   /* Linux system calls (rax below KC_BASE) the caller's process made,
                              served by the kernel or forwarded; the vDSO's clock reads make none */
#define KI_STAT 16         /* activity counter arg (KST_*, kstat.h), summed over every CPU */
#define KI_KCALL_STAT 17   /* per kernel call: calls, lock wait and hold cycles (KCS_*, kstat.h) */
#define KI_CPU_STAT 18     /* activity counter (arg & 0xff) of CPU (arg >> 8) alone */
#define KI_TSC_HZ 14       /* TSC ticks per second */
#define KI_VVAR 19         /* maps the clock's page (struct vvar, axolotl/vvar.h) read-only into
                              the caller's process, once; returns its address */
#define KI_HANDLE 20       /* the caller's handle arg: its rights (KP_*) | 0x100 if it created the
                              object, -EINVAL for a free slot, -ESRCH past the table's end (a
                              restarted server sorts what its legacy gave it, KC_LEGACY) */
#define KI_LX_STAT 22      /* Linux system calls numbered arg (< LX_STAT_NRS) that entered the
                              kernel, summed over every CPU (kstat's lx.NR lines) */
#define LX_STAT_NRS 512
#define KI_LX_PID 23        /* the Linux pid of the process of endpoint arg (KC_LX_PID), -KE_SRCH if none */
#define KI_LX_ARGS 24       /* the process of endpoint (arg & 0xffffffff): where exec put its strings,
                              field arg >> 32: 0 argv's start, 1 argv's end, 2 envp's end */
#define KI_LX_MAP 25         /* the process of endpoint (arg & 0xffffffff), its mapping number arg >> 32
                              (in no order; -ESRCH past the last): its address | KIM_* bits */
#define KI_LX_MAP_PAGES 26   /* the same mapping's length in pages */
#define KIM_R 1
#define KIM_W 2
#define KIM_X 4
#define KIM_SHARED 8  /* MAP_SHARED (or shared by the kernel: vDSO, vvar) */
#define KIM_SYS 16    /* the kernel's own (vDSO, vvar) */
#define KIM_STACK 32  /* the main thread's stack */
#define KIM_DEVICE 64 /* device memory (a native driver's) */
#define KI_IRQ_MASKED 27    /* ISA line arg, bound with KIRQ_WATCHED and left masked since its last
                              interrupt: the endpoint it notifies | the milliseconds since << 32;
                              0 when unmasked, unbound or not watched (rs: a deaf driver) */
/* KC_IRQ_BIND flags. KIRQ_WATCHED: the driver serves each interrupt and unmasks at once (it
 * never polls with the line masked): a line left masked for seconds means it no longer
 * serves its device, and rs may restart it (servers/rs/README.md). */
#define KIRQ_WATCHED 1
/* KC_MSI_BIND: at most this many vectors per function and call; what to write in an entry
 * (docs/devices.md "MSI-X"): the message address (0xfee00000 | destination APIC id << 12:
 * physical destination, fixed delivery) and data (the vector: edge, fixed). */
#define KMSI_MAX 8
struct kc_msi {
	uint64_t addr;
	uint32_t data;
	uint32_t vector; /* the CPU vector (data & 0xff), for logs */
};
#define KI_SWTRACE_COUNT 28 /* context switches noted in the switch trace since boot */
#define KI_SWTRACE 29       /* the switch trace's event arg >> 3 (0 at boot; -ESRCH when not yet made
                               or overwritten: the last 4096 are kept), field arg & 7 (KSWF_*) */
/* The TSC; the endpoints switched from and to (0: the idle thread); who made the second ready
 * (an endpoint, 0: the kernel, 0xffffffff: an interrupt); KSW_WHAT. */
enum { KSWF_TSC, KSWF_FROM, KSWF_TO, KSWF_WAKER, KSWF_WHAT };
/* KSWF_WHAT: the CPU (bits 0-7) | why the thread switched from gave the CPU up (bits 8-15) |
 * the call it was in (bits 16-: a kernel call's number, KC_*, or a Linux call's). */
enum { KSW_KCALL = 1, KSW_LINUX, KSW_IRQ, KSW_PREEMPT, KSW_IDLE, KSW_OTHER };
#define KI_THREAD_STAT 21  /* the thread in endpoint slot (arg & 0xffffffff), field (arg >> 32,
                              KTS_*): -EINVAL for a free slot or a kernel thread, -ESRCH past the
                              table's end (the console's `threads`, /proc/axolotl/threads) */
enum {
	KTS_ENDPOINT, /* its endpoint */
	KTS_RUNS,     /* times a CPU switched to it */
	KTS_CPU_US,   /* CPU time used before its current run, microseconds */
	KTS_CPU,      /* the CPU whose run queue it belongs to | 0x100 if pinned there */
	KTS_STATE,    /* T_* (1 ready, 2 running, 3 blocked) | why blocked << 8 */
	KTS_AS,       /* its address space's page-table root (CR3): names the samples of
		       * tools/qprof.py, which sees only CR3 and RIP */
	KTS_KCALLS,   /* kernel calls it made (native ones, not Linux calls) */
	KTS_NOTIFIES, /* of them, KC_NOTIFY: who rings whom (make bench's "notified by") */
	KTS_NAME,     /* its process's name, bytes 0-7 (little-endian; NUL-padded) */
	KTS_NAME_END = KTS_NAME + 3, /* ... bytes 24-31 */
};

/* Memory-object rights and mapping protections. */
#define KP_R 1
#define KP_W 2
#define KP_X 4
/* KC_MO_CREATE flags. */
#define MOF_DMA 1  /* physically contiguous, addresses readable by KC_MO_PHYS (DMA privilege) */
#define MOF_LAZY 2 /* each page is made (zeroed) when a mapping of it is first touched: an object
                    * that may stay mostly unused (a socket's buffers) costs what it uses */

/* KC_WAIT results. */
#define KW_DOORBELL 1 /* the doorbell no longer holds `seen` */
#define KW_IPC 2      /* a message, notification or kernel report is waiting */

/* KC_PRIV kinds. A process can only give what it holds; the first process holds all. */
#define KPRIV_IOPORT 1 /* a = first port, b = count */
#define KPRIV_IRQ 2    /* a = ISA IRQ line (0-15) */
#define KPRIV_MMIO 3   /* a = physical address, b = pages (never RAM) */
#define KPRIV_PCI 4    /* a = bus<<8 | dev<<3 | fn, or KPCI_ALL */
#define KPRIV_DMA 5    /* create MOF_DMA objects and read their physical addresses */
#define KPRIV_KCALLS 6 /* a = mask of native calls (bit n = call n, bit 63 = all >= 63) the child
                          may make; only calls the giver may make are given */
#define KPRIV_ALL 7    /* everything the giver holds (a launcher starting trusted servers) */
#define KPRIV_LINUX 8  /* a = endpoint (0: the giver), b = slot 0-3: a POSIX server of the child;
                          its Linux system calls go to slot 0's unless KC_LINUX_ROUTE says */
#define LINUX_SERVERS 4

/* A Linux system call the kernel does not serve itself reaches the process's POSIX server
 * as a call: type KMSG_LINUX | number, w[0..5] = the six arguments, w[6] = the calling
 * process's id (the endpoint its first thread had: the same for all its threads, across
 * execve and after that thread has gone), source = the calling thread. The server's reply
 * carries the result in w[0] (a value or -errno), which the caller finds in rax. One kernel
 * IPC round trip (docs/kernel-api.md, "Linux system calls"). */
#define KMSG_LINUX 0x4c580000u
/* A signal arrived for a thread whose forwarded call a server holds unanswered (blocked):
 * a kernel report to that server, w[0] = the thread, w[1] = its process id. If the server
 * still holds the call it answers it now with -LX_ERESTARTSYS; the kernel turns that into
 * -EINTR, or runs the call again after the handler (SA_RESTART) or when the signal was
 * ignored, as Linux does. A server holding no call from the thread ignores the report. */
#define KMSG_LINUX_CANCEL 0xffff0004u
#define LX_ERESTARTSYS 512
/* Message types from KMSG_KERNEL up to KMSG_KERNEL_END come only from the kernel: KC_SEND,
 * KC_CALL, KC_SENDNB and KC_REPLY refuse them (-EINVAL). The types above, -4095..-1 as
 * 32-bit values, stay free for servers' error replies (a negative errno as the type). */
#define KMSG_KERNEL 0xffff0000u
#define KMSG_KERNEL_END 0xfffff000u
/* A forwarded Linux call a POSIX server passed on with KC_LX_PASS (docs/kernel-api.md,
 * "Passing a held call"): type KMSG_LINUX_PASSED | nr, w[0..5] as the passer wrote them,
 * w[6] = the calling process's id (low 32 bits) | the passer's endpoint << 32, source = the
 * calling thread, which waits for the receiver's KC_REPLY (w[0] = its rax). */
#define KMSG_LINUX_PASSED 0xffff8000u
#define KMSG_LINUX_MAX 1024 /* numbers at or above this fail with -ENOSYS */

/* Calls a spawned process may not make until given them with KPRIV_KCALLS. */
#define KC_PRIVILEGED ((1ull << KC_VCOPY) | (1ull << KC_POWEROFF))
#define KPCI_ALL 0xffffffffu
#define KPCI_WRITE 0x100 /* or-ed into KC_PCI_CFG's width */

/* KC_SCHED flags. */
#define KS_DEDICATED 1 /* the CPU runs this thread alone, without a periodic tick */

struct kc_module_info {
	uint64_t size;
	char name[256]; /* the module's command line: its path, then its arguments */
};

#define SPAWN_ANY_CPU 0xffffffffu
/* kc_spawn flags. */
#define SPAWN_STOPPED 1 /* created, but runs only after KC_START (set privileges first) */

struct kc_spawn {
	uint32_t module;   /* boot module index */
	uint32_t cpu;      /* CPU to run on, or SPAWN_ANY_CPU */
	uint32_t priority; /* 0 (highest) .. 7 */
	uint32_t flags;
	const char *args;  /* NUL-terminated argument string (space separated), may be NULL */
};

/* errno values used by the native ABI (Linux numbering). */
#define KE_PERM 1
#define KE_SRCH 3
#define KE_INTR 4
#define KE_NOMEM 12
#define KE_FAULT 14
#define KE_BUSY 16
#define KE_INVAL 22
#define KE_AGAIN 11
#define KE_NOSYS 38
#define KE_TIMEDOUT 110
#define KE_DEADLK 35
#define KE_DEADSRCDST 81 /* peer is dead or the endpoint is stale (EREMCHG in Linux's list) */
