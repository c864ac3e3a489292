/* Memory-object kernel calls (KC_MO_*) and the privileged copy KC_VCOPY. */
#pragma once
#include "lib/types.h"

struct thread;
int64_t memcall(struct thread *me, uint32_t n, const uint64_t a[6]);
struct mo_handle;
/* Lets go of a handle's object (its mappings are the caller's business) and frees the slot. */
void mo_handle_release(struct mo_handle *hd);
