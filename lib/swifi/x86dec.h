/* An x86-64 (64-bit mode) instruction length decoder: finds an instruction's boundary and the
 * offsets of its fields (prefixes, opcode, ModRM, SIB, displacement, immediate). It knows the
 * encodings GCC emits for user code; README.md lists what it does not know. Freestanding. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define X86_MAX_LEN 15

struct x86_insn {
	uint8_t len;          /* total length in bytes; 0 = not decodable */
	uint8_t nprefix;      /* legacy prefixes (66 67 F2 F3 F0 2E 36 3E 26 64 65) */
	uint8_t rex;          /* the REX byte (0x40-0x4F) or 0 */
	bool vex;             /* VEX (C4/C5) or EVEX (62) encoded */
	uint8_t map;          /* 0: one-byte opcodes, 1: 0F, 2: 0F38, 3: 0F3A (EVEX: 5, 6 too) */
	uint8_t op;           /* the opcode byte within its map */
	uint8_t op_off;       /* offset of that opcode byte */
	bool has_modrm; uint8_t modrm_off;
	bool has_sib;   uint8_t sib_off;
	uint8_t disp_off, disp_len; /* disp_len 0: none (A0-A3's moffs count as displacement) */
	uint8_t imm_off, imm_len;   /* imm_len 0: none (for ENTER's two immediates: total);
				     * relative branch targets (rel8/rel32) are immediates */
};

/* Decodes the instruction at code[0..avail); returns its length (also in out->len), 0 if the
 * bytes are not a valid/complete instruction or it would exceed 15 bytes or avail. Reads no
 * byte at or past code[avail]. */
unsigned x86_decode(const uint8_t *code, size_t avail, struct x86_insn *out);
