/* Bitmap of physical frames: one bit per 4 KiB frame, set = in use.
 * Pure code (no locking, no kernel dependencies) so the host tests can drive it. */
#pragma once
#include "lib/types.h"

struct frame_bitmap {
	uint64_t *bits;
	uint64_t nframes;
	uint64_t nfree;
	uint64_t hint; /* word index where the next search starts */
};

/* words must hold nframes bits; everything starts in use. */
void fbm_init(struct frame_bitmap *b, uint64_t *words, uint64_t nframes);
/* Marks [start, end) free or used; frames outside the bitmap are ignored. */
void fbm_set_free(struct frame_bitmap *b, uint64_t start, uint64_t end);
void fbm_set_used(struct frame_bitmap *b, uint64_t start, uint64_t end);
/* Returns the highest free frame number and marks it used, or UINT64_MAX when none is left. */
uint64_t fbm_alloc(struct frame_bitmap *b);
/* Finds the lowest n contiguous free frames wholly below limit, aligned to align frames. */
uint64_t fbm_alloc_contig(struct frame_bitmap *b, uint64_t n, uint64_t align, uint64_t limit);
/* Finds the highest n contiguous free frames, aligned to align frames (small runs: they
 * stay out of the low memory large DMA runs are taken from). */
uint64_t fbm_alloc_contig_top(struct frame_bitmap *b, uint64_t n, uint64_t align);
/* The length of the longest run of free frames. */
uint64_t fbm_longest_free_run(const struct frame_bitmap *b);
/* Returns 0, or -1 if the frame was already free or out of range (a double free). */
int fbm_free(struct frame_bitmap *b, uint64_t frame);
bool fbm_is_used(const struct frame_bitmap *b, uint64_t frame);
