#include "arch/ioapic.h"
#include "arch/x86.h"
#include "acpi/acpi.h"
#include "console/log.h"
#include "mm/vmm.h"
#include "lib/spinlock.h"

/* Each access to an I/O APIC is a register write (select) and a read or write (window);
 * under a hypervisor each is an exit. A device interrupt masks its line and the driver
 * unmasks it, so the redirection entries' low words are kept here (only we write them; the
 * bits the chip sets, delivery status and remote IRR, are read-only) and the select is
 * written only when it changes: a mask or an unmask is one register write. */
#define IOAPIC_MAX_PINS 240
struct ioapic {
	volatile uint32_t *mmio;
	uint32_t gsi_base, pins, id;
	uint32_t sel;                    /* the register selected now */
	uint32_t lo[IOAPIC_MAX_PINS];    /* each pin's redirection entry, low word */
};
static struct ioapic ioapics[MADT_MAX_IOAPICS];
static uint32_t nioapics;
static spinlock_t lock = SPINLOCK_INIT;

void pic_disable(void)
{
	/* Remap the 8259s to vectors 0x20-0x2f so stray IRQs never look like exceptions,
	 * then mask every line. */
	outb(0x20, 0x11);
	outb(0xa0, 0x11);
	outb(0x21, 0x20);
	outb(0xa1, 0x28);
	outb(0x21, 0x04);
	outb(0xa1, 0x02);
	outb(0x21, 0x01);
	outb(0xa1, 0x01);
	outb(0x21, 0xff);
	outb(0xa1, 0xff);
}

static void select(struct ioapic *io, uint32_t reg)
{
	if (io->sel != reg) {
		io->mmio[0] = reg;
		io->sel = reg;
	}
}

static uint32_t rd(struct ioapic *io, uint32_t reg)
{
	select(io, reg);
	return io->mmio[4];
}

static void wr(struct ioapic *io, uint32_t reg, uint32_t v)
{
	select(io, reg);
	io->mmio[4] = v;
}

static void set_lo(struct ioapic *io, uint32_t pin, uint32_t lo)
{
	io->lo[pin] = lo;
	wr(io, 0x10 + 2 * pin, lo);
}

void ioapic_init(void)
{
	for (uint32_t i = 0; i < madt.nioapics; i++) {
		struct ioapic *io = &ioapics[nioapics];
		io->mmio = vmm_map_mmio(madt.ioapics[i].addr, 32);
		if (!io->mmio)
			continue;
		io->gsi_base = madt.ioapics[i].gsi_base;
		io->id = madt.ioapics[i].id;
		io->sel = UINT32_MAX;
		io->pins = ((rd(io, 1) >> 16) & 0xff) + 1;
		if (io->pins > IOAPIC_MAX_PINS)
			io->pins = IOAPIC_MAX_PINS;
		for (uint32_t p = 0; p < io->pins; p++) {
			set_lo(io, p, 1u << 16); /* masked */
			wr(io, 0x11 + 2 * p, 0);
		}
		pr_info("ioapic: id %u at %#x, GSIs %u-%u", io->id, madt.ioapics[i].addr, io->gsi_base,
			io->gsi_base + io->pins - 1);
		nioapics++;
	}
}

uint32_t ioapic_count(void) { return nioapics; }
uint32_t ioapic_pins(uint32_t i) { return i < nioapics ? ioapics[i].pins : 0; }

uint32_t ioapic_isa_gsi(uint8_t irq)
{
	uint32_t gsi = irq;
	for (uint32_t i = 0; i < madt.nisos; i++)
		if (madt.isos[i].irq == irq)
			gsi = madt.isos[i].gsi;
	return gsi;
}

bool ioapic_set_masked(uint32_t gsi, bool masked)
{
	for (uint32_t i = 0; i < nioapics; i++) {
		struct ioapic *io = &ioapics[i];
		if (gsi < io->gsi_base || gsi >= io->gsi_base + io->pins)
			continue;
		uint32_t pin = gsi - io->gsi_base;
		uint64_t f = spin_lock_irqsave(&lock);
		uint32_t lo = io->lo[pin];
		uint32_t want = masked ? lo | (1u << 16) : lo & ~(1u << 16);
		if (want != lo)
			set_lo(io, pin, want);
		spin_unlock_irqrestore(&lock, f);
		return true;
	}
	return false;
}

int ioapic_route_isa(uint8_t irq, uint8_t vector, uint32_t apic_id, bool masked)
{
	uint32_t gsi = irq;
	uint16_t flags = 0;
	for (uint32_t i = 0; i < madt.nisos; i++)
		if (madt.isos[i].irq == irq) {
			gsi = madt.isos[i].gsi;
			flags = madt.isos[i].flags;
		}
	/* ISA default is active-high, edge; overrides may say low (polarity 3) or level (trigger 3). */
	uint32_t lo = vector;
	if ((flags & 3) == 3)
		lo |= 1u << 13;
	if (((flags >> 2) & 3) == 3)
		lo |= 1u << 15;
	if (masked)
		lo |= 1u << 16;
	for (uint32_t i = 0; i < nioapics; i++) {
		struct ioapic *io = &ioapics[i];
		if (gsi >= io->gsi_base && gsi < io->gsi_base + io->pins) {
			uint32_t pin = gsi - io->gsi_base;
			uint64_t f = spin_lock_irqsave(&lock);
			wr(io, 0x11 + 2 * pin, apic_id << 24);
			set_lo(io, pin, lo);
			spin_unlock_irqrestore(&lock, f);
			return (int)gsi;
		}
	}
	return -1;
}
