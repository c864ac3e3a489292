/* Services named by PCI id (`pci=8086:100e` in system.conf): rs, which holds every
 * privilege, finds the function through lib/pci, gives the driver that function, its memory
 * BARs as MMIO ranges, its I/O BARs as ports and its interrupt line, and tells it which
 * function is its own with a `pci=BB:DD.F` argument. The policy lives here, not in the
 * kernel; the driver only ever sees its own device. */
#include "rs.h"
#include "pci_axolotl.h"

static int64_t resolve_one(struct svc *s, int i)
{
	struct pci_func f;
	unsigned ven = s->c.pci_ids[i].vendor, dev = s->c.pci_ids[i].device, idx = s->c.pci_ids[i].index;
	if (pci_find(&pci_kcall, (uint16_t)ven, (uint16_t)dev, idx, &f) < 0) {
		const char *opt = s->c.optional ? " (optional: absent)" : "";
		if (idx)
			rs_log("%s: no PCI device %04x:%04x#%u%s", s->c.name, ven, dev, idx, opt);
		else
			rs_log("%s: no PCI device %04x:%04x%s", s->c.name, ven, dev, opt);
		return -KE_SRCH;
	}
	struct svc_pci *p = &s->pci_found[i];
	*p = (struct svc_pci){ .bdf = f.bdf };
	/* 0 and 0xff mean "not connected"; 2 is the cascade, never routed to a driver. */
	if (f.int_pin && f.int_line >= 1 && f.int_line <= 15)
		p->irq = f.int_line;
	for (int b = 0; b < PCI_MAX_BARS; b++) {
		const struct pci_bar *bar = &f.bar[b];
		if (bar->kind == PCI_BAR_MEM && bar->base) {
			uint64_t pa = bar->base & ~0xfffull;
			p->mmio[p->nmmio].pa = pa;
			p->mmio[p->nmmio++].pages = (bar->base + bar->size - pa + 4095) / 4096;
		} else if (bar->kind == PCI_BAR_IO && bar->base) {
			p->io[p->nio].port = (uint16_t)bar->base;
			p->io[p->nio++].count = (uint16_t)bar->size;
		}
	}
	rs_log("%s: PCI %04x:%04x is %02x:%02x.%x, %u memory BARs, %u I/O BARs, IRQ %u", s->c.name, ven, dev,
	       PCI_BUS(f.bdf), PCI_DEV(f.bdf), PCI_FN(f.bdf), p->nmmio, p->nio, p->irq);
	return 0;
}

int64_t rspci_resolve(struct svc *s)
{
	if (s->pci_resolved || !s->c.npci_ids)
		return 0;
	for (int i = 0; i < s->c.npci_ids; i++) {
		int64_t r = resolve_one(s, i);
		if (r < 0)
			return r;
	}
	s->pci_resolved = true;
	return 0;
}

int64_t rspci_give(const struct svc *s, endpoint_t ep)
{
	int64_t r = 0;
	for (int i = 0; i < s->c.npci_ids && s->pci_resolved && !r; i++) {
		const struct svc_pci *p = &s->pci_found[i];
		r = kcall6(KC_PRIV, ep, KPRIV_PCI, p->bdf, 0, 0, 0);
		for (int m = 0; m < p->nmmio && !r; m++)
			r = kcall6(KC_PRIV, ep, KPRIV_MMIO, p->mmio[m].pa, p->mmio[m].pages, 0, 0);
		for (int m = 0; m < p->nio && !r; m++)
			r = kcall6(KC_PRIV, ep, KPRIV_IOPORT, p->io[m].port, p->io[m].count, 0, 0);
		if (p->irq && !r)
			r = kcall6(KC_PRIV, ep, KPRIV_IRQ, p->irq, 0, 0, 0);
	}
	return r;
}

int rspci_args(const struct svc *s, char *buf, size_t cap, int n)
{
	uint16_t bdfs[SVC_MAX_PCI + SVC_MAX_PCI_IDS];
	int nb = 0;
	for (int i = 0; i < s->c.npci_ids && s->pci_resolved; i++)
		bdfs[nb++] = s->pci_found[i].bdf;
	for (int i = 0; i < s->c.npci; i++)
		bdfs[nb++] = (uint16_t)s->c.pci[i];
	for (int i = 0; i < nb && (size_t)n < cap; i++)
		n += ksnprintf(buf + n, cap - (size_t)n, "%spci=%02x:%02x.%x", n ? " " : "", PCI_BUS(bdfs[i]),
			       PCI_DEV(bdfs[i]), PCI_FN(bdfs[i]));
	return (size_t)n < cap ? n : (int)cap - 1;
}
