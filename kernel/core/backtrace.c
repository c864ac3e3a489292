/* Frame-pointer backtraces, symbolised with the table tools/gen-ksyms.sh links into .ksyms. */
#include "core/backtrace.h"
#include "console/log.h"
#include "mm/vmm.h"
#include "arch/trap.h"

struct ksym {
	uint64_t addr;
	const char *name;
};
extern const uint64_t _ksyms_start[], _ksyms_end[];

const char *ksym_lookup(uint64_t addr, uint64_t *offset)
{
	if (_ksyms_end - _ksyms_start < 1)
		return NULL;
	uint64_t n = _ksyms_start[0];
	const struct ksym *t = (const struct ksym *)(_ksyms_start + 1);
	if (!n || addr < t[0].addr)
		return NULL;
	uint64_t lo = 0, hi = n; /* find the last symbol with addr <= target */
	while (hi - lo > 1) {
		uint64_t mid = (lo + hi) / 2;
		if (t[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	extern char _text_end[];
	if (addr >= (uint64_t)_text_end)
		return NULL;
	*offset = addr - t[lo].addr;
	return t[lo].name;
}

static void print_frame(int depth, uint64_t addr)
{
	uint64_t off = 0;
	const char *name = ksym_lookup(addr, &off);
	if (name)
		kprintf("  #%d 0x%016llx %s+%#llx\n", depth, (unsigned long long)addr, name,
			(unsigned long long)off);
	else
		kprintf("  #%d 0x%016llx ?\n", depth, (unsigned long long)addr);
}

static bool in_text(uint64_t a)
{
	extern char _text_start[], _text_end[];
	return a >= (uint64_t)_text_start && a < (uint64_t)_text_end;
}

static void walk_frames(uint64_t rbp)
{
	for (int depth = 1; depth < 32 && rbp; depth++) {
		uint64_t next, ret;
		/* Read through probe_read: a corrupt chain must not fault inside the panic path. */
		if ((rbp & 7) || probe_read(rbp, &next) || probe_read(rbp + 8, &ret) || !ret)
			break;
		print_frame(depth, ret);
		if (next <= rbp)
			break;
		rbp = next;
	}
}

void backtrace_print(uint64_t rip, uint64_t rbp)
{
	kprintf("  backtrace:\n");
	print_frame(0, rip);
	walk_frames(rbp);
}

void backtrace_print_trap(uint64_t rip, uint64_t rsp, uint64_t rbp)
{
	kprintf("  backtrace:\n");
	print_frame(0, rip);
	/* A frameless leaf function leaves its caller's return address at the top of the stack
	 * and no frame for it in the rbp chain. Show it, marked as a guess (like Linux's "?"). */
	uint64_t top, first_ret = 0;
	if (rbp && !(rbp & 7))
		probe_read(rbp + 8, &first_ret);
	if (!probe_read(rsp, &top) && in_text(top) && top != first_ret) {
		uint64_t off = 0;
		const char *name = ksym_lookup(top, &off);
		kprintf("  ? %#018llx %s+%#llx (return address at RSP)\n", (unsigned long long)top,
			name ? name : "?", (unsigned long long)off);
	}
	walk_frames(rbp);
}
