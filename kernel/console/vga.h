#pragma once
#include "lib/types.h"
struct boot_info;
/* Text console on an EGA text framebuffer (BIOS boot). Does nothing if there is none. */
void vga_init(const struct boot_info *bi);
void vga_putc(char c);
