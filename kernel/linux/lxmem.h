/* Linux anonymous memory served by the kernel (lxmem.c). Results are Linux values. */
#pragma once
#include "proc/proc.h"

int64_t lx_mmap(struct thread *me, uint64_t addr, uint64_t len, uint64_t prot, uint64_t flags);
/* The same placement, with the pages copied from src starting at page first (a private
 * file mapping, KC_LX_MMAP); src NULL: zeros. */
struct memobj;
/* flags may carry LXM_SHARE: src itself is mapped (shared), not a copy. */
int64_t lx_mmap_copy(struct proc *p, uint64_t addr, uint64_t len, uint64_t prot, uint64_t flags,
		     const struct memobj *src, uint64_t first);
int64_t lx_munmap(struct thread *me, uint64_t addr, uint64_t len);
int64_t lx_msync(struct thread *me, uint64_t addr, uint64_t len, uint64_t flags);
int64_t lx_mprotect(struct thread *me, uint64_t addr, uint64_t len, uint64_t prot);
int64_t lx_madvise(struct thread *me, uint64_t va, uint64_t len, uint64_t advice);
