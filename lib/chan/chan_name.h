/* Channels and pools by name (README.md, "Names"): the owner of a shared memory object
 * exports it under a key in its ds namespace; a peer imports it by label and key, and the
 * owner grants it the object. Axolotl only (kernel IPC, ds). */
#pragma once
#include "axrt.h"

#define CHAN_ATTACH 0x6301 /* w[0..1] = export key -> w[0] = handle granted to the caller,
                              w[1] = bytes, w[2] = rights (KP_*); w[6] = 0 or -KE_* */
#define CHAN_NAME_MAGIC 0x584e4843u /* "CHNX": the ds value of an export */

struct chan_export {
	char key[16];          /* name under the owner's label in ds */
	int64_t handle;        /* the memory object */
	uint64_t bytes;
	uint64_t rights;       /* given to the importer: KP_R | KP_W for a channel, KP_R for a pool */
	const char *peer;      /* service name allowed to import (its running or updating
	                          instance), or NULL for anyone */
	/* Called after a peer imported the object (e.g. to learn whom to wake). */
	void (*on_attach)(struct chan_export *e, endpoint_t importer);
	void *ctx;
	endpoint_t importer;   /* the current importer; the previous one's grant is revoked */
	int64_t importer_handle;
};

struct spsc;
/* A new channel in a memory object of its own, formatted and attached for one side (role
 * SPSC_PRODUCER or SPSC_CONSUMER): fills e->handle and e->bytes for chan_export. 0 or -KE_*. */
int64_t chan_create(struct chan_export *e, uint32_t slot_size, uint32_t nslots, int role, struct spsc *q);
/* A channel made by an earlier instance of this server (its handle kept through a restart,
 * KC_LEGACY): mapped and attached for one side, continuing from the indices in it; fills
 * e->handle and e->bytes. 0 or -KE_* (malformed or impossible indices: not attached). */
int64_t chan_adopt(struct chan_export *e, int64_t handle, uint64_t bytes, int role, struct spsc *q);
/* Publishes e (kept by pointer: it must live as long as the export). 0 or -KE_*. */
int64_t chan_export(struct chan_export *e);
/* If m is an import request for one of our exports, answers it and returns true. */
bool chan_export_serve(struct kmsg *m);

struct chan_import {
	endpoint_t owner;
	void *va;
	uint64_t bytes;
	int64_t handle; /* our handle on the object (KC_MO_PHYS for a DMA pool; destroy to close) */
};
/* Maps label's export key; 0 or -KE_*. */
int64_t chan_import(const char *label, const char *key, struct chan_import *out);
/* Unmaps it and closes our handle (the owner's memory lives on while others hold it). */
void chan_unimport(struct chan_import *c);
