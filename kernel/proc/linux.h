/* Linux system calls: served here or forwarded to the process's POSIX server (linux.c). */
#pragma once
#include "proc/proc.h"

/* Called with the kernel lock held; returns the value for rax. */
int64_t linux_syscall(struct thread *me, uint64_t nr, const uint64_t a[6]);
