#include "proc/elf.h"
#include "lib/bytes.h"
#include <axolotl/kcall.h>

#define PT_LOAD 1
#define PT_PHDR 6

int elf_parse(const void *image, size_t len, uint64_t user_top, uint64_t dyn_base,
	      struct elf_info *out)
{
	const uint8_t *e = image;
	uint8_t *clear = (uint8_t *)out;
	for (size_t i = 0; i < sizeof(*out); i++)
		clear[i] = 0;
	if (len < 64 || e[0] != 0x7f || e[1] != 'E' || e[2] != 'L' || e[3] != 'F')
		return -KE_INVAL;
	if (e[4] != 2 || e[5] != 1 || e[6] != 1) /* 64-bit, little endian, version 1 */
		return -KE_INVAL;
	uint16_t type = rd16(e + 16), machine = rd16(e + 18);
	if ((type != 2 && type != 3) || machine != 62)
		return -KE_INVAL;
	uint64_t phoff = rd64(e + 32);
	uint16_t phentsize = rd16(e + 54), phnum = rd16(e + 56);
	if (phentsize != 56 || phnum == 0 || phnum > 64 || phoff > len || (uint64_t)phnum * 56 > len - phoff)
		return -KE_INVAL;
	out->bias = type == 3 ? dyn_base : 0;
	out->lo = UINT64_MAX;
	out->phnum = phnum;
	for (uint16_t i = 0; i < phnum; i++) {
		const uint8_t *ph = e + phoff + (uint64_t)i * 56;
		uint32_t ptype = rd32(ph);
		uint64_t off = rd64(ph + 8), vaddr = rd64(ph + 16), filesz = rd64(ph + 32),
			 memsz = rd64(ph + 40);
		if (ptype == PT_PHDR)
			out->phdr_vaddr = vaddr + out->bias;
		if (ptype != PT_LOAD || memsz == 0)
			continue;
		if (out->nsegs == ELF_MAX_SEGS || filesz > memsz || off > len || filesz > len - off)
			return -KE_INVAL;
		uint64_t va = vaddr + out->bias;
		if (va < vaddr || va < 0x1000 || memsz > user_top || va > user_top - memsz)
			return -KE_INVAL; /* overflow, page zero, or beyond user space */
		struct elf_seg *s = &out->segs[out->nsegs++];
		s->vaddr = va;
		s->memsz = memsz;
		s->offset = off;
		s->filesz = filesz;
		s->flags = rd32(ph + 4);
		uint64_t lo = va & ~0xfffull, hi = (va + memsz + 0xfff) & ~0xfffull;
		if (lo < out->lo)
			out->lo = lo;
		if (hi > out->hi)
			out->hi = hi;
		/* PT_PHDR may be missing: headers inside the first segment's file range are mapped. */
		if (!out->phdr_vaddr && phoff >= off && phoff + (uint64_t)phnum * 56 <= off + filesz)
			out->phdr_vaddr = va + (phoff - off);
	}
	if (!out->nsegs)
		return -KE_INVAL;
	if (out->hi - out->lo > (1ull << 32))
		return -KE_INVAL; /* 4 GiB span cap */
	out->entry = rd64(e + 24) + out->bias;
	if (out->entry < out->lo || out->entry >= out->hi)
		return -KE_INVAL;
	return 0;
}

static uint64_t seg_lo(const struct elf_seg *sg) { return sg->vaddr & ~0xfffull; }
static uint64_t seg_hi(const struct elf_seg *sg) { return (sg->vaddr + sg->memsz + 0xfff) & ~0xfffull; }

uint32_t elf_runs(const struct elf_info *ei, uint32_t *order, struct elf_run *runs)
{
	for (uint32_t i = 0; i < ei->nsegs; i++) {
		uint32_t k = i;
		for (; k > 0 && seg_lo(&ei->segs[order[k - 1]]) > seg_lo(&ei->segs[i]); k--)
			order[k] = order[k - 1];
		order[k] = i;
	}
	uint32_t n = 0;
	for (uint32_t from = 0; from < ei->nsegs;) {
		uint64_t lo = seg_lo(&ei->segs[order[from]]), hi = seg_hi(&ei->segs[order[from]]);
		uint32_t to = from + 1;
		for (; to < ei->nsegs && seg_lo(&ei->segs[order[to]]) <= hi; to++)
			if (seg_hi(&ei->segs[order[to]]) > hi)
				hi = seg_hi(&ei->segs[order[to]]);
		runs[n++] = (struct elf_run){ lo, hi, from, to };
		from = to;
	}
	return n;
}
