#include "proc/ipc.h"
#include "proc/sched.h"
#include "mm/heap.h"
#include "smp/ipi.h"
#include "smp/percpu.h"

/* Tells a thread in the wait call that IPC is pending: a blocked waiter is woken, one in
 * MWAIT on its dedicated core gets an IPI (the write it monitors is not ours). */
static void kick_waiter(struct thread *t)
{
	if (t->state == T_BLOCKED && t->blocked_on == B_WAIT)
		ipc_wake(t, KW_IPC);
	else if (t->mwaiting && t->state == T_RUNNING && t->cpu != (int32_t)this_cpu_index())
		smp_send_resched((uint32_t)t->cpu);
}

void ipc_wake(struct thread *t, int64_t result)
{
	t->ipc_result = result;
	t->blocked_on = B_NONE;
	if (t->state == T_BLOCKED)
		sched_make_ready(t);
}

int64_t ipc_block(struct thread *me, enum block_reason why, endpoint_t peer)
{
	if (me->state == T_DEAD)
		return -KE_INTR;
	me->blocked_on = why;
	me->ipc_peer = peer;
	me->state = T_BLOCKED;
	KSTAT_INC(KST_BLOCKS);
	schedule();
	return me->ipc_result;
}

/* Takes the pending notification or kernel message for a receive from src, if any. */
static bool take_async(struct thread *me, endpoint_t src)
{
	if (me->notify_pending && src == EP_ANY) {
		struct kmsg *m = &me->ipc_msg;
		*m = (struct kmsg){ .source = EP_KERNEL, .type = KMSG_NOTIFY };
		m->w[0] = me->notify_pending;
		me->notify_pending = 0;
		return true;
	}
	if (me->kmsgs && (src == EP_ANY || src == EP_KERNEL)) {
		struct kmsg_node *n = me->kmsgs;
		me->kmsgs = n->next;
		me->nkmsgs--;
		me->ipc_msg = n->m;
		kfree(n);
		return true;
	}
	return false;
}

static bool accepts(const struct thread *r, endpoint_t from)
{
	return r->state == T_BLOCKED && r->blocked_on == B_RECEIVE &&
	       (r->ipc_peer == EP_ANY || r->ipc_peer == from);
}

/* Would me -> dst close a cycle of blocked senders? */
static bool send_cycle(const struct thread *me, const struct thread *dst)
{
	for (int hops = 0; dst && hops < MAX_THREADS; hops++) {
		if (dst->state != T_BLOCKED || (dst->blocked_on != B_SEND && dst->blocked_on != B_REPLY))
			return false;
		if (dst->ipc_peer == thread_ep(me))
			return true;
		dst = ep_lookup(dst->ipc_peer);
	}
	return false;
}

int64_t ipc_send(struct thread *me, endpoint_t dst, const struct kmsg *m, bool call)
{
	struct thread *d = ep_lookup(dst);
	if (!d)
		return -KE_DEADSRCDST;
	if (d == me || send_cycle(me, d))
		return -KE_DEADLK;
	me->ipc_msg = *m;
	me->ipc_msg.source = thread_ep(me);
	me->ipc_call = call;
	if (accepts(d, thread_ep(me))) {
		d->ipc_msg = me->ipc_msg;
		ipc_wake(d, 0);
		return call ? ipc_block(me, B_REPLY, dst) : 0;
	}
	/* Queue behind earlier senders. */
	me->sendq_next = NULL;
	struct thread **pp = &d->sendq;
	while (*pp)
		pp = &(*pp)->sendq_next;
	*pp = me;
	kick_waiter(d);
	return ipc_block(me, B_SEND, dst);
}

void ipc_redirect(struct thread *t, struct thread *d, const struct kmsg *m)
{
	t->ipc_msg = *m;
	t->ipc_call = true;
	t->ipc_peer = thread_ep(d);
	if (accepts(d, thread_ep(t))) {
		d->ipc_msg = t->ipc_msg;
		ipc_wake(d, 0);
		t->blocked_on = B_REPLY;
		return;
	}
	t->blocked_on = B_SEND;
	t->sendq_next = NULL;
	struct thread **pp = &d->sendq;
	while (*pp)
		pp = &(*pp)->sendq_next;
	*pp = t;
	kick_waiter(d);
}

int64_t ipc_receive(struct thread *me, endpoint_t src)
{
	if (src != EP_ANY && src != EP_KERNEL && !ep_lookup(src))
		return -KE_DEADSRCDST;
	if (take_async(me, src))
		return 0;
	for (struct thread **pp = &me->sendq; *pp; pp = &(*pp)->sendq_next) {
		struct thread *s = *pp;
		if (src != EP_ANY && thread_ep(s) != src)
			continue;
		*pp = s->sendq_next;
		me->ipc_msg = s->ipc_msg;
		if (s->ipc_call) {
			s->blocked_on = B_REPLY; /* still blocked: now it waits for our reply */
		} else {
			ipc_wake(s, 0);
		}
		return 0;
	}
	return ipc_block(me, B_RECEIVE, src);
}

int64_t ipc_reply(struct thread *me, endpoint_t dst, const struct kmsg *m, bool nonblocking_send)
{
	struct thread *d = ep_lookup(dst);
	if (!d)
		return -KE_DEADSRCDST;
	bool ok = nonblocking_send ? accepts(d, thread_ep(me))
				   : d->state == T_BLOCKED && d->blocked_on == B_REPLY &&
					     d->ipc_peer == thread_ep(me);
	if (!ok)
		return nonblocking_send ? -KE_AGAIN : -KE_INVAL;
	d->ipc_msg = *m;
	d->ipc_msg.source = thread_ep(me);
	ipc_wake(d, 0);
	return 0;
}

void ipc_wake_receiver(struct thread *t)
{
	kick_waiter(t);
	if (t->state != T_BLOCKED)
		return;
	if (t->blocked_on == B_RECEIVE && take_async(t, t->ipc_peer))
		ipc_wake(t, 0);
}

int64_t ipc_notify(struct thread *me, endpoint_t dst, uint64_t bits)
{
	(void)me;
	struct thread *d = ep_lookup(dst);
	if (!d)
		return -KE_DEADSRCDST;
	if (!bits)
		return -KE_INVAL;
	d->notify_pending |= bits;
	ipc_wake_receiver(d);
	return 0;
}

void ipc_cancel_send(struct thread *t)
{
	struct thread *d = ep_lookup(t->ipc_peer);
	if (d)
		for (struct thread **pp = &d->sendq; *pp; pp = &(*pp)->sendq_next)
			if (*pp == t) {
				*pp = t->sendq_next;
				return;
			}
}

void ipc_cancel(struct thread *t)
{
	endpoint_t ep = thread_ep(t);
	/* Out of the queue it is waiting in. */
	if (t->state == T_BLOCKED && t->blocked_on == B_SEND)
		ipc_cancel_send(t);
	/* Everybody blocked on it fails. */
	while (t->sendq) {
		struct thread *s = t->sendq;
		t->sendq = s->sendq_next;
		ipc_wake(s, -KE_DEADSRCDST);
	}
	for (uint32_t i = 1; i < MAX_THREADS; i++) {
		struct thread *o = &threads[i];
		if (o != t && o->state == T_BLOCKED && o->ipc_peer == ep &&
		    (o->blocked_on == B_REPLY || o->blocked_on == B_RECEIVE))
			ipc_wake(o, -KE_DEADSRCDST);
	}
}
