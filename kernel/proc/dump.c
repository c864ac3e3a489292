#include "proc/dump.h"
#include "proc/proc.h"
#include "proc/klock.h"
#include "core/backtrace.h"
#include "console/log.h"
#include "lib/printf.h"
#include "smp/percpu.h"

static const char *state_name(enum thread_state s)
{
	static const char *const n[] = {"free", "ready", "running", "blocked", "dead"};
	return (unsigned)s < sizeof(n) / sizeof(n[0]) ? n[s] : "?";
}

static const char *block_name(enum block_reason b)
{
	static const char *const n[] = {"", "send", "receive", "reply", "wait", "futex", "zombie"};
	return (unsigned)b < sizeof(n) / sizeof(n[0]) ? n[b] : "?";
}

static const char *name_of(const struct thread *t) { return t && t->proc ? t->proc->name : "-"; }

void dump_this_cpu(const struct trap_frame *f)
{
	struct cpu *c = this_cpu();
	const struct thread *t = c->current;
	bool user = f->cs & 3;
	uint64_t off = 0;
	const char *fn = user ? NULL : ksym_lookup(f->rip, &off);
	char where[96];
	if (user)
		ksnprintf(where, sizeof(where), "user %#llx", (unsigned long long)f->rip);
	else
		ksnprintf(where, sizeof(where), "kernel %#llx %s+%#llx", (unsigned long long)f->rip, fn ? fn : "?",
			  (unsigned long long)off);
	kprintf("hang-report cpu%u: %s%s slot %u at %s klock=%u\n", this_cpu_index(), t == c->idle ? "idle " : "",
		name_of(t), t ? t->slot : 0, where, kernel_lock);
}

void dump_threads(void)
{
	for (uint32_t i = 1; i < MAX_THREADS; i++) {
		const struct thread *t = &threads[i];
		if (t->state == T_FREE || !t->proc)
			continue;
		kprintf("hang-report thread %u %s: %s %s peer %#x cpu %d%s prio %u runs %llu kcalls %llu "
			"notify %#llx rip %#llx\n",
			i, t->proc->name, state_name(t->state), block_name(t->blocked_on), t->ipc_peer, t->cpu,
			t->pinned >= 0 ? " pinned" : "", t->prio, (unsigned long long)t->runs,
			(unsigned long long)t->kcalls, (unsigned long long)t->notify_pending,
			(unsigned long long)(t->uframe ? t->uframe->rip : 0));
	}
}
