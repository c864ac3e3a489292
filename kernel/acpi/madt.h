/* ACPI table checks and the MADT (APIC) parser. Pure code: host-tested and fuzzed. */
#pragma once
#include "lib/types.h"

#define MADT_MAX_CPUS 256
#define MADT_MAX_IOAPICS 8
#define MADT_MAX_ISOS 24

struct madt_cpu {
	uint32_t apic_id;
	uint32_t uid;
	bool x2apic_entry; /* came from a type-9 entry */
};

struct madt_info {
	uint64_t lapic_addr;
	bool pcat_compat; /* legacy 8259 PICs present */
	uint32_t ncpus;
	struct madt_cpu cpus[MADT_MAX_CPUS];
	uint32_t skipped_cpus; /* enabled CPUs beyond MADT_MAX_CPUS or duplicates */
	uint32_t nioapics;
	struct { uint32_t id, addr, gsi_base; } ioapics[MADT_MAX_IOAPICS];
	uint32_t nisos;
	struct { uint8_t irq; uint32_t gsi; uint16_t flags; } isos[MADT_MAX_ISOS];
	uint32_t bad_entries; /* malformed entries that were skipped */
};

/* Sum of all bytes is zero. */
bool acpi_checksum_ok(const void *p, size_t len);
/* Parses a whole MADT (including its 36-byte SDT header); 0, or negative if unusable. */
int madt_parse(const void *table, size_t len, struct madt_info *out);
