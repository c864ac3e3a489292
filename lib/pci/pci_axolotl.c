/* The Axolotl backend of lib/pci: configuration access through KC_PCI_CFG, which answers
 * an error for a function the caller does not hold (docs/devices.md). */
#include "pci_axolotl.h"
#include "axrt.h"

static int64_t kc_read(void *ctx, uint16_t bdf, uint8_t off, uint32_t width)
{
	(void)ctx;
	return kcall6(KC_PCI_CFG, bdf, off, width, 0, 0, 0);
}

static int64_t kc_write(void *ctx, uint16_t bdf, uint8_t off, uint32_t width, uint32_t value)
{
	(void)ctx;
	return kcall6(KC_PCI_CFG, bdf, off, width | KPCI_WRITE, value, 0, 0);
}

const struct pci_cfg pci_kcall = { kc_read, kc_write, 0 };
