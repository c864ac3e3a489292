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
	b->hint = 0;
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

uint64_t fbm_alloc(struct frame_bitmap *b)
{
	uint64_t nwords = (b->nframes + WORD_BITS - 1) / WORD_BITS;
	if (!b->nfree || !nwords)
		return UINT64_MAX;
	for (uint64_t i = 0; i < nwords; i++) {
		uint64_t w = (b->hint + i) % nwords;
		if (b->bits[w] == ~0ull)
			continue;
		uint64_t bit = (uint64_t)__builtin_ctzll(~b->bits[w]);
		uint64_t f = w * WORD_BITS + bit;
		if (f >= b->nframes)
			continue;
		b->bits[w] |= 1ull << bit;
		b->nfree--;
		b->hint = w;
		return f;
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

int fbm_free(struct frame_bitmap *b, uint64_t f)
{
	if (f >= b->nframes || !fbm_is_used(b, f))
		return -1;
	b->bits[f / WORD_BITS] &= ~(1ull << (f % WORD_BITS));
	b->nfree++;
	return 0;
}
