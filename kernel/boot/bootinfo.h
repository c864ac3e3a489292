/* What the boot loader told us, decoded from the Multiboot2 information structure. */
#pragma once
#include "lib/types.h"

#define MAX_MEM_REGIONS 128
#define MAX_MODULES 32

enum mem_type { MEM_USABLE = 1, MEM_RESERVED = 2, MEM_ACPI = 3, MEM_NVS = 4, MEM_BAD = 5 };

struct mem_region {
	uint64_t base, len;
	uint32_t type;
};

struct boot_module {
	uint64_t start, end; /* physical, end exclusive */
	char cmdline[256];
};

enum { FB_TYPE_NONE = -1, FB_TYPE_INDEXED = 0, FB_TYPE_RGB = 1, FB_TYPE_EGA_TEXT = 2 };

struct boot_fb {
	int type;
	uint64_t addr;
	uint32_t pitch, width, height;
	uint8_t bpp;
};

struct boot_info {
	uint64_t mbi_phys, mbi_size;
	char cmdline[512];
	char loader[64];
	struct mem_region mem[MAX_MEM_REGIONS];
	uint32_t nmem;
	struct boot_module mods[MAX_MODULES];
	uint32_t nmods;
	struct boot_fb fb;
	uint64_t rsdp_phys; /* copy of the RSDP inside the MBI, 0 if none */
	uint32_t rsdp_len;
	bool rsdp_v2;
};

/* Decodes the MBI at mbi (size given by its own header, at most max_len bytes readable).
 * mbi_phys is recorded for reservations. Returns 0, or a negative value if the structure
 * is malformed (the boot then goes on with what was decoded). */
int bootinfo_parse(struct boot_info *bi, const void *mbi, uint64_t mbi_phys, size_t max_len);

/* The booted kernel's copy. */
extern struct boot_info boot_info;
