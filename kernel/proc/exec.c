/* Loading static ELF images and building the initial user stack (exec.h). */
#include "proc/exec.h"
#include "proc/memobj.h"
#include "arch/x86.h"
#include "mm/heap.h"
#include "mm/vmm.h"
#include "lib/string.h"

/* Copies n bytes at offset off of an object (page by page through the direct map). */
static void mo_copy(struct memobj *mo, uint64_t off, void *buf, uint64_t n, bool to_mo)
{
	uint8_t *b = buf;
	while (n) {
		uint64_t pg = off / PAGE_SIZE, in = off % PAGE_SIZE, k = MIN(n, PAGE_SIZE - in);
		if (!mo->frames[pg] && (!to_mo || memobj_fill(mo, pg, 1))) {
			if (!to_mo)
				memset(b, 0, k); /* a lazy object's page not made yet reads as zeros */
			b += k, off += k, n -= k; /* (no frame left to write to: lost) */
			continue;
		}
		uint8_t *page = (uint8_t *)phys_to_virt(mo->frames[pg]) + in;
		if (to_mo)
			memcpy(page, b, k);
		else
			memcpy(b, page, k);
		b += k, off += k, n -= k;
	}
}

static void src_read(const struct img_src *s, uint64_t off, void *dst, uint64_t n)
{
	if (s->flat)
		memcpy(dst, s->flat + off, n);
	else
		mo_copy(s->mo, off, dst, n, false);
}

int image_parse(const struct img_src *src, struct elf_info *ei)
{
	if (src->flat)
		return elf_parse(src->flat, src->len, USER_STACK_TOP - USER_STACK_PAGES * PAGE_SIZE, DYN_BASE, ei);
	/* From an object: the headers must lie in the first page (they always do in practice:
	 * right after the 64-byte ELF header). */
	uint8_t *hdr = kmalloc(PAGE_SIZE);
	if (!hdr)
		return -KE_NOMEM;
	uint64_t n = MIN(src->len, PAGE_SIZE);
	memset(hdr, 0, PAGE_SIZE);
	src_read(src, 0, hdr, n);
	int r = -KE_INVAL;
	uint64_t phoff;
	uint16_t phnum;
	memcpy(&phoff, hdr + 32, 8);
	memcpy(&phnum, hdr + 56, 2);
	if (n >= 64 && phoff <= PAGE_SIZE && (uint64_t)phnum * 56 <= PAGE_SIZE - phoff)
		r = elf_parse(hdr, src->len, USER_STACK_TOP - USER_STACK_PAGES * PAGE_SIZE, DYN_BASE, ei);
	kfree(hdr);
	return r;
}

/* One run (elf_runs): one object; each page gets the union of its segments' rights, runs of
 * equal rights are one mapping each. */
static int load_run(struct proc *p, const struct img_src *src, const struct elf_info *ei, const uint32_t *order,
		    const struct elf_run *run)
{
	uint64_t lo = run->lo, npages = (run->hi - lo) / PAGE_SIZE;
	struct memobj *img = memobj_create(npages, 0);
	uint32_t *prot = kzalloc(npages * sizeof(uint32_t));
	int r = -KE_NOMEM;
	if (!img || !prot)
		goto out;
	for (uint32_t k = run->from; k < run->to; k++) {
		const struct elf_seg *sg = &ei->segs[order[k]];
		for (uint64_t b = 0; b < sg->filesz;) {
			uint64_t va = sg->vaddr + b, pg = (va - lo) / PAGE_SIZE, off = va & (PAGE_SIZE - 1);
			uint64_t n = MIN(PAGE_SIZE - off, sg->filesz - b);
			src_read(src, sg->offset + b, (uint8_t *)phys_to_virt(img->frames[pg]) + off, n);
			b += n;
		}
		uint32_t pr = (sg->flags & 4 ? PROT_R : 0) | (sg->flags & 2 ? PROT_W : 0) |
			      (sg->flags & 1 ? PROT_X : 0);
		for (uint64_t va = sg->vaddr & ~(PAGE_SIZE - 1); va < sg->vaddr + sg->memsz; va += PAGE_SIZE)
			prot[(va - lo) / PAGE_SIZE] |= pr;
	}
	r = 0;
	for (uint64_t i = 0; i < npages && !r; i++) {
		uint64_t j = i;
		while (j + 1 < npages && prot[j + 1] == prot[i])
			j++;
		if (prot[i])
			r = proc_map(p, lo + i * PAGE_SIZE, img, i, j - i + 1, prot[i], 0);
		i = j;
	}
out:
	kfree(prot);
	if (img)
		memobj_put(img); /* the mappings hold their own references */
	return r;
}

int image_load(struct proc *p, const struct img_src *src, const struct elf_info *ei)
{
	/* Segments whose pages touch share an object; one far from the others (a native
	 * program's kept section, lib/axrt/kept.ld, at 1 GiB) has its own (elf_runs). */
	uint32_t order[ELF_MAX_SEGS];
	struct elf_run runs[ELF_MAX_SEGS];
	uint32_t nruns = elf_runs(ei, order, runs);
	int r = 0;
	for (uint32_t i = 0; i < nruns && !r; i++)
		r = load_run(p, src, ei, order, &runs[i]);
	struct memobj *stack = r ? NULL : memobj_create(USER_STACK_PAGES, MO_LAZY); /* (demand.c) */
	if (!r && !stack)
		r = -KE_NOMEM;
	if (!r)
		r = proc_map(p, USER_STACK_TOP - USER_STACK_PAGES * PAGE_SIZE, stack, 0, USER_STACK_PAGES,
			     PROT_R | PROT_W, 0);
	if (stack)
		memobj_put(stack);
	return r;
}

struct memobj *stack_object(struct proc *p)
{
	for (uint32_t i = 0; i < p->nmaps; i++)
		if (p->maps[i].va == USER_STACK_TOP - USER_STACK_PAGES * PAGE_SIZE)
			return p->maps[i].mo;
	return NULL;
}

/* Auxiliary vector types (Linux). */
enum { AT_NULL = 0, AT_IGNORE = 1, AT_PHDR = 3, AT_PHENT = 4, AT_PHNUM = 5, AT_PAGESZ = 6, AT_BASE = 7,
       AT_FLAGS = 8, AT_ENTRY = 9, AT_UID = 11, AT_EUID = 12, AT_GID = 13, AT_EGID = 14,
       AT_PLATFORM = 15, AT_HWCAP = 16, AT_CLKTCK = 17, AT_SECURE = 23, AT_RANDOM = 25,
       AT_EXECFN = 31, AT_SYSINFO_EHDR = 33 };

uint64_t stack_build(struct proc *p, const struct strvec *sv, const char *execfn,
		     const struct elf_info *ei, uint64_t vdso)
{
	struct memobj *stack = stack_object(p);
	uint64_t base = USER_STACK_TOP - USER_STACK_PAGES * PAGE_SIZE;
	uint32_t nstr = sv->argc + sv->envc;
	size_t fnlen = strnlen(execfn, 255);
	/* Strings, 16 random bytes, the platform name, then the pointer words; a quarter of the
	 * stack at most, the rest is the program's. */
	uint64_t words = 1 + nstr + 2 + 2 * 20;
	uint64_t need = sv->len + fnlen + 1 + 16 + 8 + 16 + words * 8 + 16;
	if (!stack || need > USER_STACK_PAGES * PAGE_SIZE / 4)
		return 0;
	uint64_t *vec = kmalloc(words * 8);
	if (!vec)
		return 0;
	uint64_t off = USER_STACK_PAGES * PAGE_SIZE; /* offset in the object, moving down */
	off -= sv->len;
	mo_copy(stack, off, (void *)sv->buf, sv->len, true);
	uint64_t strings = base + off;
	off -= fnlen + 1;
	mo_copy(stack, off, (void *)execfn, fnlen, true);
	uint64_t execfn_va = base + off;
	off -= 8;
	mo_copy(stack, off, "x86_64", 7, true);
	uint64_t platform_va = base + off;
	off = (off - 16) & ~15ull; /* AT_RANDOM: the TSC stirred; the best there is this early */
	uint64_t rnd[2] = { rdtsc() * 0x9e3779b97f4a7c15ull, 0 };
	rnd[1] = rnd[0] * 6364136223846793005ull + 1442695040888963407ull;
	mo_copy(stack, off, rnd, 16, true);
	uint64_t random_va = base + off;

	uint64_t n = 0;
	vec[n++] = sv->argc;
	uint64_t at = strings, arg_end = strings;
	for (uint32_t i = 0; i < nstr; i++) {
		if (i == sv->argc)
			vec[n++] = 0; /* end of argv */
		vec[n++] = at;
		at += strnlen(sv->buf + (at - strings), sv->len - (at - strings)) + 1;
		if (i + 1 == sv->argc)
			arg_end = at;
	}
	p->arg_start = strings, p->arg_end = arg_end, p->env_end = at;
	if (sv->envc == 0)
		vec[n++] = 0; /* end of argv */
	vec[n++] = 0;     /* end of envp */
	/* The vDSO's entry comes first; without one, an AT_IGNORE a later KC_LX_PID may fill
	 * (stack_set_vdso). */
	const uint64_t aux[][2] = {
		{ vdso ? AT_SYSINFO_EHDR : AT_IGNORE, vdso }, { AT_PHDR, ei->phdr_vaddr }, { AT_PHENT, 56 }, { AT_PHNUM, ei->phnum },
		{ AT_PAGESZ, PAGE_SIZE }, { AT_BASE, 0 }, { AT_FLAGS, 0 }, { AT_ENTRY, ei->entry },
		{ AT_UID, 0 }, { AT_EUID, 0 }, { AT_GID, 0 }, { AT_EGID, 0 },
		{ AT_PLATFORM, platform_va }, { AT_HWCAP, 0 }, { AT_CLKTCK, 100 }, { AT_SECURE, 0 },
		{ AT_RANDOM, random_va }, { AT_EXECFN, execfn_va }, { AT_NULL, 0 },
	};
	memcpy(vec + n, aux, sizeof(aux));
	n += sizeof(aux) / 8;
	off = (off - n * 8) & ~15ull; /* rsp is 16-byte aligned at entry, pointing at argc */
	mo_copy(stack, off, vec, n * 8, true);
	kfree(vec);
	return base + off;
}

bool stack_set_vdso(struct proc *p, uint64_t rsp, uint64_t vdso)
{
	struct memobj *stack = stack_object(p);
	uint64_t base = USER_STACK_TOP - USER_STACK_PAGES * PAGE_SIZE, size = USER_STACK_PAGES * PAGE_SIZE;
	if (!stack || rsp < base || rsp >= USER_STACK_TOP || (rsp & 7))
		return false;
	/* argc, argv[argc] and NULL, envp up to its NULL, then the first auxv pair; every read
	 * stays inside the stack object. */
	uint64_t off = rsp - base, w;
	mo_copy(stack, off, &w, 8, false);
	if (w > size / 8 || off + (w + 2) * 8 > size)
		return false;
	off += (w + 2) * 8;
	do {
		if (off + 8 > size)
			return false;
		mo_copy(stack, off, &w, 8, false);
		off += 8;
	} while (w);
	uint64_t aux[2];
	if (off + sizeof(aux) > size)
		return false;
	mo_copy(stack, off, aux, sizeof(aux), false);
	if (aux[0] != AT_IGNORE)
		return false;
	aux[0] = AT_SYSINFO_EHDR, aux[1] = vdso;
	mo_copy(stack, off, aux, sizeof(aux), true);
	return true;
}
