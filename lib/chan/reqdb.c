/* Request database (reqdb.h). An id is gen << 32 | slot; generations are odd while a slot
 * is in use, so REQDB_NONE (0) and ids of free slots never match. */
#include <stdbool.h>
#include "reqdb.h"

#define REQDB_END UINT32_MAX

void reqdb_init(struct reqdb *db, struct reqdb_entry *storage, uint32_t cap)
{
	db->e = storage;
	db->cap = cap;
	db->nused = 0;
	for (uint32_t i = 0; i < cap; i++)
		storage[i] = (struct reqdb_entry){ .gen = 0, .next_free = i + 1 < cap ? i + 1 : REQDB_END };
	db->free_head = cap ? 0 : REQDB_END;
}

uint64_t reqdb_add(struct reqdb *db, uint32_t peer, reqdb_abort_fn abort, void *ctx)
{
	uint32_t i = db->free_head;
	if (i == REQDB_END)
		return REQDB_NONE;
	struct reqdb_entry *e = &db->e[i];
	db->free_head = e->next_free;
	e->gen++; /* even -> odd */
	e->peer = peer;
	e->abort = abort;
	e->ctx = ctx;
	db->nused++;
	return (uint64_t)e->gen << 32 | i;
}

static void reqdb_release(struct reqdb *db, uint32_t i)
{
	struct reqdb_entry *e = &db->e[i];
	e->gen++; /* odd -> even: the id goes stale */
	e->next_free = db->free_head;
	db->free_head = i;
	db->nused--;
}

const struct reqdb_entry *reqdb_take(struct reqdb *db, uint64_t id)
{
	uint32_t i = (uint32_t)id, gen = (uint32_t)(id >> 32);
	if (i >= db->cap || !(gen & 1) || db->e[i].gen != gen)
		return NULL;
	reqdb_release(db, i);
	return &db->e[i];
}

/* Aborts the requests whose peer is (same) or is not (!same) peer. */
static uint32_t abort_where(struct reqdb *db, uint32_t peer, bool same)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < db->cap; i++) {
		struct reqdb_entry *e = &db->e[i];
		if (!(e->gen & 1) || (e->peer == peer) != same)
			continue;
		/* Free first, then call: the action may add requests (to other peers). */
		uint64_t id = (uint64_t)e->gen << 32 | i;
		reqdb_abort_fn fn = e->abort;
		void *ctx = e->ctx;
		reqdb_release(db, i);
		if (fn)
			fn(ctx, id);
		n++;
	}
	return n;
}

uint32_t reqdb_abort_peer(struct reqdb *db, uint32_t peer)
{
	return abort_where(db, peer, true);
}

uint32_t reqdb_abort_other(struct reqdb *db, uint32_t keep)
{
	return abort_where(db, keep, false);
}
