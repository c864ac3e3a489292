#pragma once
#include "lib/types.h"
void serial_init(void);
void serial_putc(char c);
bool serial_present(void);
