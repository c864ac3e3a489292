/* Export and import of shared memory objects through ds names (chan_name.h). */
#include "chan_name.h"
#include "ds_client.h"
#include "service.h"
#include "spsc.h"

#define MAX_EXPORTS 64 /* ip alone exports 4 per driver and 2 per extra queue pair, 3 per transport and 2 to pf */

struct export_value { /* the 24-byte ds value */
	uint32_t magic, owner;
	uint64_t bytes;
	uint32_t rights, pad;
};

static struct chan_export *exports[MAX_EXPORTS];

int64_t chan_create(struct chan_export *e, uint32_t slot_size, uint32_t nslots, int role, struct spsc *q)
{
	size_t bytes = (spsc_size(slot_size, nslots) + 4095) & ~(size_t)4095;
	if (bytes == 0)
		return -KE_INVAL;
	int64_t h = ax_mo_create(bytes / 4096, 0);
	int64_t va = h > 0 ? ax_mo_map(h, 0, 0, bytes / 4096, KP_R | KP_W) : h;
	if (va < 0)
		return va;
	if (spsc_init((void *)va, bytes, slot_size, nslots) < 0 || spsc_attach(q, (void *)va, bytes, role) < 0) {
		ax_mo_destroy(h);
		return -KE_INVAL;
	}
	e->handle = h;
	e->bytes = bytes;
	return 0;
}

int64_t chan_adopt(struct chan_export *e, int64_t handle, uint64_t bytes, int role, struct spsc *q)
{
	int64_t va = ax_mo_map(handle, 0, 0, bytes / 4096, KP_R | KP_W);
	if (va < 0)
		return va;
	int r = spsc_attach(q, (void *)va, bytes, role);
	if (r < 0) {
		ax_mo_unmap((uint64_t)va);
		return r == CHAN_ECORRUPT ? -KE_FAULT : -KE_INVAL;
	}
	e->handle = handle;
	e->bytes = bytes;
	return 0;
}

int64_t chan_export(struct chan_export *e)
{
	int slot = -1;
	for (int i = 0; i < MAX_EXPORTS; i++)
		if (exports[i] == e || (!exports[i] && slot < 0))
			slot = i;
	if (slot < 0)
		return -KE_NOMEM;
	exports[slot] = e;
	struct export_value v = { CHAN_NAME_MAGIC, ax_self(), e->bytes, (uint32_t)e->rights, 0 };
	return dsc_put(e->key, &v, sizeof(v));
}

static bool allowed(const struct chan_export *e, endpoint_t who)
{
	if (!e->peer)
		return true;
	endpoint_t next = 0;
	int64_t ep = ax_svc_lookup(e->peer, &next);
	return (ep > 0 && (endpoint_t)ep == who) || (next && next == who);
}

bool chan_export_serve(struct kmsg *m)
{
	if (m->type != CHAN_ATTACH)
		return false;
	endpoint_t from = m->source;
	struct chan_export *e = NULL;
	for (int i = 0; i < MAX_EXPORTS && !e; i++)
		if (exports[i] && !memcmp(exports[i]->key, &m->w[0], 16) && !exports[i]->key[15])
			e = exports[i];
	int64_t r = !e ? -KE_SRCH : !allowed(e, from) ? -KE_PERM : 0;
	if (r == 0) {
		/* One importer at a time: a restarted or updated peer replaces its predecessor,
		 * which loses the mapping (it is dead or has let go of it). */
		if (e->importer && e->importer != from)
			ax_mo_revoke(e->importer, e->importer_handle);
		r = ax_mo_grant(e->handle, from, e->rights);
	}
	memset(m->w, 0, sizeof(m->w));
	if (r > 0) {
		e->importer = from;
		e->importer_handle = r;
		m->w[0] = (uint64_t)r, m->w[1] = e->bytes, m->w[2] = e->rights;
		r = 0;
	}
	m->w[6] = (uint64_t)r;
	ax_reply(from, m);
	if (r == 0 && e->on_attach)
		e->on_attach(e, from);
	return true;
}

int64_t chan_import(const char *label, const char *key, struct chan_import *out)
{
	struct export_value v;
	uint32_t len = 0;
	int64_t r = dsc_get(label, key, &v, &len);
	if (r < 0)
		return r;
	if (len != sizeof(v) || v.magic != CHAN_NAME_MAGIC || !v.bytes || v.bytes % 4096)
		return -KE_INVAL;
	struct kmsg m = { .type = CHAN_ATTACH };
	if (ax_strpad(m.w, 16, key) < 0)
		return -KE_INVAL;
	if ((r = ax_call((endpoint_t)v.owner, &m)) < 0 || (r = (int64_t)m.w[6]) < 0)
		return r;
	if (m.w[1] != v.bytes)
		return -KE_INVAL; /* the owner contradicts what it published */
	int64_t va = ax_mo_map((int64_t)m.w[0], 0, 0, v.bytes / 4096, m.w[2] & (KP_R | KP_W));
	if (va < 0)
		return va;
	out->owner = (endpoint_t)v.owner;
	out->handle = (int64_t)m.w[0];
	out->va = (void *)va;
	out->bytes = v.bytes;
	return 0;
}

void chan_unimport(struct chan_import *c)
{
	if (c->va)
		ax_mo_unmap((uint64_t)c->va);
	c->va = NULL;
	/* Close our handle too: each import gets a new one, and a process has few. */
	if (c->handle > 0)
		ax_mo_destroy(c->handle);
	c->handle = 0;
}
