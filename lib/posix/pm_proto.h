/* What pm offers the other POSIX servers (servers/pm/README.md). */
#pragma once
#include <stdint.h>

/* vfs/console -> pm (KC_SENDNB or call): send signal w[1] to w[0] (> 0: a process id,
 * < 0: every process of process group -w[0]), as the terminal does for ^C. Accepted from
 * vfs and console only; a call is answered with w[0] = 0 or -errno. */
#define PM_SIGNAL 0x7701
