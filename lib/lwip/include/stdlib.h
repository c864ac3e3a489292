/* <stdlib.h> for lwIP's freestanding build: netif.c's atoi (netif_find), from lib/lwip/port.c.
 * No malloc: lwIP allocates from its own heap (MEM_LIBC_MALLOC=0, lib/lwip/README.md). */
#pragma once
#include <stddef.h>
int atoi(const char *s);
