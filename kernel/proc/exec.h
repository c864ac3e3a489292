/* Loading a static ELF image into a process and building its initial stack, shared by
 * boot-module spawns (proc.c) and Linux execve (lxproc.c). */
#pragma once
#include "proc/proc.h"
#include "proc/elf.h"

#define USER_STACK_TOP 0x00007fff00000000ull
#define USER_STACK_PAGES 2048 /* 8 MiB, Linux's RLIMIT_STACK: made page by page as touched (MO_LAZY) */
#define DYN_BASE 0x400000ull

/* Where an image's bytes are: flat kernel memory (a boot module) or a memory object. */
struct img_src {
	const uint8_t *flat;
	struct memobj *mo;
	uint64_t len;
};

/* Reads the ELF headers of src and describes the image (0 or a negative KE_* error). */
int image_parse(const struct img_src *src, struct elf_info *ei);
/* Maps the image's segments and a fresh stack into p (which has no mappings there).
 * Returns 0 or a negative error; on error the caller unmaps what was mapped. */
int image_load(struct proc *p, const struct img_src *src, const struct elf_info *ei);

/* argc strings then envc strings, each NUL-terminated, back to back in buf. */
struct strvec {
	const char *buf;
	uint32_t argc, envc;
	uint64_t len;
};
/* Writes argv, envp and the auxiliary vector at the top of p's stack (the Linux x86-64
 * process entry layout); execfn names the program (AT_EXECFN), vdso is the vDSO's address
 * (AT_SYSINFO_EHDR) or 0 for none. Returns the user rsp, or 0 if it all does not fit. */
uint64_t stack_build(struct proc *p, const struct strvec *sv, const char *execfn,
		     const struct elf_info *ei, uint64_t vdso);
/* Puts AT_SYSINFO_EHDR = vdso in the auxv of a stack stack_build made with vdso 0, whose
 * rsp is rsp and which nothing has run on yet. False if the layout is not found there. */
bool stack_set_vdso(struct proc *p, uint64_t rsp, uint64_t vdso);
/* The stack object image_load mapped into p, or NULL. */
struct memobj *stack_object(struct proc *p);
