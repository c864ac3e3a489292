/* Code-mutating software fault injection: the fault model of Rio, Nooks and MINIX 3's swifi.
 * swifi_make picks one instruction of a window of machine code that a fault type applies to
 * and says how to corrupt it (a patch of that one instruction's bytes); applying the patch to
 * a running program is the caller's business. Freestanding; README.md describes the types. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum swifi_type {
	SW_FLIP,     /* one random bit of the instruction flipped */
	SW_SRCREG,   /* the source register operand changed */
	SW_DSTREG,   /* the destination register operand changed */
	SW_POINTER,  /* a memory operand's base register or displacement corrupted */
	SW_NOP,      /* the instruction removed (NOPs) */
	SW_BRANCH,   /* a conditional jump's condition inverted */
	SW_OFFBYONE, /* a compare's immediate +-1 (or a jcc's strict <-> non-strict) */
	SW_LEAK,     /* a call to a free function removed */
	SW_LOOP,     /* the instruction made a jump to itself */
	SW_NTYPES
};

const char *swifi_name(enum swifi_type t); /* "flip", "srcreg", ...; "?" if out of range */
int swifi_type_by_name(const char *name);   /* -1 if unknown */

struct swifi_rng {
	uint64_t s;
}; /* splitmix64: deterministic from the seed, any seed (0 too) */
void swifi_seed(struct swifi_rng *r, uint64_t seed);
uint64_t swifi_rand(struct swifi_rng *r);
uint64_t swifi_below(struct swifi_rng *r, uint64_t n); /* uniform in [0, n), n > 0 */

struct swifi_ctx { /* what a fault may need to know about the program */
	const uint64_t *free_fns; /* addresses of functions that free memory (SW_LEAK), ascending */
	size_t nfree;
};

#define SWIFI_MAX_PATCH 15
struct swifi_patch {
	uint64_t addr; /* virtual address of the patched instruction */
	uint8_t len;   /* bytes patched, starting at addr (the instruction's length) */
	uint8_t old[SWIFI_MAX_PATCH], new_[SWIFI_MAX_PATCH];
	enum swifi_type type;
};

/* code[0..n) is the program's text from an instruction boundary (e.g. a function's first byte)
 * at virtual address va. Decodes linearly from code[0] (stopping at the first undecodable
 * byte), collects the instructions the fault type applies to, picks one with rng, and fills
 * *out. Returns 0, or -1 if no instruction in the window fits the type. Pure: only reads code
 * (ctx may be NULL when the type needs nothing from it). */
int swifi_make(enum swifi_type t, const uint8_t *code, size_t n, uint64_t va,
	       const struct swifi_ctx *ctx, struct swifi_rng *rng, struct swifi_patch *out);
