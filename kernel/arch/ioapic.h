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
/* The GSI an ISA IRQ arrives on (after MADT overrides). */
uint32_t ioapic_isa_gsi(uint8_t irq);
/* Masks or unmasks the pin of a GSI; false if no I/O APIC has it. */
bool ioapic_set_masked(uint32_t gsi, bool masked);
