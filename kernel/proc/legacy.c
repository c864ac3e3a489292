/* Legacies (legacy.h): what lets a restarted server find its memory again. A server that
 * keeps its state outside its private memory (socket buffers, tables in an object of its own)
 * loses only its mappings when it dies; its handles, creator rights included, are parked
 * here, keyed by the dead process's id, until its parent (rs) hands them to the next
 * incarnation with the same numbers, or drops them. Handles the parent itself granted are
 * not kept: the parent grants them again (rs's heartbeat page). */
#include "proc/legacy.h"
#include "proc/memcall.h"
#include "console/log.h"
#include "mm/heap.h"

#define MAX_LEGACIES 32

struct legacy {
	endpoint_t dead;           /* the process that ended (its id), 0: free slot */
	endpoint_t parent;         /* who may give or drop it */
	struct mo_handle *handles; /* its table as it was, cap slots */
	uint32_t cap;
	uint32_t count;            /* handles in use */
};
static struct legacy legacies[MAX_LEGACIES];

static void legacy_release(struct legacy *l)
{
	for (uint32_t i = 0; i < l->cap; i++)
		if (l->handles[i].mo)
			mo_handle_release(&l->handles[i]);
	kfree(l->handles);
	*l = (struct legacy){ 0 };
}

void legacy_take(struct proc *p)
{
	if (!p->keep_handles || !p->handles)
		return;
	struct legacy *l = NULL;
	for (uint32_t i = 0; i < MAX_LEGACIES && !l; i++)
		if (!legacies[i].dead)
			l = &legacies[i];
	if (!l) {
		pr_warn("%s: no room to keep its memory for a restart (%d legacies kept)", p->name, MAX_LEGACIES);
		return;
	}
	uint32_t count = 0;
	for (uint32_t i = 0; i < p->handles_cap; i++) {
		struct mo_handle *hd = &p->handles[i];
		if (hd->mo && p->parent != EP_NONE && hd->granter == p->parent)
			mo_handle_release(hd);
		count += hd->mo != NULL;
	}
	*l = (struct legacy){ p->id, p->parent, p->handles, p->handles_cap, count };
	p->handles = NULL, p->handles_cap = 0;
}

void legacy_parent_gone(struct proc *p)
{
	for (uint32_t i = 0; i < MAX_LEGACIES; i++)
		if (legacies[i].dead && legacies[i].parent == p->id)
			legacy_release(&legacies[i]);
}

void legacy_close_object(struct memobj *mo)
{
	for (uint32_t i = 0; i < MAX_LEGACIES && mo->granted; i++)
		for (uint32_t k = 0; legacies[i].dead && k < legacies[i].cap; k++)
			if (legacies[i].handles[k].mo == mo) {
				mo_handle_release(&legacies[i].handles[k]);
				legacies[i].count--;
			}
}

static struct legacy *legacy_find(endpoint_t dead)
{
	for (uint32_t i = 0; i < MAX_LEGACIES; i++)
		if (dead && legacies[i].dead == dead)
			return &legacies[i];
	return NULL;
}

bool legacy_pending(endpoint_t dead) { return legacy_find(dead) != NULL; }

/* The legacy of `dead` if the caller keeps it. */
static struct legacy *legacy_of(struct thread *me, endpoint_t dead)
{
	struct legacy *l = legacy_find(dead);
	return l && l->parent == me->proc->id ? l : NULL;
}

/* p succeeds the dead process `old`: old's children are p's (their reports come to p), what
 * old granted p may revoke, the legacies old kept are p's, and p serves the Linux calls
 * processes sent to old (pm, vfs). */
static void succession(endpoint_t old, struct proc *p)
{
	for (uint32_t i = 1; i < MAX_THREADS; i++) {
		struct proc *q = threads[i].proc;
		if (threads[i].state == T_FREE || !q || q->main != &threads[i])
			continue;
		if (q->parent == old)
			q->parent = p->id;
		for (uint32_t h = 0; h < q->handles_cap; h++)
			if (q->handles[h].mo && q->handles[h].granter == old)
				q->handles[h].granter = p->id;
		for (uint32_t s = 0; s < LINUX_SERVERS; s++)
			if (q->linux_servers[s] == old)
				q->linux_servers[s] = p->id;
	}
	legacy_adopt(old, p->id);
}

/* Moves l into the stopped child p, each handle at its old number: all or nothing; p
 * succeeds the dead process. */
static int64_t legacy_give(struct legacy *l, struct proc *p)
{
	if (!p->stopped)
		return -KE_INVAL;
	if (proc_handles_reserve(p, l->cap) < 0)
		return -KE_NOMEM;
	for (uint32_t i = 0; i < l->cap; i++)
		if (l->handles[i].mo && p->handles[i].mo)
			return -KE_BUSY;
	for (uint32_t i = 0; i < l->cap; i++)
		if (l->handles[i].mo)
			p->handles[i] = l->handles[i]; /* the reference moves with it */
	int64_t n = l->count;
	endpoint_t dead = l->dead;
	kfree(l->handles);
	*l = (struct legacy){ 0 };
	succession(dead, p);
	return n;
}

void legacy_adopt(endpoint_t from, endpoint_t to)
{
	for (uint32_t i = 0; i < MAX_LEGACIES; i++) {
		struct legacy *l = &legacies[i];
		if (!l->dead)
			continue;
		if (l->parent == from)
			l->parent = to;
		/* what `from` granted, the dead child's new parent grants again: not kept */
		for (uint32_t k = 0; k < l->cap; k++)
			if (l->handles[k].mo && l->handles[k].granter == from && l->parent == to) {
				mo_handle_release(&l->handles[k]);
				l->count--;
			}
	}
}

int64_t legacy_give_to(endpoint_t dead, struct proc *p)
{
	struct legacy *l = legacy_find(dead);
	int64_t n = l ? legacy_give(l, p) : 0;
	if (!l || n < 0) { /* nothing kept, or it could not go in: p succeeds it all the same */
		if (l)
			legacy_release(l);
		succession(dead, p);
	}
	return n;
}

void legacy_drop_of(endpoint_t dead)
{
	struct legacy *l = legacy_find(dead);
	if (l)
		legacy_release(l);
}

int64_t kc_legacy(struct thread *me, uint64_t op, endpoint_t a, endpoint_t b)
{
	int64_t err;
	switch (op) {
	case LEG_KEEP: {
		struct proc *p = proc_child(me, a, &err);
		if (!p)
			return err;
		p->keep_handles = b != 0;
		return 0;
	}
	case LEG_GIVE: {
		struct legacy *l = legacy_of(me, a);
		struct proc *p = proc_child(me, b, &err);
		if (!l)
			return -KE_SRCH;
		return p ? legacy_give(l, p) : err;
	}
	case LEG_DROP: {
		struct legacy *l = legacy_of(me, a);
		if (!l)
			return -KE_SRCH;
		legacy_release(l);
		return 0;
	}
	case LEG_COUNT: {
		struct legacy *l = legacy_of(me, a);
		return l ? (int64_t)l->count : -KE_SRCH;
	}
	}
	return -KE_INVAL;
}
