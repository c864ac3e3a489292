/* A service's legacy: the memory-object handles a process held when it ended, kept for its
 * parent to give to the next incarnation (KC_LEGACY, docs/kernel-api.md §5.8). */
#pragma once
#include "proc/proc.h"

/* p ends (under the kernel lock, before its parent is told): if its parent asked (LEG_KEEP),
 * its handles move into a legacy instead of being released; p's table is left empty. */
void legacy_take(struct proc *p);
/* p ends: the legacies it was keeping for its dead children are released. */
void legacy_parent_gone(struct proc *p);
/* The creator of mo destroys it: every kept handle on it goes too. */
void legacy_close_object(struct memobj *mo);
int64_t kc_legacy(struct thread *me, uint64_t op, endpoint_t a, endpoint_t b);
/* For the root's restart (proc/root.c): the legacies kept for `from` are kept for `to`
 * (less what `from` granted, which `to` grants again); the
 * legacy of `dead` goes into the stopped p (how many handles), or is dropped. */
void legacy_adopt(endpoint_t from, endpoint_t to);
int64_t legacy_give_to(endpoint_t dead, struct proc *p);
void legacy_drop_of(endpoint_t dead);
/* Whether the dead process `dead` left a legacy not yet given or dropped (a successor may come). */
bool legacy_pending(endpoint_t dead);
