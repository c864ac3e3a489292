#include "mm/frame_bitmap.h"

#define WORD_BITS 64

bool fbm_is_used(const struct frame_bitmap *b, uint64_t f)
{
	return f >= b->nframes || (b->bits[f / WORD_BITS] >> (f % WORD_BITS)) & 1;
}

void fbm_init(struct frame_bitmap *b, uint64_t *words, uint64_t nframes)
{
	b->bits = words;
	b->nframes = nframes;
	b->nfree = 0;
	b->hint = 0;
	for (uint64_t i = 0; i < (nframes + WORD_BITS - 1) / WORD_BITS; i++)
		words[i] = ~0ull;
}

void fbm_set_free(struct frame_bitmap *b, uint64_t start, uint64_t end)
{
	if (end > b->nframes)
		end = b->nframes;
	for (uint64_t f = start; f < end; f++) {
		if (fbm_is_used(b, f)) {
			b->bits[f / WORD_BITS] &= ~(1ull << (f % WORD_BITS));
			b->nfree++;
		}
	}
	b->hint = b->nframes ? (b->nframes - 1) / WORD_BITS : 0;
}

void fbm_set_used(struct frame_bitmap *b, uint64_t start, uint64_t end)
{
	if (end > b->nframes)
		end = b->nframes;
	for (uint64_t f = start; f < end; f++) {
		if (!fbm_is_used(b, f)) {
			b->bits[f / WORD_BITS] |= 1ull << (f % WORD_BITS);
			b->nfree--;
		}
	}
}

/* Single frames come from the top of memory down (the highest free frame), contiguous runs
 * from the bottom up (fbm_alloc_contig): memory that is scattered page by page then does not
 * break up the low runs a restarted driver or server needs for DMA. hint: every word above
 * it is full. */
uint64_t fbm_alloc(struct frame_bitmap *b)
{
	uint64_t nwords = (b->nframes + WORD_BITS - 1) / WORD_BITS;
	if (!b->nfree || !nwords)
		return UINT64_MAX;
	if (b->hint >= nwords)
		b->hint = nwords - 1;
	for (uint64_t i = 0; i < nwords; i++) {
		uint64_t w = (b->hint + nwords - i) % nwords; /* down from the hint (then, never needed, wrapped) */
		uint64_t free_bits = ~b->bits[w];
		if (w == nwords - 1 && b->nframes % WORD_BITS)
			free_bits &= (1ull << (b->nframes % WORD_BITS)) - 1;
		if (!free_bits)
			continue;
		uint64_t bit = 63 - (uint64_t)__builtin_clzll(free_bits);
		b->bits[w] |= 1ull << bit;
		b->nfree--;
		b->hint = w;
		return w * WORD_BITS + bit;
	}
	return UINT64_MAX;
}

uint64_t fbm_alloc_contig(struct frame_bitmap *b, uint64_t n, uint64_t align, uint64_t limit)
{
	if (!n)
		return UINT64_MAX;
	if (!align)
		align = 1;
	if (limit > b->nframes)
		limit = b->nframes;
	for (uint64_t f = 0; f + n <= limit; f += align) {
		uint64_t run = 0;
		while (run < n && !fbm_is_used(b, f + run))
			run++;
		if (run == n) {
			fbm_set_used(b, f, f + n);
			return f;
		}
		/* Skip past the used frame that ended the run, keeping the alignment. */
		f = (f + run) / align * align;
		if (align > limit - f)
			break; /* the next aligned start is past limit (f + align could wrap) */
	}
	return UINT64_MAX;
}

uint64_t fbm_alloc_contig_top(struct frame_bitmap *b, uint64_t n, uint64_t align)
{
	if (!n || n > b->nframes)
		return UINT64_MAX;
	if (!align)
		align = 1;
	/* Candidate starts from the highest aligned one down; the highest used frame inside the
	 * window moves the next candidate below it (below its whole word when the word inside
	 * the window is all used). */
	uint64_t f = (b->nframes - n) / align * align;
	for (;;) {
		uint64_t used = UINT64_MAX;
		for (uint64_t g = f + n; g-- > f && used == UINT64_MAX;)
			if (fbm_is_used(b, g))
				used = g % WORD_BITS == WORD_BITS - 1 && g + 1 - WORD_BITS >= f && b->bits[g / WORD_BITS] == ~0ull
					       ? g + 1 - WORD_BITS : g;
		if (used == UINT64_MAX) {
			fbm_set_used(b, f, f + n);
			return f;
		}
		if (used < n) /* the window must end at or below `used` */
			return UINT64_MAX;
		f = (used - n) / align * align;
	}
}

uint64_t fbm_longest_free_run(const struct frame_bitmap *b)
{
	uint64_t best = 0, run = 0;
	for (uint64_t f = 0; f < b->nframes; f++) {
		if (f % WORD_BITS == 0 && f + WORD_BITS <= b->nframes && b->bits[f / WORD_BITS] == 0) {
			run += WORD_BITS, f += WORD_BITS - 1;
		} else if (fbm_is_used(b, f)) {
			run = 0;
			continue;
		} else {
			run++;
		}
		best = run > best ? run : best;
	}
	return best;
}

int fbm_free(struct frame_bitmap *b, uint64_t f)
{
	if (f >= b->nframes || !fbm_is_used(b, f))
		return -1;
	b->bits[f / WORD_BITS] &= ~(1ull << (f % WORD_BITS));
	b->nfree++;
	if (f / WORD_BITS > b->hint)
		b->hint = f / WORD_BITS;
	return 0;
}
