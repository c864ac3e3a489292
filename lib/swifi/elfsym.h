/* The functions of an ELF64 little-endian executable held in memory, and the file bytes of
 * its code. The image may be corrupt: every offset is checked against its length. */
#pragma once
#include <stddef.h>
#include <stdint.h>

struct elf_fn {
	uint64_t addr, size;
	const char *name; /* points into the image's string table, NUL-terminated within it */
};

/* Calls fn(arg, &f) (fn may be NULL: only counts) for each STT_FUNC symbol with size > 0 and a
 * name, of the .symtab (SHT_SYMTAB) of the ELF64 little-endian image img[0..len); validates
 * every offset against len (never reads out of bounds). Returns the number of functions, or -1
 * if the image is not a valid ELF64 with a symbol table. */
int elf_functions(const uint8_t *img, size_t len, void (*fn)(void *arg, const struct elf_fn *f),
		  void *arg);

/* The file bytes of virtual address va: a pointer into img for n bytes at va if a PT_LOAD
 * segment with PF_X holds them in its file part, else NULL. */
const uint8_t *elf_text_at(const uint8_t *img, size_t len, uint64_t va, size_t n);
