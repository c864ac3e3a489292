/* pm: the POSIX personality's process manager (README.md). Shared between its files. */
#pragma once
#include "axrt.h"

/* Linux errno values pm answers with (the kernel's KE_* share Linux numbering). */
#define LX_EPERM 1
#define LX_EFAULT 14
#define LX_EINVAL 22
#define LX_ENOSYS 38

#define LX_NLIMITS 16 /* RLIMIT_* */

struct lxproc {
	endpoint_t ep;  /* its (first) thread */
	int32_t pid;
	char name[32];
	bool used;
	uint64_t limits[LX_NLIMITS][2]; /* soft, hard (prlimit64) */
	uint32_t umask;
};

struct lxproc *lx_find(endpoint_t ep);

/* Serves one forwarded Linux system call; returns the result for the caller's rax. */
int64_t lx_serve(struct lxproc *p, uint32_t nr, const uint64_t a[6]);
/* The Linux name of a system call number, or NULL. */
const char *lx_name(uint32_t nr);

/* sysinfo.c */
int64_t lx_uname(struct lxproc *p, uint64_t buf);
int64_t lx_sysinfo(struct lxproc *p, uint64_t buf);
int64_t lx_getrandom(struct lxproc *p, uint64_t buf, uint64_t len);
void lx_limits_init(struct lxproc *p);
int64_t lx_prlimit(struct lxproc *p, uint64_t pid, uint64_t res, uint64_t newp, uint64_t oldp);
int64_t lx_sched_getaffinity(struct lxproc *p, uint64_t pid, uint64_t len, uint64_t mask);
/* pm.c */
int lx_nprocs(void);
extern uint64_t lx_total_frames;
