#include "arch/pci.h"
#include "arch/x86.h"

#define PCI_ADDR 0xcf8
#define PCI_DATA 0xcfc

static uint16_t select(uint16_t bdf, uint8_t offset)
{
	outl(PCI_ADDR, 0x80000000u | ((uint32_t)bdf << 8) | (offset & 0xfcu));
	return (uint16_t)(PCI_DATA + (offset & 3));
}

uint32_t pci_cfg_read(uint16_t bdf, uint8_t offset, uint32_t width)
{
	uint16_t port = select(bdf, offset);
	switch (width) {
	case 1: return inb(port);
	case 2: return inw(port);
	default: return inl(port);
	}
}

void pci_cfg_write(uint16_t bdf, uint8_t offset, uint32_t width, uint32_t value)
{
	uint16_t port = select(bdf, offset);
	switch (width) {
	case 1: outb(port, (uint8_t)value); break;
	case 2: outw(port, (uint16_t)value); break;
	default: outl(port, value); break;
	}
}
