#include "kstat_text.h"
#include "axrt.h"

const char *const kstat_names[KST_COUNT] = {
	[KST_KCALLS] = "kcalls", [KST_LINUX_CALLS] = "linux_calls", [KST_SWITCHES] = "switches",
	[KST_AS_SWITCHES] = "as_switches", [KST_IPI_RESCHED] = "ipi_resched", [KST_IPI_CALL] = "ipi_call",
	[KST_IPI_KICK] = "ipi_kick", [KST_BLOCKS] = "blocks", [KST_WAKES] = "wakes",
	[KST_DEVICE_IRQS] = "device_irqs", [KST_TICKS] = "ticks", [KST_IDLE_HALTS] = "idle_halts",
	[KST_KLOCK_CONTENDED] = "klock_contended", [KST_KLOCK_HALTS] = "klock_halts",
	[KST_KLOCK_WAIT_CYCLES] = "klock_wait_cycles", [KST_KLOCK_HOLD_CYCLES] = "klock_hold_cycles",
	[KST_WAIT_CALLS] = "wait_calls", [KST_WAIT_SLEEPS] = "wait_sleeps", [KST_IDLE_CYCLES] = "idle_cycles",
	[KST_IPI_SAVED] = "ipi_saved", [KST_WAKE_MOVES] = "wake_moves",
	[KST_WAKE_DEFERRED] = "wake_deferred", [KST_DEFER_MOVED] = "defer_moved",
	[KST_STEALS] = "steals", [KST_WAKE_RINGS] = "wake_rings",
	[KST_DEMAND_PAGES] = "demand_pages", [KST_IPI_CYCLES] = "ipi_cycles", [KST_TSC] = "tsc",
};

static const char *const kcall_names[KC_COUNT + 1] = {
	[KC_DEBUG_WRITE] = "debug_write", [KC_EXIT] = "exit", [KC_YIELD] = "yield", [KC_SELF] = "self",
	[KC_MODULE_INFO] = "module_info", [KC_SPAWN] = "spawn", [KC_SEND] = "send",
	[KC_RECEIVE] = "receive", [KC_CALL] = "call", [KC_REPLY] = "reply", [KC_SENDNB] = "sendnb",
	[KC_NOTIFY] = "notify", [KC_TIME] = "time", [KC_CPU] = "cpu", [KC_KILL] = "kill",
	[KC_POWEROFF] = "poweroff", [KC_INFO] = "info", [KC_SCHED] = "sched",
	[KC_MO_CREATE] = "mo_create", [KC_MO_MAP] = "mo_map", [KC_MO_UNMAP] = "mo_unmap",
	[KC_MO_GRANT] = "mo_grant", [KC_MO_REVOKE] = "mo_revoke", [KC_MO_DESTROY] = "mo_destroy",
	[KC_MO_PHYS] = "mo_phys", [KC_VCOPY] = "vcopy", [KC_WAIT] = "wait", [KC_PRIV] = "priv",
	[KC_IRQ_BIND] = "irq_bind", [KC_IRQ_UNMASK] = "irq_unmask", [KC_MMIO_MAP] = "mmio_map",
	[KC_PCI_CFG] = "pci_cfg", [KC_START] = "start", [KC_MODULE_MAP] = "module_map",
	[KC_LINUX_ROUTE] = "linux_route", [KC_LX_PID] = "lx_pid", [KC_LX_FORK] = "lx_fork",
	[KC_LX_THREAD] = "lx_thread", [KC_LX_EXEC] = "lx_exec", [KC_LX_SIGNAL] = "lx_signal",
	[KC_LX_MMAP] = "lx_mmap", [KC_LX_PASS] = "lx_pass", [KC_LEGACY] = "legacy",
	[KC_ALIVE] = "alive", [KC_TEXT] = "text", [KC_WAKE] = "wake", [KC_LX_MUNMAP] = "lx_munmap", [KC_MSI_BIND] = "msi_bind", [KC_COUNT] = "linux",
};

const char *kstat_kcall_name(uint32_t n) { return n <= KC_COUNT ? kcall_names[n] : NULL; }

int kstat_format(char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = 0;
	for (uint32_t k = 0; k < KST_COUNT; k++) {
		int64_t v = kcall2(KC_INFO, KI_STAT, k);
		if (v < 0)
			return -1;
		int n = ksnprintf(buf + len, size - len, "%s %lld\n", kstat_names[k], (long long)v);
		if (n < 0 || (size_t)n >= size - len)
			return (int)len; /* cut: what fits */
		len += (size_t)n;
	}
	for (uint32_t c = 0; c <= KC_COUNT; c++) {
		int64_t calls = kcall2(KC_INFO, KI_KCALL_STAT, c | KCS_CALLS << 8);
		if (calls < 0)
			return -1;
		if (!calls || !kcall_names[c])
			continue;
		int64_t w = kcall2(KC_INFO, KI_KCALL_STAT, c | KCS_WAIT_CYCLES << 8);
		int64_t h = kcall2(KC_INFO, KI_KCALL_STAT, c | KCS_HOLD_CYCLES << 8);
		int n = ksnprintf(buf + len, size - len, "kcall.%s %lld %lld %lld\n", kcall_names[c],
				  (long long)calls, (long long)w, (long long)h);
		if (n < 0 || (size_t)n >= size - len)
			return (int)len;
		len += (size_t)n;
	}
	for (uint32_t nr = 0; nr < LX_STAT_NRS; nr++) { /* the Linux calls made, by number */
		int64_t calls = kcall2(KC_INFO, KI_LX_STAT, nr);
		if (calls <= 0)
			continue;
		int n = ksnprintf(buf + len, size - len, "lx.%u %lld\n", nr, (long long)calls);
		if (n < 0 || (size_t)n >= size - len)
			return (int)len;
		len += (size_t)n;
	}
	return (int)len;
}

/* A thread's state as a word: "ready", "run", or what it is blocked in. */
static const char *state_word(int64_t st)
{
	static const char *const blocked[] = { "blocked", "send", "receive", "reply", "wait", "futex", "zombie" };
	switch (st & 0xff) {
	case 1:
		return "ready";
	case 2:
		return "run";
	case 3:
		return (uint64_t)(st >> 8 & 0xff) < sizeof(blocked) / sizeof(blocked[0]) ? blocked[st >> 8 & 0xff] : "blocked";
	}
	return "dead";
}

/* A process name from its KTS_NAME words (8 bytes each, little-endian; a failed read, < 0,
 * leaves its bytes as they were: zero). */
static void name_of_words(const int64_t *w, uint32_t nw, char *name)
{
	for (uint32_t k = 0; k < nw; k++)
		for (uint32_t b = 0; b < 8 && w[k] >= 0; b++)
			name[k * 8 + b] = (char)(w[k] >> (8 * b));
}

int threads_format(char *buf, size_t size)
{
	int len = ksnprintf(buf, size, "%-10s %-4s %-8s %10s %10s %10s %10s %-10s %s\n", "endpoint", "cpu", "state", "runs",
			    "cpu_ms", "kcalls", "notifies", "as", "name");
	if (len < 0 || (size_t)len >= size)
		return -1;
	for (uint32_t slot = 0;; slot++) {
		int64_t ep = kcall2(KC_INFO, KI_THREAD_STAT, slot);
		if (ep == -KE_SRCH)
			break;
		if (ep < 0)
			continue;
		int64_t f[KTS_NAME_END + 1] = { [KTS_ENDPOINT] = ep };
		for (uint32_t k = KTS_ENDPOINT + 1; k <= KTS_NAME_END; k++)
			f[k] = kcall2(KC_INFO, KI_THREAD_STAT, slot | (uint64_t)k << 32);
		if (kcall2(KC_INFO, KI_THREAD_STAT, slot) != ep)
			continue; /* ended or replaced while its fields were read */
		char name[33] = { 0 };
		name_of_words(&f[KTS_NAME], KTS_NAME_END - KTS_NAME + 1, name);
		char cpu[8];
		ksnprintf(cpu, sizeof(cpu), "%lld%s", (long long)(f[KTS_CPU] & 0xff), (f[KTS_CPU] & 0x100) ? "p" : "");
		int n = ksnprintf(buf + len, size - (size_t)len, "%-10llx %-4s %-8s %10lld %10lld %10lld %10lld %-10llx %s\n",
				  (long long)ep, cpu, state_word(f[KTS_STATE]), (long long)f[KTS_RUNS],
				  (long long)(f[KTS_CPU_US] / 1000), (long long)f[KTS_KCALLS], (long long)f[KTS_NOTIFIES],
				  (long long)f[KTS_AS], name[0] ? name : "?");
		if (n < 0 || n >= (int)size - len)
			break; /* cut: what fits */
		len += n;
	}
	return len;
}

/* A thread's process name by endpoint, from a table made once per switches_format. */
struct ep_name {
	uint32_t ep;
	char name[17];
};

#define SWT_IRQ_EP 0xffffffffll /* KSWF_WAKER: an interrupt */

static int ep_names(struct ep_name *t, int cap)
{
	int n = 0;
	for (uint32_t slot = 0; n < cap; slot++) {
		int64_t ep = kcall2(KC_INFO, KI_THREAD_STAT, slot);
		if (ep == -KE_SRCH)
			break;
		if (ep < 0)
			continue;
		int64_t w[2];
		for (uint32_t k = 0; k < 2; k++)
			w[k] = kcall2(KC_INFO, KI_THREAD_STAT, slot | (uint64_t)(KTS_NAME + k) << 32);
		t[n].ep = (uint32_t)ep;
		memset(t[n].name, 0, sizeof(t[n].name));
		name_of_words(w, 2, t[n].name);
		n++;
	}
	return n;
}

static const char *name_of(const struct ep_name *t, int n, uint32_t ep, char *hex, size_t cap)
{
	if (!ep)
		return "idle";
	for (int i = 0; i < n; i++)
		if (t[i].ep == ep)
			return t[i].name[0] ? t[i].name : "?";
	ksnprintf(hex, cap, "%x", ep); /* ended since */
	return hex;
}

/* Why a switch's first thread gave the CPU up, from KSWF_WHAT: the kernel call's name,
 * "lx.N" for Linux call N, or the cause. */
static void why_word(int64_t what, char *out, size_t cap)
{
	static const char *const causes[] = { [KSW_IRQ] = "irq", [KSW_PREEMPT] = "preempt", [KSW_IDLE] = "idle" };
	uint32_t call = (uint32_t)((uint64_t)what >> 16), kind = (uint32_t)(what >> 8 & 0xff);
	if (kind == KSW_KCALL)
		ksnprintf(out, cap, "%s", kstat_kcall_name(call) ? kstat_kcall_name(call) : "kcall");
	else if (kind == KSW_LINUX)
		ksnprintf(out, cap, "lx.%u", call);
	else
		ksnprintf(out, cap, "%s", kind < sizeof(causes) / sizeof(causes[0]) && causes[kind] ? causes[kind] : "other");
}

int switches_format(char *buf, size_t size)
{
	static struct ep_name names[256];
	int nn = ep_names(names, 256);
	int64_t count = kcall2(KC_INFO, KI_SWTRACE_COUNT, 0);
	if (count < 0)
		return -1;
	int len = ksnprintf(buf, size, "# seq tsc cpu from to why waker (the last switches; docs/benchmarks.md)\n");
	uint64_t lines = size / 64; /* what fits, about */
	uint64_t seq = (uint64_t)count > lines ? (uint64_t)count - lines : 0;
	for (; seq < (uint64_t)count; seq++) {
		int64_t tsc = kcall2(KC_INFO, KI_SWTRACE, seq << 3 | KSWF_TSC);
		int64_t from = kcall2(KC_INFO, KI_SWTRACE, seq << 3 | KSWF_FROM);
		int64_t to = kcall2(KC_INFO, KI_SWTRACE, seq << 3 | KSWF_TO);
		int64_t waker = kcall2(KC_INFO, KI_SWTRACE, seq << 3 | KSWF_WAKER);
		int64_t what = kcall2(KC_INFO, KI_SWTRACE, seq << 3 | KSWF_WHAT);
		if (tsc < 0 || from < 0 || to < 0 || waker < 0 || what < 0)
			continue; /* overwritten while we read */
		char why[24], h1[12], h2[12], h3[12];
		why_word(what, why, sizeof(why));
		const char *wk = waker == SWT_IRQ_EP ? "irq" : waker ? name_of(names, nn, (uint32_t)waker, h3, sizeof(h3)) : "kernel";
		int n = ksnprintf(buf + len, size - (size_t)len, "%llu %llu %u %s %s %s %s\n", (unsigned long long)seq,
				  (unsigned long long)tsc, (unsigned)(what & 0xff), name_of(names, nn, (uint32_t)from, h1, sizeof(h1)),
				  name_of(names, nn, (uint32_t)to, h2, sizeof(h2)), why, wk);
		if (n < 0 || n >= (int)size - len)
			break;
		len += n;
	}
	return len;
}
