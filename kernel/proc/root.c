/* The root service: boot module 0 (rs), the parent of every service. It holds every
 * privilege, so nobody but the kernel can bring it back. When it dies (a crash, an exit, a
 * kill by itself) the kernel starts module 0 again with `restarted=N` appended, gives it the
 * dead root's memory-object handles with the same numbers (a legacy, proc/legacy.c: rs keeps
 * its service table in an object of its own) and makes it the parent of the dead root's
 * children and the keeper of their legacies. Kernel reports about children that arrive
 * meanwhile wait in its queue. A root that dies within a second of its start RESTART_LIMIT
 * times in a row is not started again (the machine runs on without one). */
#include "proc/root.h"
#include "proc/legacy.h"
#include "proc/sched.h"
#include "proc/klock.h"
#include "boot/bootinfo.h"
#include "console/log.h"
#include "arch/time.h"
#include "mm/vmm.h"
#include "lib/string.h"
#include "lib/printf.h"

#define QUICK_DEATH_US 1000000
#define RESTART_LIMIT 5

static endpoint_t root_id;
static uint32_t restarts, quick_deaths;
static uint64_t started_us;

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
