/* rs_swifi.c: code-mutating fault injection into a running service. */
#pragma once
#include "rs.h"

/* Applies count faults of type `word` (a lib/swifi type name, or "random") to s's running
 * instance, drawn from *seed (0: rs picks one and writes it back); at != 0 replays one fault
 * of that type at that instruction. Returns the faults applied, or an error (-KE_INVAL: bad
 * type or address, -KE_SRCH: no instruction fits (rs_ctl answers it as none applied),
 * -KE_NOSYS: the binary has no symbols). */
int64_t swifi_inject(struct svc *s, const char *word, uint32_t count, uint64_t *seed, uint64_t at);
