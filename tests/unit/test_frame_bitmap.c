/* Physical frame bitmap (kernel/mm/frame_bitmap.c). The words live in heap blocks of
 * exactly the size the frame count needs, so ASan catches any access past them. */
#include "unit.h"
#include "mm/frame_bitmap.h"

#define NONE UINT64_MAX

static uint64_t nwords(uint64_t nframes) { return (nframes + 63) / 64; }

/* A bitmap over a heap block of exactly nwords(nframes) words (one word for 0 frames). */
static uint64_t *new_bitmap(struct frame_bitmap *b, uint64_t nframes)
{
	uint64_t n = nwords(nframes);
	uint64_t *w = malloc((n ? n : 1) * sizeof(uint64_t));
	memset(w, 0, (n ? n : 1) * sizeof(uint64_t));
	fbm_init(b, w, nframes);
	return w;
}

static uint64_t count_used(const struct frame_bitmap *b)
{
	uint64_t c = 0;
	for (uint64_t f = 0; f < b->nframes; f++)
		c += fbm_is_used(b, f);
	return c;
}

static void init_marks_everything_used(void)
{
	struct frame_bitmap b;
	/* Words beyond those the frames need are not touched. */
	uint64_t words[4] = { 0, 0, 0, 0x1234 };
	fbm_init(&b, words, 130);
	CHECK_EQ_U64(b.nframes, 130);
	CHECK_EQ_U64(b.nfree, 0);
	CHECK_EQ_U64(count_used(&b), 130);
	CHECK_EQ_U64(words[3], 0x1234);
	CHECK_EQ_U64(fbm_alloc(&b), NONE);
	CHECK_EQ_U64(fbm_alloc_contig(&b, 1, 1, NONE), NONE);
	/* Frames past the end count as used. */
	CHECK(fbm_is_used(&b, 130));
	CHECK(fbm_is_used(&b, NONE));
}

static void empty_bitmap(void)
{
	struct frame_bitmap b;
	uint64_t *w = new_bitmap(&b, 0);
	fbm_set_free(&b, 0, 100);
	CHECK_EQ_U64(b.nfree, 0);
	CHECK_EQ_U64(fbm_alloc(&b), NONE);
	CHECK_EQ_U64(fbm_alloc_contig(&b, 1, 1, NONE), NONE);
	CHECK_EQ_I64(fbm_free(&b, 0), -1);
	CHECK(fbm_is_used(&b, 0));
	free(w);
}

static void set_free_and_used_ranges(void)
{
	struct frame_bitmap b;
	uint64_t *w = new_bitmap(&b, 300);
	/* Unaligned to 64 on both ends, spanning three words. */
	fbm_set_free(&b, 3, 190);
	CHECK_EQ_U64(b.nfree, 187);
	CHECK(fbm_is_used(&b, 2));
	CHECK(!fbm_is_used(&b, 3));
	CHECK(!fbm_is_used(&b, 63));
	CHECK(!fbm_is_used(&b, 64));
	CHECK(!fbm_is_used(&b, 189));
	CHECK(fbm_is_used(&b, 190));
	CHECK_EQ_U64(count_used(&b), 300 - 187);
	/* Overlapping free counts only the frames that were used. */
	fbm_set_free(&b, 180, 200);
	CHECK_EQ_U64(b.nfree, 197);
	/* Single frame. */
	fbm_set_used(&b, 100, 101);
	CHECK_EQ_U64(b.nfree, 196);
	CHECK(fbm_is_used(&b, 100));
	CHECK(!fbm_is_used(&b, 99) && !fbm_is_used(&b, 101));
	/* Overlapping used counts only the frames that were free. */
	fbm_set_used(&b, 0, 10);
	CHECK_EQ_U64(b.nfree, 189);
	/* Empty and reversed ranges do nothing. */
	fbm_set_free(&b, 250, 250);
	fbm_set_free(&b, 260, 250);
	fbm_set_used(&b, 50, 50);
	fbm_set_used(&b, 60, 50);
	CHECK_EQ_U64(b.nfree, 189);
	CHECK(fbm_is_used(&b, 250) && !fbm_is_used(&b, 55));
	/* Whole range. */
	fbm_set_free(&b, 0, 300);
	CHECK_EQ_U64(b.nfree, 300);
	CHECK_EQ_U64(count_used(&b), 0);
	fbm_set_used(&b, 0, 300);
	CHECK_EQ_U64(b.nfree, 0);
	CHECK_EQ_U64(count_used(&b), 300);
	free(w);
}

static void out_of_range_ends_are_clamped(void)
{
	struct frame_bitmap b;
	uint64_t *w = new_bitmap(&b, 150);
	fbm_set_free(&b, 100, 1000000);
	CHECK_EQ_U64(b.nfree, 50);
	CHECK(!fbm_is_used(&b, 149));
	CHECK(fbm_is_used(&b, 150));
	fbm_set_free(&b, 200, 300); /* wholly outside */
	fbm_set_free(&b, NONE - 5, NONE);
	CHECK_EQ_U64(b.nfree, 50);
	fbm_set_used(&b, 140, NONE);
	CHECK_EQ_U64(b.nfree, 40);
	fbm_set_used(&b, 500, 600);
	CHECK_EQ_U64(b.nfree, 40);
	/* Frames 150..191 share the last word but are never handed out. */
	for (int i = 0; i < 40; i++) {
		uint64_t f = fbm_alloc(&b);
		CHECK(f >= 100 && f < 140);
	}
	CHECK_EQ_U64(fbm_alloc(&b), NONE);
	free(w);
}

static void alloc_in_order_until_exhausted(void)
{
	struct frame_bitmap b;
	uint64_t *w = new_bitmap(&b, 200);
	fbm_set_free(&b, 0, 200);
	/* Always the highest free frame: from the top down. */
	for (uint64_t i = 0; i < 200; i++) {
		uint64_t f = fbm_alloc(&b);
		CHECK_EQ_U64(f, 199 - i);
		CHECK(fbm_is_used(&b, f));
		CHECK_EQ_U64(b.nfree, 199 - i);
	}
	CHECK_EQ_U64(fbm_alloc(&b), NONE);
	CHECK_EQ_U64(fbm_alloc(&b), NONE);
	CHECK_EQ_U64(b.nfree, 0);
	/* Freed frames behind the search position are found again. */
	CHECK_EQ_I64(fbm_free(&b, 5), 0);
	CHECK_EQ_I64(fbm_free(&b, 199), 0);
	CHECK_EQ_I64(fbm_free(&b, 70), 0);
	CHECK_EQ_U64(b.nfree, 3);
	uint64_t got[3];
	for (int i = 0; i < 3; i++)
		got[i] = fbm_alloc(&b);
	CHECK_EQ_U64(fbm_alloc(&b), NONE);
	CHECK_EQ_U64(got[0] + got[1] + got[2], 5 + 199 + 70);
	CHECK(got[0] != got[1] && got[1] != got[2] && got[0] != got[2]);
	for (int i = 0; i < 3; i++)
		CHECK(got[i] == 5 || got[i] == 199 || got[i] == 70);
	free(w);
}

static void holes_are_skipped(void)
{
	struct frame_bitmap b;
	uint64_t *w = new_bitmap(&b, 64 * 5);
	fbm_set_free(&b, 70, 71);
	fbm_set_free(&b, 64 * 4 + 63, 64 * 5);
	CHECK_EQ_U64(fbm_alloc(&b), 64 * 4 + 63); /* last bit of the last word */
	CHECK_EQ_U64(fbm_alloc(&b), 70);
	CHECK_EQ_U64(fbm_alloc(&b), NONE);
	free(w);
}

static void free_detects_errors(void)
{
	struct frame_bitmap b;
	uint64_t *w = new_bitmap(&b, 100);
	fbm_set_free(&b, 0, 100);
	uint64_t f = fbm_alloc(&b);
	CHECK_EQ_U64(f, 99);
	CHECK_EQ_I64(fbm_free(&b, f), 0);
	CHECK(!fbm_is_used(&b, f));
	CHECK_EQ_U64(b.nfree, 100);
	/* Double free. */
	CHECK_EQ_I64(fbm_free(&b, f), -1);
	CHECK_EQ_I64(fbm_free(&b, 50), -1); /* never allocated */
	CHECK_EQ_U64(b.nfree, 100);
	/* Out of range, including the first frame past the end. */
	CHECK_EQ_I64(fbm_free(&b, 100), -1);
	CHECK_EQ_I64(fbm_free(&b, 127), -1);
	CHECK_EQ_I64(fbm_free(&b, NONE), -1);
	CHECK_EQ_U64(b.nfree, 100);
	/* The last frame is freeable. */
	fbm_set_used(&b, 99, 100);
	CHECK_EQ_I64(fbm_free(&b, 99), 0);
	CHECK_EQ_U64(b.nfree, 100);
	free(w);
}

static void alloc_contig_cases(void)
{
	struct frame_bitmap b;
	uint64_t *w = new_bitmap(&b, 1000);
	CHECK_EQ_U64(fbm_alloc_contig(&b, 1, 1, NONE), NONE); /* all used */
	fbm_set_free(&b, 10, 1000);
	CHECK_EQ_U64(fbm_alloc_contig(&b, 0, 1, NONE), NONE); /* n = 0 */
	/* align 0 means 1; the lowest fit is taken. */
	CHECK_EQ_U64(fbm_alloc_contig(&b, 5, 0, NONE), 10);
	CHECK_EQ_U64(b.nfree, 985);
	for (uint64_t f = 10; f < 15; f++)
		CHECK(fbm_is_used(&b, f));
	CHECK(!fbm_is_used(&b, 15));
	/* Aligned: 15 is free but the block starts at a multiple of 8. */
	CHECK_EQ_U64(fbm_alloc_contig(&b, 3, 8, NONE), 16);
	CHECK(!fbm_is_used(&b, 15) && fbm_is_used(&b, 18) && !fbm_is_used(&b, 19));
	/* A used frame inside a candidate moves the search to the next aligned start past it. */
	fbm_set_used(&b, 100, 101);
	fbm_set_used(&b, 130, 131);
	CHECK_EQ_U64(fbm_alloc_contig(&b, 64, 64, NONE), 192);
	/* Non-power-of-two alignment. */
	CHECK_EQ_U64(fbm_alloc_contig(&b, 2, 7, NONE), 21);
	/* The block must end at or below limit. */
	CHECK_EQ_U64(fbm_alloc_contig(&b, 10, 1, 35), 23);
	CHECK_EQ_U64(fbm_alloc_contig(&b, 10, 1, 42), NONE);
	CHECK_EQ_U64(fbm_alloc_contig(&b, 10, 1, 43), 33);
	/* limit above the bitmap is clamped; the block must fit in the bitmap. */
	fbm_set_used(&b, 0, 1000);
	fbm_set_free(&b, 990, 1000);
	CHECK_EQ_U64(fbm_alloc_contig(&b, 11, 1, NONE), NONE);
	CHECK_EQ_U64(fbm_alloc_contig(&b, 10, 1, 5000), 990);
	CHECK_EQ_U64(b.nfree, 0);
	/* Fragmented memory: enough free frames, but no run long enough. */
	for (uint64_t f = 0; f < 1000; f += 2)
		fbm_set_free(&b, f, f + 1);
	CHECK_EQ_U64(b.nfree, 500);
	CHECK_EQ_U64(fbm_alloc_contig(&b, 2, 1, NONE), NONE);
	CHECK_EQ_U64(fbm_alloc_contig(&b, 1, 4, NONE), 0);
	CHECK_EQ_U64(fbm_alloc_contig(&b, 1, 4, NONE), 4);
	CHECK_EQ_U64(b.nfree, 498);
	free(w);
}

static void alloc_contig_huge_arguments(void)
{
	struct frame_bitmap b;
	uint64_t *w = new_bitmap(&b, 256);
	fbm_set_free(&b, 1, 256);
	/* Alignment larger than the bitmap: only frame 0 is a candidate, and it is used. */
	CHECK_EQ_U64(fbm_alloc_contig(&b, 2, 1024, NONE), NONE);
	CHECK_EQ_U64(fbm_alloc_contig(&b, 2, NONE, NONE), NONE);
	CHECK_EQ_U64(fbm_alloc_contig(&b, 2, NONE - 1, NONE), NONE);
	CHECK_EQ_U64(fbm_alloc_contig(&b, 3, (uint64_t)1 << 63, NONE), NONE);
	CHECK_EQ_U64(fbm_alloc_contig(&b, NONE, 1, NONE), NONE);
	CHECK_EQ_U64(fbm_alloc_contig(&b, 257, 1, NONE), NONE);
	CHECK_EQ_U64(b.nfree, 255);
	fbm_set_free(&b, 0, 1);
	CHECK_EQ_U64(fbm_alloc_contig(&b, 2, NONE, NONE), 0);
	CHECK_EQ_U64(fbm_alloc_contig(&b, 254, 1, NONE), 2);
	CHECK_EQ_U64(b.nfree, 0);
	free(w);
}

/* Model: a bool per frame. Random operations; after each, counts and results must agree. */
static void model_run(uint64_t nframes, int ops, uint64_t seed)
{
	struct frame_bitmap b;
	uint64_t *w = new_bitmap(&b, nframes);
	bool *used = malloc(nframes + 1);
	memset(used, 1, nframes + 1);
	uint64_t nfree = 0, span = nframes + nframes / 4 + 2;
	for (int i = 0; i < ops && !UNIT_FAILED(); i++) {
		uint64_t r = unit_rand(&seed), a = unit_rand(&seed) % span, len = unit_rand(&seed);
		len = (len & 1) ? len % 8 : len % 160;
		uint64_t e = a + len, ce = e < nframes ? e : nframes;
		switch (r % 8) {
		case 0: /* set_free range */
			fbm_set_free(&b, a, e);
			for (uint64_t f = a; f < ce; f++)
				nfree += used[f], used[f] = false;
			break;
		case 1: /* set_used range */
			fbm_set_used(&b, a, e);
			for (uint64_t f = a; f < ce; f++)
				nfree -= !used[f], used[f] = true;
			break;
		case 2:
		case 3: { /* alloc */
			uint64_t f = fbm_alloc(&b);
			if (f == NONE) {
				if (nfree) unit_fail(__FILE__, __LINE__, "op %d: alloc failed with %llu free", i,
						     (unsigned long long)nfree);
			} else if (f >= nframes || used[f]) {
				unit_fail(__FILE__, __LINE__, "op %d: alloc returned %llu (used or out of range)",
					  i, (unsigned long long)f);
			} else {
				for (uint64_t g = f + 1; g < nframes; g++)
					if (!used[g]) {
						unit_fail(__FILE__, __LINE__, "op %d: alloc returned %llu below free %llu",
							  i, (unsigned long long)f, (unsigned long long)g);
						break;
					}
				used[f] = true, nfree--;
			}
			break;
		}
		case 4:
		case 5: { /* free, sometimes of a free or out-of-range frame */
			int got = fbm_free(&b, a), want = (a < nframes && used[a]) ? 0 : -1;
			CHECK_EQ_I64(got, want);
			if (!want)
				used[a] = false, nfree++;
			break;
		}
		case 6: { /* alloc_contig (or, every other time, alloc_contig_top) */
			uint64_t n = 1 + r / 8 % 12, align = (uint64_t[]){ 0, 1, 1, 2, 3, 4, 8, 16, 64, 100 }[r / 128 % 10];
			if ((r >> 21) & 1) {
				/* The highest aligned fit, or none. */
				uint64_t al = align ? align : 1, want = NONE;
				for (uint64_t s = n <= nframes ? (nframes - n) / al * al : NONE; s != NONE; s = s >= al ? s - al : NONE) {
					uint64_t k = 0;
					while (k < n && !used[s + k])
						k++;
					if (k == n) {
						want = s;
						break;
					}
				}
				uint64_t got = fbm_alloc_contig_top(&b, n, align);
				if (got != want)
					unit_fail(__FILE__, __LINE__, "op %d: alloc_contig_top(%llu, %llu) = %llu, want %llu", i,
						  (unsigned long long)n, (unsigned long long)align, (unsigned long long)got,
						  (unsigned long long)want);
				else if (got != NONE)
					for (uint64_t f = got; f < got + n; f++)
						used[f] = true, nfree--;
				break;
			}
			uint64_t limit = (r >> 20) & 1 ? NONE : a;
			uint64_t al = align ? align : 1, lim = limit < nframes ? limit : nframes, want = NONE;
			for (uint64_t s = 0; s + n <= lim && want == NONE; s += al) {
				uint64_t k = 0;
				while (k < n && !used[s + k])
					k++;
				if (k == n)
					want = s;
			}
			uint64_t got = fbm_alloc_contig(&b, n, align, limit);
			/* The lowest aligned fit below limit, or none. */
			if (got != want)
				unit_fail(__FILE__, __LINE__, "op %d: alloc_contig(%llu, %llu, %llu) = %llu, want %llu",
					  i, (unsigned long long)n, (unsigned long long)align,
					  (unsigned long long)limit, (unsigned long long)got, (unsigned long long)want);
			else if (got != NONE)
				for (uint64_t f = got; f < got + n; f++)
					used[f] = true, nfree--;
			break;
		}
		default: /* is_used, also past the end */
			CHECK_EQ_U64(fbm_is_used(&b, a), a >= nframes || used[a]);
			break;
		}
		CHECK_EQ_U64(b.nfree, nfree);
		if (i % 512 == 0) {
			uint64_t run = 0, best = 0;
			for (uint64_t f = 0; f < nframes; f++) {
				if (fbm_is_used(&b, f) != used[f])
					unit_fail(__FILE__, __LINE__, "op %d: frame %llu differs from the model", i,
						  (unsigned long long)f);
				run = used[f] ? 0 : run + 1;
				best = run > best ? run : best;
			}
			CHECK_EQ_U64(fbm_longest_free_run(&b), best);
		}
	}
	for (uint64_t f = 0; f < nframes; f++)
		CHECK_EQ_U64(fbm_is_used(&b, f), used[f]);
	free(used);
	free(w);
}

static void model_random_ops(void)
{
	model_run(1000, 120000, 0xdeadbeefcafef00dull);
	model_run(64, 40000, 0x0123456789abcdefull);
	model_run(129, 40000, 0x5555aaaa5555aaaaull);
}

int main(void)
{
	unit_begin(__FILE__);
	RUN(init_marks_everything_used);
	RUN(empty_bitmap);
	RUN(set_free_and_used_ranges);
	RUN(out_of_range_ends_are_clamped);
	RUN(alloc_in_order_until_exhausted);
	RUN(holes_are_skipped);
	RUN(free_detects_errors);
	RUN(alloc_contig_cases);
	RUN(alloc_contig_huge_arguments);
	RUN(model_random_ops);
	return unit_end();
}
