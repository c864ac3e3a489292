/* Kept state: a server's tables in a memory object that outlives it (KC_LEGACY: rs, or the
 * kernel for rs itself, hands a restarted server its predecessor's handles with the same
 * numbers; docs/kernel-api.md §5.8). The next instance finds it among the objects it
 * inherited by its header (magic, a hash of the layout, its own handle and size), which also
 * decides whether it is trusted. */
#pragma once
#include "axrt.h"

/* Call first thing after ax_svc_init (before anything makes an object): the area after the
 * header, `bytes` of it (zeroed when new). *adopted: it holds a predecessor's state (only
 * after a restart, with the same magic, layout and size). Exits if no object can be made. */
void *ax_keep_open(uint64_t magic, uint64_t layout, uint64_t bytes, bool *adopted);
/* Instances that used the state so far (1: the first). */
uint64_t ax_keep_generation(void);
/* Object h, mapped at `was` by the predecessor: mapped again, there if free, else anywhere
 * (read/write), and claimed. Its address, or NULL. */
void *ax_keep_remap(int64_t h, void *was, uint64_t bytes);
/* h is still in use (not the predecessor's litter). */
void ax_keep_claim(int64_t h);
/* Closes our handle on every object the predecessor made that nobody claimed (its channels,
 * its heap): the objects go when their other holders let go. How many. It cannot tell ours
 * from the predecessor's: call it before making objects of one's own (or claim them). */
int ax_keep_sweep(void);
/* Closes every handle on an object someone else made (a grant: imports, buffers given to
 * us) that the predecessor held and nobody claimed, except the heartbeat page's. Before
 * importing anything (and before ax_keep_sweep, which forgets the claims). How many. */
int ax_keep_sweep_grants(void);
/* true: the state is consistent and no longer changed by this instance (a live update's
 * quiesce): a successor opening it with AXK_AT_REST adopts it; one that finds it not at rest
 * (the instance ended at work: crashed, killed, hung) starts afresh. false: the adopter
 * starts changing it (after its adoption succeeded: until then a rollback's old binary may
 * still take it). */
void ax_keep_at_rest(bool rest);
/* FNV-1a over n 64-bit values: a layout hash for ax_keep_open. */
uint64_t ax_keep_layout(const uint64_t *v, int n);

/* A variable kept with the program's image (ax_keep_image): placed in the section .bss.kept
 * (lib/axrt/kept.ld, at a fixed address). Zero at the first start, like .bss; an initializer
 * does not compile. (Whole object files can be kept too: their .data and .bss renamed
 * .data.kept and .bss.kept, as lib/lwip/lwip.mk does for tcp's lwIP.) */
#define AX_KEPT __attribute__((section(".bss.kept")))
/* Keeps the program's image state: every AX_KEPT variable (the server's and the heap's) lives
 * in the kept object, mapped where the section is, and the heap's objects (heap.h) are handed
 * on too, so after a restart or a live update every pointer into the heap or the section is
 * still good. Call first thing after ax_svc_init, before anything is allocated or an AX_KEPT
 * variable written, instead of ax_keep_open. `version` names the layout of the kept
 * variables: change it when they change. Pointers to code or constants in kept state are the
 * caller's to set again after an adoption (the transfer). True: a predecessor's state was
 * adopted. A live update whose state does not match exits (the update is refused and rolled
 * back). */
#define AXK_AT_REST 1 /* adopt only a state its last instance left at rest (ax_keep_at_rest) */
bool ax_keep_image(uint64_t magic, uint64_t version, unsigned flags);
