/* The vDSO and its vvar page in Linux processes (docs/kernel-api.md section 8c). */
#pragma once
#include "proc/proc.h"

/* Where they go unless something is there already: the vvar page, then the image, above
 * the stack (exec.h: USER_STACK_TOP), where neither ELF images (below the stack), nor the
 * stack, nor mappings without an address (proc.c: MAP_AREA_BASE..TOP) ever are. */
#define VDSO_VVAR_VA 0x00007fff80000000ull
#define VDSO_MAX_PAGES 4 /* the image's limit (kernel/vdso/check.sh) */

/* Maps the vvar page and the vDSO into p, read-only and shared with every other process
 * (mappings marked `sys`). Returns the vDSO's address (AT_SYSINFO_EHDR), or 0 if p gets
 * none (no vDSO, or no room). */
uint64_t vdso_map(struct proc *p);
/* A process spawned stopped has just become a Linux process (KC_LX_PID) and has never run:
 * maps the vDSO and fills the AT_SYSINFO_EHDR slot stack_build left in its auxv. */
void vdso_give_spawned(struct proc *p);
