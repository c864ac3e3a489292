#include "arch/cpu.h"
#include "arch/x86.h"
#include "lib/printf.h"
#include "lib/string.h"

void cpu_detect(struct cpu_features *f)
{
	uint32_t a, b, c, d, maxl, maxe;
	memset(f, 0, sizeof(*f));
	cpuid(0, 0, &maxl, &b, &c, &d);
	memcpy(f->vendor, &b, 4);
	memcpy(f->vendor + 4, &d, 4);
	memcpy(f->vendor + 8, &c, 4);
	cpuid(1, 0, &a, &b, &c, &d);
	f->monitor = c & (1u << 3);
	f->pcid = c & (1u << 17);
	f->x2apic = c & (1u << 21);
	f->apic = d & (1u << 9);
	if (maxl >= 5 && f->monitor) {
		cpuid(5, 0, &a, &b, &c, &d);
		f->mwait_min = a & 0xffff;
		f->mwait_max = b & 0xffff;
	}
	if (maxl >= 7) {
		cpuid(7, 0, &a, &b, &c, &d);
		f->invpcid = b & (1u << 10);
	}
	cpuid(0x80000000, 0, &maxe, &b, &c, &d);
	if (maxe >= 0x80000001) {
		cpuid(0x80000001, 0, &a, &b, &c, &d);
		f->nx = d & (1u << 20);
		f->pdpe1gb = d & (1u << 26);
		f->rdtscp = d & (1u << 27);
	}
	if (maxe >= 0x80000004) {
		uint32_t *m = (uint32_t *)f->model;
		for (uint32_t l = 0; l < 3; l++)
			cpuid(0x80000002 + l, 0, &m[l * 4], &m[l * 4 + 1], &m[l * 4 + 2], &m[l * 4 + 3]);
		f->model[48] = 0;
	}
	if (maxe >= 0x80000007) {
		cpuid(0x80000007, 0, &a, &b, &c, &d);
		f->invtsc = d & (1u << 8);
	}
}

int cpu_features_str(const struct cpu_features *f, char *buf, size_t len)
{
	return ksnprintf(buf, len, "monitor=%d x2apic=%d invtsc=%d pcid=%d nx=%d rdtscp=%d",
			 f->monitor, f->x2apic, f->invtsc, f->pcid, f->nx, f->rdtscp);
}
