/* Boot CPU start-up: from the Multiboot2 hand-off to all CPUs online, then the self-tests
 * when the command line asks for them, else the idle loop. */
#include "acpi/acpi.h"
#include "proc/klock.h"
#include "arch/ioapic.h"
#include "arch/lapic.h"
#include "arch/time.h"
#include "arch/trap.h"
#include "boot/bootinfo.h"
#include "boot/cmdline.h"
#include "console/log.h"
#include "console/serial.h"
#include "arch/rtc.h"
#include "console/vga.h"
#include "core/config.h"
#include "core/ktest.h"
#include "core/panic.h"
#include "mm/pmm.h"
#include "mm/vmm.h"
#include "smp/ipi.h"
#include "smp/percpu.h"
#include "smp/smp.h"
#include "proc/proc.h"
#include "proc/root.h"
#include "proc/sched.h"
#include "linux/hooks.h"
#include "proc/wait.h"
#include "lib/printf.h"
#include "lib/string.h"

#define MB2_BOOT_MAGIC 0x36d76289u

struct boot_info boot_info;
uint32_t kernel_hz = 100;
static struct cpu cpu0 __aligned(4096);

static void timer_irq(struct trap_frame *f)
{
	this_cpu()->ticks++;
	lapic_eoi();
	sched_tick(f);
	wait_timer_tick();
	root_watch_tick(f);
}

static uint32_t parse_u32(const char *s, uint32_t dflt)
{
	uint32_t v = 0;
	if (!*s)
		return dflt;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return dflt;
		v = v * 10 + (uint32_t)(*s - '0');
	}
	return v;
}

static void apply_cmdline(void)
{
	char v[64];
	if (cmdline_get(boot_info.cmdline, "loglevel", v, sizeof(v)))
		log_set_level((enum log_level)MIN(parse_u32(v, LOG_INFO), (uint32_t)LOG_DEBUG));
	if (cmdline_get(boot_info.cmdline, "hz", v, sizeof(v))) {
		uint32_t hz = parse_u32(v, 100);
		kernel_hz = hz >= 10 && hz <= 10000 ? hz : 100;
	}
}

static void banner(void)
{
	kprintf("\nAxolotl " AXOLOTL_VERSION " x86-64 microkernel\n");
	kprintf("boot: %s, command line \"%s\"\n", boot_info.loader[0] ? boot_info.loader : "unknown loader",
		boot_info.cmdline);
	kprintf("memory: %llu MiB usable, %llu MiB free, highest usable address %#llx\n",
		(unsigned long long)(pmm_total_usable() >> 20),
		(unsigned long long)(pmm_free_frames() * PAGE_SIZE >> 20),
		(unsigned long long)pmm_max_phys());
	kprintf("cpus: %u online of %u listed (%s), TSC %llu MHz, LAPIC timer %llu kHz, tick %u Hz\n",
		ncpus_online, ncpus, lapic_x2apic_mode() ? "x2APIC" : "xAPIC",
		(unsigned long long)(tsc_hz / 1000000), (unsigned long long)(lapic_timer_hz() / 1000),
		kernel_hz);
	kprintf("cpu model: %s\n", cpu0.feat.model);
	const struct boot_fb *fb = &boot_info.fb;
	if (fb->type == FB_TYPE_EGA_TEXT)
		kprintf("console: serial%s, VGA text %ux%u\n", serial_present() ? " COM1" : " (absent)",
			fb->width, fb->height);
	else if (fb->type == FB_TYPE_RGB)
		kprintf("console: serial%s; %ux%ux%u framebuffer at %#llx is not used for text\n",
			serial_present() ? " COM1" : " (absent)", fb->width, fb->height, fb->bpp,
			(unsigned long long)fb->addr);
	else
		kprintf("console: serial%s\n", serial_present() ? " COM1" : " (absent)");
	for (uint32_t i = 0; i < ncpus; i++) {
		struct cpu *c = cpus[i];
		char feat[128];
		cpu_features_str(&c->feat, feat, sizeof(feat));
		kprintf("cpu%u apic=%u %s %s %s\n", i, c->apic_id, c->bsp ? "bsp" : "ap",
			c->online ? "online" : "offline", feat);
	}
	kprintf("AXOLOTL READY\n");
}

__noreturn void kmain(uint32_t magic, uint32_t mbi_phys);
__noreturn void kmain(uint32_t magic, uint32_t mbi_phys)
{
	/* GS must point at cpu0 before anything logs: the log prefix reads the CPU index. */
	cpu0.bsp = true;
	cpus[0] = &cpu0;
	percpu_install(&cpu0);
	serial_init();
	if (magic != MB2_BOOT_MAGIC) {
		kprintf("Axolotl: not started by a Multiboot2 loader (magic %#x)\n", magic);
		for (;;)
			hlt();
	}
	const uint32_t *mbi = phys_to_virt(mbi_phys);
	int perr = bootinfo_parse(&boot_info, mbi, mbi_phys, MIN(mbi[0], (uint32_t)MiB(1)));
	apply_cmdline();
	if (perr)
		pr_warn("boot information is malformed (error %d); using what could be read", perr);

	pmm_init(&boot_info);
	vmm_init();
	extern char boot_stack_top[];
	cpu0.stack_top = (uint64_t)boot_stack_top;
	desc_init_cpu(&cpu0);
	vga_init(&boot_info);
	cpu_detect(&cpu0.feat);
	time_calibrate();
	rtc_init();
	pr_info("Axolotl " AXOLOTL_VERSION ": %u MiB usable RAM, TSC %llu MHz",
		(unsigned)(pmm_total_usable() >> 20), (unsigned long long)(tsc_hz / 1000000));

	acpi_init();
	pic_disable();
	lapic_setup(madt_found ? madt.lapic_addr : 0,
		    cpu0.feat.x2apic && !cmdline_has(boot_info.cmdline, "nox2apic"));
	trap_set_handler(VEC_TIMER, timer_irq);
	ipi_init();
	klock_init();
	lapic_init_cpu();
	cpu0.apic_id = lapic_id();
	lapic_timer_calibrate();
	ioapic_init();
	lapic_timer_start(kernel_hz);
	cpu0.online = true;
	ncpus_online = 1;
	sched_init_cpu();
	syscall_init_cpu();
	irq_enable();

	smp_boot_aps();
	vdso_init(); /* time, the RTC and every CPU's TSC_AUX are set by now */
	banner();

	char tests[256];
	if (cmdline_get(boot_info.cmdline, "tests", tests, sizeof(tests)))
		qemu_exit(ktest_run(tests) ? 0x11 : 0x10);
	proc_start_init();
	sched_idle_loop();
}
