/* I/O APICs from the MADT; legacy 8259 PICs remapped and masked. */
#pragma once
#include "lib/types.h"

void pic_disable(void);
void ioapic_init(void);
uint32_t ioapic_count(void);
uint32_t ioapic_pins(uint32_t idx);
/* Routes an ISA IRQ (after MADT overrides) to vector on the CPU with apic_id; masked=false
 * unmasks it. Returns the GSI used, or -1. */
int ioapic_route_isa(uint8_t irq, uint8_t vector, uint32_t apic_id, bool masked);
