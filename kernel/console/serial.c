/* 16550 UART on COM1, polled output at 115200 8N1. */
#include "console/serial.h"
#include "arch/x86.h"

#define COM1 0x3f8
static bool present;

void serial_init(void)
{
	outb(COM1 + 1, 0x00); /* no interrupts */
	outb(COM1 + 3, 0x80); /* DLAB */
	outb(COM1 + 0, 0x01); /* divisor 1: 115200 baud */
	outb(COM1 + 1, 0x00);
	outb(COM1 + 3, 0x03); /* 8N1 */
	outb(COM1 + 2, 0xc7); /* FIFO on, cleared, 14-byte threshold */
	outb(COM1 + 4, 0x0b); /* DTR, RTS, OUT2 */
	/* A port that reads back 0xff has no UART behind it (common on new boards). */
	present = inb(COM1 + 5) != 0xff;
}

bool serial_present(void) { return present; }

void serial_putc(char c)
{
	if (!present)
		return;
	if (c == '\n')
		serial_putc('\r');
	for (int spins = 0; spins < 100000 && !(inb(COM1 + 5) & 0x20); spins++)
		cpu_relax();
	outb(COM1, (uint8_t)c);
}
