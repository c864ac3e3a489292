/* The swifi fault types (swifi.h): which instructions each applies to, and how it changes
 * them. Every change stays within one decoded instruction. */
#include "swifi.h"
#include "x86dec.h"

static const char *const names[SW_NTYPES] = {
	"flip", "srcreg", "dstreg", "pointer", "nop", "branch", "offbyone", "leak", "loop",
};

const char *swifi_name(enum swifi_type t)
{
	return (unsigned)t < SW_NTYPES ? names[t] : "?";
}

static bool same(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

int swifi_type_by_name(const char *name)
{
	for (int t = 0; name && t < SW_NTYPES; t++)
		if (same(name, names[t]))
			return t;
	return -1;
}

void swifi_seed(struct swifi_rng *r, uint64_t seed)
{
	r->s = seed;
}

uint64_t swifi_rand(struct swifi_rng *r) /* splitmix64 */
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint64_t swifi_below(struct swifi_rng *r, uint64_t n)
{
	if (n < 2)
		return 0;
	uint64_t lim = -n % n, x; /* 2^64 mod n: rejecting x < lim leaves a multiple of n values */
	do
		x = swifi_rand(r);
	while (x < lim);
	return x % n;
}

/* One decoded instruction of the window. */
struct ins {
	const uint8_t *b;
	uint64_t va;
	struct x86_insn d;
};

enum field { NONE, REG, RM }; /* a ModRM register field */

static unsigned mod_of(const struct ins *in) { return in->b[in->d.modrm_off] >> 6; }
static unsigned reg_of(const struct ins *in) { return in->b[in->d.modrm_off] >> 3 & 7; }
static bool legacy(const struct ins *in, unsigned map) { return !in->d.vex && in->d.map == map; }

/* ALU/MOV forms with a direction bit (bit 1): 00-3B with low bits 0-3, and 84-8B. */
static bool has_dir(const struct ins *in)
{
	uint8_t op = in->d.op;
	return legacy(in, 0) && ((op <= 0x3b && (op & 7) <= 3) || (op >= 0x84 && op <= 0x8b));
}

/* ModRM.reg is an opcode extension, not a register. */
static bool reg_is_ext(const struct ins *in)
{
	uint8_t op = in->d.op;
	if (legacy(in, 0))
		return (op >= 0x80 && op <= 0x83) || op == 0x8f || op == 0xc0 || op == 0xc1 ||
		       op == 0xc6 || op == 0xc7 || (op >= 0xd0 && op <= 0xd3) ||
		       (op >= 0xd8 && op <= 0xdf) || op == 0xf6 || op == 0xf7 || op == 0xfe ||
		       op == 0xff;
	if (legacy(in, 1))
		return op <= 0x01 || op == 0x0d || (op >= 0x18 && op <= 0x1f) ||
		       (op >= 0x71 && op <= 0x73) || op == 0xae || op == 0xba || op == 0xc7;
	if (in->d.vex && in->d.map == 1)
		return (op >= 0x71 && op <= 0x73) || op == 0xae;
	if (in->d.vex && in->d.map == 2)
		return op == 0xf3 || op == 0xc6 || op == 0xc7;
	return false;
}

static enum field reg_field(enum swifi_type t, const struct ins *in)
{
	if (!in->d.has_modrm)
		return NONE;
	bool regs = mod_of(in) == 3;
	if (has_dir(in)) { /* d=0: op r/m, reg; d=1: op reg, r/m */
		bool d = in->d.op & 2;
		if (t == SW_SRCREG)
			return d ? (regs ? RM : NONE) : REG;
		return d ? REG : (regs ? RM : NONE);
	}
	if (t == SW_SRCREG)
		return regs ? RM : NONE;
	return reg_is_ext(in) ? NONE : REG;
}

/* A memory operand: ModRM with mod != 3 (mov to/from CR/DR ignores mod). */
static bool has_mem(const struct ins *in)
{
	return in->d.has_modrm && mod_of(in) != 3 &&
	       !(legacy(in, 1) && in->d.op >= 0x20 && in->d.op <= 0x23);
}

/* The base register field a pointer fault may change, or NULL if none (RIP-relative, or a
 * SIB without base); *forbid: values that would change the encoding's length. */
static const uint8_t *base_byte(const struct ins *in, unsigned *forbid)
{
	unsigned mod = mod_of(in);
	*forbid = mod == 0 ? 1u << 5 : 0; /* base 101 with mod 00 means disp32, no base */
	if (in->d.has_sib)
		return (in->b[in->d.sib_off] & 7) == 5 && mod == 0 ? NULL : in->b + in->d.sib_off;
	*forbid |= 1u << 4; /* rm 100 means a SIB follows */
	return (in->b[in->d.modrm_off] & 7) == 5 && mod == 0 ? NULL : in->b + in->d.modrm_off;
}

static bool is_jcc(const struct ins *in)
{
	return (legacy(in, 0) && in->d.op >= 0x70 && in->d.op <= 0x7f) ||
	       (legacy(in, 1) && in->d.op >= 0x80 && in->d.op <= 0x8f);
}

static bool is_cmp_imm(const struct ins *in)
{
	uint8_t op = in->d.op;
	return legacy(in, 0) && in->d.imm_len &&
	       (op == 0x3c || op == 0x3d || ((op == 0x80 || op == 0x81 || op == 0x83) && reg_of(in) == 7));
}

static bool ordering_jcc(const struct ins *in) /* B AE BE A, L GE LE G */
{
	unsigned cc = in->d.op & 15;
	return is_jcc(in) && (cc == 2 || cc == 3 || cc == 6 || cc == 7 || cc >= 12);
}

static bool is_nop(const struct ins *in)
{
	return (legacy(in, 0) && in->d.op == 0x90 && !(in->d.rex & 1)) || /* 90, 66 90, pause */
	       (legacy(in, 1) && in->d.op >= 0x18 && in->d.op <= 0x1f);   /* hint nops, endbr64 */
}

static bool calls_free(const struct ins *in, const struct swifi_ctx *ctx)
{
	if (!legacy(in, 0) || in->d.op != 0xe8 || in->d.imm_len != 4 || !ctx || !ctx->free_fns)
		return false;
	const uint8_t *p = in->b + in->d.imm_off;
	int32_t rel = (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
				(uint32_t)p[3] << 24);
	uint64_t target = in->va + in->d.len + (uint64_t)(int64_t)rel;
	size_t lo = 0, hi = ctx->nfree;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ctx->free_fns[mid] == target)
			return true;
		if (ctx->free_fns[mid] < target)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static bool is_self_loop(const struct ins *in)
{
	if (in->b[0] != 0xeb || in->b[1] != 0xfe)
		return false;
	for (unsigned i = 2; i < in->d.len; i++)
		if (in->b[i] != 0x90)
			return false;
	return true;
}

/* Whether fault t applies to the instruction (alt: SW_OFFBYONE's jcc fallback). */
static bool applies(enum swifi_type t, bool alt, const struct ins *in, const struct swifi_ctx *ctx)
{
	unsigned forbid;
	switch (t) {
	case SW_FLIP: return true;
	case SW_SRCREG: case SW_DSTREG: return reg_field(t, in) != NONE;
	case SW_POINTER: return has_mem(in) && (in->d.disp_len || base_byte(in, &forbid));
	case SW_NOP: return !is_nop(in);
	case SW_BRANCH: return is_jcc(in);
	case SW_OFFBYONE: return alt ? ordering_jcc(in) : is_cmp_imm(in);
	case SW_LEAK: return calls_free(in, ctx);
	case SW_LOOP: return in->d.len >= 2 && !is_self_loop(in);
	default: return false;
	}
}

/* A 3-bit value other than old and not in the forbid mask. */
static unsigned other3(struct swifi_rng *r, unsigned old, unsigned forbid)
{
	unsigned c[8], k = 0;
	for (unsigned v = 0; v < 8; v++)
		if (v != old && !(forbid >> v & 1))
			c[k++] = v;
	return c[swifi_below(r, k)];
}

static void flip_bit(uint8_t *b, unsigned len, struct swifi_rng *r)
{
	unsigned i = (unsigned)swifi_below(r, len);
	b[i] ^= (uint8_t)(1u << swifi_below(r, 8));
}

/* Writes the faulty bytes of the instruction to nw (its old bytes on entry). */
static void mutate(enum swifi_type t, bool alt, const struct ins *in, struct swifi_rng *r,
		   uint8_t *nw)
{
	const struct x86_insn *d = &in->d;
	switch (t) {
	case SW_FLIP:
		flip_bit(nw, d->len, r);
		break;
	case SW_SRCREG: case SW_DSTREG: {
		uint8_t *m = nw + d->modrm_off;
		if (reg_field(t, in) == REG)
			*m = (uint8_t)((*m & ~0x38) | other3(r, *m >> 3 & 7, 0) << 3);
		else
			*m = (uint8_t)((*m & ~7) | other3(r, *m & 7, 0));
		break;
	}
	case SW_POINTER: {
		unsigned forbid;
		const uint8_t *base = base_byte(in, &forbid);
		if (base && (!d->disp_len || swifi_below(r, 2))) {
			uint8_t *p = nw + (base - in->b);
			*p = (uint8_t)((*p & ~7) | other3(r, *p & 7, forbid));
		} else {
			flip_bit(nw + d->disp_off, d->disp_len, r);
		}
		break;
	}
	case SW_BRANCH:
		nw[d->op_off] ^= 1; /* condition codes come in pairs: cc and not-cc */
		break;
	case SW_OFFBYONE:
		if (alt) { /* B(2)<->BE(6), AE(3)<->A(7); L(C)<->LE(E), GE(D)<->G(F) */
			nw[d->op_off] ^= (d->op & 15) < 8 ? 4 : 2;
		} else { /* +-1 over the immediate's bytes, little-endian, wrapping */
			bool up = swifi_below(r, 2);
			for (unsigned i = 0; i < d->imm_len; i++) {
				uint8_t *p = nw + d->imm_off + i;
				uint8_t was = *p;
				*p = (uint8_t)(up ? was + 1 : was - 1);
				if (up ? was != 0xff : was != 0x00)
					break; /* no carry/borrow into the next byte */
			}
		}
		break;
	case SW_LOOP:
		nw[0] = 0xeb, nw[1] = 0xfe; /* jmp . */
		for (unsigned i = 2; i < d->len; i++)
			nw[i] = 0x90;
		break;
	default: /* SW_NOP, SW_LEAK: the instruction removed */
		for (unsigned i = 0; i < d->len; i++)
			nw[i] = 0x90;
		break;
	}
}

/* Counts the instructions of the window fault t applies to; stops at number `want` (storing
 * it in *hit) if there are that many. */
static size_t walk(enum swifi_type t, bool alt, const uint8_t *code, size_t n, uint64_t va,
		   const struct swifi_ctx *ctx, size_t want, struct ins *hit)
{
	size_t count = 0;
	struct ins in;
	for (size_t off = 0; off < n; off += in.d.len) {
		if (!x86_decode(code + off, n - off, &in.d))
			break;
		in.b = code + off;
		in.va = va + off;
		if (!applies(t, alt, &in, ctx))
			continue;
		if (count++ == want) {
			*hit = in;
			break;
		}
	}
	return count;
}

int swifi_make(enum swifi_type t, const uint8_t *code, size_t n, uint64_t va,
	       const struct swifi_ctx *ctx, struct swifi_rng *rng, struct swifi_patch *out)
{
	if ((unsigned)t >= SW_NTYPES || !code)
		return -1;
	bool alt = false;
	size_t count = walk(t, alt, code, n, va, ctx, SIZE_MAX, NULL);
	if (!count && t == SW_OFFBYONE) /* no compare with an immediate: strictness of a jcc */
		count = walk(t, alt = true, code, n, va, ctx, SIZE_MAX, NULL);
	if (!count)
		return -1;
	struct ins in;
	walk(t, alt, code, n, va, ctx, (size_t)swifi_below(rng, count), &in);
	*out = (struct swifi_patch){ .addr = in.va, .len = in.d.len, .type = t };
	for (unsigned i = 0; i < in.d.len; i++)
		out->old[i] = out->new_[i] = in.b[i];
	mutate(t, alt, &in, rng, out->new_);
	return 0;
}
