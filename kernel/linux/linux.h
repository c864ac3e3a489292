/* Linux system calls: served here or forwarded to the process's POSIX server (linux.c). */
#pragma once
#include "proc/proc.h"

/* Called with the kernel lock held; returns the value for rax. */
int64_t linux_syscall(struct thread *me, uint64_t nr, const uint64_t a[6]);
/* KC_LINUX_ROUTE: a parent sends some of its child's Linux calls to another POSIX server. */
int64_t kc_linux_route(struct thread *me, endpoint_t child, uint64_t slot, uint64_t ubits);
