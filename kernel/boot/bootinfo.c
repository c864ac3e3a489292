/* Multiboot2 information parser. Pure code: also built and fuzzed on the host. */
#include "boot/bootinfo.h"
#include "lib/bytes.h"

enum {
	TAG_END = 0, TAG_CMDLINE = 1, TAG_LOADER = 2, TAG_MODULE = 3, TAG_MMAP = 6,
	TAG_FRAMEBUFFER = 8, TAG_ACPI_OLD = 14, TAG_ACPI_NEW = 15,
};

static void copy_str(char *dst, size_t cap, const uint8_t *src, size_t max)
{
	size_t i = 0;
	for (; i + 1 < cap && i < max && src[i]; i++)
		dst[i] = (char)src[i];
	dst[i] = '\0';
}

int bootinfo_parse(struct boot_info *bi, const void *mbi, uint64_t mbi_phys, size_t max_len)
{
	const uint8_t *base = mbi;
	uint8_t *clear = (uint8_t *)bi;
	for (size_t i = 0; i < sizeof(*bi); i++)
		clear[i] = 0;
	bi->fb.type = FB_TYPE_NONE;
	bi->mbi_phys = mbi_phys;
	if (max_len < 8)
		return -1;
	uint32_t total = rd32(base);
	if (total < 16 || total > max_len)
		return -1;
	bi->mbi_size = total;

	size_t off = 8;
	while (off + 8 <= total) {
		const uint8_t *t = base + off;
		uint32_t type = rd32(t), size = rd32(t + 4);
		if (size < 8 || size > total - off)
			return -2;
		const uint8_t *body = t + 8;
		size_t blen = size - 8;
		switch (type) {
		case TAG_END:
			return 0;
		case TAG_CMDLINE:
			copy_str(bi->cmdline, sizeof(bi->cmdline), body, blen);
			break;
		case TAG_LOADER:
			copy_str(bi->loader, sizeof(bi->loader), body, blen);
			break;
		case TAG_MODULE:
			if (blen >= 8 && bi->nmods < MAX_MODULES) {
				struct boot_module *m = &bi->mods[bi->nmods];
				m->start = rd32(body);
				m->end = rd32(body + 4);
				if (m->end >= m->start) {
					copy_str(m->cmdline, sizeof(m->cmdline), body + 8, blen - 8);
					bi->nmods++;
				}
			}
			break;
		case TAG_MMAP: {
			if (blen < 8)
				return -3;
			uint32_t esz = rd32(body);
			if (esz < 24)
				return -3;
			for (size_t e = 8; e + esz <= blen && bi->nmem < MAX_MEM_REGIONS; e += esz) {
				struct mem_region *r = &bi->mem[bi->nmem];
				r->base = rd64(body + e);
				r->len = rd64(body + e + 8);
				r->type = rd32(body + e + 16);
				if (r->len && r->base + r->len > r->base)
					bi->nmem++;
			}
			break;
		}
		case TAG_FRAMEBUFFER:
			if (blen >= 22) {
				bi->fb.addr = rd64(body);
				bi->fb.pitch = rd32(body + 8);
				bi->fb.width = rd32(body + 12);
				bi->fb.height = rd32(body + 16);
				bi->fb.bpp = body[20];
				bi->fb.type = body[21];
			}
			break;
		case TAG_ACPI_OLD:
		case TAG_ACPI_NEW:
			/* Prefer the ACPI 2.0+ RSDP (XSDT) when both are given. */
			if (blen >= 20 && (type == TAG_ACPI_NEW || !bi->rsdp_v2)) {
				bi->rsdp_phys = mbi_phys + off + 8;
				bi->rsdp_len = (uint32_t)blen;
				bi->rsdp_v2 = type == TAG_ACPI_NEW;
			}
			break;
		default:
			break;
		}
		off += (size + 7) & ~7u;
	}
	return -4; /* no end tag */
}
