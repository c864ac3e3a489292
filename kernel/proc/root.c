/* The root service: boot module 0 (rs), the parent of every service. It holds every
 * privilege, so nobody but the kernel can bring it back. When it dies (a crash, an exit, a
 * kill by itself) the kernel starts module 0 again with `restarted=N` appended, gives it the
 * dead root's memory-object handles with the same numbers (a legacy, proc/legacy.c: rs keeps
 * its service table in an object of its own) and makes it the parent of the dead root's
 * children and the keeper of their legacies. Kernel reports about children that arrive
 * meanwhile wait in its queue. A root that dies within a second of its start RESTART_LIMIT
 * times in a row is not started again (the machine runs on without one).
 *
 * Its watchdog: a root that armed it (KC_ALIVE(timeout_ms), called again as its beat) and
 * does not beat for the timeout is killed at a tick of CPU 0, unless it had too little CPU
 * to beat with (rootwatch.h); its death then starts it again as above. */
#include "proc/root.h"
#include "proc/rootwatch.h"
#include "proc/legacy.h"
#include "proc/sched.h"
#include "proc/klock.h"
#include "boot/bootinfo.h"
#include "console/log.h"
#include "arch/time.h"
#include "core/config.h"
#include "smp/percpu.h"
#include "mm/vmm.h"
#include "lib/string.h"
#include "lib/printf.h"

#define QUICK_DEATH_US 1000000
#define RESTART_LIMIT 5

static endpoint_t root_id;
static uint32_t restarts, quick_deaths;
static uint64_t started_us;

/* The watchdog, under the kernel lock but for due_tick, which CPU 0's tick reads without it. */
static struct {
	uint64_t due_tick;        /* CPU 0's tick count at which to look; UINT64_MAX: unarmed */
	uint64_t beat_us, cpu_us; /* the last beat, and the root's CPU time then */
	uint64_t timeout_us;
	bool starved_logged;      /* since the last beat */
} watch = { .due_tick = UINT64_MAX };

static struct proc *root_spawn(void)
{
	const struct boot_module *m = &boot_info.mods[0];
	char name[32], args[256];
	/* Module command line: "<name> [args...]". */
	const char *c = m->cmdline;
	size_t i = 0;
	while (*c == ' ')
		c++;
	while (*c && *c != ' ' && i < sizeof(name) - 1)
		name[i++] = *c++;
	name[i] = 0;
	const char *slash = name;
	for (const char *q = name; *q; q++)
		if (*q == '/')
			slash = q + 1;
	while (*c == ' ')
		c++;
	ksnprintf(args, sizeof(args), restarts ? "%s restarted=%u" : "%s", c, restarts);
	int err;
	struct proc *p = proc_spawn_elf(phys_to_virt(m->start), m->end - m->start, slash, args, EP_NONE, -1, 0,
					true, &err);
	if (!p) {
		pr_err("cannot start the first module %s: error %d", name, err);
		return NULL;
	}
	devpriv_grant_all(p); /* the first process holds every privilege */
	p->keep_handles = true;
	root_id = p->id;
	started_us = time_us_since_boot();
	return p;
}

void proc_start_init(void)
{
	if (!boot_info.nmods) {
		pr_info("no boot modules: no user space to start");
		return;
	}
	klock();
	struct proc *p = root_spawn();
	if (p) {
		p->stopped = false;
		sched_make_ready(p->main);
	}
	kunlock();
}

void root_died(struct proc *old)
{
	if (old->id != root_id)
		return;
	WRITE_ONCE(watch.due_tick, UINT64_MAX); /* the next root arms it again */
	quick_deaths = time_us_since_boot() - started_us < QUICK_DEATH_US ? quick_deaths + 1 : 0;
	if (quick_deaths >= RESTART_LIMIT) {
		pr_err("%s died %u times within a second of starting: not started again", old->name, quick_deaths);
		legacy_drop_of(old->id);
		root_id = 0;
		return;
	}
	restarts++;
	struct proc *p = root_spawn();
	if (!p) {
		legacy_drop_of(old->id);
		return;
	}
	/* With its handles, its children, the legacies it kept for them and the grants it made
	 * become the new root's (proc/legacy.c, succession). */
	int64_t given = legacy_give_to(old->id, p);
	pr_warn("%s died: started again as %#x (restart %u), %lld handles and its children handed over", old->name,
		p->id, restarts, (long long)given);
	p->stopped = false;
	sched_make_ready(p->main);
}

static void watch_in(uint64_t us)
{
	WRITE_ONCE(watch.due_tick, cpus[0]->ticks + watch_ticks((us + 999) / 1000, kernel_hz));
}

int64_t root_alive(struct thread *me, uint64_t timeout_ms)
{
	if (!root_id || me->proc->id != root_id)
		return -KE_PERM;
	if (timeout_ms > WATCH_MAX_MS)
		return -KE_INVAL;
	if (!timeout_ms) {
		WRITE_ONCE(watch.due_tick, UINT64_MAX);
		return 0;
	}
	watch.beat_us = time_us_since_boot();
	watch.cpu_us = proc_cpu_us_now(me->proc, watch.beat_us);
	watch.timeout_us = timeout_ms * 1000;
	watch.starved_logged = false;
	watch_in(watch.timeout_us);
	return 0;
}

void root_watch_tick(const struct trap_frame *f)
{
	struct cpu *c = this_cpu();
	if (c->index || c->ticks < READ_ONCE(watch.due_tick))
		return;
	/* Only a tick that came from user mode or the idle loop (not one taken while this CPU
	 * halted waiting for the kernel lock): the kill and the successor's start then run on
	 * a stack no deeper than a kernel call's. The next tick looks again. */
	if (!(f->cs & 3) && c->current != c->idle)
		return;
	klock();
	struct thread *t = root_id ? ep_lookup(root_id) : NULL;
	if (c->ticks < watch.due_tick || !t) {
		if (!t)
			watch.due_tick = UINT64_MAX; /* it is ending anyway */
		kunlock();
		return;
	}
	uint64_t now = time_us_since_boot(), quiet = now - watch.beat_us;
	uint64_t used = proc_cpu_us_now(t->proc, now) - watch.cpu_us;
	bool in_ipc = t->state == T_BLOCKED &&
		      (t->blocked_on == B_SEND || t->blocked_on == B_RECEIVE || t->blocked_on == B_REPLY);
	switch (watch_verdict(quiet, watch.timeout_us, used, in_ipc)) {
	case WATCH_EARLY:
		watch_in(watch.timeout_us - quiet);
		break;
	case WATCH_STARVED: /* look again in a quarter of the timeout, CPU time still from the beat */
		if (!watch.starved_logged)
			pr_warn("%s has not beaten for %llu ms but had %llu ms of CPU since: not killed",
				t->proc->name, (unsigned long long)(quiet / 1000), (unsigned long long)(used / 1000));
		watch.starved_logged = true;
		watch_in(watch.timeout_us / 4);
		break;
	case WATCH_HUNG:
		pr_warn("%s hung (no heartbeat for %llu ms): restarting it", t->proc->name,
			(unsigned long long)(quiet / 1000));
		proc_exit(t->proc, -9); /* root_died() starts the next one and disarms */
		break;
	}
	kunlock();
}
