/* Exception and interrupt dispatch, full state dumps, exception fix-ups. */
#include "linux/hooks.h"
#include "arch/trap.h"
#include "arch/x86.h"
#include "arch/lapic.h"
#include "console/log.h"
#include "core/panic.h"
#include "core/backtrace.h"
#include "smp/percpu.h"
#include "proc/proc.h"
#include "proc/sched.h"
#include "proc/demand.h"
#include "proc/text.h"

static irq_handler_t handlers[256];

static const char *const exc_names[32] = {
	"divide error", "debug", "NMI", "breakpoint", "overflow", "bound range", "invalid opcode",
	"device not available", "double fault", "coprocessor overrun", "invalid TSS",
	"segment not present", "stack fault", "general protection", "page fault", "reserved",
	"x87 error", "alignment check", "machine check", "SIMD error", "virtualization",
	"control protection", "reserved", "reserved", "reserved", "reserved", "reserved",
	"reserved", "hypervisor injection", "VMM communication", "security", "reserved",
};

void trap_set_handler(int vector, irq_handler_t h) { handlers[vector] = h; }

void trap_dump(const struct trap_frame *f)
{
	const char *name = f->vector < 32 ? exc_names[f->vector] : "interrupt";
	kprintf("TRAP %llu (%s) on cpu%u error=%#llx\n", (unsigned long long)f->vector, name,
		this_cpu_index(), (unsigned long long)f->error);
	if (f->vector == 14) {
		uint64_t e = f->error;
		kprintf("  page fault at CR2=0x%016llx: %s, %s, %s%s\n", (unsigned long long)read_cr2(),
			e & 1 ? "protection violation" : "page not present", e & 2 ? "write" : "read",
			e & 4 ? "user" : "kernel", e & 16 ? ", instruction fetch" : "");
	}
	kprintf("  RIP=0x%016llx CS=0x%04llx RFLAGS=0x%016llx\n", (unsigned long long)f->rip,
		(unsigned long long)f->cs, (unsigned long long)f->rflags);
	kprintf("  RSP=0x%016llx SS=0x%04llx\n", (unsigned long long)f->rsp, (unsigned long long)f->ss);
	kprintf("  RAX=0x%016llx RBX=0x%016llx RCX=0x%016llx\n", (unsigned long long)f->rax,
		(unsigned long long)f->rbx, (unsigned long long)f->rcx);
	kprintf("  RDX=0x%016llx RSI=0x%016llx RDI=0x%016llx\n", (unsigned long long)f->rdx,
		(unsigned long long)f->rsi, (unsigned long long)f->rdi);
	kprintf("  RBP=0x%016llx R8 =0x%016llx R9 =0x%016llx\n", (unsigned long long)f->rbp,
		(unsigned long long)f->r8, (unsigned long long)f->r9);
	kprintf("  R10=0x%016llx R11=0x%016llx R12=0x%016llx\n", (unsigned long long)f->r10,
		(unsigned long long)f->r11, (unsigned long long)f->r12);
	kprintf("  R13=0x%016llx R14=0x%016llx R15=0x%016llx\n", (unsigned long long)f->r13,
		(unsigned long long)f->r14, (unsigned long long)f->r15);
	kprintf("  CR0=0x%016llx CR2=0x%016llx CR3=0x%016llx CR4=0x%016llx\n",
		(unsigned long long)read_cr0(), (unsigned long long)read_cr2(),
		(unsigned long long)read_cr3(), (unsigned long long)read_cr4());
	if (f->cs & 3)
		return; /* user frames are not the kernel's to walk */
	backtrace_print_trap(f->rip, f->rsp, f->rbp);
}

static bool fixup(struct trap_frame *f)
{
	extern const struct extable_entry _extable_start[], _extable_end[];
	for (const struct extable_entry *e = _extable_start; e < _extable_end; e++) {
		if (e->insn == f->rip) {
			f->rip = e->fixup;
			return true;
		}
	}
	return false;
}

void trap_dispatch(struct trap_frame *f)
{
	uint64_t v = f->vector;
	bool from_user = f->cs & 3;
	if (v == 2) {
		nmi_handler(f);
		return;
	}
	if (v < 32) {
		if (v == 14 && demand_fault(f)) /* a lazy object's page, made now: retry */
			return;
		if (from_user) {
			proc_fault(f); /* stops the process; never returns */
			return;
		}
		if ((v == 14 || v == 13) && fixup(f))
			return;
		trap_dump(f);
		panic("unhandled %s in kernel mode", exc_names[v]);
	}
	struct thread *cur = current_thread();
	if (from_user && cur->proc)
		text_sample(cur->proc, f->rip);
	this_cpu()->irq_depth++;
	if (handlers[v]) {
		handlers[v](f);
	} else if (v == VEC_SPURIOUS || (v >= VEC_PIC_BASE && v < VEC_PIC_BASE + 16)) {
		/* spurious LAPIC interrupt, or a spurious IRQ7/15 of the masked PIC: no EOI */
	} else {
		pr_warn("unexpected interrupt vector %llu", (unsigned long long)v);
		lapic_eoi();
	}
	this_cpu()->irq_depth--;
	if (from_user) {
		sched_user_return();
		signal_user_return(f);
	}
}

int probe_read(uint64_t va, uint64_t *out)
{
	uint64_t val = 0;
	int64_t err;
	__asm__ volatile("1: movq (%[va]), %[val]\n\t"
			 "xorl %k[err], %k[err]\n\t"
			 "jmp 3f\n"
			 "2: movq $-1, %[err]\n"
			 "3:\n\t"
			 ".pushsection .extable, \"a\"\n\t"
			 ".balign 8\n\t"
			 ".quad 1b, 2b\n\t"
			 ".popsection"
			 : [val] "+r"(val), [err] "=&r"(err)
			 : [va] "r"(va)
			 : "memory");
	*out = val;
	return (int)err;
}
