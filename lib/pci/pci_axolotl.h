/* lib/pci on Axolotl: configuration access by KC_PCI_CFG (needs KPRIV_PCI for the function). */
#pragma once
#include "pci.h"

extern const struct pci_cfg pci_kcall;
