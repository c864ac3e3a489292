#include "smp/smp.h"
#include "smp/percpu.h"
#include "smp/ipi.h"
#include "acpi/acpi.h"
#include "arch/desc.h"
#include "arch/lapic.h"
#include "arch/time.h"
#include "arch/x86.h"
#include "console/log.h"
#include "mm/heap.h"
#include "mm/vmm.h"
#include "lib/string.h"
#include "core/config.h"
#include "core/panic.h"
#include "proc/sched.h"

extern char ap_tramp_start[], ap_tramp_end[], ap_tramp_params[];
extern char boot_pml4[];
extern void ap_start64(void);

struct tramp_params {
	uint32_t boot_cr3, nx;
	uint64_t entry, cpu, kernel_cr3, stack;
} __packed;

void cpu_bringup(struct cpu *c)
{
	percpu_install(c);
	desc_init_cpu(c);
	write_cr4(read_cr4() | CR4_PGE);
	cpu_detect(&c->feat);
	lapic_init_cpu();
	lapic_timer_start(kernel_hz);
}

__noreturn void ap_main(struct cpu *c);
__noreturn void ap_main(struct cpu *c)
{
	cpu_bringup(c);
	uint32_t id = lapic_id();
	if (id != c->apic_id)
		pr_warn("cpu%u: LAPIC reports ID %u, MADT said %u", c->index, id, c->apic_id);
	sched_init_cpu();
	syscall_init_cpu();
	__atomic_fetch_add(&ncpus_online, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&c->online, true, __ATOMIC_RELEASE);
	sched_idle_loop();
}

static bool start_ap(struct cpu *c)
{
	struct tramp_params *p =
		phys_to_virt(AP_TRAMPOLINE + (uint64_t)(ap_tramp_params - ap_tramp_start));
	memcpy(phys_to_virt(AP_TRAMPOLINE), ap_tramp_start, (size_t)(ap_tramp_end - ap_tramp_start));
	p->boot_cr3 = (uint32_t)((uint64_t)boot_pml4 - KERNEL_VMA);
	p->nx = pte_nx != 0;
	p->entry = (uint64_t)ap_start64;
	p->cpu = (uint64_t)c;
	p->kernel_cr3 = vmm_kernel_cr3();
	p->stack = c->stack_top;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);

	smp_send_ipi(c->apic_id, ICR_INIT | ICR_ASSERT);
	udelay(10000);
	for (int attempt = 0; attempt < 2; attempt++) {
		smp_send_ipi(c->apic_id, ICR_STARTUP | (AP_TRAMPOLINE >> 12));
		/* The SDM asks for 200 us between SIPIs; TCG vCPUs may take far longer to run. */
		for (uint64_t t0 = time_us_since_boot(); time_us_since_boot() - t0 < (attempt ? 3000000 : 200000);)
			if (__atomic_load_n(&c->online, __ATOMIC_ACQUIRE))
				return true;
	}
	/* Park a late starter in wait-for-SIPI so it cannot run the trampoline we reuse next. */
	smp_send_ipi(c->apic_id, ICR_INIT | ICR_ASSERT);
	return false;
}

void smp_boot_aps(void)
{
	if (!madt_found)
		return;
	uint32_t bsp_apic = cpus[0]->apic_id;
	for (uint32_t i = 0; i < madt.ncpus && ncpus < MAX_CPUS; i++) {
		uint32_t apic = madt.cpus[i].apic_id;
		if (apic == bsp_apic) {
			cpus[0]->acpi_uid = madt.cpus[i].uid;
			continue;
		}
		if (apic > 254 && !lapic_x2apic_mode()) {
			pr_warn("smp: cpu with APIC ID %u needs x2APIC, which is off; not started", apic);
			continue;
		}
		struct cpu *c = kzalloc(sizeof(*c));
		if (!c)
			panic("smp: out of memory for cpu structures");
		c->index = ncpus;
		c->apic_id = apic;
		c->acpi_uid = madt.cpus[i].uid;
		c->stack_top = vmm_alloc_stack(KSTACK_PAGES);
		cpus[ncpus] = c;
		ncpus++;
		if (!start_ap(c))
			pr_err("smp: cpu%u (APIC ID %u) did not come online", c->index, apic);
	}
}
