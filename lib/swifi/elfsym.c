/* ELF64 symbol table and code segment lookup (elfsym.h). Fields are read byte by byte (the
 * image need not be aligned) at their System V gABI offsets. */
#include "elfsym.h"
#include <stdbool.h>

#define SHT_SYMTAB 2
#define SHT_STRTAB 3
#define STT_FUNC 2
#define PT_LOAD 1
#define PF_X 1
#define INT_LIMIT 0x7fffffff

static uint64_t rd(const uint8_t *p, unsigned n) /* little-endian */
{
	uint64_t v = 0;
	while (n--)
		v = v << 8 | p[n];
	return v;
}

/* [off, off + size) lies within an image of len bytes (no overflow whatever the values). */
static bool within(uint64_t off, uint64_t size, size_t len)
{
	return off <= len && size <= len - off;
}

static bool elf64_le(const uint8_t *img, size_t len)
{
	return img && len >= 64 && img[0] == 0x7f && img[1] == 'E' && img[2] == 'L' &&
	       img[3] == 'F' && img[4] == 2 /* ELFCLASS64 */ && img[5] == 1 /* ELFDATA2LSB */;
}

/* A NUL at or after str[i] before str[size]. */
static bool terminated(const uint8_t *str, uint64_t i, uint64_t size)
{
	for (; i < size; i++)
		if (!str[i])
			return true;
	return false;
}

int elf_functions(const uint8_t *img, size_t len, void (*fn)(void *arg, const struct elf_fn *f),
		  void *arg)
{
	if (!elf64_le(img, len))
		return -1;
	uint64_t shoff = rd(img + 0x28, 8), shent = rd(img + 0x3a, 2), shnum = rd(img + 0x3c, 2);
	if (shent < 64 || !within(shoff, shnum * shent, len)) /* both 16-bit: no overflow */
		return -1;
	const uint8_t *sym = NULL;
	for (uint64_t i = 0; i < shnum && !sym; i++)
		if (rd(img + shoff + i * shent + 4, 4) == SHT_SYMTAB)
			sym = img + shoff + i * shent;
	if (!sym || rd(sym + 40, 4) >= shnum) /* sh_link: its string table */
		return -1;
	const uint8_t *strh = img + shoff + rd(sym + 40, 4) * shent;
	uint64_t symoff = rd(sym + 24, 8), symsize = rd(sym + 32, 8), entsize = rd(sym + 56, 8);
	uint64_t stroff = rd(strh + 24, 8), strsize = rd(strh + 32, 8);
	if (rd(strh + 4, 4) != SHT_STRTAB || entsize < 24 || !within(symoff, symsize, len) ||
	    !within(stroff, strsize, len))
		return -1;
	const uint8_t *str = img + stroff;
	int count = 0;
	for (uint64_t k = 0; k < symsize / entsize && count < INT_LIMIT; k++) {
		const uint8_t *s = img + symoff + k * entsize;
		uint64_t name = rd(s, 4), size = rd(s + 16, 8);
		if ((s[4] & 0xf) != STT_FUNC || !size || !rd(s + 6, 2) /* undefined */ ||
		    name >= strsize || !str[name] || !terminated(str, name, strsize))
			continue;
		struct elf_fn f = { rd(s + 8, 8), size, (const char *)str + name };
		if (fn)
			fn(arg, &f);
		count++;
	}
	return count;
}

const uint8_t *elf_text_at(const uint8_t *img, size_t len, uint64_t va, size_t n)
{
	if (!elf64_le(img, len))
		return NULL;
	uint64_t phoff = rd(img + 0x20, 8), phent = rd(img + 0x36, 2), phnum = rd(img + 0x38, 2);
	if (phent < 56 || !within(phoff, phnum * phent, len))
		return NULL;
	for (uint64_t i = 0; i < phnum; i++) {
		const uint8_t *p = img + phoff + i * phent;
		uint64_t off = rd(p + 8, 8), vaddr = rd(p + 16, 8), filesz = rd(p + 32, 8);
		if (rd(p, 4) != PT_LOAD || !(rd(p + 4, 4) & PF_X) || !within(off, filesz, len) ||
		    va < vaddr || va - vaddr > filesz || n > filesz - (va - vaddr))
			continue;
		return img + off + (va - vaddr);
	}
	return NULL;
}
