/* lib/swifi: the x86-64 length decoder (hand-checked encodings, and every instruction boundary
 * of real programs against objdump), the fault types on crafted code and on a real program,
 * and the ELF symbol reader on real, corrupted and fuzzed images. The real programs are
 * build/user/{tcp,ip,rs} (`make user`). Buffers are heap blocks of exactly the bytes given, so
 * ASan sees any read past them. */
#include "unit.h"
#include "elfsym.h"
#include "swifi.h"
#include "x86dec.h"

/* ---- helpers ---- */

static size_t unhex(const char *s, uint8_t *out) /* "48 8b 05" -> bytes */
{
	size_t n = 0;
	while (*s) {
		if (*s == ' ') {
			s++;
			continue;
		}
		out[n++] = (uint8_t)strtoul((char[3]){ s[0], s[1], 0 }, NULL, 16);
		s += 2;
	}
	return n;
}

static void hexstr(const uint8_t *b, size_t n, char *out) /* at least 3n+1 bytes */
{
	out[0] = 0;
	for (size_t i = 0; i < n; i++)
		sprintf(out + 3 * i, "%02x%s", b[i], i + 1 < n ? " " : "");
}

static uint8_t *dup_exact(const uint8_t *b, size_t n)
{
	uint8_t *h = malloc(n ? n : 1);
	memcpy(h, b, n);
	return h;
}

/* Decodes bytes from an exactly sized heap copy. */
static unsigned decode_exact(const uint8_t *b, size_t n, struct x86_insn *d)
{
	uint8_t *h = dup_exact(b, n);
	unsigned r = x86_decode(h, n, d);
	free(h);
	return r;
}

/* build/user/NAME, found from this binary's place (build/unit/test_swifi). */
static const char *user_path(const char *name)
{
	static char path[4200];
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return name;
	exe[n] = 0;
	*strrchr(exe, '/') = 0;
	snprintf(path, sizeof(path), "%s/../user/%s", exe, name);
	return path;
}

/* The file in an exactly sized heap block, or NULL. */
static uint8_t *load(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *b = n > 0 ? malloc((size_t)n) : NULL;
	if (b && fread(b, 1, (size_t)n, f) != (size_t)n)
		free(b), b = NULL;
	fclose(f);
	*len = b ? (size_t)n : 0;
	return b;
}

#define LOAD_USER(var, len, name)                                                              \
	size_t len;                                                                            \
	uint8_t *var = load(user_path(name), &len);                                            \
	if (!var) {                                                                            \
		unit_fail(__FILE__, __LINE__, "build/user/%s missing: run `make user` first", name); \
		return;                                                                        \
	}

struct fnlist {
	struct elf_fn *f;
	size_t n, cap;
};

static void collect(void *arg, const struct elf_fn *f)
{
	struct fnlist *l = arg;
	if (l->n == l->cap)
		l->f = realloc(l->f, (l->cap = l->cap ? 2 * l->cap : 256) * sizeof(*l->f));
	l->f[l->n++] = *f;
}

static const struct elf_fn *find_fn(const struct fnlist *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->f[i].name, name))
			return &l->f[i];
	return NULL;
}

/* ---- the decoder on hand-checked encodings ---- */

struct enc {
	const char *hex;
	int len, map, op, modrm, sib, disp, imm, pfx, rex, vex; /* modrm/sib: offset, -1 none */
};

static const struct enc encs[] = {
	/* one-byte map, REX, ModRM/SIB/displacement forms */
	{ "90", 1, 0, 0x90, -1, -1, 0, 0, 0, 0, 0 },
	{ "c3", 1, 0, 0xc3, -1, -1, 0, 0, 0, 0, 0 },
	{ "cc", 1, 0, 0xcc, -1, -1, 0, 0, 0, 0, 0 },
	{ "41 57", 2, 0, 0x57, -1, -1, 0, 0, 0, 0x41, 0 },
	{ "48 89 e5", 3, 0, 0x89, 2, -1, 0, 0, 0, 0x48, 0 },
	{ "48 8b 05 78 56 34 12", 7, 0, 0x8b, 2, -1, 4, 0, 0, 0x48, 0 },       /* RIP-relative */
	{ "8b 04 25 78 56 34 12", 7, 0, 0x8b, 1, 2, 4, 0, 0, 0, 0 },           /* SIB, no base */
	{ "8b 04 c5 00 10 00 00", 7, 0, 0x8b, 1, 2, 4, 0, 0, 0, 0 },           /* index, no base */
	{ "8b 44 c5 08", 4, 0, 0x8b, 1, 2, 1, 0, 0, 0, 0 },                    /* base rbp, mod 01 */
	{ "8b 44 24 08", 4, 0, 0x8b, 1, 2, 1, 0, 0, 0, 0 },
	{ "8b 84 24 00 01 00 00", 7, 0, 0x8b, 1, 2, 4, 0, 0, 0, 0 },
	{ "8b 45 f8", 3, 0, 0x8b, 1, -1, 1, 0, 0, 0, 0 },
	{ "8b 85 00 ff ff ff", 6, 0, 0x8b, 1, -1, 4, 0, 0, 0, 0 },
	{ "8b 00", 2, 0, 0x8b, 1, -1, 0, 0, 0, 0, 0 },
	{ "41 8b 45 00", 4, 0, 0x8b, 2, -1, 1, 0, 0, 0x41, 0 },                /* (%r13): disp8 */
	{ "41 8b 04 24", 4, 0, 0x8b, 2, 3, 0, 0, 0, 0x41, 0 },                 /* (%r12): SIB */
	{ "8d 04 80", 3, 0, 0x8d, 1, 2, 0, 0, 0, 0, 0 },
	{ "8d 05 00 00 00 00", 6, 0, 0x8d, 1, -1, 4, 0, 0, 0, 0 },
	{ "48 63 c7", 3, 0, 0x63, 2, -1, 0, 0, 0, 0x48, 0 },
	/* immediates: sizes with and without 66, REX.W */
	{ "04 7f", 2, 0, 0x04, -1, -1, 0, 1, 0, 0, 0 },
	{ "05 78 56 34 12", 5, 0, 0x05, -1, -1, 0, 4, 0, 0, 0 },
	{ "66 05 34 12", 4, 0, 0x05, -1, -1, 0, 2, 1, 0, 0 },
	{ "48 05 78 56 34 12", 6, 0, 0x05, -1, -1, 0, 4, 0, 0x48, 0 },
	{ "83 c0 01", 3, 0, 0x83, 1, -1, 0, 1, 0, 0, 0 },
	{ "81 c1 00 01 00 00", 6, 0, 0x81, 1, -1, 0, 4, 0, 0, 0 },
	{ "66 81 c1 00 01", 5, 0, 0x81, 2, -1, 0, 2, 1, 0, 0 },
	{ "80 3d 00 00 00 00 05", 7, 0, 0x80, 1, -1, 4, 1, 0, 0, 0 },          /* RIP-rel + imm8 */
	{ "48 c7 44 24 08 01 00 00 00", 9, 0, 0xc7, 2, 3, 1, 4, 0, 0x48, 0 },
	{ "66 c7 44 24 08 01 00", 7, 0, 0xc7, 2, 3, 1, 2, 1, 0, 0 },
	{ "c6 45 ff 01", 4, 0, 0xc6, 1, -1, 1, 1, 0, 0, 0 },
	{ "b8 78 56 34 12", 5, 0, 0xb8, -1, -1, 0, 4, 0, 0, 0 },
	{ "66 b8 34 12", 4, 0, 0xb8, -1, -1, 0, 2, 1, 0, 0 },
	{ "48 b8 88 77 66 55 44 33 22 11", 10, 0, 0xb8, -1, -1, 0, 8, 0, 0x48, 0 },
	{ "49 bb 88 77 66 55 44 33 22 11", 10, 0, 0xbb, -1, -1, 0, 8, 0, 0x49, 0 },
	{ "66 48 b8 88 77 66 55 44 33 22 11", 11, 0, 0xb8, -1, -1, 0, 8, 1, 0x48, 0 }, /* W wins */
	{ "a0 88 77 66 55 44 33 22 11", 9, 0, 0xa0, -1, -1, 8, 0, 0, 0, 0 },   /* moffs */
	{ "48 a1 88 77 66 55 44 33 22 11", 10, 0, 0xa1, -1, -1, 8, 0, 0, 0x48, 0 },
	{ "67 a1 78 56 34 12", 6, 0, 0xa1, -1, -1, 4, 0, 1, 0, 0 },
	{ "f6 c1 01", 3, 0, 0xf6, 1, -1, 0, 1, 0, 0, 0 },                      /* test: imm */
	{ "f7 c1 00 01 00 00", 6, 0, 0xf7, 1, -1, 0, 4, 0, 0, 0 },
	{ "66 f7 c1 00 01", 5, 0, 0xf7, 2, -1, 0, 2, 1, 0, 0 },
	{ "48 f7 c1 00 01 00 00", 7, 0, 0xf7, 2, -1, 0, 4, 0, 0x48, 0 },
	{ "f7 d8", 2, 0, 0xf7, 1, -1, 0, 0, 0, 0, 0 },                         /* neg: none */
	{ "f6 d8", 2, 0, 0xf6, 1, -1, 0, 0, 0, 0, 0 },
	{ "f7 f1", 2, 0, 0xf7, 1, -1, 0, 0, 0, 0, 0 },
	{ "48 f7 24 24", 4, 0, 0xf7, 2, 3, 0, 0, 0, 0x48, 0 },
	{ "c0 e0 03", 3, 0, 0xc0, 1, -1, 0, 1, 0, 0, 0 },
	{ "d1 e0", 2, 0, 0xd1, 1, -1, 0, 0, 0, 0, 0 },
	{ "d3 e0", 2, 0, 0xd3, 1, -1, 0, 0, 0, 0, 0 },
	{ "6a 01", 2, 0, 0x6a, -1, -1, 0, 1, 0, 0, 0 },
	{ "68 00 01 00 00", 5, 0, 0x68, -1, -1, 0, 4, 0, 0, 0 },
	{ "6b c0 0a", 3, 0, 0x6b, 1, -1, 0, 1, 0, 0, 0 },
	{ "69 c0 00 01 00 00", 6, 0, 0x69, 1, -1, 0, 4, 0, 0, 0 },
	{ "c2 08 00", 3, 0, 0xc2, -1, -1, 0, 2, 0, 0, 0 },
	{ "ca 08 00", 3, 0, 0xca, -1, -1, 0, 2, 0, 0, 0 },
	{ "c8 10 00 01", 4, 0, 0xc8, -1, -1, 0, 3, 0, 0, 0 },                  /* enter iw, ib */
	{ "c7 f8 00 00 00 00", 6, 0, 0xc7, 1, -1, 0, 4, 0, 0, 0 },             /* xbegin */
	{ "c6 f8 01", 3, 0, 0xc6, 1, -1, 0, 1, 0, 0, 0 },                      /* xabort */
	/* branches */
	{ "e8 00 00 00 00", 5, 0, 0xe8, -1, -1, 0, 4, 0, 0, 0 },
	{ "e9 fb ff ff ff", 5, 0, 0xe9, -1, -1, 0, 4, 0, 0, 0 },
	{ "eb fe", 2, 0, 0xeb, -1, -1, 0, 1, 0, 0, 0 },
	{ "74 05", 2, 0, 0x74, -1, -1, 0, 1, 0, 0, 0 },
	{ "e3 fe", 2, 0, 0xe3, -1, -1, 0, 1, 0, 0, 0 },
	{ "e2 fe", 2, 0, 0xe2, -1, -1, 0, 1, 0, 0, 0 },
	{ "0f 84 00 01 00 00", 6, 1, 0x84, -1, -1, 0, 4, 0, 0, 0 },
	{ "0f 8f fa ff ff ff", 6, 1, 0x8f, -1, -1, 0, 4, 0, 0, 0 },
	/* 66 on near branches: ignored as on Intel CPUs (objdump -M intel64), still rel32 */
	{ "66 e8 00 00 00 00", 6, 0, 0xe8, -1, -1, 0, 4, 1, 0, 0 },
	{ "66 0f 84 00 00 00 00", 7, 1, 0x84, -1, -1, 0, 4, 1, 0, 0 },
	/* prefixes */
	{ "f3 48 a5", 3, 0, 0xa5, -1, -1, 0, 0, 1, 0x48, 0 },
	{ "f0 48 0f b1 17", 5, 1, 0xb1, 4, -1, 0, 0, 1, 0x48, 0 },
	{ "64 48 8b 04 25 28 00 00 00", 9, 0, 0x8b, 3, 4, 4, 0, 1, 0x48, 0 },
	{ "66 2e 0f 1f 84 00 00 00 00 00", 10, 1, 0x1f, 4, 5, 4, 0, 2, 0, 0 },
	{ "66 66 66 66 66 66 2e 0f 1f 84 00 00 00 00 00", 15, 1, 0x1f, 9, 10, 4, 0, 7, 0, 0 },
	/* 0F map */
	{ "0f 0b", 2, 1, 0x0b, -1, -1, 0, 0, 0, 0, 0 },
	{ "0f 05", 2, 1, 0x05, -1, -1, 0, 0, 0, 0, 0 },
	{ "0f a2", 2, 1, 0xa2, -1, -1, 0, 0, 0, 0, 0 },
	{ "0f 31", 2, 1, 0x31, -1, -1, 0, 0, 0, 0, 0 },
	{ "0f c8", 2, 1, 0xc8, -1, -1, 0, 0, 0, 0, 0 },
	{ "0f 1f 44 00 00", 5, 1, 0x1f, 2, 3, 1, 0, 0, 0, 0 },
	{ "66 0f 1f 84 00 00 00 00 00", 9, 1, 0x1f, 3, 4, 4, 0, 1, 0, 0 },
	{ "0f b6 c0", 3, 1, 0xb6, 2, -1, 0, 0, 0, 0, 0 },
	{ "0f af c1", 3, 1, 0xaf, 2, -1, 0, 0, 0, 0, 0 },
	{ "0f 94 c0", 3, 1, 0x94, 2, -1, 0, 0, 0, 0, 0 },
	{ "0f 44 c1", 3, 1, 0x44, 2, -1, 0, 0, 0, 0, 0 },
	{ "0f ba e0 03", 4, 1, 0xba, 2, -1, 0, 1, 0, 0, 0 },
	{ "0f a4 c2 04", 4, 1, 0xa4, 2, -1, 0, 1, 0, 0, 0 },
	{ "0f ac c2 04", 4, 1, 0xac, 2, -1, 0, 1, 0, 0, 0 },
	{ "0f 01 d0", 3, 1, 0x01, 2, -1, 0, 0, 0, 0, 0 },                      /* xgetbv */
	{ "0f 0f c1 b4", 4, 1, 0x0f, 2, -1, 0, 1, 0, 0, 0 },                   /* 3DNow! */
	/* SSE with mandatory prefixes, 0F38, 0F3A */
	{ "f3 0f 10 c1", 4, 1, 0x10, 3, -1, 0, 0, 1, 0, 0 },
	{ "66 0f 6f c1", 4, 1, 0x6f, 3, -1, 0, 0, 1, 0, 0 },
	{ "f2 0f 58 c1", 4, 1, 0x58, 3, -1, 0, 0, 1, 0, 0 },
	{ "66 0f 70 c1 1b", 5, 1, 0x70, 3, -1, 0, 1, 1, 0, 0 },
	{ "66 0f 73 d8 04", 5, 1, 0x73, 3, -1, 0, 1, 1, 0, 0 },
	{ "0f c2 c1 01", 4, 1, 0xc2, 2, -1, 0, 1, 0, 0, 0 },
	{ "66 0f c4 c0 01", 5, 1, 0xc4, 3, -1, 0, 1, 1, 0, 0 },
	{ "66 0f c5 c0 01", 5, 1, 0xc5, 3, -1, 0, 1, 1, 0, 0 },
	{ "0f c6 c1 1b", 4, 1, 0xc6, 2, -1, 0, 1, 0, 0, 0 },
	{ "f3 0f b8 c1", 4, 1, 0xb8, 3, -1, 0, 0, 1, 0, 0 },
	{ "f3 0f bc c1", 4, 1, 0xbc, 3, -1, 0, 0, 1, 0, 0 },
	{ "f3 0f 1e fa", 4, 1, 0x1e, 3, -1, 0, 0, 1, 0, 0 },                   /* endbr64 */
	{ "66 0f 38 00 c1", 5, 2, 0x00, 4, -1, 0, 0, 1, 0, 0 },
	{ "66 0f 3a 0f c1 08", 6, 3, 0x0f, 4, -1, 0, 1, 1, 0, 0 },
	{ "66 0f 3a 16 c0 01", 6, 3, 0x16, 4, -1, 0, 1, 1, 0, 0 },
	/* VEX (2- and 3-byte) and EVEX */
	{ "c5 f8 77", 3, 1, 0x77, -1, -1, 0, 0, 0, 0, 1 },                     /* vzeroupper */
	{ "c5 f9 6f c1", 4, 1, 0x6f, 3, -1, 0, 0, 0, 0, 1 },
	{ "c5 fd 6f 05 00 00 00 00", 8, 1, 0x6f, 3, -1, 4, 0, 0, 0, 1 },
	{ "c5 f9 70 c1 1b", 5, 1, 0x70, 3, -1, 0, 1, 0, 0, 1 },
	{ "c4 e2 79 00 c1", 5, 2, 0x00, 4, -1, 0, 0, 0, 0, 1 },
	{ "c4 e3 79 0f c1 08", 6, 3, 0x0f, 4, -1, 0, 1, 0, 0, 1 },
	{ "c4 e2 f1 f7 c0", 5, 2, 0xf7, 4, -1, 0, 0, 0, 0, 1 },                /* shlx */
	{ "62 f1 7c 48 10 00", 6, 1, 0x10, 5, -1, 0, 0, 0, 0, 1 },
	{ "62 f1 7d 48 6f 44 24 01", 8, 1, 0x6f, 5, 6, 1, 0, 0, 0, 1 },        /* disp8*N */
	{ "62 f3 fd 48 03 c1 01", 7, 3, 0x03, 5, -1, 0, 1, 0, 0, 1 },
	/* x87 */
	{ "d9 ee", 2, 0, 0xd9, 1, -1, 0, 0, 0, 0, 0 },
	{ "dd 44 24 08", 4, 0, 0xdd, 1, 2, 1, 0, 0, 0, 0 },
	{ "d9 c9", 2, 0, 0xd9, 1, -1, 0, 0, 0, 0, 0 },
};

static void decodes_hand_checked_encodings(void)
{
	for (size_t i = 0; i < sizeof(encs) / sizeof(encs[0]); i++) {
		const struct enc *e = &encs[i];
		uint8_t b[32];
		size_t n = unhex(e->hex, b);
		struct x86_insn d;
		unsigned r = decode_exact(b, n, &d);
		int sib = d.has_sib ? d.sib_off : -1, modrm = d.has_modrm ? d.modrm_off : -1;
		if ((int)r != e->len || d.len != r || d.map != e->map || d.op != e->op ||
		    b[d.op_off] != e->op || modrm != e->modrm || sib != e->sib || d.disp_len != e->disp ||
		    d.imm_len != e->imm || d.nprefix != e->pfx || d.rex != e->rex || d.vex != e->vex) {
			unit_fail(__FILE__, __LINE__,
				  "%s: len %u map %u op %02x modrm %d sib %d disp %u imm %u pfx %u rex %02x vex %d",
				  e->hex, r, d.map, d.op, modrm, sib, d.disp_len, d.imm_len, d.nprefix,
				  d.rex, d.vex);
			continue;
		}
		/* fields follow each other: ModRM, SIB, displacement, immediate, end */
		int after = sib >= 0 ? sib + 1 : modrm >= 0 ? modrm + 1 : d.op_off + 1;
		if (d.disp_len) {
			CHECK_EQ_U64(d.disp_off, after);
			after = d.disp_off + d.disp_len;
		}
		if (d.imm_len) {
			CHECK_EQ_U64(d.imm_off, after);
			after = d.imm_off + d.imm_len;
		}
		CHECK_EQ_U64(after, r);
		/* cut one byte short, it is incomplete */
		CHECK_EQ_U64(decode_exact(b, n - 1, &d), 0);
		CHECK_EQ_U64(d.len, 0);
	}
}

static void rejects_invalid_and_truncated(void)
{
	static const char *const bad[] = {
		/* removed in 64-bit mode */
		"06", "07", "0e", "16", "17", "1e", "1f", "27", "2f", "37", "3f", "60", "61",
		"82 c0 01", "9a 00 00 00 00 00 00", "ce", "d4 0a", "d5 0a", "d6",
		"ea 00 00 00 00 00 00",
		/* undefined 0F opcodes, #UD forms */
		"0f 04", "0f 0a", "0f 0c", "0f 36", "0f 39", "0f 3b", "0f a6", "8d c0", "ff f8 00",
		"fe d0", "c7 c8 00 00 00 00",
		/* VEX/EVEX: bad map, after REX or 66/F2/F3/F0, EVEX reserved bits */
		"c4 e0 79 00 c1", "c4 e4 79 00 c1", "48 c5 f8 77", "66 c5 f9 6f c1", "f3 c5 f9 6f c1",
		"62 f1 78 48 10 00", "62 f9 7c 48 10 00", "62 f4 7c 48 10 00",
		/* over 15 bytes, prefixes only */
		"66 66 66 66 66 66 66 2e 0f 1f 84 00 00 00 00 00", "f3 f3 f3", "48", "66 48",
		/* truncated */
		"", "0f", "0f 38", "0f 3a 0f c1", "c4 e2 79", "c5 f8", "62 f1 7c 48", "48 8b 05 78 56 34",
		"e8 00 00 00", "f7 c1 00 01 00", "8b 04", "8b 44 24", "48 b8 88 77 66 55 44 33 22",
		"c8 10 00",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint8_t b[32];
		size_t n = unhex(bad[i], b);
		struct x86_insn d;
		unsigned r = decode_exact(b, n, &d);
		if (r || d.len)
			unit_fail(__FILE__, __LINE__, "%s decoded as %u bytes", bad[i], r);
	}
	/* 15 bytes is the limit even when more are available */
	uint8_t b[20];
	size_t n = unhex("66 66 66 66 66 66 2e 0f 1f 84 00 00 00 00 00 90 90", b);
	struct x86_insn d;
	CHECK_EQ_U64(decode_exact(b, n, &d), 15);
	CHECK_EQ_U64(decode_exact(b, 14, &d), 0);
	/* a REX followed by a legacy prefix is ignored (the CPU drops it) */
	n = unhex("48 66 b8 34 12", b);
	CHECK_EQ_U64(decode_exact(b, n, &d), 5);
	CHECK_EQ_U64(d.rex, 0);
	CHECK_EQ_U64(d.imm_len, 2);
}

/* ---- the decoder against objdump on real programs ---- */

struct dis {
	uint64_t *addr;
	bool *bad;
	size_t n, cap;
};

static bool objdump(const char *path, struct dis *o)
{
	char cmd[4400], line[1024];
	snprintf(cmd, sizeof(cmd), "objdump -d --no-show-raw-insn -w '%s'", path);
	FILE *p = popen(cmd, "r");
	if (!p)
		return false;
	*o = (struct dis){ 0 };
	while (fgets(line, sizeof(line), p)) {
		char *s = line, *end;
		while (*s == ' ')
			s++;
		uint64_t a = strtoull(s, &end, 16);
		if (end == s || end[0] != ':' || end[1] != '\t' || s == line)
			continue; /* not `  401234:\t...` (function labels start in column 0) */
		if (o->n == o->cap) {
			o->cap = o->cap ? 2 * o->cap : 4096;
			o->addr = realloc(o->addr, o->cap * sizeof(*o->addr));
			o->bad = realloc(o->bad, o->cap * sizeof(*o->bad));
		}
		o->addr[o->n] = a;
		o->bad[o->n++] = strstr(end, "(bad)") != NULL;
	}
	return pclose(p) == 0 && o->n > 0;
}

static size_t lower_bound(const uint64_t *a, size_t n, uint64_t v)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Compares every boundary of every function of build/user/NAME; counts mismatches, records
 * the first in *why. */
static size_t cross_check(const char *name, size_t *ninsn, char *why, size_t whylen)
{
	size_t len, bad = 0;
	const char *path = user_path(name);
	uint8_t *img = load(path, &len);
	struct dis o;
	struct fnlist fl = { 0 };
	if (!img) {
		snprintf(why, whylen, "build/user/%s missing: run `make user` first", name);
		return 1;
	}
	if (!objdump(path, &o) || elf_functions(img, len, collect, &fl) <= 0) {
		snprintf(why, whylen, "%s: no objdump output or no functions", name);
		free(img);
		return 1;
	}
	for (size_t i = 1; i < o.n; i++)
		if (o.addr[i] <= o.addr[i - 1]) { /* objdump lists .text in order */
			snprintf(why, whylen, "%s: objdump addresses out of order", name);
			return 1;
		}
	for (size_t k = 0; k < fl.n; k++) {
		const struct elf_fn *f = &fl.f[k];
		const uint8_t *t = elf_text_at(img, len, f->addr, f->size);
		if (!t) {
			if (!bad++)
				snprintf(why, whylen, "%s: %s at %#llx not in a code segment", name, f->name,
					 (unsigned long long)f->addr);
			continue;
		}
		/* walk decoded boundaries and objdump's addresses in [addr, addr+size) together */
		size_t j = lower_bound(o.addr, o.n, f->addr), off = 0;
		const char *what = NULL;
		uint64_t at = 0, end = f->addr + f->size;
		for (;;) {
			uint64_t a = f->addr + off;
			bool theirs = j < o.n && o.addr[j] < end;
			struct x86_insn d;
			if (theirs && o.addr[j] < a) {
				what = "objdump boundary the decoder skipped", at = o.addr[j];
				break;
			}
			if (off >= f->size)
				break;
			if (!theirs || o.addr[j] != a) {
				what = "decoded boundary objdump does not have", at = a;
				break;
			}
			unsigned r = x86_decode(t + off, f->size - off, &d);
			if (!r) { /* stopping is fine only where objdump says (bad) too */
				if (!o.bad[j])
					what = "undecodable where objdump decodes", at = a;
				break;
			}
			off += r, j++, (*ninsn)++;
		}
		if (what && !bad++) {
			char hex[64];
			size_t have = end - at < 15 ? end - at : 15;
			hexstr(t + (at - f->addr), have, hex);
			snprintf(why, whylen, "%s: %s+%#llx (%#llx): %s; bytes %s", name, f->name,
				 (unsigned long long)(at - f->addr), (unsigned long long)at, what, hex);
		}
	}
	free(fl.f), free(o.addr), free(o.bad), free(img);
	return bad;
}

static void boundaries_match_objdump(void)
{
	static const char *const progs[] = { "tcp", "ip", "rs" };
	for (size_t i = 0; i < 3; i++) {
		char why[400] = "";
		size_t ninsn = 0, bad = cross_check(progs[i], &ninsn, why, sizeof(why));
		printf("note: %s: %zu instructions match objdump, %zu mismatches\n", progs[i], ninsn, bad);
		if (bad)
			unit_fail(__FILE__, __LINE__, "%zu mismatches, first %s", bad, why);
		else
			CHECK(ninsn > 10000);
	}
}

static void decoder_fuzz(void)
{
	/* bytes that steer into prefixes, escapes, VEX/EVEX and immediate-size rules */
	static const uint8_t hot[] = { 0x66, 0x67, 0xf2, 0xf3, 0xf0, 0x2e, 0x64, 0x40, 0x48, 0x4f,
				       0x0f, 0x38, 0x3a, 0xc4, 0xc5, 0x62, 0xf6, 0xf7, 0xa0, 0xa3,
				       0xb8, 0xc8, 0xe8, 0x04, 0x05, 0x24, 0x25, 0x44, 0x84, 0x85 };
	uint64_t s = 0x5eed1234abcdull;
	unsigned decoded = 0;
	for (int it = 0; it < 100000 && !UNIT_FAILED(); it++) {
		size_t n = unit_rand(&s) % 18;
		uint8_t *b = malloc(n ? n : 1);
		for (size_t i = 0; i < n; i++) {
			uint64_t x = unit_rand(&s);
			b[i] = x % 3 ? (uint8_t)(x >> 8) : hot[(x >> 8) % sizeof(hot)];
		}
		struct x86_insn d;
		unsigned r = x86_decode(b, n, &d);
		CHECK(r <= 15 && r <= n && d.len == r);
		if (r) {
			decoded++;
			CHECK(d.op_off < r && (!d.has_modrm || d.modrm_off < r) && (!d.has_sib || d.sib_off < r));
			CHECK(!d.disp_len || d.disp_off + d.disp_len <= r);
			CHECK(!d.imm_len || d.imm_off + d.imm_len == r);
			struct x86_insn e;
			CHECK_EQ_U64(x86_decode(b, r, &e), r); /* needs exactly its own bytes */
			CHECK_EQ_U64(x86_decode(b, r - 1, &e), 0);
		}
		free(b);
	}
	CHECK(decoded > 20000); /* the fuzz reaches real decoding, not only rejections */
}

/* ---- fault types on crafted code ---- */

#define VA 0x401000ull
#define FREE_FN 0x402000ull

/* Offsets of the crafted window's instructions. */
enum { I_PUSH = 0, I_MOV_RR = 1, I_LOAD = 4, I_ADD_RR = 8, I_ADD_RM = 11, I_CMP = 15, I_JL = 18,
       I_JLE = 20, I_ABS = 26, I_RIP = 33, I_SIB = 40, I_MOVZX = 44, I_CALL_FREE = 47,
       I_CALL = 52, I_NOP2 = 57, I_NOPL = 59, I_RET = 64, I_STORE = 65, CODE_LEN = 68 };

static size_t crafted(uint8_t *b)
{
	size_t n = unhex("55"                      /* 0  push %rbp */
			 "48 89 e5"                 /* 1  mov %rsp,%rbp (89: d=0) */
			 "48 8b 45 f8"              /* 4  mov -8(%rbp),%rax (8b: d=1, memory) */
			 "48 01 c8"                 /* 8  add %rcx,%rax */
			 "48 03 4d 10"              /* 11 add 0x10(%rbp),%rcx */
			 "83 f8 05"                 /* 15 cmp $5,%eax */
			 "7c 02"                    /* 18 jl */
			 "0f 8e 00 01 00 00"        /* 20 jle rel32 */
			 "8b 04 25 78 56 34 12"     /* 26 mov 0x12345678,%eax (SIB, no base) */
			 "48 8b 05 00 10 00 00"     /* 33 mov 0x1000(%rip),%rax */
			 "8b 44 8d 08"              /* 40 mov 8(%rbp,%rcx,4),%eax */
			 "0f b6 c1"                 /* 44 movzbl %cl,%eax */
			 "e8 00 00 00 00"           /* 47 call FREE_FN (rel32 set below) */
			 "e8 00 01 00 00"           /* 52 call elsewhere */
			 "66 90"                    /* 57 xchg %ax,%ax */
			 "0f 1f 44 00 00"           /* 59 nopl */
			 "c3"                       /* 64 ret */
			 "89 45 f8",                /* 65 mov %eax,-8(%rbp) (89: d=0, memory) */
			 b);
	put32(b + I_CALL_FREE + 1, (uint32_t)(FREE_FN - (VA + I_CALL_FREE + 5)));
	return n;
}

static const uint8_t *code_exact(void)
{
	static uint8_t *h;
	if (!h) {
		uint8_t b[128];
		size_t n = crafted(b);
		h = dup_exact(b, n);
	}
	return h;
}

static const uint64_t free_fns[] = { 0x400500, FREE_FN, 0x403000 };
static const struct swifi_ctx ctx = { free_fns, 3 };

/* Runs type t over the crafted code with seeds 1..runs, checking what holds for every patch;
 * marks hit[offset] and calls more(p, offset) for the type's own checks. */
static void each_patch(enum swifi_type t, int runs, bool *hit,
		       void (*more)(const struct swifi_patch *p, size_t off))
{
	const uint8_t *code = code_exact();
	for (int seed = 1; seed <= runs && !UNIT_FAILED(); seed++) {
		struct swifi_rng r;
		struct swifi_patch p;
		swifi_seed(&r, (uint64_t)seed);
		REQUIRE(swifi_make(t, code, CODE_LEN, VA, &ctx, &r, &p) == 0);
		size_t off = p.addr - VA;
		struct x86_insn d;
		REQUIRE(p.addr >= VA && off < CODE_LEN);
		CHECK(x86_decode(code + off, CODE_LEN - off, &d) == p.len && p.len > 0);
		CHECK(!memcmp(p.old, code + off, p.len));
		CHECK(memcmp(p.old, p.new_, p.len) != 0);
		CHECK(p.type == t);
		bool keeps_len = t == SW_SRCREG || t == SW_DSTREG || t == SW_POINTER || t == SW_BRANCH ||
				 t == SW_OFFBYONE;
		if (keeps_len)
			CHECK_EQ_U64(decode_exact(p.new_, p.len, &d), p.len);
		if (hit)
			hit[off] = true;
		if (more)
			more(&p, off);
	}
}

static void check_hits(const bool *hit, const int *want, size_t nwant, int line)
{
	bool expect[CODE_LEN] = { 0 };
	for (size_t i = 0; i < nwant; i++)
		expect[want[i]] = true;
	for (int off = 0; off < CODE_LEN; off++)
		if (hit[off] != expect[off]) {
			unit_fail(__FILE__, line, "offset %d %s", off, hit[off] ? "hit, not expected" : "never hit");
			return;
		}
}

static int bits_differ(const uint8_t *a, const uint8_t *b, size_t n)
{
	int c = 0;
	for (size_t i = 0; i < n; i++)
		c += __builtin_popcount(a[i] ^ b[i]);
	return c;
}

static void flip_more(const struct swifi_patch *p, size_t off)
{
	(void)off;
	CHECK_EQ_U64(bits_differ(p->old, p->new_, p->len), 1);
}

static void fault_flip(void)
{
	bool hit[CODE_LEN] = { 0 };
	each_patch(SW_FLIP, 400, hit, flip_more);
	static const int all[] = { I_PUSH, I_MOV_RR, I_LOAD, I_ADD_RR, I_ADD_RM, I_CMP, I_JL, I_JLE,
				   I_ABS, I_RIP, I_SIB, I_MOVZX, I_CALL_FREE, I_CALL, I_NOP2, I_NOPL,
				   I_RET, I_STORE };
	check_hits(hit, all, sizeof(all) / sizeof(all[0]), __LINE__);
}

/* Only the ModRM field (REG: bits 5:3, RM: 2:0) the fault should change changes. */
static const int src_reg[] = { I_MOV_RR, I_ADD_RR, I_STORE }, src_rm[] = { I_CMP, I_MOVZX };
static const int dst_reg[] = { I_LOAD, I_ADD_RM, I_ABS, I_RIP, I_SIB, I_MOVZX },
		 dst_rm[] = { I_MOV_RR, I_ADD_RR };

static bool listed(const int *a, size_t n, size_t off)
{
	for (size_t i = 0; i < n; i++)
		if ((size_t)a[i] == off)
			return true;
	return false;
}

static void reg_more(const struct swifi_patch *p, size_t off, const int *reg, size_t nreg)
{
	struct x86_insn d;
	x86_decode(p->old, p->len, &d);
	uint8_t mask = listed(reg, nreg, off) ? 0x38 : 0x07;
	for (unsigned i = 0; i < p->len; i++)
		if (i == d.modrm_off)
			CHECK((p->old[i] ^ p->new_[i]) && !((p->old[i] ^ p->new_[i]) & ~mask));
		else
			CHECK(p->old[i] == p->new_[i]);
}

static void src_more(const struct swifi_patch *p, size_t off) { reg_more(p, off, src_reg, 3); }
static void dst_more(const struct swifi_patch *p, size_t off) { reg_more(p, off, dst_reg, 6); }

static void fault_srcreg_dstreg(void)
{
	bool hit[CODE_LEN] = { 0 };
	int want[8];
	each_patch(SW_SRCREG, 300, hit, src_more);
	memcpy(want, src_reg, sizeof(src_reg)), memcpy(want + 3, src_rm, sizeof(src_rm));
	check_hits(hit, want, 5, __LINE__);
	memset(hit, 0, sizeof(hit));
	each_patch(SW_DSTREG, 300, hit, dst_more);
	memcpy(want, dst_reg, sizeof(dst_reg)), memcpy(want + 6, dst_rm, sizeof(dst_rm));
	check_hits(hit, want, 8, __LINE__);
}

static int pointer_base_changes, pointer_disp_flips;

static void pointer_more(const struct swifi_patch *p, size_t off)
{
	struct x86_insn d;
	x86_decode(p->old, p->len, &d);
	unsigned at = d.has_sib ? d.sib_off : d.modrm_off;
	if (bits_differ(p->old + d.disp_off, p->new_ + d.disp_off, d.disp_len) == 1 &&
	    bits_differ(p->old, p->new_, p->len) == 1) {
		pointer_disp_flips++;
	} else {
		/* the base changed, nothing else: never to 100 (SIB) or 101 with mod 00 */
		pointer_base_changes++;
		CHECK(off != I_ABS && off != I_RIP); /* no base register to change */
		CHECK((p->old[at] ^ p->new_[at]) && !((p->old[at] ^ p->new_[at]) & ~7));
		CHECK_EQ_U64(bits_differ(p->old, p->new_, p->len), bits_differ(p->old + at, p->new_ + at, 1));
	}
}

static void fault_pointer(void)
{
	bool hit[CODE_LEN] = { 0 };
	each_patch(SW_POINTER, 400, hit, pointer_more);
	static const int mem[] = { I_LOAD, I_ADD_RM, I_ABS, I_RIP, I_SIB, I_NOPL, I_STORE };
	check_hits(hit, mem, 7, __LINE__);
	CHECK(pointer_base_changes > 20 && pointer_disp_flips > 20);
	/* (%rax): base only, never to rsp (SIB) or rbp (RIP-relative) */
	uint8_t b[2] = { 0x8b, 0x00 };
	for (uint64_t seed = 0; seed < 200; seed++) {
		struct swifi_rng r;
		struct swifi_patch p;
		swifi_seed(&r, seed);
		REQUIRE(swifi_make(SW_POINTER, b, 2, VA, NULL, &r, &p) == 0);
		unsigned rm = p.new_[1] & 7;
		CHECK(p.len == 2 && (p.new_[1] & ~7) == 0 && rm != 0 && rm != 4 && rm != 5);
	}
}

static void nop_more(const struct swifi_patch *p, size_t off)
{
	(void)off;
	for (unsigned i = 0; i < p->len; i++)
		CHECK(p->new_[i] == 0x90);
}

static void fault_nop(void)
{
	bool hit[CODE_LEN] = { 0 };
	each_patch(SW_NOP, 600, hit, nop_more);
	static const int real[] = { I_PUSH, I_MOV_RR, I_LOAD, I_ADD_RR, I_ADD_RM, I_CMP, I_JL, I_JLE,
				    I_ABS, I_RIP, I_SIB, I_MOVZX, I_CALL_FREE, I_CALL, I_RET, I_STORE };
	check_hits(hit, real, sizeof(real) / sizeof(real[0]), __LINE__);
	struct swifi_rng r;
	struct swifi_patch p;
	uint8_t nops[] = { 0x90, 0x66, 0x90, 0x0f, 0x1f, 0x00, 0xf3, 0x90 };
	swifi_seed(&r, 1);
	CHECK(swifi_make(SW_NOP, nops, sizeof(nops), VA, NULL, &r, &p) == -1);
}

static void branch_more(const struct swifi_patch *p, size_t off)
{
	unsigned at = off == I_JL ? 0 : 1; /* the opcode byte (70+cc or 0F 80+cc) */
	CHECK_EQ_U64(p->new_[at], p->old[at] ^ 1);
	CHECK_EQ_U64(bits_differ(p->old, p->new_, p->len), 1);
}

static void fault_branch(void)
{
	bool hit[CODE_LEN] = { 0 };
	each_patch(SW_BRANCH, 100, hit, branch_more);
	static const int jcc[] = { I_JL, I_JLE };
	check_hits(hit, jcc, 2, __LINE__);
	struct swifi_rng r;
	struct swifi_patch p;
	uint8_t b[] = { 0xeb, 0x00, 0xe9, 0, 0, 0, 0, 0xe3, 0x00 }; /* jmp, jmp, jrcxz */
	swifi_seed(&r, 1);
	CHECK(swifi_make(SW_BRANCH, b, sizeof(b), VA, NULL, &r, &p) == -1);
}

/* The immediate as an unsigned number of imm_len bytes. */
static uint64_t imm_of(const uint8_t *b, size_t len)
{
	struct x86_insn d;
	x86_decode(b, len, &d);
	uint64_t v = 0;
	for (int i = d.imm_len - 1; i >= 0; i--)
		v = v << 8 | b[d.imm_off + i];
	return v;
}

static void fault_offbyone(void)
{
	/* compares: each size, both directions, wrapping within the immediate only */
	static const char *const cmps[] = { "83 f8 05", "3c 00", "3d ff ff ff ff", "66 3d ff ff",
					    "48 81 ff 00 00 00 80", "80 7d f0 7f" };
	for (size_t i = 0; i < sizeof(cmps) / sizeof(cmps[0]); i++) {
		uint8_t b[16];
		size_t n = unhex(cmps[i], b);
		uint8_t *h = dup_exact(b, n);
		struct x86_insn d;
		x86_decode(h, n, &d);
		uint64_t mask = d.imm_len == 8 ? ~0ull : (1ull << (8 * d.imm_len)) - 1;
		int up = 0, down = 0;
		for (uint64_t seed = 0; seed < 40; seed++) {
			struct swifi_rng r;
			struct swifi_patch p;
			swifi_seed(&r, seed);
			REQUIRE(swifi_make(SW_OFFBYONE, h, n, VA, NULL, &r, &p) == 0);
			uint64_t o = imm_of(p.old, p.len), v = imm_of(p.new_, p.len);
			up += v == ((o + 1) & mask), down += v == ((o - 1) & mask);
			CHECK(v == ((o + 1) & mask) || v == ((o - 1) & mask));
			CHECK(!memcmp(p.old, p.new_, d.imm_off)); /* only the immediate changes */
		}
		CHECK(up > 0 && down > 0 && up + down == 40);
		free(h);
	}
	/* add, and with an immediate are no compares (83 /0, 80 /4) */
	{
		uint8_t w[] = { 0x83, 0xc0, 0x01, 0x83, 0xf8, 0x05, 0x80, 0xe1, 0x0f, 0x74, 0x00 };
		struct swifi_rng r;
		struct swifi_patch p;
		for (uint64_t seed = 0; seed < 20; seed++) {
			swifi_seed(&r, seed);
			REQUIRE(swifi_make(SW_OFFBYONE, w, sizeof(w), VA, NULL, &r, &p) == 0);
			CHECK_EQ_U64(p.addr, VA + 3);
		}
		w[4] = 0xc0; /* cmp -> add: nothing left (je is no ordering) */
		CHECK(swifi_make(SW_OFFBYONE, w, sizeof(w), VA, NULL, &r, &p) == -1);
	}
	/* the crafted window's only compare with an immediate */
	bool hit[CODE_LEN] = { 0 };
	each_patch(SW_OFFBYONE, 50, hit, NULL);
	static const int cmp[] = { I_CMP };
	check_hits(hit, cmp, 1, __LINE__);
	/* no compare: ordering jccs become strict <-> non-strict; je is no ordering */
	uint8_t b[32];
	size_t n = unhex("7c 02 74 02 0f 83 00 00 00 00 7f 00 0f 86 00 00 00 00", b);
	uint8_t *h = dup_exact(b, n);
	static const struct { unsigned off, at; uint8_t to; } jumps[] = {
		{ 0, 0, 0x7e },  /* jl  -> jle */
		{ 4, 1, 0x87 },  /* jae -> ja  */
		{ 10, 0, 0x7d }, /* jg  -> jge */
		{ 12, 1, 0x82 }, /* jbe -> jb  */
	};
	bool seen[4] = { 0 };
	for (uint64_t seed = 0; seed < 100; seed++) {
		struct swifi_rng r;
		struct swifi_patch p;
		swifi_seed(&r, seed);
		REQUIRE(swifi_make(SW_OFFBYONE, h, n, VA, NULL, &r, &p) == 0);
		size_t k = 0;
		while (k < 4 && jumps[k].off != p.addr - VA)
			k++;
		REQUIRE(k < 4);
		seen[k] = true;
		CHECK_EQ_U64(p.new_[jumps[k].at], jumps[k].to);
		CHECK_EQ_U64(bits_differ(p.old, p.new_, p.len), 1);
	}
	CHECK(seen[0] && seen[1] && seen[2] && seen[3]);
	free(h);
	struct swifi_rng r;
	struct swifi_patch p;
	swifi_seed(&r, 1);
	CHECK(swifi_make(SW_OFFBYONE, b + 2, 2, VA, NULL, &r, &p) == -1); /* je alone */
}

static void fault_leak(void)
{
	bool hit[CODE_LEN] = { 0 };
	each_patch(SW_LEAK, 20, hit, nop_more);
	static const int call[] = { I_CALL_FREE };
	check_hits(hit, call, 1, __LINE__);
	const uint8_t *code = code_exact();
	struct swifi_rng r;
	struct swifi_patch p;
	swifi_seed(&r, 3);
	REQUIRE(swifi_make(SW_LEAK, code, CODE_LEN, VA, &ctx, &r, &p) == 0);
	CHECK(p.len == 5 && p.old[0] == 0xe8);
	/* no listed function called: nothing to leak */
	static const uint64_t others[] = { 0x400000, 0x402001 };
	struct swifi_ctx none = { others, 2 }, empty = { NULL, 0 };
	CHECK(swifi_make(SW_LEAK, code, CODE_LEN, VA, &none, &r, &p) == -1);
	CHECK(swifi_make(SW_LEAK, code, CODE_LEN, VA, &empty, &r, &p) == -1);
	CHECK(swifi_make(SW_LEAK, code, CODE_LEN, VA, NULL, &r, &p) == -1);
	/* the same call elsewhere in memory reaches another target */
	CHECK(swifi_make(SW_LEAK, code, CODE_LEN, VA + 16, &ctx, &r, &p) == -1);
}

static void loop_more(const struct swifi_patch *p, size_t off)
{
	(void)off;
	CHECK(p->len >= 2 && p->new_[0] == 0xeb && p->new_[1] == 0xfe);
	for (unsigned i = 2; i < p->len; i++)
		CHECK(p->new_[i] == 0x90);
}

static void fault_loop(void)
{
	bool hit[CODE_LEN] = { 0 };
	each_patch(SW_LOOP, 500, hit, loop_more);
	static const int two[] = { I_MOV_RR, I_LOAD, I_ADD_RR, I_ADD_RM, I_CMP, I_JL, I_JLE, I_ABS,
				   I_RIP, I_SIB, I_MOVZX, I_CALL_FREE, I_CALL, I_NOP2, I_NOPL, I_STORE };
	check_hits(hit, two, sizeof(two) / sizeof(two[0]), __LINE__);
	struct swifi_rng r;
	struct swifi_patch p;
	uint8_t b[] = { 0xeb, 0xfe, 0xc3 }; /* already a loop, and a 1-byte ret */
	swifi_seed(&r, 1);
	CHECK(swifi_make(SW_LOOP, b, sizeof(b), VA, NULL, &r, &p) == -1);
}

static void window_edges(void)
{
	struct swifi_rng r;
	struct swifi_patch p;
	swifi_seed(&r, 9);
	/* decoding stops at the first undecodable byte: the cmp after it is out of reach */
	uint8_t b[] = { 0x90, 0x06, 0x83, 0xf8, 0x05 };
	CHECK(swifi_make(SW_OFFBYONE, b, sizeof(b), VA, NULL, &r, &p) == -1);
	CHECK(swifi_make(SW_FLIP, b, sizeof(b), VA, NULL, &r, &p) == 0 && p.addr == VA && p.len == 1);
	/* an instruction cut by the window's end is not taken */
	CHECK(swifi_make(SW_OFFBYONE, b + 2, 2, VA, NULL, &r, &p) == -1);
	CHECK(swifi_make(SW_FLIP, b, 0, VA, NULL, &r, &p) == -1);
	CHECK(swifi_make(SW_NTYPES, b, sizeof(b), VA, NULL, &r, &p) == -1);
}

static void names_and_rng(void)
{
	for (int t = 0; t < SW_NTYPES; t++)
		CHECK_EQ_I64(swifi_type_by_name(swifi_name((enum swifi_type)t)), t);
	CHECK_STR(swifi_name(SW_OFFBYONE), "offbyone");
	CHECK_STR(swifi_name(SW_DSTREG), "dstreg");
	CHECK_EQ_I64(swifi_type_by_name("flips"), -1);
	CHECK_EQ_I64(swifi_type_by_name("fli"), -1);
	CHECK_EQ_I64(swifi_type_by_name(""), -1);
	struct swifi_rng a, b;
	swifi_seed(&a, 42), swifi_seed(&b, 42);
	for (int i = 0; i < 100; i++)
		CHECK(swifi_rand(&a) == swifi_rand(&b));
	swifi_seed(&b, 43);
	CHECK(swifi_rand(&a) != swifi_rand(&b));
	int seen[7] = { 0 };
	for (int i = 0; i < 7000; i++) {
		uint64_t v = swifi_below(&a, 7);
		REQUIRE(v < 7);
		seen[v]++;
	}
	for (int v = 0; v < 7; v++)
		CHECK(seen[v] > 800 && seen[v] < 1200);
	CHECK_EQ_U64(swifi_below(&a, 1), 0);
	CHECK(swifi_below(&a, 1ull << 63 | 1) < (1ull << 63 | 1));
}

/* ---- fault types on a real program ---- */

static void faults_on_real_code(void)
{
	LOAD_USER(img, len, "tcp");
	struct fnlist fl = { 0 };
	REQUIRE(elf_functions(img, len, collect, &fl) > 100);
	const struct elf_fn *freefn = find_fn(&fl, "ax_free");
	REQUIRE(freefn);
	struct swifi_ctx c = { &freefn->addr, 1 };
	size_t made[SW_NTYPES] = { 0 };
	for (size_t k = 0; k < fl.n && !UNIT_FAILED(); k++) {
		const struct elf_fn *f = &fl.f[k];
		const uint8_t *t = elf_text_at(img, len, f->addr, f->size);
		REQUIRE(t);
		for (int ty = 0; ty < SW_NTYPES; ty++) {
			struct swifi_rng r;
			struct swifi_patch p;
			swifi_seed(&r, k * 31 + (uint64_t)ty);
			if (swifi_make((enum swifi_type)ty, t, f->size, f->addr, &c, &r, &p))
				continue;
			made[ty]++;
			/* the patch is one whole instruction on a boundary of the function */
			size_t off = 0, want = p.addr - f->addr;
			unsigned l;
			struct x86_insn d;
			while ((l = x86_decode(t + off, f->size - off, &d)) && off < want)
				off += l;
			if (off != want || p.len != l || memcmp(p.old, t + off, p.len) ||
			    !memcmp(p.old, p.new_, p.len)) {
				unit_fail(__FILE__, __LINE__, "%s in %s at %#llx: bad patch", swifi_name(p.type),
					  f->name, (unsigned long long)p.addr);
				break;
			}
			if (ty == SW_SRCREG || ty == SW_DSTREG || ty == SW_POINTER || ty == SW_BRANCH ||
			    ty == SW_OFFBYONE)
				CHECK_EQ_U64(decode_exact(p.new_, p.len, &d), p.len);
			if (ty == SW_LEAK) {
				int32_t rel;
				memcpy(&rel, p.old + 1, 4);
				CHECK(p.old[0] == 0xe8 && p.addr + 5 + (uint64_t)(int64_t)rel == freefn->addr);
			}
		}
	}
	for (int ty = 0; ty < SW_NTYPES; ty++)
		if (!made[ty])
			unit_fail(__FILE__, __LINE__, "no %s fault in any function of tcp", swifi_name(ty));
	printf("note: tcp: %zu functions; patches flip %zu leak %zu offbyone %zu\n", fl.n,
	       made[SW_FLIP], made[SW_LEAK], made[SW_OFFBYONE]);
	free(fl.f), free(img);
}

static bool patch_eq(const struct swifi_patch *a, const struct swifi_patch *b) /* not padding */
{
	return a->addr == b->addr && a->len == b->len && a->type == b->type &&
	       !memcmp(a->old, b->old, sizeof(a->old)) && !memcmp(a->new_, b->new_, sizeof(a->new_));
}

static void same_seed_same_patch(void)
{
	LOAD_USER(img, len, "tcp");
	struct fnlist fl = { 0 };
	REQUIRE(elf_functions(img, len, collect, &fl) > 0);
	const struct elf_fn *f = find_fn(&fl, "main");
	REQUIRE(f);
	const uint8_t *t = elf_text_at(img, len, f->addr, f->size);
	REQUIRE(t);
	for (int ty = 0; ty < SW_NTYPES; ty++) {
		if (ty == SW_LEAK)
			continue; /* needs free functions; checked above */
		struct swifi_patch first[32];
		int distinct = 0, ok = 0;
		for (uint64_t seed = 0; seed < 32; seed++) {
			struct swifi_rng r1, r2;
			struct swifi_patch p2;
			swifi_seed(&r1, seed), swifi_seed(&r2, seed);
			if (swifi_make(ty, t, f->size, f->addr, NULL, &r1, &first[seed]) ||
			    swifi_make(ty, t, f->size, f->addr, NULL, &r2, &p2))
				continue;
			ok++;
			CHECK(patch_eq(&first[seed], &p2));
			bool fresh = true;
			for (uint64_t s = 0; s < seed && fresh; s++)
				fresh = !patch_eq(&first[s], &first[seed]);
			distinct += fresh;
		}
		if (ok && distinct < 2)
			unit_fail(__FILE__, __LINE__, "%s: %d distinct patches over 32 seeds", swifi_name(ty),
				  distinct);
		/* whether a type applies does not depend on the seed; main has registers, memory
		 * operands and multi-byte instructions, maybe no jcc or compare */
		if (ty == SW_BRANCH || ty == SW_OFFBYONE)
			CHECK(ok == 0 || ok == 32);
		else
			CHECK_EQ_I64(ok, 32);
	}
	free(fl.f), free(img);
}

/* ---- the ELF reader ---- */

/* Symbols as readelf lists them: FUNC, size > 0, defined, named. */
static size_t readelf_funcs(const char *path, const struct fnlist *fl, char *why, size_t whylen)
{
	char cmd[4400], line[1024];
	snprintf(cmd, sizeof(cmd), "readelf -sW '%s'", path);
	FILE *p = popen(cmd, "r");
	size_t n = 0;
	while (p && fgets(line, sizeof(line), p)) {
		char value[32], size[32], type[32], bind[32], vis[32], ndx[32], name[512];
		if (sscanf(line, " %*[0-9]: %31s %31s %31s %31s %31s %31s %511s", value, size, type, bind,
			   vis, ndx, name) != 7 ||
		    strcmp(type, "FUNC") || !strcmp(ndx, "UND") || !strtoull(size, NULL, 0))
			continue;
		n++;
		uint64_t a = strtoull(value, NULL, 16);
		bool found = false;
		for (size_t i = 0; i < fl->n && !found; i++)
			found = fl->f[i].addr == a && !strcmp(fl->f[i].name, name) &&
				fl->f[i].size == strtoull(size, NULL, 0);
		if (!found && !*why)
			snprintf(why, whylen, "readelf's %s at %#llx not listed", name, (unsigned long long)a);
	}
	if (p)
		pclose(p);
	return n;
}

/* The file offset of va from the program headers, independently of elfsym.c. */
static uint64_t file_off(const uint8_t *img, uint64_t va)
{
	uint64_t phoff, n = 0;
	uint16_t phnum;
	memcpy(&phoff, img + 0x20, 8), memcpy(&phnum, img + 0x38, 2);
	for (unsigned i = 0; i < phnum; i++) {
		const uint8_t *ph = img + phoff + 56 * i;
		uint32_t type, flags;
		uint64_t off, vaddr, filesz;
		memcpy(&type, ph, 4), memcpy(&flags, ph + 4, 4), memcpy(&off, ph + 8, 8);
		memcpy(&vaddr, ph + 16, 8), memcpy(&filesz, ph + 32, 8);
		if (type == 1 && (flags & 1) && va >= vaddr && va < vaddr + filesz)
			n = off + (va - vaddr);
	}
	return n;
}

static void elf_real_program(void)
{
	LOAD_USER(img, len, "tcp");
	struct fnlist fl = { 0 };
	int n = elf_functions(img, len, collect, &fl);
	CHECK(n > 100 && (size_t)n == fl.n);
	CHECK_EQ_I64(elf_functions(img, len, NULL, NULL), n);
	const struct elf_fn *m = find_fn(&fl, "main"), *fr = find_fn(&fl, "ax_free");
	REQUIRE(m && fr);
	char why[300] = "";
	CHECK_EQ_U64(readelf_funcs(user_path("tcp"), &fl, why, sizeof(why)), fl.n);
	if (*why)
		unit_fail(__FILE__, __LINE__, "%s", why);
	const uint8_t *t = elf_text_at(img, len, m->addr, m->size);
	uint64_t off = file_off(img, m->addr);
	CHECK(off != 0 && t == img + off);
	CHECK(elf_text_at(img, len, fr->addr, fr->size) == img + file_off(img, fr->addr));
	CHECK(elf_text_at(img, len, 0x400000, 1) == NULL);  /* the headers' segment: not code */
	CHECK(elf_text_at(img, len, 0, 1) == NULL);
	CHECK(elf_text_at(img, len, m->addr, (size_t)1 << 40) == NULL);
	CHECK(elf_text_at(img, len, ~0ull, 1) == NULL);
	free(fl.f), free(img);
}

/* A small executable: null section, .symtab, .strtab (at the very end, so an unterminated
 * name runs into the block's end). */
static size_t tiny_elf(uint8_t *b, const char *strtab, size_t strsize)
{
	memset(b, 0, 1024);
	static const uint8_t ident[8] = { 0x7f, 'E', 'L', 'F', 2, 1, 1, 0 };
	memcpy(b, ident, 8);
	put16(b + 16, 2), put16(b + 18, 62);
	put64(b + 0x28, 64), put16(b + 0x3a, 64), put16(b + 0x3c, 3);
	uint8_t *sym = b + 64 + 64, *str = b + 64 + 128;
	put32(sym + 4, 2), put64(sym + 24, 256), put64(sym + 32, 6 * 24), put32(sym + 40, 2);
	put64(sym + 56, 24);
	put32(str + 4, 3), put64(str + 24, 256 + 6 * 24), put64(str + 32, strsize);
	/* symbols: null; f1 FUNC; object; FUNC size 0; FUNC undefined; last FUNC (name at 9) */
	static const struct { uint32_t name; uint8_t info; uint16_t shndx; uint64_t size; } s[6] = {
		{ 0, 0, 0, 0 }, { 1, 0x12, 1, 16 }, { 1, 0x11, 1, 8 }, { 1, 0x12, 1, 0 },
		{ 1, 0x12, 0, 16 }, { 9, 0x02, 1, 32 },
	};
	for (int i = 0; i < 6; i++) {
		uint8_t *e = b + 256 + 24 * i;
		put32(e, s[i].name), e[4] = s[i].info, put16(e + 6, s[i].shndx);
		put64(e + 8, 0x401000 + 0x100 * (uint64_t)i), put64(e + 16, s[i].size);
	}
	memcpy(b + 256 + 6 * 24, strtab, strsize);
	return 256 + 6 * 24 + strsize;
}

static void name_check(void *arg, const struct elf_fn *f)
{
	(void)arg;
	CHECK(strlen(f->name) > 0); /* ASan: the NUL lies within the block */
}

static void elf_filters_and_unterminated_names(void)
{
	uint8_t b[1024];
	struct fnlist fl = { 0 };
	size_t n = tiny_elf(b, "\0f1\0xxxx\0last", 14);
	uint8_t *h = dup_exact(b, n);
	CHECK_EQ_I64(elf_functions(h, n, collect, &fl), 2);
	REQUIRE(fl.n == 2);
	CHECK_STR(fl.f[0].name, "f1");
	CHECK_EQ_U64(fl.f[0].addr, 0x401100);
	CHECK_EQ_U64(fl.f[0].size, 16);
	CHECK_STR(fl.f[1].name, "last");
	free(h), free(fl.f);
	/* the last name without its NUL at the end of the table and of the image */
	n = tiny_elf(b, "\0f1\0xxxx\0last", 13);
	h = dup_exact(b, n);
	CHECK_EQ_I64(elf_functions(h, n, name_check, NULL), 1);
	free(h);
	/* a name offset past the table */
	n = tiny_elf(b, "\0f1\0xxxx", 8);
	h = dup_exact(b, n);
	CHECK_EQ_I64(elf_functions(h, n, name_check, NULL), 1);
	free(h);
}

static int funcs_exact(const uint8_t *img, size_t len)
{
	uint8_t *h = dup_exact(img, len);
	int r = elf_functions(h, len, name_check, NULL);
	free(h);
	return r;
}

static void elf_corrupt_images(void)
{
	LOAD_USER(img, len, "tcp");
	int full = elf_functions(img, len, NULL, NULL);
	REQUIRE(full > 0);
	uint64_t shoff;
	memcpy(&shoff, img + 0x28, 8);
	size_t cuts[] = { 0, 1, 4, 63, 64, 65, 4096, (size_t)shoff, (size_t)shoff + 100, len - 1 };
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++)
		CHECK_EQ_I64(funcs_exact(img, cuts[i]), -1); /* section headers at the end: cut */
	/* the symbol table's and string table's section headers */
	uint8_t *sym = NULL, *str;
	for (unsigned i = 0; i < 64 && !sym; i++)
		if (img[shoff + 64 * i + 4] == 2)
			sym = img + shoff + 64 * i;
	REQUIRE(sym);
	str = img + shoff + 64 * sym[40];
	struct { uint8_t *at; unsigned width; uint64_t v; int expect; } bad[] = {
		{ img + 0x28, 8, len - 10, -1 },       /* e_shoff: headers past the end */
		{ img + 0x28, 8, ~0ull, -1 },
		{ img + 0x28, 8, ~0ull - 63, -1 },     /* wraps */
		{ img + 0x3c, 2, 0xffff, -1 },          /* e_shnum huge */
		{ img + 0x3a, 2, 8, -1 },               /* e_shentsize too small */
		{ img + 0x04, 1, 1, -1 },               /* ELFCLASS32 */
		{ img + 0x05, 1, 2, -1 },               /* big-endian */
		{ img + 0x00, 1, 0, -1 },               /* magic */
		{ sym + 24, 8, len, -1 },               /* .symtab offset */
		{ sym + 32, 8, ~0ull, -1 },             /* .symtab size */
		{ sym + 56, 8, 0, -1 },                 /* entsize 0: no division by it */
		{ sym + 40, 4, 0xffff, -1 },            /* sh_link out of range */
		{ sym + 40, 4, 0, -1 },                 /* sh_link: not a string table */
		{ str + 24, 8, ~0ull - 5, -1 },         /* .strtab offset wraps */
		{ str + 32, 8, len, -1 },               /* .strtab size */
		{ str + 32, 8, 0, 0 },                  /* empty string table: no names */
		{ str + 32, 8, 100, -2 },               /* short string table: fewer names */
		{ sym + 4, 4, 0, -1 },                  /* no SHT_SYMTAB */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint8_t keep[8];
		memcpy(keep, bad[i].at, bad[i].width);
		for (unsigned k = 0; k < bad[i].width; k++)
			bad[i].at[k] = (uint8_t)(bad[i].v >> (8 * k));
		int r = funcs_exact(img, len);
		if (bad[i].expect == -2 ? !(r >= 0 && r < full) : r != bad[i].expect)
			unit_fail(__FILE__, __LINE__, "corruption %zu: %d functions (of %d)", i, r, full);
		memcpy(bad[i].at, keep, bad[i].width);
	}
	CHECK_EQ_I64(funcs_exact(img, len), full);
	/* program headers: huge count, bad offsets */
	uint8_t *h = dup_exact(img, len);
	CHECK(elf_text_at(h, len, 0x401000, 16) != NULL);
	put16(h + 0x38, 0xffff);
	CHECK(elf_text_at(h, len, 0x401000, 16) == NULL);
	put16(h + 0x38, img[0x38] | img[0x39] << 8);
	put64(h + 0x20, ~0ull - 8);
	CHECK(elf_text_at(h, len, 0x401000, 16) == NULL);
	free(h);
	free(img);
}

static void count_fn(void *arg, const struct elf_fn *f)
{
	const uint8_t **range = arg;
	CHECK((const uint8_t *)f->name >= range[0] && (const uint8_t *)f->name < range[1]);
	CHECK(strlen(f->name) > 0);
}

static void elf_fuzz_headers(void)
{
	LOAD_USER(img, len, "tcp");
	uint64_t s = 0xe1f5eedull, shoff, phoff;
	memcpy(&shoff, img + 0x28, 8), memcpy(&phoff, img + 0x20, 8);
	size_t shbytes = 64 * (size_t)(img[0x3c] | img[0x3d] << 8), phbytes = 56 * (size_t)img[0x38];
	int survived = 0;
	for (int it = 0; it < 2000 && !UNIT_FAILED(); it++) {
		size_t pos[8];
		uint8_t keep[8];
		int nmut = 1 + (int)(unit_rand(&s) % 8);
		for (int k = 0; k < nmut; k++) {
			uint64_t x = unit_rand(&s);
			int where = (int)(x % 3);
			pos[k] = where == 0 ? (x >> 8) % 64 : where == 1 ? phoff + (x >> 8) % phbytes
									 : shoff + (x >> 8) % shbytes;
			keep[k] = img[pos[k]];
			uint64_t v = unit_rand(&s);
			img[pos[k]] = v % 4 == 0 ? 0 : v % 4 == 1 ? 0xff : (uint8_t)(v >> 8);
		}
		/* every 50th: an exactly sized, truncated copy */
		size_t n = it % 50 ? len : (size_t)(unit_rand(&s) % len);
		uint8_t *h = n == len ? img : dup_exact(img, n);
		const uint8_t *range[2] = { h, h + n };
		int r = elf_functions(h, n, count_fn, range);
		survived += r > 0;
		uint64_t va = 0x401000 + unit_rand(&s) % 0x20000;
		size_t want = (size_t)(unit_rand(&s) % 0x1000);
		const uint8_t *t = elf_text_at(h, n, va, want);
		CHECK(!t || (t >= h && t + want <= h + n));
		if (h != img)
			free(h);
		for (int k = nmut - 1; k >= 0; k--)
			img[pos[k]] = keep[k];
	}
	CHECK(survived > 100); /* many mutations leave a usable table: the walk is exercised */
	free(img);
}

int main(void)
{
	unit_begin(__FILE__);
	RUN(decodes_hand_checked_encodings);
	RUN(rejects_invalid_and_truncated);
	RUN(boundaries_match_objdump);
	RUN(decoder_fuzz);
	RUN(fault_flip);
	RUN(fault_srcreg_dstreg);
	RUN(fault_pointer);
	RUN(fault_nop);
	RUN(fault_branch);
	RUN(fault_offbyone);
	RUN(fault_leak);
	RUN(fault_loop);
	RUN(window_edges);
	RUN(names_and_rng);
	RUN(faults_on_real_code);
	RUN(same_seed_same_patch);
	RUN(elf_real_program);
	RUN(elf_filters_and_unterminated_names);
	RUN(elf_corrupt_images);
	RUN(elf_fuzz_headers);
	return unit_end();
}
