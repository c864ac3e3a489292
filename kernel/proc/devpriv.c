/* Device privileges: KC_PRIV, I/O ports (TSS permission bitmap), MMIO, PCI configuration
 * space. IRQ lines are in proc/devirq.c. Everything runs under the kernel lock. */
#include "proc/devpriv.h"
#include "proc/proc.h"
#include "arch/desc.h"
#include "arch/pci.h"
#include "arch/x86.h"
#include "boot/bootinfo.h"
#include "mm/heap.h"
#include "mm/vmm.h"
#include "lib/string.h"
#include "smp/percpu.h"

#define NPORTS 65536u
#define IOMAP_BYTES (NPORTS / 8)
#define IO_KEY_ALL 1 /* cache key of the all-ports (all zero) bitmap; serials start above */
#define MMIO_MAX_PAGES (1ull << 18) /* 1 GiB in one grant or mapping */

static uint64_t io_serial_next = IO_KEY_ALL + 1;

/* ---- I/O ports ---- */

static bool port_held(const struct devpriv *d, uint32_t port)
{
	return d->all || (d->io_allowed && (d->io_allowed[port / 8] >> (port % 8) & 1));
}

static int add_ports(struct devpriv *d, uint32_t first, uint32_t count)
{
	if (!d->io_allowed && !(d->io_allowed = kzalloc(IOMAP_BYTES)))
		return -KE_NOMEM;
	for (uint32_t p = first; p < first + count; p++)
		d->io_allowed[p / 8] |= (uint8_t)(1u << (p % 8));
	d->io_serial = io_serial_next++; /* every CPU reloads it at the next switch */
	return 0;
}

void devpriv_switch(struct proc *next)
{
	struct cpu *c = this_cpu();
	const struct devpriv *d = next ? &next->dev : NULL;
	if (!d || (!d->all && !d->io_allowed)) {
		/* No ports: the bitmap stays loaded for whoever comes next, but is out of reach. */
		c->tss.iomap_base = TSS_IOMAP_OFF;
		return;
	}
	uint64_t key = d->all ? IO_KEY_ALL : d->io_serial;
	if (c->io_loaded != key) {
		uint64_t *dst = (uint64_t *)c->tss.iomap;
		if (d->all) {
			memset(c->tss.iomap, 0, sizeof(c->tss.iomap));
		} else {
			const uint64_t *src = (const uint64_t *)d->io_allowed;
			for (uint32_t i = 0; i < IOMAP_BYTES / 8; i++)
				dst[i] = ~src[i]; /* TSS: a set bit denies the port */
		}
		c->io_loaded = key;
	}
	c->tss.iomap_base = TSS_IOMAP_ON;
}

/* ---- MMIO ---- */

static uint64_t phys_limit(void)
{
	static uint64_t limit;
	if (!limit) {
		uint32_t a, b, cx, dx, bits = 36;
		cpuid(0x80000000u, 0, &a, &b, &cx, &dx);
		if (a >= 0x80000008u) {
			cpuid(0x80000008u, 0, &a, &b, &cx, &dx);
			bits = a & 0xff;
		}
		if (bits < 32 || bits > 52)
			bits = 36;
		limit = 1ull << bits;
	}
	return limit;
}

/* A page-aligned, non-empty range below the physical address limit. */
static bool mmio_range_ok(uint64_t pa, uint64_t npages)
{
	return !(pa & (PAGE_SIZE - 1)) && npages && npages <= MMIO_MAX_PAGES && pa < phys_limit() &&
	       npages <= (phys_limit() - pa) / PAGE_SIZE;
}

/* Does [pa, pa + npages pages) touch RAM (usable, ACPI or NVS memory of the memory map)? */
static bool overlaps_ram(uint64_t pa, uint64_t npages)
{
	uint64_t end = pa + npages * PAGE_SIZE;
	for (uint32_t i = 0; i < boot_info.nmem; i++) {
		const struct mem_region *r = &boot_info.mem[i];
		if (r->type != MEM_USABLE && r->type != MEM_ACPI && r->type != MEM_NVS)
			continue;
		uint64_t rend = r->base + r->len < r->base ? UINT64_MAX : r->base + r->len;
		if (pa < rend && r->base < end)
			return true;
	}
	return false;
}

static bool mmio_held(const struct devpriv *d, uint64_t pa, uint64_t npages)
{
	if (d->all)
		return true;
	for (uint32_t i = 0; i < d->nmmio; i++)
		if (pa >= d->mmio[i].pa && npages <= d->mmio[i].npages &&
		    pa - d->mmio[i].pa <= (d->mmio[i].npages - npages) * PAGE_SIZE)
			return true;
	return false;
}

static int add_mmio(struct devpriv *d, uint64_t pa, uint64_t npages)
{
	if (mmio_held(d, pa, npages))
		return 0;
	if (d->nmmio == DEV_MAX_MMIO)
		return -KE_NOMEM;
	d->mmio[d->nmmio].pa = pa;
	d->mmio[d->nmmio].npages = npages;
	d->nmmio++;
	return 0;
}

static int64_t mmio_map(struct proc *p, uint64_t pa, uint64_t npages, uint64_t va)
{
	if (!mmio_range_ok(pa, npages))
		return -KE_INVAL;
	if (overlaps_ram(pa, npages) || !mmio_held(&p->dev, pa, npages))
		return -KE_PERM;
	if (!va && !(va = proc_find_va(p, npages)))
		return -KE_NOMEM;
	int r = proc_map_phys(p, va, pa, npages, PROT_R | PROT_W, PTE_PCD | PTE_PWT);
	return r ? r : (int64_t)va;
}

/* ---- PCI ---- */

static bool pci_held(const struct devpriv *d, uint32_t bdf)
{
	if (d->all)
		return true;
	for (uint32_t i = 0; i < d->npci; i++)
		if (d->pci[i] == KPCI_ALL || d->pci[i] == bdf)
			return true;
	return false;
}

bool devpriv_pci_held(const struct proc *p, uint32_t bdf) { return pci_held(&p->dev, bdf); }

static int add_pci(struct devpriv *d, uint32_t bdf)
{
	if (pci_held(d, bdf))
		return 0;
	if (d->npci == DEV_MAX_PCI)
		return -KE_NOMEM;
	d->pci[d->npci++] = bdf;
	return 0;
}

static int64_t pci_cfg(struct proc *p, uint64_t bdf, uint64_t off, uint64_t wflags, uint64_t value)
{
	uint64_t width = wflags & ~(uint64_t)KPCI_WRITE;
	if (bdf > 0xffff || off >= 256 || (width != 1 && width != 2 && width != 4) || (off & (width - 1)))
		return -KE_INVAL;
	if (!pci_held(&p->dev, (uint32_t)bdf))
		return -KE_PERM;
	if (wflags & KPCI_WRITE) {
		if (width < 4 && value >> (8 * width))
			return -KE_INVAL;
		if (value > 0xffffffffull)
			return -KE_INVAL;
		pci_cfg_write((uint16_t)bdf, (uint8_t)off, (uint32_t)width, (uint32_t)value);
		return 0;
	}
	return pci_cfg_read((uint16_t)bdf, (uint8_t)off, (uint32_t)width);
}

/* ---- KC_PRIV ---- */

/* Everything `from` holds goes to `to` as well. */
static int give_all(struct devpriv *to, const struct devpriv *from)
{
	to->all |= from->all;
	to->dma |= from->dma;
	to->irqs |= from->irqs;
	int r = 0;
	if (from->io_allowed && !to->all) {
		if (!to->io_allowed && !(to->io_allowed = kzalloc(IOMAP_BYTES)))
			return -KE_NOMEM;
		for (uint32_t i = 0; i < IOMAP_BYTES; i++)
			to->io_allowed[i] |= from->io_allowed[i];
		to->io_serial = io_serial_next++;
	}
	for (uint32_t i = 0; i < from->nmmio && !r; i++)
		r = add_mmio(to, from->mmio[i].pa, from->mmio[i].npages);
	for (uint32_t i = 0; i < from->npci && !r; i++)
		r = add_pci(to, from->pci[i]);
	return r;
}

/* KC_PRIV: the parent gives its child a privilege it holds itself. */
static int64_t priv_give(struct thread *me, endpoint_t ep, uint64_t kind, uint64_t a, uint64_t b)
{
	struct thread *t = ep_lookup(ep);
	if (!t)
		return -KE_DEADSRCDST;
	struct proc *p = t->proc, *mine = me->proc;
	if (p->parent != thread_ep(me) || p == mine || p->exiting)
		return -KE_PERM;
	struct devpriv *d = &p->dev;
	const struct devpriv *md = &mine->dev;
	switch (kind) {
	case KPRIV_IOPORT:
		if (!b || a >= NPORTS || b > NPORTS - a)
			return -KE_INVAL;
		for (uint32_t port = (uint32_t)a; port < a + b; port++)
			if (!port_held(md, port))
				return -KE_PERM;
		return d->all ? 0 : add_ports(d, (uint32_t)a, (uint32_t)b);
	case KPRIV_IRQ:
		if (a >= 16)
			return -KE_INVAL;
		if (!md->all && !(md->irqs & (1u << a)))
			return -KE_PERM;
		d->irqs |= (uint16_t)(1u << a);
		return 0;
	case KPRIV_MMIO:
		if (!mmio_range_ok(a, b))
			return -KE_INVAL;
		if (overlaps_ram(a, b) || !mmio_held(md, a, b))
			return -KE_PERM;
		return add_mmio(d, a, b);
	case KPRIV_PCI:
		if (a > 0xffff && a != KPCI_ALL)
			return -KE_INVAL;
		if (!pci_held(md, (uint32_t)a))
			return -KE_PERM;
		return add_pci(d, (uint32_t)a);
	case KPRIV_DMA:
		if (!md->dma)
			return -KE_PERM;
		d->dma = true;
		return 0;
	case KPRIV_KCALLS:
		p->kcalls_allowed |= a & mine->kcalls_allowed;
		return 0;
	case KPRIV_LINUX:
		if (a > 0xffffffffull || (a && !ep_lookup((endpoint_t)a)) || b >= LINUX_SERVERS)
			return -KE_INVAL;
		p->linux_servers[b] = a ? (endpoint_t)a : thread_ep(me);
		return 0;
	case KPRIV_ALL:
		p->kcalls_allowed |= mine->kcalls_allowed;
		return give_all(d, md);
	default:
		return -KE_INVAL;
	}
}

int64_t devpriv_call(struct thread *me, uint32_t n, const uint64_t a[6])
{
	switch (n) {
	case KC_PRIV:
		return priv_give(me, (endpoint_t)a[0], a[1], a[2], a[3]);
	case KC_IRQ_BIND:
		return devirq_bind(me, a[0], a[1], a[2]);
	case KC_IRQ_UNMASK:
		return devirq_unmask(me, a[0]);
	case KC_MMIO_MAP:
		return mmio_map(me->proc, a[0], a[1], a[2]);
	case KC_PCI_CFG:
		return pci_cfg(me->proc, a[0], a[1], a[2], a[3]);
	case KC_MSI_BIND:
		return msi_bind(me, a[0], a[1], a[2], a[3]);
	default:
		return -KE_NOSYS;
	}
}

void devpriv_grant_all(struct proc *p) { p->dev.all = true, p->dev.dma = true; }

void devpriv_release(struct proc *p)
{
	devirq_release(p);
	msi_release(p);
	/* The serial dies with the bitmap: no CPU's cached key can name a later process. */
	kfree(p->dev.io_allowed);
	p->dev.io_allowed = NULL;
}
