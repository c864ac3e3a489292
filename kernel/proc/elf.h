/* ELF64 executable checks and layout. Pure code: host-tested and fuzzed. */
#pragma once
#include "lib/types.h"

#define ELF_MAX_SEGS 16

struct elf_seg {
	uint64_t vaddr, memsz, offset, filesz;
	uint32_t flags; /* PF_X=1, PF_W=2, PF_R=4 */
};

struct elf_info {
	uint64_t entry;
	uint64_t lo, hi; /* page-aligned span of all loadable segments (after the bias) */
	uint64_t bias;   /* added to every address (ET_DYN images linked at 0) */
	uint32_t nsegs;
	struct elf_seg segs[ELF_MAX_SEGS];
	uint64_t phdr_vaddr; /* where the program headers are mapped (for AT_PHDR), 0 if not */
	uint16_t phnum;
};

/* Validates an x86-64 ET_EXEC or ET_DYN image of len bytes and describes what to load
 * below user_top. Returns 0 or a negative KE_* error. */
int elf_parse(const void *image, size_t len, uint64_t user_top, uint64_t dyn_base,
	      struct elf_info *out);

/* A run of pages [lo, hi) that the segments order[from..to) cover, touching one another: the
 * image loader gives each run one object (a segment far from the others, as a native
 * program's kept section at 1 GiB, has one of its own, and the gap costs nothing). */
struct elf_run {
	uint64_t lo, hi;
	uint32_t from, to;
};
/* Sorts the segments by address into order (ei->nsegs entries) and fills runs; how many. */
uint32_t elf_runs(const struct elf_info *ei, uint32_t *order, struct elf_run *runs);
