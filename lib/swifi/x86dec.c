/* x86-64 instruction length decoder (x86dec.h). An instruction is: legacy prefixes, an
 * optional REX, an opcode (one byte; 0F xx; 0F 38 xx; 0F 3A xx; or a VEX/EVEX prefix and a
 * byte of the map it names), then ModRM, SIB, displacement and immediate as the opcode
 * requires. The tables below say, per opcode, whether a ModRM follows and which immediate. */
#include "x86dec.h"

/* Attribute bits of an opcode; the immediate's kind sits in the high nibble. */
enum { M = 0x01, BAD = 0x02 };
enum {
	I0,     /* no immediate */
	IB,     /* imm8 or rel8 */
	IW,     /* imm16 (C2, CA) */
	IZ,     /* imm32, imm16 with 66 (unless REX.W) */
	I32,    /* rel32 whatever the operand size (E8, E9, 0F 8x: 66 is ignored in 64-bit mode) */
	IV,     /* B8-BF: imm64 with REX.W, else like IZ */
	IMOFFS, /* A0-A3: an 8-byte address (4 with 67), recorded as the displacement */
	IENTER, /* C8: imm16 then imm8 */
	ITEST,  /* F6/F7: an immediate only for /0 and /1 (TEST) */
};
#define IMM(k) ((k) << 4)

static uint8_t map0_attr(uint8_t op)
{
	if (op < 0x40) { /* the eight ALU ops: 00-05 + 8n; 0F and the segment prefixes never get here */
		switch (op & 7) {
		case 4: return IMM(IB);
		case 5: return IMM(IZ);
		case 6: case 7: return BAD; /* push/pop segment, DAA, DAS, AAA, AAS */
		default: return M;
		}
	}
	if (op < 0x60)
		return 0; /* push/pop reg (40-4F are REX, consumed before) */
	if (op >= 0x70 && op <= 0x7f)
		return IMM(IB);
	if (op >= 0x84 && op <= 0x8f)
		return M;
	if (op >= 0x91 && op <= 0x9f)
		return op == 0x9a ? BAD : 0;
	if (op >= 0xa0 && op <= 0xa3)
		return IMM(IMOFFS);
	if (op >= 0xb0 && op <= 0xb7)
		return IMM(IB);
	if (op >= 0xb8 && op <= 0xbf)
		return IMM(IV);
	if (op >= 0xd8 && op <= 0xdf)
		return M; /* x87 */
	if (op >= 0xe0 && op <= 0xe7)
		return IMM(IB); /* loop/jrcxz rel8, in/out imm8 */
	switch (op) {
	case 0x63: return M;
	case 0x68: return IMM(IZ);
	case 0x69: return M | IMM(IZ);
	case 0x6a: return IMM(IB);
	case 0x6b: return M | IMM(IB);
	case 0x80: case 0x83: case 0xc0: case 0xc1: case 0xc6: return M | IMM(IB);
	case 0x81: case 0xc7: return M | IMM(IZ);
	case 0xa8: case 0xcd: case 0xeb: return IMM(IB);
	case 0xa9: return IMM(IZ);
	case 0xc2: case 0xca: return IMM(IW);
	case 0xc8: return IMM(IENTER);
	case 0xd0: case 0xd1: case 0xd2: case 0xd3: case 0xfe: case 0xff: return M;
	case 0xe8: case 0xe9: return IMM(I32);
	case 0xf6: case 0xf7: return M | IMM(ITEST);
	case 0x60: case 0x61: case 0x82: case 0xce: case 0xd4: case 0xd5: case 0xd6: case 0xea:
		return BAD; /* removed in 64-bit mode */
	default:
		return 0; /* 6C-6F, 90, A4-A7, AA-AF, C3, C9, CB, CC, CF, D7, EC-EF, F1, F4, F5, F8-FD */
	}
}

static uint8_t map1_attr(uint8_t op) /* 0F xx, legacy encoded */
{
	if (op == 0x04 || op == 0x0a || op == 0x0c || (op >= 0x24 && op <= 0x27) || op == 0x36 ||
	    op == 0x39 || (op >= 0x3b && op <= 0x3f) || op == 0x7a || op == 0x7b || op == 0xa6 ||
	    op == 0xa7)
		return BAD;
	if (op == 0x0f)
		return M | IMM(IB); /* 3DNow!: the real opcode follows the operands as a byte */
	if (op < 0x10)
		return op <= 0x03 || op == 0x0d ? M : 0; /* 05 syscall, 0B ud2, ...: no operands */
	if ((op >= 0x30 && op <= 0x37) || op == 0x77 || (op >= 0xa0 && op <= 0xa2) ||
	    (op >= 0xa8 && op <= 0xaa) || (op >= 0xc8 && op <= 0xcf))
		return 0; /* rdtsc.., emms, push/pop fs/gs, cpuid, rsm, bswap */
	if ((op >= 0x70 && op <= 0x73) || op == 0xa4 || op == 0xac || op == 0xba || op == 0xc2 ||
	    (op >= 0xc4 && op <= 0xc6))
		return M | IMM(IB);
	if (op >= 0x80 && op <= 0x8f)
		return IMM(I32); /* jcc rel32 */
	return M;
}

static uint8_t vex_attr(unsigned map, uint8_t op) /* VEX/EVEX: everything has a ModRM but vzero* */
{
	if (map == 3)
		return M | IMM(IB);
	if (map != 1)
		return M;
	if (op == 0x77)
		return 0;
	if ((op >= 0x70 && op <= 0x73) || op == 0xc2 || (op >= 0xc4 && op <= 0xc6))
		return M | IMM(IB);
	return M;
}

static bool legacy_prefix(uint8_t b)
{
	return b == 0x66 || b == 0x67 || b == 0xf2 || b == 0xf3 || b == 0xf0 || b == 0x2e ||
	       b == 0x36 || b == 0x3e || b == 0x26 || b == 0x64 || b == 0x65;
}

static unsigned fail(struct x86_insn *out)
{
	*out = (struct x86_insn){ 0 };
	return 0;
}

unsigned x86_decode(const uint8_t *code, size_t avail, struct x86_insn *out)
{
	struct x86_insn d = { 0 };
	size_t max = avail < X86_MAX_LEN ? avail : X86_MAX_LEN, i;
	bool opsize = false, adsize = false, simd_prefix = false; /* simd: 66 F2 F3 F0 */
	/* Every byte read below is checked against max first; disp and imm are only skipped. */
	for (i = 0;; i++) {
		if (i >= max)
			return fail(out);
		uint8_t b = code[i];
		if (legacy_prefix(b)) {
			d.nprefix++;
			d.rex = 0; /* a REX not right before the opcode is ignored */
			opsize |= b == 0x66;
			adsize |= b == 0x67;
			simd_prefix |= b == 0x66 || b == 0xf2 || b == 0xf3 || b == 0xf0;
		} else if ((b & 0xf0) == 0x40) {
			d.rex = b;
		} else {
			break;
		}
	}
	uint8_t b = code[i], attr;
	if (b == 0xc4 || b == 0xc5 || b == 0x62) { /* always VEX/EVEX in 64-bit mode */
		size_t plen = b == 0xc5 ? 2 : b == 0xc4 ? 3 : 4;
		if (d.rex || simd_prefix || i + plen >= max)
			return fail(out);
		if (b == 0xc5) {
			d.map = 1;
		} else if (b == 0xc4) {
			d.map = code[i + 1] & 0x1f;
			if (d.map < 1 || d.map > 3)
				return fail(out);
		} else {
			d.map = code[i + 1] & 7;
			/* P0 bit 3 is zero and P1 bit 2 one in every EVEX; maps 5/6 are AVX512-FP16 */
			if ((code[i + 1] & 0x08) || !(code[i + 2] & 0x04) || d.map == 0 || d.map == 4 ||
			    d.map == 7)
				return fail(out);
		}
		d.vex = true;
		i += plen;
		attr = vex_attr(d.map, code[i]);
	} else if (b == 0x0f) {
		if (i + 1 >= max)
			return fail(out);
		uint8_t c = code[++i];
		if (c == 0x38 || c == 0x3a) {
			if (i + 1 >= max)
				return fail(out);
			d.map = c == 0x38 ? 2 : 3;
			attr = c == 0x38 ? M : M | IMM(IB);
			i++;
		} else {
			d.map = 1;
			attr = map1_attr(c);
		}
	} else {
		attr = map0_attr(b);
	}
	if (attr & BAD)
		return fail(out);
	d.op = code[i];
	d.op_off = (uint8_t)i++;

	unsigned kind = attr >> 4, disp = 0, imm = 0;
	if (attr & M) {
		if (i >= max)
			return fail(out);
		uint8_t m = code[i];
		unsigned mod = m >> 6, reg = (m >> 3) & 7, rm = m & 7;
		d.has_modrm = true;
		d.modrm_off = (uint8_t)i++;
		/* mov to/from control and debug registers ignores mod: always registers */
		bool regs_only = mod == 3 || (d.map == 1 && !d.vex && d.op >= 0x20 && d.op <= 0x23);
		if (!regs_only) {
			if (rm == 4) {
				if (i >= max)
					return fail(out);
				d.has_sib = true;
				d.sib_off = (uint8_t)i++;
				if (mod == 0 && (code[d.sib_off] & 7) == 5)
					disp = 4; /* no base: disp32 */
			} else if (mod == 0 && rm == 5) {
				disp = 4; /* RIP-relative */
			}
			disp = mod == 1 ? 1 : mod == 2 ? 4 : disp;
		}
		if (d.map == 0) { /* forms the CPU rejects (#UD) */
			if ((d.op == 0x8d && mod == 3) || (d.op == 0x8f && reg != 0) ||
			    (d.op == 0xfe && reg > 1) || (d.op == 0xff && reg == 7) ||
			    ((d.op == 0xc6 || d.op == 0xc7) && reg != 0 && m != 0xf8))
				return fail(out);
			if (kind == ITEST)
				kind = reg > 1 ? I0 : d.op == 0xf6 ? IB : IZ;
		}
	}
	bool rexw = d.rex & 0x08;
	switch (kind) {
	case IB: imm = 1; break;
	case IW: imm = 2; break;
	case IZ: imm = opsize && !rexw ? 2 : 4; break;
	case I32: imm = 4; break;
	case IV: imm = rexw ? 8 : opsize ? 2 : 4; break;
	case IMOFFS: disp = adsize ? 4 : 8; break;
	case IENTER: imm = 3; break;
	default: break;
	}
	if (disp) {
		d.disp_off = (uint8_t)i;
		d.disp_len = (uint8_t)disp;
		i += disp;
	}
	if (imm) {
		d.imm_off = (uint8_t)i;
		d.imm_len = (uint8_t)imm;
		i += imm;
	}
	if (i > max)
		return fail(out);
	d.len = (uint8_t)i;
	*out = d;
	return d.len;
}
