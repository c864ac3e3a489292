#include "core/panic.h"
#include "core/backtrace.h"
#include "core/hang_report.h"
#include "console/log.h"
#include "arch/x86.h"
#include "arch/lapic.h"
#include "arch/time.h"
#include "arch/trap.h"
#include "boot/bootinfo.h"
#include "boot/cmdline.h"
#include "lib/printf.h"
#include "smp/percpu.h"

static volatile uint32_t panicking;
static volatile uint32_t halted_cpus;

__noreturn static void halt_forever(void)
{
	for (;;) {
		irq_disable();
		hlt();
	}
}

__noreturn void qemu_exit(uint32_t v)
{
	/* isa-debug-exit exists only in QEMU and only when the harness asks for it. */
	if (cmdline_has(boot_info.cmdline, "qemu_exit"))
		outl(0xf4, v);
	halt_forever();
}

void nmi_handler(struct trap_frame *f)
{
	if (!panicking) {
		hang_report(f);
		return;
	}
	/* CPUs take turns so their dumps do not interleave; the wait is bounded because a
	 * CPU may die while printing. */
	static volatile uint32_t dump_turn;
	for (uint64_t t0 = time_us_since_boot();
	     __atomic_exchange_n(&dump_turn, 1, __ATOMIC_ACQUIRE) && time_us_since_boot() - t0 < 500000;)
		cpu_relax();
	uint64_t off = 0;
	const char *fn = ksym_lookup(f->rip, &off);
	kprintf("cpu%u halted by panic NMI at %#llx (%s+%#llx) rsp=%#llx\n", this_cpu_index(),
		(unsigned long long)f->rip, fn ? fn : "?", (unsigned long long)off,
		(unsigned long long)f->rsp);
	trap_dump(f);
	__atomic_store_n(&dump_turn, 0, __ATOMIC_RELEASE);
	__atomic_fetch_add(&halted_cpus, 1, __ATOMIC_SEQ_CST);
	halt_forever();
}

__noreturn void panic(const char *fmt, ...)
{
	irq_disable();
	if (__atomic_exchange_n(&panicking, 1, __ATOMIC_SEQ_CST))
		halt_forever(); /* another CPU is already panicking and will NMI us */
	console_break_locks();

	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	kvsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	kprintf("\nKERNEL PANIC on cpu%u: %s\n", this_cpu_index(), msg);
	uint64_t caller_rbp = 0;
	probe_read(read_rbp(), &caller_rbp);
	backtrace_print((uint64_t)__builtin_return_address(0), caller_rbp);

	uint32_t others = ncpus_online > 0 ? ncpus_online - 1 : 0;
	if (others && lapic_ready()) {
		lapic_send_nmi_all_others();
		for (uint64_t t0 = time_us_since_boot(); halted_cpus < others;) {
			cpu_relax();
			if (time_us_since_boot() - t0 > 2000000)
				break;
		}
	}
	kprintf("PANIC: halted %u of %u other CPUs\n", halted_cpus, others);
	qemu_exit(3);
}
