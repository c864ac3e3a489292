/* Build-wide kernel settings. */
#pragma once
#include "lib/types.h"

#define AXOLOTL_VERSION "0.1.0"
#define KSTACK_PAGES 4
extern uint32_t kernel_hz; /* periodic tick rate, `hz=` on the command line (default 100) */
