/* Request database: the requests a server has sent and not yet had answered (README.md).
 * Fixed capacity, caller-provided storage. An id carries the slot's generation, so a reply
 * to a finished request (a stale or forged id) is recognised. When a peer restarts, every
 * request to it is aborted through its abort action. */
#pragma once
#include "chan.h"

#define REQDB_NONE 0 /* never a valid id */

typedef void (*reqdb_abort_fn)(void *ctx, uint64_t id);

struct reqdb_entry {
	uint32_t peer;
	uint32_t gen;       /* odd while in use, even while free */
	uint32_t next_free;
	reqdb_abort_fn abort;
	void *ctx;
};

struct reqdb {
	struct reqdb_entry *e;
	uint32_t cap, nused, free_head;
};

void reqdb_init(struct reqdb *db, struct reqdb_entry *storage, uint32_t cap);
/* A new request to peer; its id, or REQDB_NONE when the table is full. */
uint64_t reqdb_add(struct reqdb *db, uint32_t peer, reqdb_abort_fn abort, void *ctx);
/* The reply to id came: removes the request and returns it (valid until the next
 * reqdb_add), or NULL if id is unknown, finished or forged. */
const struct reqdb_entry *reqdb_take(struct reqdb *db, uint64_t id);
/* The peer restarted: calls the abort action of each of its requests (which must not add
 * requests to the same peer) and removes them. Returns how many. */
uint32_t reqdb_abort_peer(struct reqdb *db, uint32_t peer);
/* The same for every request whose peer is not keep (a peer known by incarnation: all
 * the earlier ones are gone). */
uint32_t reqdb_abort_other(struct reqdb *db, uint32_t keep);
