/* ELF64 executable checks (kernel/proc/elf.c). Images are built as the System V gABI and
 * the x86-64 psABI lay them out: a 64-byte ELF header and 56-byte program headers. */
#include "unit.h"
#include "proc/elf.h"
#include <axolotl/kcall.h>

#define TOP 0x00007ffffff00000ull /* user_top passed to the parser */
#define DYN 0x0000555555554000ull /* dyn_base */
#define PT_NULL 0
#define PT_LOAD 1
#define PT_NOTE 4
#define PT_PHDR 6
#define PT_GNU_STACK 0x6474e551u
#define PF_X 1
#define PF_W 2
#define PF_R 4

struct img {
	uint8_t b[0x2000];
	size_t len;
};

static void ehdr(struct img *im, uint16_t type, uint64_t entry, uint16_t phnum)
{
	memset(im, 0, sizeof(*im));
	static const uint8_t ident[8] = { 0x7f, 'E', 'L', 'F', 2, 1, 1, 0 };
	memcpy(im->b, ident, 8);
	put16(im->b + 16, type);
	put16(im->b + 18, 62); /* EM_X86_64 */
	put32(im->b + 20, 1);
	put64(im->b + 24, entry);
	put64(im->b + 32, 64); /* phoff */
	put16(im->b + 52, 64);
	put16(im->b + 54, 56);
	put16(im->b + 56, phnum);
	im->len = 64 + (size_t)phnum * 56;
}

static uint8_t *phdr(struct img *im, int i) { return im->b + 64 + i * 56; }

static void set_ph(struct img *im, int i, uint32_t type, uint32_t flags, uint64_t off, uint64_t vaddr,
		   uint64_t filesz, uint64_t memsz)
{
	uint8_t *p = phdr(im, i);
	put32(p, type), put32(p + 4, flags);
	put64(p + 8, off), put64(p + 16, vaddr), put64(p + 24, vaddr);
	put64(p + 32, filesz), put64(p + 40, memsz), put64(p + 48, 0x1000);
}

/* A typical static executable: headers and text in one segment, data plus bss after. */
static void exec_image(struct img *im)
{
	ehdr(im, 2, 0x400100, 4);
	set_ph(im, 0, PT_PHDR, PF_R, 64, 0x400040, 4 * 56, 4 * 56);
	set_ph(im, 1, PT_LOAD, PF_R | PF_X, 0, 0x400000, 0x1000, 0x1000);
	set_ph(im, 2, PT_LOAD, PF_R | PF_W, 0x1000, 0x402010, 0x100, 0x3000);
	set_ph(im, 3, PT_GNU_STACK, PF_R | PF_W, 0, 0, 0, 0);
	im->len = 0x1100;
}

/* A position-independent executable linked at 0. */
static void dyn_image(struct img *im)
{
	ehdr(im, 3, 0x120, 3);
	set_ph(im, 0, PT_PHDR, PF_R, 64, 64, 3 * 56, 3 * 56);
	set_ph(im, 1, PT_LOAD, PF_R | PF_X, 0, 0, 0x800, 0x800);
	set_ph(im, 2, PT_LOAD, PF_R | PF_W, 0x800, 0x1800, 0x80, 0x100);
	im->len = 0x880;
}

static struct elf_info ei;

/* Parses from a heap block of exactly len bytes, so ASan sees any read past it. */
static int parse_exact(const uint8_t *b, size_t len, uint64_t top, uint64_t dyn)
{
	uint8_t *h = malloc(len ? len : 1);
	memcpy(h, b, len);
	int r = elf_parse(h, len, top, dyn, &ei);
	free(h);
	return r;
}

static int parse(const struct img *im) { return parse_exact(im->b, im->len, TOP, DYN); }

static void exec_ok(void)
{
	struct img im;
	exec_image(&im);
	REQUIRE(parse(&im) == 0);
	CHECK_EQ_U64(ei.entry, 0x400100);
	CHECK_EQ_U64(ei.bias, 0);
	CHECK_EQ_U64(ei.nsegs, 2);
	CHECK_EQ_U64(ei.phnum, 4);
	CHECK_EQ_U64(ei.phdr_vaddr, 0x400040);
	CHECK_EQ_U64(ei.lo, 0x400000);
	CHECK_EQ_U64(ei.hi, 0x406000); /* 0x402010 + 0x3000 rounded up */
	CHECK_EQ_U64(ei.segs[0].vaddr, 0x400000);
	CHECK_EQ_U64(ei.segs[0].memsz, 0x1000);
	CHECK_EQ_U64(ei.segs[0].offset, 0);
	CHECK_EQ_U64(ei.segs[0].filesz, 0x1000);
	CHECK_EQ_U64(ei.segs[0].flags, PF_R | PF_X);
	CHECK_EQ_U64(ei.segs[1].vaddr, 0x402010);
	CHECK_EQ_U64(ei.segs[1].memsz, 0x3000);
	CHECK_EQ_U64(ei.segs[1].offset, 0x1000);
	CHECK_EQ_U64(ei.segs[1].filesz, 0x100);
	CHECK_EQ_U64(ei.segs[1].flags, PF_R | PF_W);
	/* A longer file than the segments need is fine; dyn_base does not apply to ET_EXEC. */
	CHECK_EQ_I64(parse_exact(im.b, sizeof(im.b), TOP, 0x7000000), 0);
	CHECK_EQ_U64(ei.entry, 0x400100);
	CHECK_EQ_U64(ei.lo, 0x400000);
}

static void dyn_ok(void)
{
	struct img im;
	dyn_image(&im);
	REQUIRE(parse(&im) == 0);
	CHECK_EQ_U64(ei.bias, DYN);
	CHECK_EQ_U64(ei.entry, DYN + 0x120);
	CHECK_EQ_U64(ei.nsegs, 2);
	CHECK_EQ_U64(ei.segs[0].vaddr, DYN);
	CHECK_EQ_U64(ei.segs[1].vaddr, DYN + 0x1800);
	CHECK_EQ_U64(ei.segs[1].offset, 0x800);
	CHECK_EQ_U64(ei.lo, DYN);
	CHECK_EQ_U64(ei.hi, DYN + 0x2000);
	CHECK_EQ_U64(ei.phdr_vaddr, DYN + 64);
	/* Linked at 0 and loaded at 0 would map page zero. */
	CHECK_EQ_I64(parse_exact(im.b, im.len, TOP, 0), -KE_INVAL);
	/* The bias must keep the image below user_top. */
	CHECK_EQ_I64(parse_exact(im.b, im.len, TOP, TOP - 0x1000), -KE_INVAL);
	CHECK_EQ_I64(parse_exact(im.b, im.len, TOP, TOP - 0x1900), 0);
	/* ... and must not wrap around. */
	CHECK_EQ_I64(parse_exact(im.b, im.len, UINT64_MAX, UINT64_MAX - 0xfff), -KE_INVAL);
}

static void phdr_address(void)
{
	struct img im;
	/* Without PT_PHDR: the headers inside a segment's file range are mapped there. */
	exec_image(&im);
	put32(phdr(&im, 0), PT_NULL);
	REQUIRE(parse(&im) == 0);
	CHECK_EQ_U64(ei.phdr_vaddr, 0x400040);
	/* ... in the second segment when the first does not hold them. */
	exec_image(&im);
	put32(phdr(&im, 0), PT_NOTE);
	set_ph(&im, 1, PT_LOAD, PF_R | PF_X, 0x1000, 0x400000, 0x100, 0x1000);
	set_ph(&im, 2, PT_LOAD, PF_R, 0, 0x500000, 0x800, 0x800);
	REQUIRE(parse(&im) == 0);
	CHECK_EQ_U64(ei.phdr_vaddr, 0x500040);
	/* Not mapped at all: 0. */
	exec_image(&im);
	put32(phdr(&im, 0), PT_NULL);
	set_ph(&im, 1, PT_LOAD, PF_R | PF_X, 0x1000, 0x400000, 0x100, 0x1000);
	REQUIRE(parse(&im) == 0);
	CHECK_EQ_U64(ei.phdr_vaddr, 0);
	/* Only partly inside the segment: not mapped. */
	exec_image(&im);
	put32(phdr(&im, 0), PT_NULL);
	set_ph(&im, 1, PT_LOAD, PF_R | PF_X, 0, 0x400000, 64 + 4 * 56 - 1, 0x1000);
	REQUIRE(parse(&im) == 0);
	CHECK_EQ_U64(ei.phdr_vaddr, 0);
}

static void skipped_program_headers(void)
{
	struct img im;
	exec_image(&im);
	/* PT_LOAD with memsz 0 and other types are not segments, wherever they point. */
	set_ph(&im, 3, PT_LOAD, PF_R, 0xffffffffffffull, 0, 0xffff, 0);
	REQUIRE(parse(&im) == 0);
	CHECK_EQ_U64(ei.nsegs, 2);
	set_ph(&im, 3, PT_NOTE, PF_R, 0xffffffffffffull, 0, 0xffff, 0xffff);
	REQUIRE(parse(&im) == 0);
	CHECK_EQ_U64(ei.nsegs, 2);
	/* A bss-only segment (filesz 0) is a segment. */
	set_ph(&im, 3, PT_LOAD, PF_R | PF_W, 0, 0x600000, 0, 0x2000);
	REQUIRE(parse(&im) == 0);
	CHECK_EQ_U64(ei.nsegs, 3);
	CHECK_EQ_U64(ei.segs[2].filesz, 0);
	CHECK_EQ_U64(ei.hi, 0x602000);
}

static void bad_ident_and_header(void)
{
	struct img im;
	exec_image(&im);
	CHECK_EQ_I64(parse(&im), 0);
	/* Each magic byte. */
	for (int i = 0; i < 4; i++) {
		im.b[i] ^= 0x20;
		CHECK_EQ_I64(parse(&im), -KE_INVAL);
		im.b[i] ^= 0x20;
	}
	struct { int off; uint8_t bad; } bytes[] = {
		{ 4, 1 }, /* ELFCLASS32 */
		{ 4, 0 },
		{ 5, 2 }, /* big endian */
		{ 6, 0 }, /* EI_VERSION */
		{ 16, 1 }, /* ET_REL */
		{ 16, 4 }, /* ET_CORE */
		{ 17, 2 }, /* type 0x202 */
		{ 18, 3 }, /* EM_386 */
		{ 18, 183 }, /* EM_AARCH64 */
		{ 19, 1 }, /* machine 0x13e */
	};
	for (size_t i = 0; i < sizeof(bytes) / sizeof(bytes[0]); i++) {
		uint8_t save = im.b[bytes[i].off];
		im.b[bytes[i].off] = bytes[i].bad;
		if (parse(&im) != -KE_INVAL)
			unit_fail(__FILE__, __LINE__, "byte %d = %u accepted", bytes[i].off, bytes[i].bad);
		im.b[bytes[i].off] = save;
	}
	CHECK_EQ_I64(parse(&im), 0);
	/* Shorter than an ELF header. */
	CHECK_EQ_I64(parse_exact(im.b, 63, TOP, DYN), -KE_INVAL);
	CHECK_EQ_I64(parse_exact(im.b, 0, TOP, DYN), -KE_INVAL);
}

static void bad_program_header_table(void)
{
	struct img im;
	exec_image(&im);
	put16(im.b + 54, 64); /* phentsize other than 56 */
	CHECK_EQ_I64(parse(&im), -KE_INVAL);
	exec_image(&im);
	put16(im.b + 56, 0); /* no program headers */
	CHECK_EQ_I64(parse(&im), -KE_INVAL);
	exec_image(&im);
	put16(im.b + 56, 65); /* over the 64 limit */
	im.len = sizeof(im.b);
	CHECK_EQ_I64(parse(&im), -KE_INVAL);
	put16(im.b + 56, 64); /* 64 is allowed (the rest are PT_NULL) */
	CHECK_EQ_I64(parse(&im), 0);
	CHECK_EQ_U64(ei.phnum, 64);
	/* The table must lie inside the file. */
	exec_image(&im);
	im.len = 64 + 4 * 56 - 1;
	CHECK_EQ_I64(parse_exact(im.b, im.len, TOP, DYN), -KE_INVAL);
	exec_image(&im);
	put64(im.b + 32, im.len - 4 * 56 + 1); /* phoff one past fitting */
	CHECK_EQ_I64(parse(&im), -KE_INVAL);
	put64(im.b + 32, im.len + 1);
	CHECK_EQ_I64(parse(&im), -KE_INVAL);
	put64(im.b + 32, UINT64_MAX - 100); /* phoff + size would wrap */
	CHECK_EQ_I64(parse(&im), -KE_INVAL);
	/* The table at the very end of the file is fine. */
	exec_image(&im);
	memcpy(im.b + im.len, phdr(&im, 0), 4 * 56);
	put64(im.b + 32, im.len);
	im.len += 4 * 56;
	CHECK_EQ_I64(parse(&im), 0);
	CHECK_EQ_U64(ei.nsegs, 2);
}

static void bad_segments(void)
{
	struct img im;
	/* filesz > memsz. */
	exec_image(&im);
	set_ph(&im, 2, PT_LOAD, PF_R | PF_W, 0x1000, 0x402010, 0x100, 0xff);
	CHECK_EQ_I64(parse(&im), -KE_INVAL);
	set_ph(&im, 2, PT_LOAD, PF_R | PF_W, 0x1000, 0x402010, 0x100, 0x100); /* equal is fine */
	CHECK_EQ_I64(parse(&im), 0);
	/* File range out of the image: one byte, past the end, wrapping. */
	set_ph(&im, 2, PT_LOAD, PF_R | PF_W, 0x1001, 0x402010, 0x100, 0x3000);
	CHECK_EQ_I64(parse(&im), -KE_INVAL);
	set_ph(&im, 2, PT_LOAD, PF_R | PF_W, 0x1100, 0x402010, 0, 0x3000); /* empty, at the end */
	CHECK_EQ_I64(parse(&im), 0);
	set_ph(&im, 2, PT_LOAD, PF_R | PF_W, 0x1101, 0x402010, 0, 0x3000);
	CHECK_EQ_I64(parse(&im), -KE_INVAL);
	set_ph(&im, 2, PT_LOAD, PF_R | PF_W, UINT64_MAX - 0x10, 0x402010, 0x100, 0x3000);
	CHECK_EQ_I64(parse(&im), -KE_INVAL);
	set_ph(&im, 2, PT_LOAD, PF_R | PF_W, 0x1000, 0x402010, UINT64_MAX, UINT64_MAX);
	CHECK_EQ_I64(parse(&im), -KE_INVAL);
	/* Page zero. */
	exec_image(&im);
	set_ph(&im, 2, PT_LOAD, PF_R | PF_W, 0x1000, 0xfff, 0x100, 0x100);
	CHECK_EQ_I64(parse(&im), -KE_INVAL);
	set_ph(&im, 2, PT_LOAD, PF_R | PF_W, 0x1000, 0x1000, 0x100, 0x100);
	CHECK_EQ_I64(parse(&im), 0);
	/* Reaching user_top exactly is fine, one byte more is not, nor wrapping. */
	set_ph(&im, 1, PT_LOAD, PF_R | PF_X, 0, TOP - 0x100, 0x100, 0x100);
	set_ph(&im, 2, PT_LOAD, PF_R | PF_W, 0x1000, TOP - 0x1000, 0x100, 0x1000);
	put64(im.b + 24, TOP - 0x10);
	CHECK_EQ_I64(parse(&im), 0);
	CHECK_EQ_U64(ei.hi, TOP);
	set_ph(&im, 2, PT_LOAD, PF_R | PF_W, 0x1000, TOP - 0x1000, 0x100, 0x1001);
	CHECK_EQ_I64(parse(&im), -KE_INVAL);
	set_ph(&im, 2, PT_LOAD, PF_R | PF_W, 0x1000, 0x1000, 0x100, TOP);
	CHECK_EQ_I64(parse(&im), -KE_INVAL);
	set_ph(&im, 2, PT_LOAD, PF_R | PF_W, 0x1000, 0x1000, 0x100, UINT64_MAX);
	CHECK_EQ_I64(parse(&im), -KE_INVAL);
	set_ph(&im, 2, PT_LOAD, PF_R | PF_W, 0x1000, UINT64_MAX - 0xfff, 0x100, 0x2000);
	CHECK_EQ_I64(parse(&im), -KE_INVAL);
	/* No loadable segment at all. */
	exec_image(&im);
	put32(phdr(&im, 1), PT_NOTE);
	put32(phdr(&im, 2), PT_NULL);
	CHECK_EQ_I64(parse(&im), -KE_INVAL);
}

static void segment_limit_and_span(void)
{
	struct img im;
	/* ELF_MAX_SEGS segments are accepted, one more is not. */
	ehdr(&im, 2, 0x400000, ELF_MAX_SEGS + 1);
	for (int i = 0; i <= ELF_MAX_SEGS; i++)
		set_ph(&im, i, PT_LOAD, PF_R, 0, 0x400000 + (uint64_t)i * 0x1000, 0x10, 0x10);
	CHECK_EQ_I64(parse(&im), -KE_INVAL);
	put16(im.b + 56, ELF_MAX_SEGS);
	CHECK_EQ_I64(parse(&im), 0);
	CHECK_EQ_U64(ei.nsegs, ELF_MAX_SEGS);
	CHECK_EQ_U64(ei.hi, 0x400000 + ELF_MAX_SEGS * 0x1000);
	/* The span of all segments is capped at 4 GiB. */
	ehdr(&im, 2, 0x400000, 2);
	set_ph(&im, 0, PT_LOAD, PF_R | PF_X, 0, 0x400000, 0x10, 0x100);
	set_ph(&im, 1, PT_LOAD, PF_R | PF_W, 0, 0x400000 + (1ull << 32) - 0x1000, 0x10, 0x1000);
	CHECK_EQ_I64(parse(&im), 0);
	CHECK_EQ_U64(ei.hi - ei.lo, 1ull << 32);
	set_ph(&im, 1, PT_LOAD, PF_R | PF_W, 0, 0x400000 + (1ull << 32) - 0x1000, 0x10, 0x1001);
	CHECK_EQ_I64(parse(&im), -KE_INVAL);
	/* Segments out of address order: lo and hi still cover both. */
	ehdr(&im, 2, 0x400000, 2);
	set_ph(&im, 0, PT_LOAD, PF_R | PF_W, 0, 0x800000, 0x10, 0x100);
	set_ph(&im, 1, PT_LOAD, PF_R | PF_X, 0, 0x400000, 0x10, 0x100);
	CHECK_EQ_I64(parse(&im), 0);
	CHECK_EQ_U64(ei.lo, 0x400000);
	CHECK_EQ_U64(ei.hi, 0x801000);
}

static void entry_point(void)
{
	struct img im;
	exec_image(&im);
	uint64_t ok[] = { 0x400000, 0x400100, 0x405fff }; /* within the page-rounded span */
	uint64_t bad[] = { 0x3fffff, 0x406000, 0, UINT64_MAX };
	for (int i = 0; i < 3; i++) {
		put64(im.b + 24, ok[i]);
		CHECK_EQ_I64(parse(&im), 0);
	}
	for (int i = 0; i < 4; i++) {
		put64(im.b + 24, bad[i]);
		CHECK_EQ_I64(parse(&im), -KE_INVAL);
	}
	/* ET_DYN: the entry is biased too. */
	dyn_image(&im);
	put64(im.b + 24, 0x2000);
	CHECK_EQ_I64(parse(&im), -KE_INVAL);
	put64(im.b + 24, 0x1fff);
	CHECK_EQ_I64(parse(&im), 0);
	CHECK_EQ_U64(ei.entry, DYN + 0x1fff);
}

static void fuzz(void)
{
	struct img base;
	exec_image(&base);
	uint64_t seed = 0x6a09e667f3bcc908ull;
	static uint8_t buf[0x1200];
	int successes = 0;
	for (int iter = 0; iter < 100000 && !UNIT_FAILED(); iter++) {
		memcpy(buf, base.b, base.len);
		size_t len = base.len;
		int nmut = 1 + (int)(unit_rand(&seed) % 4);
		for (int k = 0; k < nmut; k++) {
			uint64_t r = unit_rand(&seed);
			uint8_t *ph = buf + 64 + ((r >> 8) % 4) * 56;
			static const uint64_t vals[] = { 0, 1, 0xfff, 0x1000, 0x100, 0x1100, 0x400000,
							 TOP - 0x1000, TOP, UINT64_MAX, 1ull << 32 };
			uint64_t v = (r >> 20) & 1 ? vals[(r >> 21) % 11] : unit_rand(&seed) >> ((r >> 26) % 64);
			switch (r % 6) {
			case 0: buf[(r >> 16) % len] ^= (uint8_t)(1u << (r >> 40) % 8); break;
			case 1: put64(ph + 8 + 8 * ((r >> 30) % 5), v); break; /* off/vaddr/paddr/filesz/memsz */
			case 2: put32(ph, (r >> 30) & 1 ? PT_LOAD : (uint32_t)(r >> 31) % 8); break;
			case 3: /* phoff, phnum, entry */
				if ((r >> 30) % 3 == 0) put64(buf + 32, v);
				else if ((r >> 30) % 3 == 1) put16(buf + 56, (uint16_t)((r >> 32) % 70));
				else put64(buf + 24, v);
				break;
			case 4: len = (r >> 16) % (base.len + 1); break; /* truncate */
			default: /* random bytes in the headers */
				buf[(r >> 16) % (64 + 4 * 56) % len] = (uint8_t)(r >> 48);
				break;
			}
			if (!len)
				len = 1;
		}
		int ret = parse_exact(buf, len, TOP, DYN);
		if (ret) {
			if (ret != -KE_INVAL)
				unit_fail(__FILE__, __LINE__, "iteration %d: returned %d", iter, ret);
			continue;
		}
		successes++;
		bool ok = ei.nsegs >= 1 && ei.nsegs <= ELF_MAX_SEGS && ei.phnum == (buf[56] | buf[57] << 8);
		ok = ok && !(ei.lo & 0xfff) && !(ei.hi & 0xfff) && ei.lo < ei.hi && ei.hi - ei.lo <= (1ull << 32);
		ok = ok && ei.entry >= ei.lo && ei.entry < ei.hi && ei.hi <= TOP;
		for (uint32_t i = 0; ok && i < ei.nsegs; i++) {
			const struct elf_seg *s = &ei.segs[i];
			ok = s->filesz <= s->memsz && s->offset <= len && s->filesz <= len - s->offset &&
			     s->memsz && s->vaddr >= 0x1000 && s->vaddr <= TOP - s->memsz &&
			     s->vaddr >= ei.lo && s->vaddr + s->memsz <= ei.hi;
		}
		/* the loader's runs: ordered, apart, each segment inside its own run */
		uint32_t order[ELF_MAX_SEGS];
		struct elf_run runs[ELF_MAX_SEGS];
		uint32_t nr = ok ? elf_runs(&ei, order, runs) : 0;
		ok = ok && nr >= 1 && nr <= ei.nsegs && runs[0].from == 0 && runs[nr - 1].to == ei.nsegs;
		for (uint32_t k = 0; ok && k < nr; k++) {
			ok = runs[k].lo < runs[k].hi && runs[k].from < runs[k].to && (k == 0 || runs[k].lo > runs[k - 1].hi) &&
			     (k == 0 || runs[k].from == runs[k - 1].to);
			for (uint32_t j = runs[k].from; ok && j < runs[k].to; j++)
				ok = ei.segs[order[j]].vaddr >= runs[k].lo &&
				     ei.segs[order[j]].vaddr + ei.segs[order[j]].memsz <= runs[k].hi;
		}
		if (!ok)
			unit_fail(__FILE__, __LINE__, "iteration %d: inconsistent result accepted", iter);
	}
	CHECK(successes > 10000);
}

/* The loader's runs: touching segments share one, a far one (the kept section at 1 GiB) has
 * its own, segments out of order are sorted, a segment inside another's pages joins it. */
static void runs_split_far_segments(void)
{
	struct elf_info ei = { .nsegs = 5 };
	ei.segs[0] = (struct elf_seg){ .vaddr = 0x40000000, .memsz = 0x96000 };   /* .kept */
	ei.segs[1] = (struct elf_seg){ .vaddr = 0x400000, .memsz = 0x190 };       /* headers */
	ei.segs[2] = (struct elf_seg){ .vaddr = 0x401000, .memsz = 0x1063f };     /* .text */
	ei.segs[3] = (struct elf_seg){ .vaddr = 0x412000, .memsz = 0x203a };      /* .rodata */
	ei.segs[4] = (struct elf_seg){ .vaddr = 0x415040, .memsz = 0x31128 };     /* .data .bss */
	uint32_t order[ELF_MAX_SEGS];
	struct elf_run r[ELF_MAX_SEGS];
	CHECK_EQ_U64(elf_runs(&ei, order, r), 2);
	CHECK_EQ_U64(r[0].lo, 0x400000);
	CHECK_EQ_U64(r[0].hi, 0x447000);
	CHECK_EQ_U64(r[0].from, 0);
	CHECK_EQ_U64(r[0].to, 4);
	CHECK_EQ_U64(r[1].lo, 0x40000000);
	CHECK_EQ_U64(r[1].hi, 0x40096000);
	CHECK_EQ_U64(r[1].from, 4);
	CHECK_EQ_U64(r[1].to, 5);
	CHECK_EQ_U64(order[0], 1);
	CHECK_EQ_U64(order[4], 0);
	/* one page apart: separate; sharing a page: one; inside another: one */
	ei.nsegs = 3;
	ei.segs[0] = (struct elf_seg){ .vaddr = 0x400000, .memsz = 0x1000 };
	ei.segs[1] = (struct elf_seg){ .vaddr = 0x402000, .memsz = 0x800 };
	ei.segs[2] = (struct elf_seg){ .vaddr = 0x402400, .memsz = 0x10 };
	CHECK_EQ_U64(elf_runs(&ei, order, r), 2);
	CHECK_EQ_U64(r[1].lo, 0x402000);
	CHECK_EQ_U64(r[1].hi, 0x403000);
	CHECK_EQ_U64(r[1].to - r[1].from, 2);
	ei.segs[1].vaddr = 0x400800;
	ei.segs[2].vaddr = 0x400900;
	CHECK_EQ_U64(elf_runs(&ei, order, r), 1);
	CHECK_EQ_U64(r[0].hi, 0x401000);
	ei.nsegs = 0;
	CHECK_EQ_U64(elf_runs(&ei, order, r), 0);
}

int main(void)
{
	unit_begin(__FILE__);
	RUN(exec_ok);
	RUN(dyn_ok);
	RUN(phdr_address);
	RUN(skipped_program_headers);
	RUN(bad_ident_and_header);
	RUN(bad_program_header_table);
	RUN(bad_segments);
	RUN(segment_limit_and_span);
	RUN(entry_point);
	RUN(fuzz);
	RUN(runs_split_far_segments);
	return unit_end();
}
