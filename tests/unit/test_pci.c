/* lib/pci against a model of a PCI bus: BAR decoding (32- and 64-bit memory, I/O, absent),
 * sizing that restores every register, enumeration across a bridge and multi-function
 * devices, functions the caller does not hold skipped, lookup by id, capabilities (a loop
 * in a broken list ends), MSI-X (the capability, its table and PBA, enabling and masking,
 * writing entries), bus:dev.fn parsing. */
#include "unit.h"
#include "pci.h"

#define NF 9
struct mfunc {
	uint16_t bdf;
	bool denied; /* the caller does not hold it: reads fail */
	uint8_t cfg[256];
	uint32_t bar_mask[6]; /* writable bits of each BAR register */
};
static struct mfunc funcs[NF];
static int nfuncs, writes_while_decoding;

static struct mfunc *find(uint16_t bdf)
{
	for (int i = 0; i < nfuncs; i++)
		if (funcs[i].bdf == bdf)
			return &funcs[i];
	return NULL;
}

static int64_t m_read(void *ctx, uint16_t bdf, uint8_t off, uint32_t w)
{
	(void)ctx;
	struct mfunc *f = find(bdf);
	if (f && f->denied)
		return -1 * 1; /* -KE_PERM */
	if (!f)
		return w == 4 ? 0xffffffffll : w == 2 ? 0xffff : 0xff;
	uint32_t v = 0;
	for (uint32_t i = 0; i < w; i++)
		v |= (uint32_t)f->cfg[off + i] << (8 * i);
	return v;
}

static int64_t m_write(void *ctx, uint16_t bdf, uint8_t off, uint32_t w, uint32_t val)
{
	(void)ctx;
	struct mfunc *f = find(bdf);
	if (!f || f->denied)
		return -1;
	if (off >= 0x10 && off < 0x28 && w == 4) {
		uint32_t m = f->bar_mask[(off - 0x10) / 4], ro = 0;
		for (int i = 0; i < 4; i++)
			ro |= (uint32_t)f->cfg[off + i] << (8 * i);
		if ((f->cfg[4] & 3) && val == 0xffffffffu)
			writes_while_decoding++;
		val = (val & m) | (ro & ~m & 0xf); /* the low type bits are read-only */
		if (m == 0)
			val = 0;
	}
	for (uint32_t i = 0; i < w; i++)
		f->cfg[off + i] = (uint8_t)(val >> (8 * i));
	return 0;
}

static const struct pci_cfg model = { m_read, m_write, 0 };

static struct mfunc *add(uint16_t bdf, uint16_t ven, uint16_t dev, uint32_t cls, uint8_t ht)
{
	struct mfunc *f = &funcs[nfuncs++];
	memset(f, 0, sizeof(*f));
	f->bdf = bdf;
	put16(f->cfg, ven), put16(f->cfg + 2, dev);
	put32(f->cfg + 8, cls);
	f->cfg[0x0e] = ht;
	f->cfg[4] = 3; /* I/O and memory decode on, as firmware leaves them */
	return f;
}

static void bar(struct mfunc *f, int i, uint32_t val, uint32_t mask)
{
	put32(f->cfg + 0x10 + 4 * i, val);
	f->bar_mask[i] = mask;
}

static void build(void)
{
	nfuncs = 0;
	writes_while_decoding = 0;
	struct mfunc *f = add(PCI_BDF(0, 0, 0), 0x8086, 0x29c0, 0x06000000, 0); /* host bridge */
	f = add(PCI_BDF(0, 3, 0), 0x8086, 0x100e, 0x02000003, 0); /* e1000 */
	bar(f, 0, 0xfeb80000, 0xfffe0000);  /* 128 KiB memory */
	bar(f, 1, 0x0000c001, 0xffffffc0);  /* 64 ports */
	f->cfg[0x3c] = 11, f->cfg[0x3d] = 1;
	put16(f->cfg + 6, PCI_STATUS_CAPS);
	f->cfg[0x34] = 0xdc;
	f->cfg[0xdc] = 0x01, f->cfg[0xdd] = 0xe4; /* power management -> */
	f->cfg[0xe4] = 0x05, f->cfg[0xe5] = 0x00; /* MSI, end */
	f = add(PCI_BDF(0, 4, 0), 0x1af4, 0x1041, 0x02000001, 0); /* 64-bit prefetchable BAR */
	bar(f, 2, 0x0000000c, 0xffffc000);  /* low half: 64-bit, prefetchable, 16 KiB */
	bar(f, 3, 0x00000008, 0xffffffff);  /* high half: at 32 GiB */
	put16(f->cfg + 6, PCI_STATUS_CAPS);
	f->cfg[0x34] = 0x40;
	f->cfg[0x40] = 0x09, f->cfg[0x41] = 0x50;
	f->cfg[0x50] = 0x11, f->cfg[0x51] = 0x40; /* loops back to 0x40 */
	f = add(PCI_BDF(0, 5, 0), 0x1234, 0x0001, 0, 0x80); /* multi-function */
	add(PCI_BDF(0, 5, 2), 0x1234, 0x0002, 0, 0);
	f = add(PCI_BDF(0, 6, 0), 0x8086, 0x100e, 0x02000000, 0);
	f->denied = true; /* somebody else's */
	f = add(PCI_BDF(0, 0x1e, 0), 0x8086, 0x244e, 0x06040000, 1); /* bridge to bus 1 */
	f->cfg[0x19] = 1;
	f = add(PCI_BDF(1, 0, 0), 0x8086, 0x100e, 0x02000000, 0); /* a second e1000 */
	bar(f, 0, 0xfe000000, 0xfffe0000);
}

static void bar_decoding(void)
{
	struct pci_bar b;
	CHECK_EQ_I64(pci_bar_decode(0xfeb80000, 0xfffe0000, 0, 0, &b), 1);
	CHECK(b.kind == PCI_BAR_MEM && !b.is64 && !b.prefetch);
	CHECK_EQ_U64(b.base, 0xfeb80000); CHECK_EQ_U64(b.size, 0x20000);
	CHECK_EQ_I64(pci_bar_decode(0xc001, 0xffffffc1, 0, 0, &b), 1);
	CHECK(b.kind == PCI_BAR_IO); CHECK_EQ_U64(b.base, 0xc000); CHECK_EQ_U64(b.size, 64);
	CHECK_EQ_I64(pci_bar_decode(0xc001, 0xffe1, 0, 0, &b), 1); /* 16-bit decode */
	CHECK_EQ_U64(b.size, 32);
	CHECK_EQ_I64(pci_bar_decode(0x0000000c, 0xffffc00c, 0x8, 0xffffffff, &b), 2);
	CHECK(b.kind == PCI_BAR_MEM && b.is64 && b.prefetch);
	CHECK_EQ_U64(b.base, 0x800000000ull); CHECK_EQ_U64(b.size, 0x4000);
	CHECK_EQ_I64(pci_bar_decode(0x4, 0x4, 0, 0xfffffff0, &b), 2); /* 64-bit, 64 GiB */
	CHECK_EQ_U64(b.size, 0x1000000000ull);
	CHECK_EQ_I64(pci_bar_decode(0, 0, 0, 0, &b), 1);
	CHECK(b.kind == PCI_BAR_NONE && b.size == 0);
	CHECK_EQ_I64(pci_bar_decode(1, 1, 0, 0, &b), 1); /* I/O BAR with no writable bits */
	CHECK(b.kind == PCI_BAR_NONE);
}

static void read_func_sizes_and_restores(void)
{
	build();
	uint8_t before[256];
	memcpy(before, find(PCI_BDF(0, 3, 0))->cfg, 256);
	struct pci_func f;
	REQUIRE(pci_read_func(&model, PCI_BDF(0, 3, 0), &f) == 0);
	CHECK_EQ_U64(f.vendor, 0x8086); CHECK_EQ_U64(f.device, 0x100e);
	CHECK_EQ_U64(f.class_code, 2); CHECK_EQ_U64(f.revision, 3);
	CHECK_EQ_U64(f.int_line, 11); CHECK_EQ_U64(f.int_pin, 1);
	CHECK(f.bar[0].kind == PCI_BAR_MEM); CHECK_EQ_U64(f.bar[0].base, 0xfeb80000); CHECK_EQ_U64(f.bar[0].size, 0x20000);
	CHECK(f.bar[1].kind == PCI_BAR_IO); CHECK_EQ_U64(f.bar[1].base, 0xc000); CHECK_EQ_U64(f.bar[1].size, 64);
	CHECK(f.bar[2].kind == PCI_BAR_NONE);
	CHECK(!memcmp(before, find(PCI_BDF(0, 3, 0))->cfg, 256)); /* every register restored */
	CHECK_EQ_I64(writes_while_decoding, 0);
	CHECK_EQ_U64(f.ncaps, 2);
	CHECK_EQ_U64(pci_cap_find(&f, 5), 0xe4); CHECK_EQ_U64(pci_cap_find(&f, 1), 0xdc);
	CHECK_EQ_U64(pci_cap_find(&f, 0x10), 0);

	REQUIRE(pci_read_func(&model, PCI_BDF(0, 4, 0), &f) == 0);
	CHECK(f.bar[2].kind == PCI_BAR_MEM && f.bar[2].is64 && f.bar[2].prefetch);
	CHECK_EQ_U64(f.bar[2].base, 0x800000000ull); CHECK_EQ_U64(f.bar[2].size, 0x4000);
	CHECK(f.bar[3].kind == PCI_BAR_NONE); /* the high half is not a BAR of its own */
	CHECK(f.ncaps == PCI_MAX_CAPS);       /* the looping list ended */
	CHECK_EQ_I64(pci_read_func(&model, PCI_BDF(0, 9, 0), &f), -1);
	CHECK(pci_read_func(&model, PCI_BDF(0, 6, 0), &f) < 0);
}

static uint16_t seen[16];
static int nseen;
static bool collect(const struct pci_func *f, void *arg)
{
	(void)arg;
	if (nseen < 16)
		seen[nseen++] = f->bdf;
	return true;
}

static void enumeration_and_lookup(void)
{
	build();
	nseen = 0;
	CHECK_EQ_I64(pci_enumerate(&model, collect, NULL), 7);
	static const uint16_t want[] = { PCI_BDF(0, 0, 0), PCI_BDF(0, 3, 0), PCI_BDF(0, 4, 0), PCI_BDF(0, 5, 0),
					 PCI_BDF(0, 5, 2), PCI_BDF(0, 0x1e, 0), PCI_BDF(1, 0, 0) };
	REQUIRE(nseen == 7);
	for (int i = 0; i < 7; i++)
		CHECK_EQ_U64(seen[i], want[i]);
	struct pci_func f;
	CHECK_EQ_I64(pci_find(&model, 0x8086, 0x100e, 0, &f), 0);
	CHECK_EQ_U64(f.bdf, PCI_BDF(0, 3, 0));
	CHECK_EQ_I64(pci_find(&model, 0x8086, 0x100e, 1, &f), 0); /* 00:06.0 is not ours */
	CHECK_EQ_U64(f.bdf, PCI_BDF(1, 0, 0));
	CHECK_EQ_U64(f.bar[0].base, 0xfe000000);
	CHECK_EQ_I64(pci_find(&model, 0x8086, 0x100e, 2, &f), -1);
	CHECK_EQ_I64(pci_find(&model, 0x8086, 0x10d3, 0, &f), -1);
	/* a bridge pointing back at bus 0 does not loop */
	find(PCI_BDF(0, 0x1e, 0))->cfg[0x19] = 0;
	nseen = 0;
	CHECK_EQ_I64(pci_enumerate(&model, collect, NULL), 6);
}

static void command_bits(void)
{
	build();
	CHECK_EQ_I64(pci_command(&model, PCI_BDF(0, 3, 0), PCI_CMD_MASTER, PCI_CMD_IO | PCI_CMD_INTX_OFF), 0);
	CHECK_EQ_U64(find(PCI_BDF(0, 3, 0))->cfg[4], PCI_CMD_MEM | PCI_CMD_MASTER);
	CHECK(pci_command(&model, PCI_BDF(0, 6, 0), PCI_CMD_MASTER, 0) < 0);
}

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

/* An 82576-like function: MSI-X with 10 entries, table at 0 and PBA at 0x2000 of BAR 3. */
static struct mfunc *add_msix_func(uint16_t bdf)
{
	struct mfunc *f = add(bdf, 0x8086, 0x10c9, 0x02000001, 0);
	bar(f, 0, 0xfe000000, 0xfffe0000); /* 128 KiB registers */
	bar(f, 3, 0xfe020000, 0xffffc000); /* 16 KiB: the MSI-X table and PBA */
	put16(f->cfg + 6, PCI_STATUS_CAPS);
	f->cfg[0x34] = 0x50;
	f->cfg[0x50] = 0x05, f->cfg[0x51] = 0x70; /* MSI -> */
	f->cfg[0x70] = 0x11, f->cfg[0x71] = 0x00; /* MSI-X, end */
	put16(f->cfg + 0x72, (10 - 1) | PCI_MSIX_FMASK); /* firmware left the function masked */
	put32(f->cfg + 0x74, 0x0000 | 3);
	put32(f->cfg + 0x78, 0x2000 | 3);
	return f;
}

static void msix_capability(void)
{
	build();
	struct mfunc *mf = add_msix_func(PCI_BDF(0, 7, 0));
	struct pci_func f;
	struct pci_msix m;
	REQUIRE(pci_read_func(&model, PCI_BDF(0, 7, 0), &f) == 0);
	REQUIRE(pci_msix_find(&model, &f, &m) == 0);
	CHECK_EQ_U64(m.cap, 0x70); CHECK_EQ_U64(m.size, 10);
	CHECK_EQ_U64(m.table_bar, 3); CHECK_EQ_U64(m.table_off, 0);
	CHECK_EQ_U64(m.pba_bar, 3); CHECK_EQ_U64(m.pba_off, 0x2000);
	CHECK_EQ_U64(m.table_phys, 0xfe020000);
	/* enable with the function masked, then unmask: the size bits are kept */
	CHECK_EQ_I64(pci_msix_control(&model, f.bdf, &m, true, true), 0);
	CHECK_EQ_U64(get16(mf->cfg + 0x72), PCI_MSIX_ENABLE | PCI_MSIX_FMASK | 9);
	CHECK_EQ_I64(pci_msix_control(&model, f.bdf, &m, true, false), 0);
	CHECK_EQ_U64(get16(mf->cfg + 0x72), PCI_MSIX_ENABLE | 9);
	CHECK_EQ_I64(pci_msix_control(&model, f.bdf, &m, false, false), 0);
	CHECK_EQ_U64(get16(mf->cfg + 0x72), 9);
	/* no MSI-X: the e1000 (MSI only), and a function we do not hold */
	struct pci_func e;
	REQUIRE(pci_read_func(&model, PCI_BDF(0, 3, 0), &e) == 0);
	CHECK_EQ_I64(pci_msix_find(&model, &e, &m), -1);
	CHECK(pci_msix_control(&model, PCI_BDF(0, 6, 0), &m, true, false) < 0);
	/* unusable: the table beyond its BAR, a BIR naming no memory BAR */
	put32(mf->cfg + 0x74, 0x3ff8 | 3);
	REQUIRE(pci_read_func(&model, f.bdf, &f) == 0);
	CHECK_EQ_I64(pci_msix_find(&model, &f, &m), -1);
	put32(mf->cfg + 0x74, 0x0000 | 1);
	REQUIRE(pci_read_func(&model, f.bdf, &f) == 0);
	CHECK_EQ_I64(pci_msix_find(&model, &f, &m), -1);
	put32(mf->cfg + 0x74, 0x0000 | 7);
	REQUIRE(pci_read_func(&model, f.bdf, &f) == 0);
	CHECK_EQ_I64(pci_msix_find(&model, &f, &m), -1);
}

static void msix_entries(void)
{
	uint32_t table[10 * 4];
	for (int i = 0; i < 10; i++) /* reset state: every entry masked */
		table[4 * i] = 0xdead, table[4 * i + 1] = 0xbeef, table[4 * i + 2] = 0x1234, table[4 * i + 3] = 1;
	pci_msix_entry_write(table, 0, 0xfee01000, 0x51, false);
	CHECK_EQ_U64(table[0], 0xfee01000); CHECK_EQ_U64(table[1], 0); CHECK_EQ_U64(table[2], 0x51);
	CHECK_EQ_U64(table[3], 0);
	pci_msix_entry_write(table, 9, 0x1fee00000ull, 0x6f, true); /* stays masked */
	CHECK_EQ_U64(table[36], 0xfee00000); CHECK_EQ_U64(table[37], 1); CHECK_EQ_U64(table[38], 0x6f);
	CHECK_EQ_U64(table[39], 1);
	CHECK_EQ_U64(table[4], 0xdead); CHECK_EQ_U64(table[7], 1); /* its neighbour untouched */
	table[3] = 0xf0; /* reserved bits of vector control are kept */
	pci_msix_entry_mask(table, 0, true);
	CHECK_EQ_U64(table[3], 0xf1);
	pci_msix_entry_mask(table, 0, false);
	CHECK_EQ_U64(table[3], 0xf0);
}

static void bdf_parsing(void)
{
	CHECK_EQ_I64(pci_parse_bdf("00:03.0"), PCI_BDF(0, 3, 0));
	CHECK_EQ_I64(pci_parse_bdf("1f:1f.7 rest"), PCI_BDF(0x1f, 0x1f, 7));
	CHECK_EQ_I64(pci_parse_bdf("ff:1f.7"), PCI_BDF(0xff, 0x1f, 7));
	CHECK_EQ_I64(pci_parse_bdf("0:3.0"), PCI_BDF(0, 3, 0));
	CHECK_EQ_I64(pci_parse_bdf("00:20.0"), -1);
	CHECK_EQ_I64(pci_parse_bdf("00:03.8"), -1);
	CHECK_EQ_I64(pci_parse_bdf("00:03"), -1);
	CHECK_EQ_I64(pci_parse_bdf("100:03.0"), -1);
	CHECK_EQ_I64(pci_parse_bdf(""), -1);
	CHECK_EQ_I64(pci_parse_bdf("00:03.0.1"), -1);
}

int main(void)
{
	unit_begin(__FILE__);
	RUN(bar_decoding);
	RUN(read_func_sizes_and_restores);
	RUN(enumeration_and_lookup);
	RUN(command_bits);
	RUN(msix_capability);
	RUN(msix_entries);
	RUN(bdf_parsing);
	return unit_end();
}
