/* pm: the POSIX personality's process manager (README.md). Shared between its files. */
#pragma once
#include "axrt.h"

/* Linux errno values pm answers with (the kernel's KE_* share Linux numbering). */
#define LX_EPERM 1
#define LX_EBADF 9
#define LX_EFAULT 14
#define LX_EINVAL 22
#define LX_ENOTTY 25
#define LX_ENOSYS 38

struct lxproc {
	endpoint_t ep;  /* its (first) thread */
	int32_t pid;
	char name[32];
	bool used;
};

struct lxproc *lx_find(endpoint_t ep);

/* Serves one forwarded Linux system call; returns the result for the caller's rax. */
int64_t lx_serve(struct lxproc *p, uint32_t nr, const uint64_t a[6]);
/* The Linux name of a system call number, or NULL. */
const char *lx_name(uint32_t nr);
