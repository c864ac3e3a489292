/* Port I/O for drivers holding the ports (KPRIV_IOPORT); a port not held faults with #GP. */
#pragma once
#include <stdint.h>

static inline void ax_outb(uint16_t port, uint8_t v) { __asm__ volatile("outb %0, %1" ::"a"(v), "Nd"(port)); }
static inline uint8_t ax_inb(uint16_t port)
{
	uint8_t v;
	__asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}
