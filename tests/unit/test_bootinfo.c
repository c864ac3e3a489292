/* Multiboot2 information parser (kernel/boot/bootinfo.c). The MBIs are built as the
 * Multiboot2 spec (1.0, section 3.6) lays them out: u32 total_size, u32 reserved, then tags
 * (u32 type, u32 size, body) each starting 8-byte aligned, ended by a type-0 tag of size 8. */
#include "unit.h"
#include "boot/bootinfo.h"

#define PHYS 0x10000ull /* where the MBI pretends to be */

struct mbi {
	uint8_t b[8192];
	uint32_t len;
};

static void m_begin(struct mbi *m)
{
	memset(m, 0, sizeof(*m));
	m->len = 8;
}

/* Appends a tag with a body of blen bytes (padded to 8); returns the body. */
static uint8_t *tag(struct mbi *m, uint32_t type, uint32_t blen)
{
	uint8_t *t = m->b + m->len;
	put32(t, type);
	put32(t + 4, 8 + blen);
	m->len += (8 + blen + 7) & ~7u;
	return t + 8;
}

static uint32_t str_tag(struct mbi *m, uint32_t type, const char *s)
{
	uint32_t off = m->len;
	memcpy(tag(m, type, (uint32_t)strlen(s) + 1), s, strlen(s) + 1);
	return off;
}

static void module(struct mbi *m, uint32_t start, uint32_t end, const char *cmd)
{
	uint8_t *b = tag(m, 3, 8 + (uint32_t)strlen(cmd) + 1);
	put32(b, start), put32(b + 4, end);
	memcpy(b + 8, cmd, strlen(cmd) + 1);
}

struct mm { uint64_t base, len; uint32_t type; };

static void mmap_tag(struct mbi *m, uint32_t esz, const struct mm *e, uint32_t n)
{
	uint8_t *b = tag(m, 6, 8 + esz * n);
	put32(b, esz), put32(b + 4, 0); /* entry_size, entry_version */
	for (uint32_t i = 0; i < n; i++) {
		uint8_t *p = b + 8 + i * esz;
		put64(p, e[i].base), put64(p + 8, e[i].len), put32(p + 16, e[i].type);
		for (uint32_t k = 24; k < esz; k++)
			p[k] = 0xee; /* fields of a later entry_version */
	}
}

/* RSDP of the given size (20 for ACPI 1.0, 36 for 2.0+), recognisable by its OEM ID. */
static uint32_t rsdp_tag(struct mbi *m, uint32_t type, uint32_t size, const char *oem)
{
	uint32_t off = m->len;
	uint8_t *b = tag(m, type, size);
	memcpy(b, "RSD PTR ", 8);
	memcpy(b + 9, oem, 6);
	b[15] = size >= 36 ? 2 : 0;
	return off;
}

static void m_end(struct mbi *m)
{
	tag(m, 0, 0);
	put32(m->b, m->len);
}

static struct boot_info bi; /* 11 KiB: kept off the stack */

/* Parses from a heap block of exactly max_len bytes, so ASan sees any read past it. */
static int parse_exact(const uint8_t *b, size_t max_len)
{
	uint8_t *h = malloc(max_len ? max_len : 1);
	memcpy(h, b, max_len);
	int r = bootinfo_parse(&bi, h, PHYS, max_len);
	free(h);
	return r;
}

static bool nothing_decoded(void)
{
	struct boot_info z;
	memset(&z, 0, sizeof(z));
	z.fb.type = FB_TYPE_NONE;
	z.mbi_phys = PHYS;
	return !memcmp(&z, &bi, sizeof(z));
}

static void full_mbi(void)
{
	struct mbi m;
	m_begin(&m);
	str_tag(&m, 1, "loglevel=3 tests=all");
	str_tag(&m, 2, "GRUB 2.06-13+deb12u1");
	uint8_t *mem = tag(&m, 4, 8); /* basic memory information: not used */
	put32(mem, 639), put32(mem + 4, 523136);
	module(&m, 0x200000, 0x201234, "init verbose");
	module(&m, 0x300000, 0x300000, ""); /* empty module */
	uint8_t *bootdev = tag(&m, 5, 12); /* BIOS boot device: not used */
	put32(bootdev, 0xe0);
	const struct mm map[] = {
		{ 0, 0x9fc00, MEM_USABLE },
		{ 0x9fc00, 0x400, MEM_RESERVED },
		{ 0x100000, 0x1fee0000, MEM_USABLE },
		{ 0x1ffe0000, 0x20000, MEM_ACPI },
		{ 0xfffc0000, 0, MEM_RESERVED }, /* empty: dropped */
		{ 0x100000000ull, 0x40000000, MEM_USABLE },
		{ 0xfed00000, 0x1000, MEM_NVS },
		{ 0x2000000, 0x1000, MEM_BAD },
		{ 0xfffffffffffff000ull, 0x2000, MEM_RESERVED }, /* wraps: dropped */
		{ 0xfee00000, 0x1000, 77 }, /* unknown types are kept as they are */
	};
	mmap_tag(&m, 24, map, 10);
	uint8_t *fb = tag(&m, 8, 22 + 2 + 6); /* with RGB colour info */
	put64(fb, 0xfd000000), put32(fb + 8, 4096), put32(fb + 12, 1024), put32(fb + 16, 768);
	fb[20] = 32, fb[21] = FB_TYPE_RGB;
	fb[24] = 16, fb[25] = 8, fb[26] = 8, fb[27] = 8, fb[28] = 0, fb[29] = 8;
	uint32_t old = rsdp_tag(&m, 14, 20, "OLDOEM");
	uint32_t new = rsdp_tag(&m, 15, 36, "NEWOEM");
	m_end(&m);
	(void)old;

	REQUIRE(parse_exact(m.b, m.len) == 0);
	CHECK_EQ_U64(bi.mbi_phys, PHYS);
	CHECK_EQ_U64(bi.mbi_size, m.len);
	CHECK_STR(bi.cmdline, "loglevel=3 tests=all");
	CHECK_STR(bi.loader, "GRUB 2.06-13+deb12u1");
	CHECK_EQ_U64(bi.nmods, 2);
	CHECK_EQ_U64(bi.mods[0].start, 0x200000);
	CHECK_EQ_U64(bi.mods[0].end, 0x201234);
	CHECK_STR(bi.mods[0].cmdline, "init verbose");
	CHECK_EQ_U64(bi.mods[1].start, 0x300000);
	CHECK_EQ_U64(bi.mods[1].end, 0x300000);
	CHECK_STR(bi.mods[1].cmdline, "");
	CHECK_EQ_U64(bi.nmem, 8);
	static const int kept[] = { 0, 1, 2, 3, 5, 6, 7, 9 };
	for (uint32_t i = 0; i < 8; i++) {
		CHECK_EQ_U64(bi.mem[i].base, map[kept[i]].base);
		CHECK_EQ_U64(bi.mem[i].len, map[kept[i]].len);
		CHECK_EQ_U64(bi.mem[i].type, map[kept[i]].type);
	}
	CHECK_EQ_I64(bi.fb.type, FB_TYPE_RGB);
	CHECK_EQ_U64(bi.fb.addr, 0xfd000000);
	CHECK_EQ_U64(bi.fb.pitch, 4096);
	CHECK_EQ_U64(bi.fb.width, 1024);
	CHECK_EQ_U64(bi.fb.height, 768);
	CHECK_EQ_U64(bi.fb.bpp, 32);
	/* The ACPI 2.0 RSDP wins; rsdp_phys points at the copy inside the MBI. */
	CHECK(bi.rsdp_v2);
	CHECK_EQ_U64(bi.rsdp_phys, PHYS + new + 8);
	CHECK_EQ_U64(bi.rsdp_len, 36);
	CHECK(!memcmp(m.b + (bi.rsdp_phys - PHYS) + 9, "NEWOEM", 6));
}

static void minimal_mbi(void)
{
	struct mbi m;
	m_begin(&m);
	m_end(&m);
	CHECK_EQ_U64(m.len, 16);
	REQUIRE(parse_exact(m.b, m.len) == 0);
	CHECK_EQ_U64(bi.mbi_size, 16);
	CHECK_STR(bi.cmdline, "");
	CHECK_STR(bi.loader, "");
	CHECK_EQ_U64(bi.nmods + bi.nmem + bi.rsdp_phys + bi.rsdp_len, 0);
	CHECK(!bi.rsdp_v2);
	CHECK_EQ_I64(bi.fb.type, FB_TYPE_NONE); /* no framebuffer tag */
	/* max_len larger than total_size: only total_size bytes are read. */
	uint8_t big[64];
	memset(big, 0xff, sizeof(big));
	memcpy(big, m.b, 16);
	CHECK_EQ_I64(parse_exact(big, sizeof(big)), 0);
	CHECK_EQ_U64(bi.mbi_size, 16);
}

static void rsdp_choice(void)
{
	struct mbi m;
	/* New before old: the old one does not replace it. */
	m_begin(&m);
	uint32_t new = rsdp_tag(&m, 15, 36, "NEWOEM");
	rsdp_tag(&m, 14, 20, "OLDOEM");
	m_end(&m);
	REQUIRE(parse_exact(m.b, m.len) == 0);
	CHECK(bi.rsdp_v2);
	CHECK_EQ_U64(bi.rsdp_phys, PHYS + new + 8);
	CHECK_EQ_U64(bi.rsdp_len, 36);
	/* Old only. */
	m_begin(&m);
	str_tag(&m, 1, "x");
	uint32_t old = rsdp_tag(&m, 14, 20, "OLDOEM");
	m_end(&m);
	REQUIRE(parse_exact(m.b, m.len) == 0);
	CHECK(!bi.rsdp_v2);
	CHECK_EQ_U64(bi.rsdp_phys, PHYS + old + 8);
	CHECK_EQ_U64(bi.rsdp_len, 20);
	/* A body too small for even an ACPI 1.0 RSDP is ignored. */
	m_begin(&m);
	rsdp_tag(&m, 14, 19, "OLDOEM");
	rsdp_tag(&m, 15, 19, "NEWOEM");
	m_end(&m);
	REQUIRE(parse_exact(m.b, m.len) == 0);
	CHECK_EQ_U64(bi.rsdp_phys, 0);
	CHECK_EQ_U64(bi.rsdp_len, 0);
	CHECK(!bi.rsdp_v2);
}

static void strings_are_bounded(void)
{
	struct mbi m;
	char longstr[700];
	memset(longstr, 'c', sizeof(longstr) - 1);
	longstr[sizeof(longstr) - 1] = '\0';
	m_begin(&m);
	str_tag(&m, 1, longstr);
	str_tag(&m, 2, longstr);
	module(&m, 0x1000, 0x2000, longstr);
	m_end(&m);
	REQUIRE(parse_exact(m.b, m.len) == 0);
	CHECK_EQ_U64(strlen(bi.cmdline), sizeof(bi.cmdline) - 1);
	CHECK_EQ_U64(strlen(bi.loader), sizeof(bi.loader) - 1);
	REQUIRE(bi.nmods == 1);
	CHECK_EQ_U64(strlen(bi.mods[0].cmdline), sizeof(bi.mods[0].cmdline) - 1);
	/* A string without its NUL stops at the end of the tag (size not a multiple of 8). */
	m_begin(&m);
	uint8_t *b = tag(&m, 1, 5);
	memcpy(b, "abcde", 5);
	memset(b + 5, 'X', 3); /* padding bytes are not part of the tag */
	b = tag(&m, 2, 3);
	memcpy(b, "xyz", 3);
	memset(b + 3, 'Y', 5);
	b = tag(&m, 3, 10);
	put32(b, 0x5000), put32(b + 4, 0x6000), memcpy(b + 8, "mo", 2);
	memset(b + 10, 'Z', 6);
	m_end(&m);
	REQUIRE(parse_exact(m.b, m.len) == 0);
	CHECK_STR(bi.cmdline, "abcde");
	CHECK_STR(bi.loader, "xyz");
	REQUIRE(bi.nmods == 1);
	CHECK_STR(bi.mods[0].cmdline, "mo");
	/* Empty bodies give empty strings. */
	m_begin(&m);
	tag(&m, 1, 0);
	tag(&m, 2, 0);
	m_end(&m);
	REQUIRE(parse_exact(m.b, m.len) == 0);
	CHECK_STR(bi.cmdline, "");
	CHECK_STR(bi.loader, "");
}

static void modules(void)
{
	struct mbi m;
	m_begin(&m);
	module(&m, 0x5000, 0x4fff, "backwards"); /* start > end: dropped */
	uint8_t *b = tag(&m, 3, 7);            /* too short for start and end: dropped */
	put32(b, 0x1000);
	module(&m, 0xfffff000, 0xffffffff, "top");
	for (uint32_t i = 0; i < MAX_MODULES + 5; i++) {
		char name[16];
		snprintf(name, sizeof(name), "m%u", i);
		module(&m, 0x100000 + i * 0x1000, 0x100000 + i * 0x1000 + 0x800, name);
	}
	m_end(&m);
	REQUIRE(parse_exact(m.b, m.len) == 0);
	/* Extra modules are dropped; the MBI is still well formed. */
	CHECK_EQ_U64(bi.nmods, MAX_MODULES);
	CHECK_STR(bi.mods[0].cmdline, "top");
	CHECK_EQ_U64(bi.mods[0].start, 0xfffff000);
	CHECK_EQ_U64(bi.mods[0].end, 0xffffffff);
	CHECK_STR(bi.mods[MAX_MODULES - 1].cmdline, "m30");
	CHECK_EQ_U64(bi.mods[MAX_MODULES - 1].start, 0x100000 + 30 * 0x1000);
	CHECK_EQ_U64(bi.mods[MAX_MODULES - 1].end, 0x100000 + 30 * 0x1000 + 0x800);
}

static void memory_map(void)
{
	struct mbi m;
	/* entry_size larger than 24 (a later entry_version): entries are stepped by it. */
	const struct mm map[] = { { 0x1000, 0x2000, 1 }, { 0x100000, 0x300000, 2 }, { 0x500000, 0x1000, 3 } };
	m_begin(&m);
	mmap_tag(&m, 40, map, 3);
	m_end(&m);
	REQUIRE(parse_exact(m.b, m.len) == 0);
	REQUIRE(bi.nmem == 3);
	for (uint32_t i = 0; i < 3; i++) {
		CHECK_EQ_U64(bi.mem[i].base, map[i].base);
		CHECK_EQ_U64(bi.mem[i].len, map[i].len);
		CHECK_EQ_U64(bi.mem[i].type, map[i].type);
	}
	/* A partial entry at the end of the tag is not read. */
	m_begin(&m);
	uint8_t *b = tag(&m, 6, 8 + 24 + 20);
	put32(b, 24);
	put64(b + 8, 0x1000), put64(b + 16, 0x1000), put32(b + 24, 1);
	put64(b + 32, 0x9000), put64(b + 40, 0x1000), put32(b + 48, 1);
	m_end(&m);
	REQUIRE(parse_exact(m.b, m.len) == 0);
	CHECK_EQ_U64(bi.nmem, 1);
	/* An empty map is fine. */
	m_begin(&m);
	mmap_tag(&m, 24, map, 0);
	m_end(&m);
	CHECK_EQ_I64(parse_exact(m.b, m.len), 0);
	CHECK_EQ_U64(bi.nmem, 0);
	/* More entries than MAX_MEM_REGIONS: the first ones are kept. */
	struct mm many[MAX_MEM_REGIONS + 20];
	for (uint32_t i = 0; i < MAX_MEM_REGIONS + 20; i++)
		many[i] = (struct mm){ (uint64_t)i << 20, 0x1000, 1 };
	m_begin(&m);
	mmap_tag(&m, 24, many, MAX_MEM_REGIONS + 20);
	str_tag(&m, 1, "after");
	m_end(&m);
	REQUIRE(m.len <= sizeof(m.b));
	REQUIRE(parse_exact(m.b, m.len) == 0);
	CHECK_EQ_U64(bi.nmem, MAX_MEM_REGIONS);
	CHECK_EQ_U64(bi.mem[MAX_MEM_REGIONS - 1].base, (uint64_t)(MAX_MEM_REGIONS - 1) << 20);
	CHECK_STR(bi.cmdline, "after");
	/* Two map tags: entries accumulate. */
	m_begin(&m);
	mmap_tag(&m, 24, map, 2);
	mmap_tag(&m, 24, map + 2, 1);
	m_end(&m);
	REQUIRE(parse_exact(m.b, m.len) == 0);
	CHECK_EQ_U64(bi.nmem, 3);
	CHECK_EQ_U64(bi.mem[2].base, 0x500000);
}

static void framebuffer(void)
{
	struct mbi m;
	/* EGA text: the type byte is taken as it is. */
	m_begin(&m);
	uint8_t *fb = tag(&m, 8, 22 + 2);
	put64(fb, 0xb8000), put32(fb + 8, 160), put32(fb + 12, 80), put32(fb + 16, 25);
	fb[20] = 16, fb[21] = FB_TYPE_EGA_TEXT;
	m_end(&m);
	REQUIRE(parse_exact(m.b, m.len) == 0);
	CHECK_EQ_I64(bi.fb.type, FB_TYPE_EGA_TEXT);
	CHECK_EQ_U64(bi.fb.addr, 0xb8000);
	CHECK_EQ_U64(bi.fb.width, 80);
	CHECK_EQ_U64(bi.fb.height, 25);
	CHECK_EQ_U64(bi.fb.pitch, 160);
	CHECK_EQ_U64(bi.fb.bpp, 16);
	/* A body shorter than the fixed fields is ignored. */
	m_begin(&m);
	fb = tag(&m, 8, 21);
	put64(fb, 0xfd000000), fb[20] = 32;
	m_end(&m);
	REQUIRE(parse_exact(m.b, m.len) == 0);
	CHECK_EQ_I64(bi.fb.type, FB_TYPE_NONE);
	CHECK_EQ_U64(bi.fb.addr, 0);
}

static void unaligned_mbi(void)
{
	/* rd32/rd64 assume no alignment: the same MBI one byte off gives the same result. */
	struct mbi m;
	m_begin(&m);
	str_tag(&m, 1, "hz=250");
	const struct mm map[] = { { 0x100000, 0x7ff00000, 1 } };
	mmap_tag(&m, 24, map, 1);
	m_end(&m);
	uint8_t *h = malloc(m.len + 1);
	memcpy(h + 1, m.b, m.len);
	CHECK_EQ_I64(bootinfo_parse(&bi, h + 1, PHYS, m.len), 0);
	free(h);
	CHECK_STR(bi.cmdline, "hz=250");
	CHECK_EQ_U64(bi.nmem, 1);
	CHECK_EQ_U64(bi.mem[0].len, 0x7ff00000);
}

static void bad_header(void)
{
	struct mbi m;
	m_begin(&m);
	str_tag(&m, 1, "x");
	m_end(&m);
	/* max_len too small for the header. */
	CHECK_EQ_I64(parse_exact(m.b, 7), -1);
	CHECK(nothing_decoded());
	CHECK_EQ_I64(parse_exact(m.b, 0), -1);
	/* total_size larger than what may be read. */
	CHECK_EQ_I64(parse_exact(m.b, m.len - 1), -1);
	CHECK(nothing_decoded());
	put32(m.b, 0xffffffff);
	CHECK_EQ_I64(parse_exact(m.b, m.len), -1);
	/* total_size too small for the header and an end tag. */
	put32(m.b, 15);
	CHECK_EQ_I64(parse_exact(m.b, m.len), -1);
	put32(m.b, 0);
	CHECK_EQ_I64(parse_exact(m.b, m.len), -1);
	CHECK(nothing_decoded());
}

static void bad_tags(void)
{
	struct mbi m;
	/* A tag running past total_size. */
	m_begin(&m);
	str_tag(&m, 1, "kept");
	uint32_t off = str_tag(&m, 2, "loader");
	m_end(&m);
	put32(m.b + off + 4, m.len - off + 1);
	CHECK_EQ_I64(parse_exact(m.b, m.len), -2);
	CHECK_STR(bi.cmdline, "kept"); /* what came before is kept */
	CHECK_STR(bi.loader, "");
	put32(m.b + off + 4, 0xffffffff);
	CHECK_EQ_I64(parse_exact(m.b, m.len), -2);
	/* Exactly reaching total_size is fine, but then there is no room for the end tag. */
	put32(m.b + off + 4, m.len - off);
	CHECK_EQ_I64(parse_exact(m.b, m.len), -4);
	CHECK_STR(bi.loader, "loader");
	/* Tag size below 8 (would not advance). */
	for (uint32_t sz = 0; sz < 8; sz++) {
		put32(m.b + off + 4, sz);
		CHECK_EQ_I64(parse_exact(m.b, m.len), -2);
	}
	/* Missing end tag: total_size ends right after the last tag. */
	m_begin(&m);
	str_tag(&m, 1, "no end");
	put32(m.b, m.len);
	CHECK_EQ_I64(parse_exact(m.b, m.len), -4);
	CHECK_STR(bi.cmdline, "no end");
	/* Fewer than 8 bytes left after the last tag: not a tag. */
	put32(m.b, m.len + 7);
	CHECK_EQ_I64(parse_exact(m.b, m.len + 7), -4);
	/* The last tag's padding runs past total_size (last tag size not a multiple of 8). */
	m_begin(&m);
	off = m.len;
	tag(&m, 1, 3);
	put32(m.b, off + 11);
	CHECK_EQ_I64(parse_exact(m.b, off + 11), -4);
	/* The end tag's size counts too. */
	m_begin(&m);
	m_end(&m);
	put32(m.b + 12, 9);
	CHECK_EQ_I64(parse_exact(m.b, m.len), -2);
	put32(m.b + 12, 7);
	CHECK_EQ_I64(parse_exact(m.b, m.len), -2);
	/* Tags after the end tag are not read. */
	m_begin(&m);
	tag(&m, 0, 0);
	str_tag(&m, 1, "after end");
	put32(m.b, m.len);
	CHECK_EQ_I64(parse_exact(m.b, m.len), 0);
	CHECK_STR(bi.cmdline, "");
}

static void bad_mmap(void)
{
	struct mbi m;
	const struct mm map[] = { { 0x1000, 0x2000, 1 } };
	/* entry_size below 24, including 0 (which would loop forever). */
	for (uint32_t esz = 0; esz < 24; esz += 4) {
		m_begin(&m);
		str_tag(&m, 1, "before");
		uint8_t *b = tag(&m, 6, 8 + 48);
		put32(b, esz);
		str_tag(&m, 2, "after");
		m_end(&m);
		CHECK_EQ_I64(parse_exact(m.b, m.len), -3);
		CHECK_STR(bi.cmdline, "before");
		CHECK_STR(bi.loader, "");
		CHECK_EQ_U64(bi.nmem, 0);
	}
	/* A body too short for entry_size and entry_version. */
	m_begin(&m);
	put32(tag(&m, 6, 7), 24);
	m_end(&m);
	CHECK_EQ_I64(parse_exact(m.b, m.len), -3);
	/* A huge entry_size: no entry fits, nothing read. */
	m_begin(&m);
	mmap_tag(&m, 24, map, 1);
	put32(m.b + 16, 0xffffffff);
	m_end(&m);
	CHECK_EQ_I64(parse_exact(m.b, m.len), 0);
	CHECK_EQ_U64(bi.nmem, 0);
}

/* Invariants that must hold for whatever bootinfo_parse returns. */
static void check_consistent(int ret, size_t max_len, int iter)
{
	bool ok = ret == 0 || ret == -1 || ret == -2 || ret == -3 || ret == -4;
	ok = ok && bi.mbi_phys == PHYS;
	ok = ok && memchr(bi.cmdline, 0, sizeof(bi.cmdline)) && memchr(bi.loader, 0, sizeof(bi.loader));
	ok = ok && bi.nmods <= MAX_MODULES && bi.nmem <= MAX_MEM_REGIONS;
	for (uint32_t i = 0; ok && i < bi.nmods; i++)
		ok = bi.mods[i].start <= bi.mods[i].end && memchr(bi.mods[i].cmdline, 0, sizeof(bi.mods[i].cmdline));
	for (uint32_t i = 0; ok && i < bi.nmem; i++)
		ok = bi.mem[i].len && bi.mem[i].base + bi.mem[i].len > bi.mem[i].base;
	if (ok && bi.rsdp_phys) /* an RSDP copy lies wholly inside the MBI, in a tag body */
		ok = bi.rsdp_len >= 20 && bi.rsdp_phys >= PHYS + 16 && (bi.rsdp_phys - PHYS) % 8 == 0 &&
		     bi.rsdp_phys - PHYS + bi.rsdp_len <= bi.mbi_size;
	else if (ok)
		ok = !bi.rsdp_len && !bi.rsdp_v2;
	if (ok && ret == -1)
		ok = nothing_decoded();
	else if (ok)
		ok = bi.mbi_size >= 16 && bi.mbi_size <= max_len;
	if (!ok)
		unit_fail(__FILE__, __LINE__, "iteration %d: inconsistent result (returned %d)", iter, ret);
}

static void fuzz(void)
{
	struct mbi base;
	m_begin(&base);
	str_tag(&base, 1, "loglevel=3 tests=all hz=100");
	str_tag(&base, 2, "GRUB 2.06");
	module(&base, 0x200000, 0x210000, "init");
	module(&base, 0x210000, 0x211000, "echo arg");
	const struct mm map[] = { { 0, 0x9fc00, 1 }, { 0x100000, 0x7ff00000, 1 }, { 0xfec00000, 0x1000, 2 } };
	mmap_tag(&base, 24, map, 3);
	uint8_t *fb = tag(&base, 8, 22 + 2);
	put64(fb, 0xb8000), put32(fb + 8, 160), put32(fb + 12, 80), put32(fb + 16, 25), fb[21] = 2;
	rsdp_tag(&base, 14, 20, "OLDOEM");
	rsdp_tag(&base, 15, 36, "NEWOEM");
	m_end(&base);
	uint32_t toff[16], ntags = 0; /* tag offsets, for targeted mutations */
	for (uint32_t o = 8; o < base.len; o += (((uint32_t)base.b[o + 4] | base.b[o + 5] << 8) + 7) & ~7u)
		toff[ntags++] = o;

	uint64_t seed = 0xb7e151628aed2a6bull;
	uint8_t buf[512];
	int successes = 0;
	for (int iter = 0; iter < 100000 && !UNIT_FAILED(); iter++) {
		memcpy(buf, base.b, base.len);
		size_t len = base.len;
		int nmut = 1 + (int)(unit_rand(&seed) % 4);
		for (int k = 0; k < nmut; k++) {
			uint64_t r = unit_rand(&seed);
			uint32_t t = toff[(r >> 8) % ntags];
			static const uint32_t sizes[] = { 0, 7, 8, 9, 16, 23, 24, 0xffffffff, 0x80000000 };
			switch (r % 7) {
			case 0: if (len) buf[(r >> 16) % len] ^= (uint8_t)(1u << (r >> 40) % 8); break;
			case 1: if (len) buf[(r >> 16) % len] = (uint8_t)(r >> 48); break;
			case 2: /* a tag's size: interesting value or nudged */
				put32(buf + t + 4, (r >> 40) & 1 ? sizes[(r >> 41) % 9]
							    : (uint32_t)(buf[t + 4] + (r >> 48) % 17 - 8));
				break;
			case 3: put32(buf + t, (uint32_t)(r >> 40) % 22); break; /* a tag's type */
			case 4: /* mmap entry_size or a module's start/end */
				put32(buf + toff[4] + 8, (uint32_t)(r >> 40) % 64);
				put32(buf + toff[2] + 8 + 4 * ((r >> 20) & 1), (uint32_t)(r >> 32));
				break;
			case 5: /* total_size */
				put32(buf, (r >> 40) & 1 ? (uint32_t)(r >> 16) % (base.len + 16)
							 : (uint32_t)(len + (r >> 48) % 16 - 8));
				break;
			default: /* cut the buffer (max_len) shorter or longer than total_size */
				len = (r >> 16) % (base.len + 24);
				for (size_t i = base.len; i < len; i++)
					buf[i] = (uint8_t)unit_rand(&seed);
				break;
			}
		}
		int ret = parse_exact(buf, len);
		successes += ret == 0;
		check_consistent(ret, len, iter);
	}
	CHECK(successes > 5000); /* the mutations must not only produce garbage */
}

int main(void)
{
	unit_begin(__FILE__);
	RUN(full_mbi);
	RUN(minimal_mbi);
	RUN(rsdp_choice);
	RUN(strings_are_bounded);
	RUN(modules);
	RUN(memory_map);
	RUN(framebuffer);
	RUN(unaligned_mbi);
	RUN(bad_header);
	RUN(bad_tags);
	RUN(bad_mmap);
	RUN(fuzz);
	return unit_end();
}
