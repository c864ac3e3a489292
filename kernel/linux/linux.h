/* Linux system calls: served here or forwarded to the process's POSIX server (linux.c). */
#pragma once
#include "proc/proc.h"

