/* The vDSO in Linux processes (docs/kernel-api.md section 8c, decisions.md).
 *
 * Two memory objects made once at boot and never freed (the kernel keeps a reference): the
 * vvar page (axolotl/vvar.h: the clock's numbers, written here once, before any process runs,
 * and never again) and the vDSO image (kernel/vdso/vdso.c, embedded by kernel/vdso/image.S).
 * Every Linux process maps both, read-only (the image read+execute), as mappings marked
 * `sys`: fork shares them instead of copying, mprotect refuses to make them writable, madvise
 * leaves them alone, and munmap or MAP_FIXED drop only the caller's mapping. A process can
 * therefore lose its own vDSO but never change what another one reads.
 *
 * Who gets it: a process execve'd by KC_LX_EXEC (mapped with its new image), and a boot module
 * pm spawns stopped and then makes a Linux process with KC_LX_PID before it ever runs (its
 * stack was built at spawn with an AT_IGNORE slot, which becomes AT_SYSINFO_EHDR here).
 * Native processes get neither the mappings nor the auxv entry. */
#include "linux/vdso.h"
#include "proc/exec.h"
#include "arch/rtc.h"
#include "arch/time.h"
#include "console/log.h"
#include "core/config.h"
#include "mm/vmm.h"
#include "smp/percpu.h"
#include "lib/string.h"
#include <axolotl/vvar.h>

extern const uint8_t vdso_image_start[], vdso_image_end[];

static struct memobj *vvar_mo, *image_mo;

void vdso_thread_died(void)
{
	if (!vvar_mo)
		return;
	struct vvar *v = phys_to_virt(vvar_mo->frames[0]);
	/* (under the kernel lock: one writer; readers load the word alone) */
	__atomic_store_n(&v->thread_deaths, v->thread_deaths + 1, __ATOMIC_RELEASE);
}

void vdso_init(void)
{
	uint64_t len = (uint64_t)(vdso_image_end - vdso_image_start);
	uint64_t npages = (len + PAGE_SIZE - 1) / PAGE_SIZE;
	if (!len || npages > VDSO_MAX_PAGES) {
		pr_warn("vdso: image of %llu bytes refused; Linux processes trap for the time", (unsigned long long)len);
		return;
	}
	struct memobj *vv = memobj_create(1, 0), *img = memobj_create(npages, 0);
	if (!vv || !img) {
		if (vv)
			memobj_put(vv);
		if (img)
			memobj_put(img);
		pr_warn("vdso: no memory; Linux processes trap for the time");
		return;
	}
	for (uint64_t i = 0; i < npages; i++)
		memcpy(phys_to_virt(img->frames[i]), vdso_image_start + i * PAGE_SIZE, MIN(PAGE_SIZE, len - i * PAGE_SIZE));
	struct vvar *v = phys_to_virt(vv->frames[0]);
	time_clock_params(&v->tsc_boot, &v->mult, &v->shift);
	v->epoch_ns = rtc_epoch_ns_at_boot();
	v->res_ns = VCLOCK_RES_NS;
	v->coarse_res_ns = VNS_PER_S / kernel_hz;
	/* The clock is the TSC whether or not it is invariant: the kernel's own clock reads it on
	 * whichever CPU it runs on, so user space doing the same arithmetic gives the same
	 * values (and the same errors, were the TSC to drift). */
	uint32_t flags = tsc_hz ? VVAR_CLOCK_TSC : 0;
	bool rdtscp = true;
	for (uint32_t i = 0; i < ncpus; i++)
		if (cpus[i] && cpus[i]->online && !cpus[i]->feat.rdtscp)
			rdtscp = false;
	if (rdtscp)
		flags |= VVAR_GETCPU_RDTSCP;
	v->flags = flags;
	vvar_mo = vv;
	image_mo = img;
	pr_info("vdso: %llu-byte image, clocks %s, getcpu %s", (unsigned long long)len,
		flags & VVAR_CLOCK_TSC ? "from the TSC" : "by system call",
		flags & VVAR_GETCPU_RDTSCP ? "by RDTSCP" : "by system call");
}

/* Maps obj at va read-only for everyone: shared at fork, never writable (lxmem.c). */
static int map_sys(struct proc *p, uint64_t va, struct memobj *mo, uint32_t prot)
{
	int r = proc_map(p, va, mo, 0, mo->npages, prot, 0);
	if (!r) {
		p->maps[p->nmaps - 1].shared = true;
		p->maps[p->nmaps - 1].sys = true;
	}
	return r;
}

uint64_t vdso_map(struct proc *p)
{
	if (!vvar_mo)
		return 0;
	uint64_t n = 1 + image_mo->npages, va = VDSO_VVAR_VA;
	for (uint32_t i = 0; i < p->nmaps; i++) {
		const struct mapping *m = &p->maps[i];
		if (m->va < va + n * PAGE_SIZE && va < m->va + m->npages * PAGE_SIZE) {
			va = proc_find_va(p, n); /* a program's own mapping is there: go elsewhere */
			break;
		}
	}
	if (!va || map_sys(p, va, vvar_mo, PROT_R))
		return 0;
	if (map_sys(p, va + PAGE_SIZE, image_mo, PROT_R | PROT_X)) {
		proc_unmap_index(p, p->nmaps - 1);
		return 0;
	}
	return va + PAGE_SIZE;
}

uint64_t vdso_map_vvar(struct proc *p)
{
	if (!vvar_mo)
		return 0;
	for (uint32_t i = 0; i < p->nmaps; i++)
		if (p->maps[i].mo == vvar_mo)
			return p->maps[i].va;
	uint64_t va = proc_find_va(p, 1);
	return va && !map_sys(p, va, vvar_mo, PROT_R) ? va : 0;
}

void vdso_give_spawned(struct proc *p)
{
	if (!p->main || !p->main->uframe)
		return;
	uint64_t va = vdso_map(p);
	if (va && !stack_set_vdso(p, p->main->uframe->rsp, va)) {
		/* No slot for it (not a stack_build stack): the program would not find it anyway. */
		for (uint32_t i = p->nmaps; i-- > 0;)
			if (p->maps[i].sys)
				proc_unmap_index(p, i);
	}
}
