/* PCI configuration space through a struct pci_cfg (pci.h): portable, no libc. */
#include "pci.h"

static int64_t rd(const struct pci_cfg *c, uint16_t bdf, uint8_t off, uint32_t w)
{
	return c->read(c->ctx, bdf, off, w);
}

int pci_bar_decode(uint32_t val, uint32_t mask, uint32_t hi, uint32_t hi_mask, struct pci_bar *out)
{
	*out = (struct pci_bar){ PCI_BAR_NONE, false, false, 0, 0 };
	if (val & 1) {
		uint32_t m = mask & ~3u;
		out->kind = PCI_BAR_IO;
		out->base = val & ~3u;
		if (m) /* devices decoding 16 bits of I/O may read the upper half back as 0 */
			out->size = (uint32_t)(~(m | 0xffff0000u) + 1u) & 0xffffu;
		if (!out->size)
			out->kind = PCI_BAR_NONE, out->base = 0;
		return 1;
	}
	unsigned type = (val >> 1) & 3;
	out->prefetch = (val >> 3) & 1;
	out->kind = PCI_BAR_MEM;
	if (type == 2) {
		uint64_t m = (uint64_t)hi_mask << 32 | (mask & ~0xfu);
		out->is64 = true;
		out->base = (uint64_t)hi << 32 | (val & ~0xfu);
		out->size = m ? ~m + 1 : 0;
	} else {
		uint32_t m = mask & ~0xfu;
		out->base = val & ~0xfu;
		out->size = m ? (uint32_t)(~m + 1u) : 0;
	}
	if (!out->size)
		out->kind = PCI_BAR_NONE, out->base = 0;
	return type == 2 ? 2 : 1;
}

int64_t pci_read_id(const struct pci_cfg *c, uint16_t bdf, struct pci_func *out)
{
	int64_t id = rd(c, bdf, PCI_VENDOR, 4);
	if (id < 0)
		return id;
	if ((id & 0xffff) == 0xffff || (id & 0xffff) == 0)
		return -1;
	int64_t cr = rd(c, bdf, PCI_CLASS_REV, 4), ht = rd(c, bdf, PCI_HEADER_TYPE, 1);
	int64_t irq = rd(c, bdf, PCI_INT_LINE, 2);
	if (cr < 0 || ht < 0 || irq < 0)
		return cr < 0 ? cr : ht < 0 ? ht : irq;
	*out = (struct pci_func){ 0 };
	out->bdf = bdf;
	out->vendor = (uint16_t)id;
	out->device = (uint16_t)(id >> 16);
	out->revision = (uint8_t)cr;
	out->prog_if = (uint8_t)(cr >> 8);
	out->subclass = (uint8_t)(cr >> 16);
	out->class_code = (uint8_t)(cr >> 24);
	out->header_type = (uint8_t)(ht & 0x7f);
	out->int_line = (uint8_t)irq;
	out->int_pin = (uint8_t)(irq >> 8);
	return 0;
}

static int64_t read_caps(const struct pci_cfg *c, struct pci_func *f)
{
	int64_t st = rd(c, f->bdf, PCI_STATUS, 2);
	if (st < 0)
		return st;
	if (!(st & PCI_STATUS_CAPS))
		return 0;
	int64_t p = rd(c, f->bdf, PCI_CAP_PTR, 1);
	/* At most 48 capabilities fit in 192 bytes: a loop in a broken list ends there. */
	for (int i = 0; i < 48 && p >= 0x40 && f->ncaps < PCI_MAX_CAPS; i++) {
		p &= 0xfc;
		int64_t h = rd(c, f->bdf, (uint8_t)p, 2);
		if (h < 0)
			return h;
		f->cap[f->ncaps].id = (uint8_t)h;
		f->cap[f->ncaps++].off = (uint8_t)p;
		p = (h >> 8) & 0xfc;
	}
	return p < 0 ? p : 0;
}

/* Sizes the BARs with decoding off, so the all-ones probe never claims an address. */
static int64_t read_bars(const struct pci_cfg *c, struct pci_func *f)
{
	int nbars = f->header_type == 0 ? 6 : f->header_type == 1 ? 2 : 0;
	if (!nbars)
		return 0;
	int64_t cmd = rd(c, f->bdf, PCI_COMMAND, 2), r = 0;
	if (cmd < 0)
		return cmd;
	if (cmd & (PCI_CMD_IO | PCI_CMD_MEM))
		r = c->write(c->ctx, f->bdf, PCI_COMMAND, 2, (uint32_t)cmd & ~(uint32_t)(PCI_CMD_IO | PCI_CMD_MEM));
	for (int i = 0; i < nbars && r >= 0;) {
		uint8_t off = (uint8_t)(PCI_BAR0 + 4 * i);
		int64_t v = rd(c, f->bdf, off, 4), m, hi = 0, hm = 0;
		if (v < 0) {
			r = v;
			break;
		}
		c->write(c->ctx, f->bdf, off, 4, 0xffffffffu);
		m = rd(c, f->bdf, off, 4);
		c->write(c->ctx, f->bdf, off, 4, (uint32_t)v);
		bool is64 = !(v & 1) && ((v >> 1) & 3) == 2 && i + 1 < nbars;
		if (is64) {
			uint8_t off2 = (uint8_t)(off + 4);
			hi = rd(c, f->bdf, off2, 4);
			c->write(c->ctx, f->bdf, off2, 4, 0xffffffffu);
			hm = rd(c, f->bdf, off2, 4);
			c->write(c->ctx, f->bdf, off2, 4, (uint32_t)hi);
		}
		if (m < 0 || hi < 0 || hm < 0) {
			r = m < 0 ? m : hi < 0 ? hi : hm;
			break;
		}
		i += pci_bar_decode((uint32_t)v, (uint32_t)m, (uint32_t)hi, (uint32_t)hm, &f->bar[i]);
	}
	if (cmd & (PCI_CMD_IO | PCI_CMD_MEM))
		c->write(c->ctx, f->bdf, PCI_COMMAND, 2, (uint32_t)cmd);
	return r < 0 ? r : 0;
}

int64_t pci_read_func(const struct pci_cfg *c, uint16_t bdf, struct pci_func *out)
{
	int64_t r = pci_read_id(c, bdf, out);
	if (r == 0)
		r = read_bars(c, out);
	if (r == 0)
		r = read_caps(c, out);
	return r;
}

struct walk {
	const struct pci_cfg *c;
	bool (*fn)(const struct pci_func *, void *);
	void *arg;
	uint8_t seen[32]; /* buses visited: a bridge loop ends here */
	int count;
	bool stop;
};

static void scan_bus(struct walk *w, unsigned bus, int depth)
{
	if (depth > 8 || (w->seen[bus / 8] & (1u << (bus % 8))))
		return;
	w->seen[bus / 8] |= (uint8_t)(1u << (bus % 8));
	for (unsigned dev = 0; dev < 32 && !w->stop; dev++) {
		struct pci_func f;
		int64_t r = pci_read_id(w->c, PCI_BDF(bus, dev, 0), &f);
		if (r == -1)
			continue; /* nothing at this device */
		int64_t ht = r == 0 ? w->c->read(w->c->ctx, f.bdf, PCI_HEADER_TYPE, 1) : -1;
		/* Function 0 unreadable (not ours): its siblings may still be. */
		unsigned nfn = (r < 0 || (ht >= 0 && (ht & 0x80))) ? 8 : 1;
		for (unsigned fn = 0; fn < nfn && !w->stop; fn++) {
			if (fn && pci_read_id(w->c, PCI_BDF(bus, dev, fn), &f) != 0)
				continue;
			if (!fn && r != 0)
				continue;
			w->count++;
			if (!w->fn(&f, w->arg))
				w->stop = true;
			if (f.header_type == 1 && !w->stop) {
				int64_t sec = w->c->read(w->c->ctx, f.bdf, PCI_SECONDARY_BUS, 1);
				if (sec > 0 && sec < 256)
					scan_bus(w, (unsigned)sec, depth + 1);
			}
		}
	}
}

int pci_enumerate(const struct pci_cfg *c, bool (*fn)(const struct pci_func *f, void *arg), void *arg)
{
	struct walk w = { c, fn, arg, { 0 }, 0, false };
	scan_bus(&w, 0, 0);
	return w.count;
}

struct find {
	uint16_t vendor, device;
	unsigned n;
	int32_t bdf;
};

static bool match(const struct pci_func *f, void *arg)
{
	struct find *q = arg;
	if (f->vendor != q->vendor || f->device != q->device)
		return true;
	if (q->n--)
		return true;
	q->bdf = f->bdf;
	return false;
}

int64_t pci_find(const struct pci_cfg *c, uint16_t vendor, uint16_t device, unsigned n, struct pci_func *out)
{
	struct find q = { vendor, device, n, -1 };
	pci_enumerate(c, match, &q);
	if (q.bdf < 0)
		return -1;
	int64_t r = pci_read_func(c, (uint16_t)q.bdf, out);
	return r < 0 ? r : 0;
}

uint8_t pci_cap_find(const struct pci_func *f, uint8_t id)
{
	for (unsigned i = 0; i < f->ncaps; i++)
		if (f->cap[i].id == id)
			return f->cap[i].off;
	return 0;
}

int64_t pci_command(const struct pci_cfg *c, uint16_t bdf, uint16_t set, uint16_t clear)
{
	int64_t cmd = rd(c, bdf, PCI_COMMAND, 2);
	if (cmd < 0)
		return cmd;
	return c->write(c->ctx, bdf, PCI_COMMAND, 2, ((uint32_t)cmd & ~(uint32_t)clear) | set);
}

/* ---- MSI-X ---- */

int64_t pci_msix_find(const struct pci_cfg *c, const struct pci_func *f, struct pci_msix *out)
{
	uint8_t cap = pci_cap_find(f, PCI_CAP_MSIX);
	if (!cap || cap > 256 - 12)
		return -1;
	int64_t ctl = rd(c, f->bdf, (uint8_t)(cap + PCI_MSIX_CTRL), 2);
	int64_t tab = ctl < 0 ? ctl : rd(c, f->bdf, (uint8_t)(cap + PCI_MSIX_TABLE), 4);
	int64_t pba = tab < 0 ? tab : rd(c, f->bdf, (uint8_t)(cap + PCI_MSIX_PBA), 4);
	if (pba < 0)
		return pba;
	struct pci_msix m = { .cap = cap, .size = (uint16_t)(((uint32_t)ctl & PCI_MSIX_QSIZE) + 1),
			      .table_bar = (uint8_t)(tab & 7), .pba_bar = (uint8_t)(pba & 7),
			      .table_off = (uint32_t)tab & ~7u, .pba_off = (uint32_t)pba & ~7u };
	if (m.table_bar >= PCI_MAX_BARS || m.pba_bar >= PCI_MAX_BARS)
		return -1;
	const struct pci_bar *tb = &f->bar[m.table_bar], *pb = &f->bar[m.pba_bar];
	if (tb->kind != PCI_BAR_MEM || pb->kind != PCI_BAR_MEM || !tb->base || !pb->base)
		return -1;
	if ((uint64_t)m.table_off + (uint64_t)m.size * PCI_MSIX_ENTRY > tb->size ||
	    (uint64_t)m.pba_off + ((m.size + 63u) / 64u) * 8u > pb->size)
		return -1;
	m.table_phys = tb->base + m.table_off;
	*out = m;
	return 0;
}

int64_t pci_msix_control(const struct pci_cfg *c, uint16_t bdf, const struct pci_msix *m, bool enable, bool fmask)
{
	int64_t ctl = rd(c, bdf, (uint8_t)(m->cap + PCI_MSIX_CTRL), 2);
	if (ctl < 0)
		return ctl;
	uint32_t v = (uint32_t)ctl & ~(uint32_t)(PCI_MSIX_ENABLE | PCI_MSIX_FMASK);
	v |= (enable ? PCI_MSIX_ENABLE : 0u) | (fmask ? PCI_MSIX_FMASK : 0u);
	return c->write(c->ctx, bdf, (uint8_t)(m->cap + PCI_MSIX_CTRL), 2, v);
}

static volatile uint32_t *msix_entry(volatile void *table, uint32_t i)
{
	return (volatile uint32_t *)((volatile uint8_t *)table + (uint64_t)i * PCI_MSIX_ENTRY);
}

void pci_msix_entry_mask(volatile void *table, uint32_t i, bool masked)
{
	volatile uint32_t *e = msix_entry(table, i);
	e[3] = (e[3] & ~(uint32_t)PCI_MSIX_ENTRY_MASKED) | (masked ? PCI_MSIX_ENTRY_MASKED : 0u);
}

void pci_msix_entry_write(volatile void *table, uint32_t i, uint64_t addr, uint32_t data, bool masked)
{
	volatile uint32_t *e = msix_entry(table, i);
	pci_msix_entry_mask(table, i, true);
	e[0] = (uint32_t)addr;
	e[1] = (uint32_t)(addr >> 32);
	e[2] = data;
	if (!masked)
		pci_msix_entry_mask(table, i, false);
}

static int hexval(char ch)
{
	return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
					       : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
}

int32_t pci_parse_bdf(const char *s)
{
	unsigned v[3] = { 0, 0, 0 }, nd[3] = { 0, 0, 0 };
	int part = 0;
	for (; *s && *s != ' '; s++) {
		int h = hexval(*s);
		if ((*s == ':' && part == 0) || (*s == '.' && part == 1))
			part++;
		else if (h >= 0 && nd[part] < 2)
			v[part] = v[part] * 16 + (unsigned)h, nd[part]++;
		else
			return -1;
	}
	if (part != 2 || !nd[0] || !nd[1] || nd[2] != 1 || v[1] > 31 || v[2] > 7)
		return -1;
	return PCI_BDF(v[0], v[1], v[2]);
}
