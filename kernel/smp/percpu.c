#include "smp/percpu.h"
#include "arch/x86.h"

struct cpu *cpus[MAX_CPUS];
volatile uint32_t ncpus = 1;
volatile uint32_t ncpus_online;

void percpu_install(struct cpu *c)
{
	c->self = c;
	wrmsr(MSR_GS_BASE, (uint64_t)c);
	wrmsr(MSR_KERNEL_GS_BASE, 0);
}
