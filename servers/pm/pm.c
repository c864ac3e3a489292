/* pm: runs Linux programs and serves their system calls (the POSIX personality; README.md).
 *   pm run=MODULE [ARGS...]   start the boot module MODULE as a Linux process with ARGS
 * The kernel forwards each Linux system call of pm's children to pm (KPRIV_LINUX); pm answers
 * with the result in w[0]. pm needs KC_VCOPY (`kcalls=vcopy`) to reach their memory. */
#include "pm.h"
#include "service.h"
#include "vfs_proto.h"

#define MAX_PROCS 64

static struct lxproc procs[MAX_PROCS];
static int32_t next_pid = 1;

uint64_t lx_total_frames; /* free frames when pm started: the memory sysinfo reports */

int lx_nprocs(void)
{
	int n = 0;
	for (int i = 0; i < MAX_PROCS; i++)
		n += procs[i].used;
	return n;
}

struct lxproc *lx_find(endpoint_t ep)
{
	for (int i = 0; i < MAX_PROCS; i++)
		if (procs[i].used && procs[i].ep == ep)
			return &procs[i];
	return NULL;
}

/* The file calls go straight to vfs when there is one (one round trip, not two). */
static int64_t route_to_vfs(endpoint_t child)
{
	int64_t vfs = ax_svc_lookup("vfs", NULL);
	if (vfs < 0)
		return 0; /* no vfs: pm answers the console calls itself */
	uint64_t bits[KMSG_LINUX_MAX / 64] = { 0 };
	for (unsigned i = 0; i < sizeof(vfs_calls) / sizeof(vfs_calls[0]); i++)
		bits[vfs_calls[i] / 64] |= 1ull << (vfs_calls[i] % 64);
	int64_t r = kcall6(KC_PRIV, child, KPRIV_LINUX, (uint64_t)vfs, 1, 0, 0);
	return r < 0 ? r : kcall6(KC_LINUX_ROUTE, child, 1, (uint64_t)bits, 0, 0, 0);
}

/* Starts a boot module as a Linux process whose system calls come to us. */
static int64_t run(const char *module, const char *args)
{
	struct lxproc *p = NULL;
	for (int i = 0; i < MAX_PROCS && !p; i++)
		if (!procs[i].used)
			p = &procs[i];
	int mod = ax_find_module(module);
	if (!p || mod < 0)
		return !p ? -KE_NOMEM : -KE_SRCH;
	struct kc_spawn sp = { (uint32_t)mod, SPAWN_ANY_CPU, 3, SPAWN_STOPPED, args };
	int64_t ep = ax_spawn(&sp), r = ep;
	if (ep > 0 && ((r = kcall6(KC_PRIV, (uint64_t)ep, KPRIV_LINUX, 0, 0, 0, 0)) < 0 ||
		       (r = route_to_vfs((endpoint_t)ep)) < 0 || (r = kcall1(KC_START, (uint64_t)ep)) < 0))
		ax_kill((endpoint_t)ep);
	if (r < 0)
		return r;
	*p = (struct lxproc){ .ep = (endpoint_t)ep, .pid = next_pid++, .used = true };
	lx_limits_init(p);
	ksnprintf(p->name, sizeof(p->name), "%s", module);
	ax_printf("pm: started %s as pid %d\n", module, p->pid);
	return 0;
}

static void on_message(struct ax_evloop *l, struct kmsg *m)
{
	(void)l;
	struct lxproc *p = lx_find(m->source);
	if ((m->type & 0xffff0000u) != KMSG_LINUX || !p)
		return; /* not one of ours: no answer (a caller gets none either) */
	uint64_t a[6];
	memcpy(a, m->w, sizeof(a));
	int64_t r = lx_serve(p, m->type & 0xffff, a);
	memset(m->w, 0, sizeof(m->w));
	m->w[0] = (uint64_t)r;
	ax_reply(m->source, m);
}

static void on_report(struct ax_evloop *l, const struct kmsg *m)
{
	(void)l;
	struct lxproc *p = lx_find((endpoint_t)m->w[0]);
	if (!p)
		return;
	if (m->type == KMSG_PROC_FAULT)
		ax_printf("pm: %s (pid %d) killed by a fault: vector %llu at rip %#llx\n", p->name, p->pid,
			  (unsigned long long)m->w[1], (unsigned long long)m->w[3]);
	else
		ax_printf("pm: %s (pid %d) exited with status %lld\n", p->name, p->pid, (long long)m->w[1]);
	p->used = false;
	int64_t vfs = ax_svc_lookup("vfs", NULL);
	if (vfs > 0) { /* its descriptors go */
		struct kmsg f = { .type = VFS_FORGET, .w = { p->ep } };
		ax_call((endpoint_t)vfs, &f);
	}
}

int main(int argc, char **argv)
{
	ax_svc_init(argc, argv);
	if (!ax_can_vcopy())
		ax_printf("pm: no KC_VCOPY, so every call touching memory fails (system.conf: kcalls=vcopy)\n");
	lx_total_frames = (uint64_t)kcall1(KC_INFO, KI_FREE_FRAMES);
	for (int i = 1; i < argc; i++) {
		if (strncmp(argv[i], "run=", 4))
			continue;
		/* The rest of the line is the program's arguments, but for what rs appends. */
		char args[256] = "";
		size_t n = 0;
		for (int k = i + 1; k < argc && n < sizeof(args); k++)
			if (strncmp(argv[k], "hb=", 3) && strncmp(argv[k], "restarted=", 10) && strcmp(argv[k], "update=1"))
				n += (size_t)ksnprintf(args + n, sizeof(args) - n, "%s%s", n ? " " : "", argv[k]);
		int64_t r = run(argv[i] + 4, args);
		if (r < 0)
			ax_printf("pm: cannot start %s: error %lld\n", argv[i] + 4, (long long)r);
	}
	struct ax_evloop l = { .on_message = on_message, .on_report = on_report };
	return (int)ax_evloop_run(&l);
}
