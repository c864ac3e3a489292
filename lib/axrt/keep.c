/* Kept state (keep.h). */
#include "keep.h"
#include "heap.h"
#include "service.h"
#include "heartbeat.h"

#define KEEP_MAGIC_HDR 0x50454b5f5841ull /* "AX_KEP" */
#define MAX_CLAIMED 4096

struct keep_hdr {
	uint64_t hdr_magic, magic;
	uint64_t layout;
	int64_t self;         /* this object's handle */
	uint64_t bytes;       /* the whole object */
	uint64_t generation;
	uint64_t at_rest;     /* the instance that used it stopped at rest (ax_keep_at_rest) */
};

static struct keep_hdr *hdr;
static int64_t claimed[MAX_CLAIMED];
static int nclaimed;

uint64_t ax_keep_layout(const uint64_t *v, int n)
{
	uint64_t h = 1469598103934665603ull;
	for (int i = 0; i < n; i++)
		for (int b = 0; b < 8; b++)
			h = (h ^ ((v[i] >> (8 * b)) & 0xff)) * 1099511628211ull;
	return h;
}

/* The next handle above `after` that we created (or inherited with creator rights), or 0. */
static int64_t next_created(int64_t after)
{
	for (int64_t h = after + 1;; h++) {
		int64_t r = kcall2(KC_INFO, KI_HANDLE, (uint64_t)h);
		if (r == -KE_SRCH)
			return 0;
		if (r >= 0 && (r & 0x100))
			return h;
	}
}

/* The predecessor's kept object: the one of the objects we inherited whose first page is a
 * header naming its own handle. (Not simply the lowest handle: after a fresh start the old
 * state's handle is swept and later objects may take lower numbers.) */
static int64_t find_kept(void)
{
	for (int64_t h = next_created(0); h; h = next_created(h)) {
		int64_t va = ax_mo_map(h, 0, 0, 1, KP_R);
		if (va <= 0)
			continue;
		const struct keep_hdr *k = (const struct keep_hdr *)va;
		bool it = k->hdr_magic == KEEP_MAGIC_HDR && k->self == h;
		ax_mo_unmap((uint64_t)va);
		if (it)
			return h;
	}
	return 0;
}

static void *keep_open(uint64_t magic, uint64_t layout, uint64_t bytes, bool at_rest_only, bool *adopted)
{
	uint64_t total = 4096 + ((bytes + 4095) & ~4095ull);
	int64_t old = ax_svc.restarts ? find_kept() : 0;
	*adopted = false;
	if (old > 0) {
		int64_t va = ax_mo_map(old, 0, 0, total / 4096, KP_R | KP_W);
		struct keep_hdr *k = (struct keep_hdr *)va;
		if (va > 0 && k->hdr_magic == KEEP_MAGIC_HDR && k->magic == magic && k->layout == layout &&
		    k->self == old && k->bytes == total && (k->at_rest || !at_rest_only)) {
			hdr = k;
			*adopted = true;
		} else if (va > 0 && at_rest_only && !k->at_rest) { /* (find_kept checked the header) */
			/* It ended while at work (a crash, a kill, a hang): what it kept may be half
			 * changed. The object goes with the sweep. */
			ax_printf("%s: the kept state was not left at rest (the last instance ended at work): "
				  "starting afresh\n", ax_svc.name);
			ax_mo_unmap((uint64_t)va);
		} else if (ax_svc.update) {
			/* A live update to a build that cannot read the state: refused; rs brings the
			 * old binary back, which can (docs/recovery.md, "Live update"). */
			ax_printf("%s: the kept state does not match this build (no transfer function): "
				  "refusing the update\n", ax_svc.name);
			ax_exit(3);
		} else {
			ax_printf("%s: the kept state does not match this build: starting afresh\n", ax_svc.name);
			if (va > 0)
				ax_mo_unmap((uint64_t)va);
		}
	}
	if (!*adopted) {
		int64_t h = ax_mo_create(total / 4096, MOF_LAZY);
		int64_t va = h > 0 ? ax_mo_map(h, 0, 0, total / 4096, KP_R | KP_W) : h;
		if (va <= 0) {
			ax_printf("%s: cannot make its kept state (%lld)\n", ax_svc.name, (long long)va);
			ax_exit(1);
		}
		hdr = (struct keep_hdr *)va;
		*hdr = (struct keep_hdr){ KEEP_MAGIC_HDR, magic, layout, h, total, 0, 0 };
	}
	hdr->generation++;
	return (char *)hdr + 4096;
}

void *ax_keep_open(uint64_t magic, uint64_t layout, uint64_t bytes, bool *adopted)
{
	return keep_open(magic, layout, bytes, false, adopted);
}

void ax_keep_at_rest(bool rest)
{
	if (hdr)
		hdr->at_rest = rest;
}

uint64_t ax_keep_generation(void) { return hdr ? hdr->generation : 0; }

static bool is_claimed(int64_t h)
{
	for (int i = 0; i < nclaimed; i++)
		if (claimed[i] == h)
			return true;
	return false;
}

void ax_keep_claim(int64_t h)
{
	if (nclaimed < MAX_CLAIMED)
		claimed[nclaimed++] = h;
}

void *ax_keep_remap(int64_t h, void *was, uint64_t bytes)
{
	uint64_t pages = (bytes + 4095) / 4096;
	int64_t va = ax_mo_map(h, (uint64_t)was, 0, pages, KP_R | KP_W);
	if (va <= 0)
		va = ax_mo_map(h, 0, 0, pages, KP_R | KP_W);
	if (va <= 0)
		return NULL;
	ax_keep_claim(h);
	return (void *)va;
}

int ax_keep_sweep(void)
{
	int gone = 0;
	for (int64_t h = next_created(0); h; h = next_created(h)) {
		if (hdr && h == hdr->self)
			continue;
		/* Our handle only (not a destroy, which would revoke the grants): a peer may still
		 * use the object until it notices us. */
		if (!is_claimed(h) && ax_mo_revoke(EP_NONE, h) == 0)
			gone++;
	}
	nclaimed = 0;
	return gone;
}

int ax_keep_sweep_grants(void)
{
	int gone = 0;
	for (int64_t h = 1;; h++) {
		int64_t r = kcall2(KC_INFO, KI_HANDLE, (uint64_t)h);
		if (r == -KE_SRCH)
			break;
		if (r < 0 || (r & 0x100) || h == ax_hb_handle)
			continue;
		if (!is_claimed(h) && ax_mo_destroy(h) == 0) /* closes our handle on a grant */
			gone++;
	}
	return gone;
}

extern char __kept_start[], __kept_end[]; /* lib/axrt/kept.ld */

/* The heap's objects among the predecessor's: each mapped again where it was, and claimed.
 * False if one cannot be. */
static bool adopt_heap(void)
{
	for (int64_t h = next_created(0); h; h = next_created(h)) {
		if (h == hdr->self)
			continue;
		int64_t peek = ax_mo_map(h, 0, 0, 1, KP_R);
		if (peek <= 0)
			continue;
		uint64_t va, bytes;
		bool ours = ax_heap_object((const void *)peek, &va, &bytes);
		ax_mo_unmap((uint64_t)peek);
		if (!ours)
			continue;
		if (ax_mo_map(h, va, 0, bytes / 4096, KP_R | KP_W) != (int64_t)va) {
			ax_printf("%s: cannot map the kept heap's object %lld at %#llx again\n", ax_svc.name,
				  (long long)h, (unsigned long long)va);
			return false;
		}
		ax_keep_claim(h);
	}
	return true;
}

bool ax_keep_image(uint64_t magic, uint64_t version, unsigned flags)
{
	uint64_t bytes = (uint64_t)(__kept_end - __kept_start);
	/* The section's place too: pointers into it may be anywhere in the state. */
	uint64_t v[3] = { bytes, version, (uint64_t)__kept_start };
	bool adopted;
	void *area = keep_open(magic, ax_keep_layout(v, 3), bytes, flags & AXK_AT_REST, &adopted);
	if (!adopted)
		memcpy(area, __kept_start, bytes); /* whatever was set before (nothing, as a rule) */
	/* The section's own pages (the program image's mapping of it) give way to the object's. */
	if (ax_mo_unmap((uint64_t)__kept_start) != 0 ||
	    ax_mo_map(hdr->self, (uint64_t)__kept_start, 1, bytes / 4096, KP_R | KP_W) != (int64_t)__kept_start) {
		ax_printf("%s: cannot map its kept section at %p\n", ax_svc.name, (void *)__kept_start);
		ax_exit(1);
	}
	if (adopted && !adopt_heap()) {
		ax_printf("%s: the kept heap cannot be taken over\n", ax_svc.name);
		ax_exit(ax_svc.update ? 3 : 1);
	}
	return adopted;
}
