/* Services named by PCI id (`pci=8086:100e` in system.conf, or a list of ids, any of which
 * the driver drives: `pci=8086:10c9,8086:10fb`): rs, which holds every privilege, finds the
 * function (the first id of the list that is present) through lib/pci, gives the driver
 * that function, its memory BARs as MMIO ranges, its I/O BARs as ports and its interrupt
 * line, and tells it which function is its own with a `pci=BB:DD.F` argument. The policy
 * lives here, not in the kernel; the driver only ever sees its own device. */
#include "rs.h"
#include "pci_axolotl.h"

/* "8086:10c9,8086:10fb#1": the service's id list, for the log. */
static void ids_text(const struct svc *s, char *buf, size_t cap)
{
	int n = 0;
	for (int i = 0; i < s->c.npci_ids && (size_t)n < cap; i++) {
		unsigned ven = s->c.pci_ids[i].vendor, dev = s->c.pci_ids[i].device, idx = s->c.pci_ids[i].index;
		n += ksnprintf(buf + n, cap - (size_t)n, idx ? "%s%04x:%04x#%u" : "%s%04x:%04x", i ? "," : "", ven, dev, idx);
	}
}

/* The function found for id i: its BARs and line kept in s->pci_found, and logged. */
static void take(struct svc *s, int i, const struct pci_func *f)
{
	unsigned ven = s->c.pci_ids[i].vendor, dev = s->c.pci_ids[i].device;
	struct svc_pci *p = &s->pci_found;
	*p = (struct svc_pci){ .bdf = f->bdf };
	/* 0 and 0xff mean "not connected"; 2 is the cascade, never routed to a driver. */
	if (f->int_pin && f->int_line >= 1 && f->int_line <= 15)
		p->irq = f->int_line;
	for (int b = 0; b < PCI_MAX_BARS; b++) {
		const struct pci_bar *bar = &f->bar[b];
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
	       PCI_BUS(f->bdf), PCI_DEV(f->bdf), PCI_FN(f->bdf), p->nmmio, p->nio, p->irq);
}

int64_t rspci_resolve(struct svc *s)
{
	if (s->pci_resolved || !s->c.npci_ids)
		return 0;
	if (s->c.pci_error[0]) { /* (the parser kept the service, marked) */
		rs_log("%s: configuration line %d: %s; not started", s->c.name, s->c.pci_error_line, s->c.pci_error);
		return -KE_INVAL;
	}
	/* Any of the ids, in the list's order: the first present is the service's device. */
	for (int i = 0; i < s->c.npci_ids; i++) {
		struct pci_func f;
		if (pci_find(&pci_kcall, s->c.pci_ids[i].vendor, s->c.pci_ids[i].device, s->c.pci_ids[i].index, &f) == 0) {
			take(s, i, &f);
			s->pci_resolved = true;
			return 0;
		}
	}
	char ids[SVC_MAX_PCI_IDS * 16];
	ids_text(s, ids, sizeof(ids));
	rs_log("%s: no PCI device %s%s", s->c.name, ids, s->c.optional ? " (optional: absent)" : "");
	return -KE_SRCH;
}

int64_t rspci_give(const struct svc *s, endpoint_t ep)
{
	int64_t r = 0;
	if (s->c.npci_ids && s->pci_resolved) {
		const struct svc_pci *p = &s->pci_found;
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
	uint16_t bdfs[SVC_MAX_PCI + 1];
	int nb = 0;
	if (s->c.npci_ids && s->pci_resolved)
		bdfs[nb++] = s->pci_found.bdf;
	for (int i = 0; i < s->c.npci; i++)
		bdfs[nb++] = (uint16_t)s->c.pci[i];
	for (int i = 0; i < nb && (size_t)n < cap; i++)
		n += ksnprintf(buf + n, cap - (size_t)n, "%spci=%02x:%02x.%x", n ? " " : "", PCI_BUS(bdfs[i]),
			       PCI_DEV(bdfs[i]), PCI_FN(bdfs[i]));
	return (size_t)n < cap ? n : (int)cap - 1;
}
