#include "acpi/acpi.h"
#include "boot/bootinfo.h"
#include "console/log.h"
#include "mm/vmm.h"
#include "lib/string.h"

struct madt_info madt;
bool madt_found;
struct acpi_table_ref acpi_tables[ACPI_MAX_TABLES];
uint32_t acpi_ntables;

/* ACPI tables may sit in memory the direct map does not cover (type "reserved"). */
static const uint8_t *map_phys(uint64_t pa, uint64_t len)
{
	if (vmm_lookup(DIRECT_MAP_BASE + pa, NULL) &&
	    vmm_lookup(DIRECT_MAP_BASE + pa + len - 1, NULL))
		return phys_to_virt(pa);
	return vmm_map_mmio(pa, len);
}

static void take_table(uint64_t pa)
{
	const uint8_t *h = map_phys(pa, 36);
	if (!h)
		return;
	uint32_t len;
	memcpy(&len, h + 4, 4);
	if (len < 36 || len > MiB(1)) {
		pr_warn("acpi: table at %#llx has a bad length %u", (unsigned long long)pa, len);
		return;
	}
	const uint8_t *t = map_phys(pa, len);
	if (!t)
		return;
	if (!acpi_checksum_ok(t, len)) {
		pr_warn("acpi: table %.4s at %#llx fails its checksum; ignored", (const char *)t,
			(unsigned long long)pa);
		return;
	}
	if (acpi_ntables < ACPI_MAX_TABLES) {
		struct acpi_table_ref *r = &acpi_tables[acpi_ntables++];
		memcpy(r->sig, t, 4);
		r->sig[4] = 0;
		r->phys = pa;
		r->len = len;
	}
	if (!memcmp(t, "APIC", 4)) {
		if (madt_parse(t, len, &madt) == 0)
			madt_found = true;
		if (madt.bad_entries)
			pr_warn("acpi: MADT has %u malformed entries", madt.bad_entries);
	}
}

void acpi_init(void)
{
	if (!boot_info.rsdp_phys) {
		pr_warn("acpi: the boot loader passed no RSDP; running on the boot CPU only");
		return;
	}
	const uint8_t *rsdp = phys_to_virt(boot_info.rsdp_phys);
	if (memcmp(rsdp, "RSD PTR ", 8) || !acpi_checksum_ok(rsdp, 20)) {
		pr_warn("acpi: RSDP signature or checksum is bad; running on the boot CPU only");
		return;
	}
	uint64_t root;
	uint32_t entry_size;
	uint32_t rlen = 0;
	if (rsdp[15] >= 2 && boot_info.rsdp_len >= 36 && acpi_checksum_ok(rsdp, 36)) {
		memcpy(&root, rsdp + 24, 8);
		entry_size = 8;
	} else {
		uint32_t r32;
		memcpy(&r32, rsdp + 16, 4);
		root = r32;
		entry_size = 4;
	}
	const uint8_t *h = map_phys(root, 36);
	if (h)
		memcpy(&rlen, h + 4, 4);
	const uint8_t *rt = (rlen >= 36 && rlen < MiB(1)) ? map_phys(root, rlen) : NULL;
	if (!rt || !acpi_checksum_ok(rt, rlen)) {
		pr_warn("acpi: root table at %#llx is unusable", (unsigned long long)root);
		return;
	}
	acpi_tables[acpi_ntables++] = (struct acpi_table_ref){ "", root, rlen };
	memcpy(acpi_tables[0].sig, rt, 4);
	for (uint32_t off = 36; off + entry_size <= rlen; off += entry_size) {
		uint64_t pa = 0;
		memcpy(&pa, rt + off, entry_size);
		if (pa)
			take_table(pa);
	}
	pr_info("acpi: %s with %u tables, MADT %s", entry_size == 8 ? "XSDT" : "RSDT",
		acpi_ntables, madt_found ? "found" : "missing");
}
