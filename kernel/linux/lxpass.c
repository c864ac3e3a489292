/* KC_LX_PASS: a POSIX server hands a Linux call it holds to another server (vfs passes the
 * calls on network sockets to `syscall`), so the application still makes one kernel IPC
 * round trip: the thread now waits in a call to dst exactly as if it had called dst with the
 * passed message — dst answers it with KC_REPLY, a signal's KMSG_LINUX_CANCEL goes to dst,
 * and dst dying fails the call with EINTR (docs/kernel-api.md, "Passing a held call").
 * The type says the message was passed and cannot be forged (kernel-only range); w[6]
 * carries the caller's process id and the passer's endpoint. */
#include "linux/lxproc.h"
#include "proc/ipc.h"
#include "linux/signal.h"
#include "mm/aspace.h"

int64_t kc_lx_pass(struct thread *me, endpoint_t ep, endpoint_t dst, uint64_t umsg)
{
	struct kmsg m;
	if (copy_from_user(&m, (const void *)umsg, sizeof(m)))
		return -KE_FAULT;
	struct thread *t = ep_lookup(ep), *d = ep_lookup(dst);
	if (!t || !d)
		return -KE_DEADSRCDST;
	/* Only the server the thread waits on for this very Linux call may pass it. */
	if (!t->proc->lx || !t->lxt.in_lxcall || !held_by(t, me))
		return -KE_PERM;
	uint32_t nr = m.type & 0xffff;
	if (d == t || d->proc == t->proc || nr >= KMSG_LINUX_MAX)
		return -KE_INVAL;
	m.type = KMSG_LINUX_PASSED | nr;
	m.source = thread_ep(t);
	m.w[6] = (uint64_t)t->proc->id | (uint64_t)thread_ep(me) << 32;
	ipc_redirect(t, d, &m);
	/* A signal that came while the passer held the call was told to the passer, which no
	 * longer has it: tell the new holder, so a blocking call is given back. */
	if (signal_pending(t) && t->blocked_on == B_SEND) { /* still queued: run it again */
		ipc_cancel_send(t);
		ipc_wake(t, -LX_ERESTARTSYS);
	} else if (signal_pending(t)) { /* delivered: behind it, so dst sees the call first */
		struct kmsg c = { .type = KMSG_LINUX_CANCEL, .w = { thread_ep(t), t->proc->id } };
		kmsg_post(d, &c);
	}
	return 0;
}
