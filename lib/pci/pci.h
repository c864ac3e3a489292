/* PCI configuration space for drivers and rs: enumeration, identification, BARs with their
 * sizes, interrupt line and pin, the capability list (README.md). Portable C: every access
 * goes through a struct pci_cfg (on Axolotl pci_axolotl.c, KC_PCI_CFG; in host tests a
 * model of a bus), so the same code is tested on the host. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#define PCI_BDF(bus, dev, fn) ((uint16_t)((bus) << 8 | (dev) << 3 | (fn)))
#define PCI_BUS(bdf) (((bdf) >> 8) & 0xff)
#define PCI_DEV(bdf) (((bdf) >> 3) & 0x1f)
#define PCI_FN(bdf) ((bdf) & 7)

/* Configuration registers (type 0 header). */
#define PCI_VENDOR 0x00
#define PCI_DEVICE 0x02
#define PCI_COMMAND 0x04
#define PCI_STATUS 0x06
#define PCI_CLASS_REV 0x08
#define PCI_HEADER_TYPE 0x0e
#define PCI_BAR0 0x10
#define PCI_SECONDARY_BUS 0x19 /* type 1 (bridge) header */
#define PCI_CAP_PTR 0x34
#define PCI_INT_LINE 0x3c
#define PCI_INT_PIN 0x3d
#define PCI_CMD_IO 0x1
#define PCI_CMD_MEM 0x2
#define PCI_CMD_MASTER 0x4
#define PCI_CMD_INTX_OFF 0x400
#define PCI_STATUS_CAPS 0x10
#define PCI_CAP_MSI 0x05
#define PCI_CAP_MSIX 0x11
/* MSI-X capability: message control at +2, table offset/BIR at +4, PBA offset/BIR at +8. */
#define PCI_MSIX_CTRL 2
#define PCI_MSIX_TABLE 4
#define PCI_MSIX_PBA 8
#define PCI_MSIX_ENABLE 0x8000
#define PCI_MSIX_FMASK 0x4000 /* function mask: no entry sends while set */
#define PCI_MSIX_QSIZE 0x07ff /* table size - 1 */
#define PCI_MSIX_ENTRY 16     /* bytes per table entry: address low, high, data, vector control */
#define PCI_MSIX_ENTRY_MASKED 1

#define PCI_MAX_BARS 6
#define PCI_MAX_CAPS 16

/* Configuration access: read returns the value (zero-extended) or a negative error (a
 * function the caller does not hold); write returns 0 or a negative error. */
struct pci_cfg {
	int64_t (*read)(void *ctx, uint16_t bdf, uint8_t off, uint32_t width);
	int64_t (*write)(void *ctx, uint16_t bdf, uint8_t off, uint32_t width, uint32_t value);
	void *ctx;
};

enum pci_bar_kind { PCI_BAR_NONE, PCI_BAR_MEM, PCI_BAR_IO };

struct pci_bar {
	enum pci_bar_kind kind;
	bool is64, prefetch;
	uint64_t base, size; /* size 0: not implemented */
};

struct pci_func {
	uint16_t bdf;
	uint16_t vendor, device;
	uint8_t class_code, subclass, prog_if, revision;
	uint8_t header_type; /* without the multi-function bit */
	uint8_t int_line, int_pin; /* line 0xff: not connected; pin 0: none, 1..4 INTA..INTD */
	struct pci_bar bar[PCI_MAX_BARS];
	uint8_t ncaps;
	struct { uint8_t id, off; } cap[PCI_MAX_CAPS];
};

/* Decoding one BAR from its value and its read-back after writing all ones (hi/hi_mask:
 * the next register's for a 64-bit BAR). Pure arithmetic, the host-tested core. Returns the
 * number of registers the BAR uses (1 or 2). */
int pci_bar_decode(uint32_t val, uint32_t mask, uint32_t hi, uint32_t hi_mask, struct pci_bar *out);

/* Reads identity, BARs (sized with memory and I/O decode off, restored after), interrupt
 * line and pin, and capabilities of one function. 0, or -1 if no function answers there
 * (vendor 0xffff), or a negative access error. */
int64_t pci_read_func(const struct pci_cfg *c, uint16_t bdf, struct pci_func *out);
/* Identity only (no BAR sizing): 0, -1 for no function, or an access error. */
int64_t pci_read_id(const struct pci_cfg *c, uint16_t bdf, struct pci_func *out);

/* Calls fn for every function found on bus 0 and the buses behind bridges (functions the
 * caller may not read are skipped), in bus/device/function order; identity only (use
 * pci_read_func for BARs). Stops early when fn returns false. Returns the count visited. */
int pci_enumerate(const struct pci_cfg *c, bool (*fn)(const struct pci_func *f, void *arg), void *arg);
/* The n-th (from 0) function with this vendor and device id: 0 with *out filled by
 * pci_read_func, or -1 if there is none. */
int64_t pci_find(const struct pci_cfg *c, uint16_t vendor, uint16_t device, unsigned n, struct pci_func *out);
/* Offset of the first capability with this id, or 0. */
uint8_t pci_cap_find(const struct pci_func *f, uint8_t id);
/* Sets bits in the command register (e.g. PCI_CMD_MEM | PCI_CMD_MASTER) and clears others. */
int64_t pci_command(const struct pci_cfg *c, uint16_t bdf, uint16_t set, uint16_t clear);
/* MSI-X (README.md "MSI-X"): where a function's table and pending-bit array are. */
struct pci_msix {
	uint8_t cap;            /* the capability's offset */
	uint16_t size;          /* table entries (1..2048) */
	uint8_t table_bar, pba_bar;
	uint32_t table_off, pba_off; /* within their BARs (8-byte aligned) */
	uint64_t table_phys;    /* the table's physical address (its BAR's base + offset) */
};
/* Reads f's MSI-X capability (f from pci_read_func: BARs sized). 0 with *out filled; -1 if
 * f has none or it is unusable (a BIR naming no memory BAR, a table or PBA beyond its BAR);
 * or a negative access error. */
int64_t pci_msix_find(const struct pci_cfg *c, const struct pci_func *f, struct pci_msix *out);
/* Message control: enable (and function mask) on or off; the other bits kept. */
int64_t pci_msix_control(const struct pci_cfg *c, uint16_t bdf, const struct pci_msix *m, bool enable, bool fmask);
/* Entry i of a mapped table (table: its first byte): masked, address and data written,
 * then unmasked unless `masked` (the order the PCI spec asks for a live entry). */
void pci_msix_entry_write(volatile void *table, uint32_t i, uint64_t addr, uint32_t data, bool masked);
void pci_msix_entry_mask(volatile void *table, uint32_t i, bool masked);

/* Parses "BB:DD.F" (hex, as lspci prints) at s; returns the bdf or -1. */
int32_t pci_parse_bdf(const char *s);
