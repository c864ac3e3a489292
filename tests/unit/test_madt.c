/* ACPI checksum and MADT parser (kernel/acpi/madt.c). Tables are built as the ACPI spec
 * (6.5, section 5.2.12) lays them out: a 36-byte SDT header "APIC", the local APIC address
 * and flags, then interrupt controller structures (type, length, body). */
#include "unit.h"
#include "acpi/madt.h"

struct tbl {
	uint8_t b[8192];
	uint32_t len;
};

static void t_begin(struct tbl *t, uint32_t lapic, uint32_t flags)
{
	memset(t, 0, sizeof(*t));
	memcpy(t->b, "APIC", 4);
	t->b[8] = 5; /* revision */
	memcpy(t->b + 10, "AXOLTL", 6);
	memcpy(t->b + 16, "UNITTEST", 8);
	put32(t->b + 36, lapic);
	put32(t->b + 40, flags);
	t->len = 44;
}

/* Sets the length field and the checksum (byte 9) so the whole table sums to zero. */
static void t_finish(struct tbl *t)
{
	put32(t->b + 4, t->len);
	t->b[9] = 0;
	uint8_t sum = 0;
	for (uint32_t i = 0; i < t->len; i++)
		sum = (uint8_t)(sum + t->b[i]);
	t->b[9] = (uint8_t)-sum;
}

static uint8_t *t_entry(struct tbl *t, uint8_t type, uint8_t len)
{
	uint8_t *e = t->b + t->len;
	e[0] = type;
	e[1] = len;
	t->len += len;
	return e;
}

static void lapic(struct tbl *t, uint8_t uid, uint8_t id, uint32_t flags)
{
	uint8_t *e = t_entry(t, 0, 8);
	e[2] = uid, e[3] = id;
	put32(e + 4, flags);
}

static void x2apic(struct tbl *t, uint32_t id, uint32_t flags, uint32_t uid)
{
	uint8_t *e = t_entry(t, 9, 16);
	put32(e + 4, id), put32(e + 8, flags), put32(e + 12, uid);
}

static void ioapic(struct tbl *t, uint8_t id, uint32_t addr, uint32_t gsi_base)
{
	uint8_t *e = t_entry(t, 1, 12);
	e[2] = id;
	put32(e + 4, addr), put32(e + 8, gsi_base);
}

static void iso(struct tbl *t, uint8_t irq, uint32_t gsi, uint16_t flags)
{
	uint8_t *e = t_entry(t, 2, 10);
	e[2] = 0; /* bus: ISA */
	e[3] = irq;
	put32(e + 4, gsi), put16(e + 8, flags);
}

/* Parses t from a heap block of exactly len bytes (ASan sees any read past it). */
static int parse_exact(const uint8_t *b, size_t len, struct madt_info *m)
{
	uint8_t *h = malloc(len ? len : 1);
	memcpy(h, b, len);
	int r = madt_parse(h, len, m);
	free(h);
	return r;
}

static struct madt_info mi; /* 4 KiB: kept off the stack */

static bool all_zero(const struct madt_info *m)
{
	static const struct madt_info zero;
	return !memcmp(m, &zero, sizeof(zero));
}

static void checksum(void)
{
	struct tbl t;
	t_begin(&t, 0xfee00000, 1);
	lapic(&t, 0, 0, 1);
	t_finish(&t);
	CHECK(acpi_checksum_ok(t.b, t.len));
	t.b[50] = (uint8_t)(t.b[50] + 0x10);
	CHECK(!acpi_checksum_ok(t.b, t.len));
	t.b[51] = (uint8_t)(t.b[51] - 0x10); /* compensating change: sums to zero again */
	CHECK(acpi_checksum_ok(t.b, t.len));
	/* Exactly len bytes are summed. */
	t.b[t.len] = 1;
	CHECK(!acpi_checksum_ok(t.b, t.len + 1));
	t.b[t.len - 1] = (uint8_t)(t.b[t.len - 1] + 1);
	CHECK(!acpi_checksum_ok(t.b, t.len));
	CHECK(acpi_checksum_ok(t.b, t.len + 1) == (t.b[t.len] == 0));
	static const uint8_t sums_to_256[] = { 0x80, 0x7f, 0x01 }, sums_to_255[] = { 0x80, 0x7f };
	CHECK(acpi_checksum_ok(sums_to_256, 3));
	CHECK(!acpi_checksum_ok(sums_to_255, 2));
	CHECK(acpi_checksum_ok(sums_to_256, 0)); /* nothing: sum 0 */
}

static void full_table(void)
{
	struct tbl t;
	t_begin(&t, 0xfee00000, 1); /* PCAT_COMPAT */
	lapic(&t, 0, 0, 1);           /* enabled */
	lapic(&t, 1, 1, 0);           /* disabled, not online capable: ignored */
	lapic(&t, 2, 2, 2);           /* online capable (hot-plug) but not enabled: not started */
	lapic(&t, 3, 6, 3);           /* enabled and online capable */
	ioapic(&t, 2, 0xfec00000, 0);
	iso(&t, 0, 2, 0);
	uint8_t *nmi = t_entry(&t, 4, 6); /* local APIC NMI: not used by the parser */
	nmi[2] = 0xff, put16(nmi + 3, 5), nmi[5] = 1;
	iso(&t, 9, 9, 0x000d); /* level, active high */
	x2apic(&t, 0x100, 1, 0x55);
	x2apic(&t, 0x101, 0, 0x56); /* disabled */
	ioapic(&t, 3, 0xfec01000, 24);
	uint8_t *unk = t_entry(&t, 0x7f, 5); /* reserved type: skipped by its length */
	unk[2] = 0xff;
	t_finish(&t);
	CHECK(acpi_checksum_ok(t.b, t.len));
	REQUIRE(parse_exact(t.b, t.len, &mi) == 0);
	CHECK_EQ_U64(mi.lapic_addr, 0xfee00000);
	CHECK(mi.pcat_compat);
	CHECK_EQ_U64(mi.ncpus, 3);
	CHECK_EQ_U64(mi.cpus[0].apic_id, 0);
	CHECK_EQ_U64(mi.cpus[0].uid, 0);
	CHECK(!mi.cpus[0].x2apic_entry);
	CHECK_EQ_U64(mi.cpus[1].apic_id, 6);
	CHECK_EQ_U64(mi.cpus[1].uid, 3);
	CHECK(!mi.cpus[1].x2apic_entry);
	CHECK_EQ_U64(mi.cpus[2].apic_id, 0x100);
	CHECK_EQ_U64(mi.cpus[2].uid, 0x55);
	CHECK(mi.cpus[2].x2apic_entry);
	CHECK_EQ_U64(mi.skipped_cpus, 0);
	CHECK_EQ_U64(mi.nioapics, 2);
	CHECK_EQ_U64(mi.ioapics[0].id, 2);
	CHECK_EQ_U64(mi.ioapics[0].addr, 0xfec00000);
	CHECK_EQ_U64(mi.ioapics[0].gsi_base, 0);
	CHECK_EQ_U64(mi.ioapics[1].id, 3);
	CHECK_EQ_U64(mi.ioapics[1].addr, 0xfec01000);
	CHECK_EQ_U64(mi.ioapics[1].gsi_base, 24);
	CHECK_EQ_U64(mi.nisos, 2);
	CHECK_EQ_U64(mi.isos[0].irq, 0);
	CHECK_EQ_U64(mi.isos[0].gsi, 2);
	CHECK_EQ_U64(mi.isos[0].flags, 0);
	CHECK_EQ_U64(mi.isos[1].irq, 9);
	CHECK_EQ_U64(mi.isos[1].gsi, 9);
	CHECK_EQ_U64(mi.isos[1].flags, 0xd);
	CHECK_EQ_U64(mi.bad_entries, 0);
}

static void header_only_and_flags(void)
{
	struct tbl t;
	t_begin(&t, 0xfee00000, 0); /* no PCAT_COMPAT */
	t_finish(&t);
	REQUIRE(parse_exact(t.b, t.len, &mi) == 0);
	CHECK(!mi.pcat_compat);
	CHECK_EQ_U64(mi.ncpus, 0);
	CHECK_EQ_U64(mi.nioapics, 0);
	CHECK_EQ_U64(mi.bad_entries, 0);
	/* Only bit 0 of the flags is PCAT_COMPAT. */
	t_begin(&t, 0xfee00000, 0xfffffffe);
	t_finish(&t);
	REQUIRE(parse_exact(t.b, t.len, &mi) == 0);
	CHECK(!mi.pcat_compat);
	/* One stray byte after the last entry is not an entry. */
	t_begin(&t, 0xfee00000, 1);
	lapic(&t, 0, 0, 1);
	t.len++;
	t_finish(&t);
	REQUIRE(parse_exact(t.b, t.len, &mi) == 0);
	CHECK_EQ_U64(mi.ncpus, 1);
	CHECK_EQ_U64(mi.bad_entries, 0);
}

static void lapic_address_override(void)
{
	struct tbl t;
	t_begin(&t, 0xfee00000, 1);
	uint8_t *e = t_entry(&t, 5, 12);
	put64(e + 4, 0x123fee00000ull);
	lapic(&t, 0, 0, 1);
	t_finish(&t);
	REQUIRE(parse_exact(t.b, t.len, &mi) == 0);
	CHECK_EQ_U64(mi.lapic_addr, 0x123fee00000ull);
	/* After the CPU entries too: the override wins wherever it is. */
	t_begin(&t, 0xfee00000, 1);
	lapic(&t, 0, 0, 1);
	e = t_entry(&t, 5, 12);
	put64(e + 4, 0xfffffffffee00000ull);
	t_finish(&t);
	REQUIRE(parse_exact(t.b, t.len, &mi) == 0);
	CHECK_EQ_U64(mi.lapic_addr, 0xfffffffffee00000ull);
	CHECK_EQ_U64(mi.ncpus, 1);
}

static void bad_headers(void)
{
	struct tbl t;
	t_begin(&t, 0xfee00000, 1);
	lapic(&t, 0, 0, 1);
	t_finish(&t);
	/* Wrong signature ("FACP"): unusable, and nothing is reported. */
	memcpy(t.b, "FACP", 4);
	CHECK_EQ_I64(parse_exact(t.b, t.len, &mi), -1);
	CHECK(all_zero(&mi));
	memcpy(t.b, "APIc", 4);
	CHECK_EQ_I64(parse_exact(t.b, t.len, &mi), -1);
	memcpy(t.b, "APIC", 4);
	CHECK_EQ_I64(parse_exact(t.b, t.len, &mi), 0);
	/* Buffer shorter than the fixed part. */
	CHECK_EQ_I64(parse_exact(t.b, 43, &mi), -1);
	CHECK_EQ_I64(parse_exact(t.b, 0, &mi), -1);
	CHECK(all_zero(&mi));
	/* Length field shorter than the header plus the fixed fields. */
	put32(t.b + 4, 43);
	CHECK_EQ_I64(parse_exact(t.b, t.len, &mi), -1);
	put32(t.b + 4, 0);
	CHECK_EQ_I64(parse_exact(t.b, t.len, &mi), -1);
	/* Length field larger than what may be read. */
	put32(t.b + 4, t.len + 1);
	CHECK_EQ_I64(parse_exact(t.b, t.len, &mi), -1);
	CHECK(all_zero(&mi));
	put32(t.b + 4, 0xffffffff);
	CHECK_EQ_I64(parse_exact(t.b, t.len, &mi), -1);
	/* Length field smaller than the buffer: only the table is parsed. */
	put32(t.b + 4, 44);
	CHECK_EQ_I64(parse_exact(t.b, t.len, &mi), 0);
	CHECK_EQ_U64(mi.ncpus, 0);
	CHECK_EQ_U64(mi.bad_entries, 0);
	put32(t.b + 4, 51); /* cuts the entry */
	CHECK_EQ_I64(parse_exact(t.b, t.len, &mi), 0);
	CHECK_EQ_U64(mi.ncpus, 0);
	CHECK_EQ_U64(mi.bad_entries, 1);
}

static void bad_entry_lengths(void)
{
	struct tbl t;
	/* Length 0 or 1 cannot be stepped over: counted once, the rest is dropped. */
	for (uint8_t bad = 0; bad < 2; bad++) {
		t_begin(&t, 0xfee00000, 1);
		lapic(&t, 0, 0, 1);
		uint8_t *e = t_entry(&t, 0, 8);
		e[1] = bad;
		e[3] = 1, e[4] = 1;
		lapic(&t, 2, 2, 1);
		t_finish(&t);
		REQUIRE(parse_exact(t.b, t.len, &mi) == 0);
		CHECK_EQ_U64(mi.ncpus, 1);
		CHECK_EQ_U64(mi.bad_entries, 1);
	}
	/* Entry running past the end of the table. */
	t_begin(&t, 0xfee00000, 1);
	lapic(&t, 0, 0, 1);
	ioapic(&t, 1, 0xfec00000, 0);
	t.len -= 1;
	t_finish(&t);
	REQUIRE(parse_exact(t.b, t.len, &mi) == 0);
	CHECK_EQ_U64(mi.ncpus, 1);
	CHECK_EQ_U64(mi.nioapics, 0);
	CHECK_EQ_U64(mi.bad_entries, 1);
	/* Too short for their type: counted, skipped by their length, parsing goes on. */
	t_begin(&t, 0xfee00000, 1);
	t_entry(&t, 0, 7)[3] = 9;
	t_entry(&t, 1, 11);
	t_entry(&t, 2, 9);
	t_entry(&t, 5, 11);
	t_entry(&t, 9, 15);
	lapic(&t, 0, 4, 1);
	t_finish(&t);
	REQUIRE(parse_exact(t.b, t.len, &mi) == 0);
	CHECK_EQ_U64(mi.bad_entries, 5);
	CHECK_EQ_U64(mi.ncpus, 1);
	CHECK_EQ_U64(mi.cpus[0].apic_id, 4);
	CHECK_EQ_U64(mi.nioapics + mi.nisos, 0);
	CHECK_EQ_U64(mi.lapic_addr, 0xfee00000);
	/* Longer than their type needs (later ACPI revisions): accepted, the extra ignored. */
	t_begin(&t, 0xfee00000, 1);
	uint8_t *e = t_entry(&t, 0, 12);
	e[2] = 7, e[3] = 8, put32(e + 4, 1), put32(e + 8, 0xffffffff);
	e = t_entry(&t, 9, 20);
	put32(e + 4, 0x200), put32(e + 8, 1), put32(e + 12, 9);
	lapic(&t, 1, 1, 1);
	t_finish(&t);
	REQUIRE(parse_exact(t.b, t.len, &mi) == 0);
	CHECK_EQ_U64(mi.bad_entries, 0);
	CHECK_EQ_U64(mi.ncpus, 3);
	CHECK_EQ_U64(mi.cpus[0].apic_id, 8);
	CHECK_EQ_U64(mi.cpus[0].uid, 7);
	CHECK_EQ_U64(mi.cpus[1].apic_id, 0x200);
	CHECK_EQ_U64(mi.cpus[2].apic_id, 1);
}

static void duplicate_cpus(void)
{
	struct tbl t;
	t_begin(&t, 0xfee00000, 1);
	lapic(&t, 0, 0, 1);
	lapic(&t, 1, 1, 1);
	lapic(&t, 2, 1, 1);       /* same APIC ID again */
	x2apic(&t, 0, 1, 9);      /* the same CPU as an x2APIC entry */
	lapic(&t, 3, 3, 0);       /* disabled duplicates are just ignored */
	lapic(&t, 4, 3, 0);
	t_finish(&t);
	REQUIRE(parse_exact(t.b, t.len, &mi) == 0);
	CHECK_EQ_U64(mi.ncpus, 2);
	CHECK_EQ_U64(mi.skipped_cpus, 2);
	CHECK_EQ_U64(mi.cpus[1].uid, 1); /* the first entry is kept */
}

static void limits(void)
{
	struct tbl t;
	/* More enabled CPUs than MADT_MAX_CPUS: the first 256 are kept, the rest counted. */
	t_begin(&t, 0xfee00000, 1);
	for (uint32_t i = 0; i < 255; i++)
		lapic(&t, (uint8_t)i, (uint8_t)i, 1);
	for (uint32_t i = 0; i < 45; i++)
		x2apic(&t, 0x1000 + i, 1, 1000 + i);
	t_finish(&t);
	REQUIRE(t.len <= sizeof(t.b));
	REQUIRE(parse_exact(t.b, t.len, &mi) == 0);
	CHECK_EQ_U64(mi.ncpus, MADT_MAX_CPUS);
	CHECK_EQ_U64(mi.skipped_cpus, 300 - MADT_MAX_CPUS);
	CHECK_EQ_U64(mi.cpus[254].apic_id, 254);
	CHECK_EQ_U64(mi.cpus[255].apic_id, 0x1000);
	CHECK_EQ_U64(mi.cpus[255].uid, 1000);
	CHECK(mi.cpus[255].x2apic_entry);
	/* Extra I/O APICs and overrides are dropped silently (not malformed). */
	t_begin(&t, 0xfee00000, 1);
	for (uint32_t i = 0; i < MADT_MAX_IOAPICS + 3; i++)
		ioapic(&t, (uint8_t)i, 0xfec00000 + i * 0x1000, i * 24);
	for (uint32_t i = 0; i < MADT_MAX_ISOS + 5; i++)
		iso(&t, (uint8_t)i, i + 100, (uint16_t)i);
	lapic(&t, 0, 0, 1);
	t_finish(&t);
	REQUIRE(parse_exact(t.b, t.len, &mi) == 0);
	CHECK_EQ_U64(mi.nioapics, MADT_MAX_IOAPICS);
	CHECK_EQ_U64(mi.ioapics[MADT_MAX_IOAPICS - 1].gsi_base, (MADT_MAX_IOAPICS - 1) * 24);
	CHECK_EQ_U64(mi.nisos, MADT_MAX_ISOS);
	CHECK_EQ_U64(mi.isos[MADT_MAX_ISOS - 1].gsi, MADT_MAX_ISOS - 1 + 100);
	CHECK_EQ_U64(mi.bad_entries, 0);
	CHECK_EQ_U64(mi.ncpus, 1); /* entries after the dropped ones are still parsed */
}

/* Independent walk of the entries, as the spec describes them, for the fuzz oracle. */
struct ref {
	uint32_t cpu_entries, ioapics, isos, bad;
	uint64_t lapic;
};

static struct ref ref_walk(const uint8_t *b, uint32_t tlen)
{
	struct ref r = { 0, 0, 0, 0, (uint64_t)b[36] | b[37] << 8 | b[38] << 16 | (uint64_t)b[39] << 24 };
	uint32_t off = 44;
	while (tlen - off >= 2) {
		uint8_t type = b[off], len = b[off + 1];
		if (len < 2 || len > tlen - off) {
			r.bad++;
			break;
		}
		static const uint8_t need[10] = { 8, 12, 10, 0, 0, 12, 0, 0, 0, 16 };
		if (type < 10 && need[type] && len < need[type])
			r.bad++;
		else if ((type == 0 && (b[off + 4] & 1)) || (type == 9 && (b[off + 8] & 1)))
			r.cpu_entries++;
		else if (type == 1)
			r.ioapics++;
		else if (type == 2)
			r.isos++;
		else if (type == 5) {
			r.lapic = 0;
			for (int i = 7; i >= 0; i--)
				r.lapic = r.lapic << 8 | b[off + 4 + i];
		}
		off += len;
	}
	return r;
}

static void fuzz(void)
{
	struct tbl base;
	t_begin(&base, 0xfee00000, 1);
	for (uint8_t i = 0; i < 6; i++)
		lapic(&base, i, i, i == 3 ? 0 : 1);
	x2apic(&base, 0x300, 1, 77);
	ioapic(&base, 4, 0xfec00000, 0);
	iso(&base, 0, 2, 0);
	iso(&base, 9, 9, 0xd);
	t_entry(&base, 4, 6)[2] = 0xff;
	put64(t_entry(&base, 5, 12) + 4, 0xfee00000);
	t_finish(&base);
	uint32_t eoff[32], neoff = 0;
	for (uint32_t o = 44; o < base.len; o += base.b[o + 1])
		eoff[neoff++] = o;

	uint64_t seed = 0x243f6a8885a308d3ull;
	uint8_t buf[600];
	int accepted = 0;
	for (int iter = 0; iter < 100000 && !UNIT_FAILED(); iter++) {
		memcpy(buf, base.b, base.len);
		size_t len = base.len;
		int nmut = 1 + (int)(unit_rand(&seed) % 4);
		for (int k = 0; k < nmut; k++) {
			uint64_t r = unit_rand(&seed);
			size_t pos = (r >> 8) % len;
			switch (r % 6) {
			case 0: buf[pos] ^= (uint8_t)(1u << (r >> 40) % 8); break; /* bit flip */
			case 1: buf[pos] = (uint8_t)(r >> 48); break;               /* random byte */
			case 2: { /* an entry's length byte: 0, 1, one short, one long, 255, random */
				uint32_t eo = eoff[(r >> 20) % neoff];
				uint8_t l = base.b[eo + 1];
				const uint8_t choice[] = { 0, 1, (uint8_t)(l - 1), (uint8_t)(l + 1), 255, (uint8_t)(r >> 48) };
				if (eo + 1 < len)
					buf[eo + 1] = choice[(r >> 40) % 6];
				break;
			}
			case 3: put32(buf + 4, (uint32_t)(len - (r >> 40) % 24 + (r >> 50) % 4)); break; /* table length */
			case 4: len = 36 + (r >> 40) % (len - 35); break; /* truncated buffer */
			default: { /* grow with random bytes */
				size_t add = (r >> 40) % 40;
				if (len + add > sizeof(buf)) break;
				for (size_t i = 0; i < add; i++)
					buf[len + i] = (uint8_t)unit_rand(&seed);
				len += add;
				if (r & (1ull << 63)) put32(buf + 4, (uint32_t)len);
				break;
			}
			}
		}
		int ret = parse_exact(buf, len, &mi);
		uint32_t tlen = len >= 8 ? (uint32_t)buf[4] | buf[5] << 8 | buf[6] << 16 | (uint32_t)buf[7] << 24 : 0;
		bool valid = len >= 44 && !memcmp(buf, "APIC", 4) && tlen >= 44 && tlen <= len;
		if (!valid) {
			if (ret != -1 || !all_zero(&mi))
				unit_fail(__FILE__, __LINE__, "iter %d: invalid header accepted (%d)", iter, ret);
			continue;
		}
		accepted++;
		if (ret != 0) {
			unit_fail(__FILE__, __LINE__, "iter %d: valid header rejected (%d)", iter, ret);
			continue;
		}
		struct ref ref = ref_walk(buf, tlen);
		CHECK(mi.ncpus <= MADT_MAX_CPUS && mi.nioapics <= MADT_MAX_IOAPICS && mi.nisos <= MADT_MAX_ISOS);
		CHECK_EQ_U64(mi.ncpus + mi.skipped_cpus, ref.cpu_entries);
		CHECK_EQ_U64(mi.nioapics, ref.ioapics < MADT_MAX_IOAPICS ? ref.ioapics : MADT_MAX_IOAPICS);
		CHECK_EQ_U64(mi.nisos, ref.isos < MADT_MAX_ISOS ? ref.isos : MADT_MAX_ISOS);
		CHECK_EQ_U64(mi.bad_entries, ref.bad);
		CHECK_EQ_U64(mi.lapic_addr, ref.lapic);
		CHECK(mi.pcat_compat == (buf[40] & 1));
		for (uint32_t i = 0; i < mi.ncpus; i++)
			for (uint32_t j = i + 1; j < mi.ncpus; j++)
				if (mi.cpus[i].apic_id == mi.cpus[j].apic_id)
					unit_fail(__FILE__, __LINE__, "iter %d: APIC ID %u twice", iter, mi.cpus[i].apic_id);
		if (UNIT_FAILED())
			unit_fail(__FILE__, __LINE__, "(iteration %d)", iter);
	}
	/* The mutations must leave enough tables valid to exercise the entry walk. */
	CHECK(accepted > 20000);
}

int main(void)
{
	unit_begin(__FILE__);
	RUN(checksum);
	RUN(full_table);
	RUN(header_only_and_flags);
	RUN(lapic_address_override);
	RUN(bad_headers);
	RUN(bad_entry_lengths);
	RUN(duplicate_cpus);
	RUN(limits);
	RUN(fuzz);
	return unit_end();
}
