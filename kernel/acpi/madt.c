#include "acpi/madt.h"
#include "lib/bytes.h"

bool acpi_checksum_ok(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint8_t sum = 0;
	for (size_t i = 0; i < len; i++)
		sum = (uint8_t)(sum + b[i]);
	return sum == 0;
}

static void add_cpu(struct madt_info *m, uint32_t apic_id, uint32_t uid, uint32_t flags, bool x2)
{
	/* Bit 0: enabled. Bit 1 (online capable, hot-plug) CPUs are not started at boot. */
	if (!(flags & 1))
		return;
	for (uint32_t i = 0; i < m->ncpus; i++) {
		if (m->cpus[i].apic_id == apic_id) {
			m->skipped_cpus++;
			return;
		}
	}
	if (m->ncpus >= MADT_MAX_CPUS) {
		m->skipped_cpus++;
		return;
	}
	m->cpus[m->ncpus++] = (struct madt_cpu){ apic_id, uid, x2 };
}

int madt_parse(const void *table, size_t len, struct madt_info *m)
{
	const uint8_t *t = table;
	uint8_t *clear = (uint8_t *)m;
	for (size_t i = 0; i < sizeof(*m); i++)
		clear[i] = 0;
	if (len < 44 || t[0] != 'A' || t[1] != 'P' || t[2] != 'I' || t[3] != 'C')
		return -1;
	uint32_t tlen = rd32(t + 4);
	if (tlen < 44 || tlen > len)
		return -1;
	m->lapic_addr = rd32(t + 36);
	m->pcat_compat = rd32(t + 40) & 1;

	for (uint32_t off = 44; off + 2 <= tlen;) {
		const uint8_t *e = t + off;
		uint8_t type = e[0], elen = e[1];
		if (elen < 2 || off + elen > tlen) {
			m->bad_entries++;
			break; /* cannot find the next entry */
		}
		switch (type) {
		case 0: /* processor local APIC */
			if (elen >= 8)
				add_cpu(m, e[3], e[2], rd32(e + 4), false);
			else
				m->bad_entries++;
			break;
		case 1: /* I/O APIC */
			if (elen >= 12 && m->nioapics < MADT_MAX_IOAPICS) {
				m->ioapics[m->nioapics].id = e[2];
				m->ioapics[m->nioapics].addr = rd32(e + 4);
				m->ioapics[m->nioapics].gsi_base = rd32(e + 8);
				m->nioapics++;
			} else if (elen < 12) {
				m->bad_entries++;
			}
			break;
		case 2: /* interrupt source override */
			if (elen >= 10 && m->nisos < MADT_MAX_ISOS) {
				m->isos[m->nisos].irq = e[3];
				m->isos[m->nisos].gsi = rd32(e + 4);
				m->isos[m->nisos].flags = rd16(e + 8);
				m->nisos++;
			} else if (elen < 10) {
				m->bad_entries++;
			}
			break;
		case 5: /* 64-bit local APIC address override */
			if (elen >= 12)
				m->lapic_addr = rd64(e + 4);
			else
				m->bad_entries++;
			break;
		case 9: /* processor local x2APIC */
			if (elen >= 16)
				add_cpu(m, rd32(e + 4), rd32(e + 12), rd32(e + 8), true);
			else
				m->bad_entries++;
			break;
		default:
			break;
		}
		off += elen;
	}
	return 0;
}
