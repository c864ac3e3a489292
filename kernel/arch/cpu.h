/* CPU identification and the features Axolotl cares about. */
#pragma once
#include "lib/types.h"

struct cpu_features {
	bool monitor;     /* MONITOR/MWAIT */
	bool x2apic;
	bool invtsc;      /* invariant TSC */
	bool rdtscp;      /* RDTSCP and the TSC_AUX MSR (the vDSO's getcpu) */
	bool pcid;
	bool invpcid;
	bool nx;
	bool pdpe1gb;
	bool apic;
	uint32_t mwait_min, mwait_max; /* monitor line sizes, when monitor */
	char vendor[13];
	char model[49];
};

void cpu_detect(struct cpu_features *f);
/* "monitor=1 x2apic=0 ..." for logs and the test harness. */
int cpu_features_str(const struct cpu_features *f, char *buf, size_t len);
