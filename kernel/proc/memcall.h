/* Memory-object kernel calls (KC_MO_*) and the privileged copy KC_VCOPY. */
#pragma once
#include "lib/types.h"

struct thread;
int64_t memcall(struct thread *me, uint32_t n, const uint64_t a[6]);
struct mo_handle;
struct proc;
/* Lets go of a handle's object (its mappings are the caller's business) and frees the slot. */
void mo_handle_release(struct mo_handle *hd);
/* p's handle table has at least cap slots (at most MAX_HANDLES): 0 or -KE_NOMEM. */
int proc_handles_reserve(struct proc *p, uint32_t cap);
