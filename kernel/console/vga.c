/* EGA/VGA text-mode console (80x25 at 0xb8000 or wherever GRUB reports it). */
#include "console/vga.h"
#include "boot/bootinfo.h"
#include "mm/vmm.h"
#include "lib/string.h"

static volatile uint16_t *text;
static uint32_t cols, rows, cx, cy;
static const uint16_t attr = 0x0700; /* light grey on black */

void vga_init(const struct boot_info *bi)
{
	if (bi->fb.type != FB_TYPE_EGA_TEXT || !bi->fb.addr || !bi->fb.width || !bi->fb.height)
		return;
	text = phys_to_virt(bi->fb.addr);
	cols = bi->fb.width;
	rows = bi->fb.height;
	for (uint32_t i = 0; i < cols * rows; i++)
		text[i] = attr | ' ';
	cx = cy = 0;
}

static void scroll(void)
{
	for (uint32_t i = 0; i < cols * (rows - 1); i++)
		text[i] = text[i + cols];
	for (uint32_t i = cols * (rows - 1); i < cols * rows; i++)
		text[i] = attr | ' ';
	cy = rows - 1;
}

void vga_putc(char c)
{
	if (!text)
		return;
	if (c == '\n') {
		cx = 0;
		cy++;
	} else if (c == '\r') {
		cx = 0;
	} else if (c == '\b') {
		if (cx) /* the serial console's erase ("\b \b") */
			cx--;
	} else {
		text[cy * cols + cx] = attr | (uint8_t)c;
		if (++cx == cols) {
			cx = 0;
			cy++;
		}
	}
	if (cy >= rows)
		scroll();
}
