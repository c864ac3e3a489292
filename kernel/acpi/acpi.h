/* ACPI discovery: RSDP from the boot loader, RSDT/XSDT, and the tables we use. */
#pragma once
#include "lib/types.h"
#include "acpi/madt.h"

#define ACPI_MAX_TABLES 32

struct acpi_table_ref {
	char sig[5];
	uint64_t phys;
	uint32_t len;
};

extern struct madt_info madt;
extern bool madt_found;
extern struct acpi_table_ref acpi_tables[ACPI_MAX_TABLES];
extern uint32_t acpi_ntables;

void acpi_init(void);
