/* PCI configuration space through configuration mechanism #1 (ports 0xcf8/0xcfc). The
 * caller serialises accesses (the kernel lock). */
#pragma once
#include "lib/types.h"

/* bdf = bus<<8 | dev<<3 | fn; offset < 256, naturally aligned for width 1, 2 or 4. */
uint32_t pci_cfg_read(uint16_t bdf, uint8_t offset, uint32_t width);
void pci_cfg_write(uint16_t bdf, uint8_t offset, uint32_t width, uint32_t value);
