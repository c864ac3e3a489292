/* pm: runs Linux programs and serves their process calls (the POSIX personality; README.md).
 *   pm run=PROGRAM [ARGS...]   start PROGRAM as a Linux process with ARGS: a boot module
 *                              by that name, or else a path in vfs's file system (started
 *                              through the lxstart boot module, which execs it)
 * The kernel forwards each Linux system call of pm's processes to pm (KPRIV_LINUX) or to
 * vfs (file calls); pm answers with the result in w[0], or holds the call (wait4, vfork)
 * and answers later. pm needs KC_VCOPY (`kcalls=vcopy`) to reach their memory. */
#include "pm.h"
#include "service.h"
#include "keep.h"
#include "heartbeat.h"
#include "vfs_proto.h"
#include "pm_proto.h"

uint64_t lx_total_frames; /* free frames when pm started: the memory sysinfo reports */

endpoint_t lx_vfs(void)
{
	int64_t ep = ax_svc_lookup("vfs", NULL);
	return ep > 0 ? (endpoint_t)ep : 0;
}

#define VFS_WAIT_NS 2000000000ull

int64_t lx_vfs_call(struct kmsg *m)
{
	static bool seen; /* a vfs ran: one that is missing now is being restarted */
	static const uint64_t never_rung;
	const struct kmsg req = *m;
	uint64_t t0 = ax_time_ns();
	for (;;) {
		endpoint_t vfs = lx_vfs();
		int64_t r = vfs ? ax_call(vfs, m) : -KE_SRCH;
		seen |= vfs != 0;
		/* Only a vfs that is gone is waited for: a fork, an exec or an exit that happened
		 * to come then failed (a shell loop forking every 0.2 s lost its fork, EAGAIN). */
		bool gone = r == -KE_DEADSRCDST || (r == -KE_SRCH && seen);
		if (!gone || ax_time_ns() - t0 > VFS_WAIT_NS)
			return r;
		*m = req;
		ax_heartbeat();
		ax_wait_timeout(&never_rung, 0, 10000000ull);
	}
}

void lx_answer(endpoint_t thread, int64_t r)
{
	struct kmsg m = { .type = 0 };
	m.w[0] = (uint64_t)r;
	ax_reply(thread, &m);
}

/* The file calls go straight to vfs when there is one (one round trip, not two). */
static int64_t route_to_vfs(endpoint_t child)
{
	endpoint_t vfs = lx_vfs();
	if (!vfs)
		return 0; /* no vfs: pm answers the console calls itself */
	uint64_t bits[KMSG_LINUX_MAX / 64] = { 0 };
	for (unsigned i = 0; i < sizeof(vfs_calls) / sizeof(vfs_calls[0]); i++)
		bits[vfs_calls[i] / 64] |= 1ull << (vfs_calls[i] % 64);
	int64_t r = kcall6(KC_PRIV, child, KPRIV_LINUX, (uint64_t)vfs, 1, 0, 0);
	return r < 0 ? r : kcall6(KC_LINUX_ROUTE, child, 1, (uint64_t)bits, 0, 0, 0);
}

/* Starts a program as a new session leader whose system calls come to us. */
static int64_t run(const char *program, const char *args)
{
	struct lxproc *p = lx_alloc();
	char line[300];
	int mod = ax_find_module(program);
	if (mod < 0 && program[0] == '/') { /* a file: lxstart execs it */
		ksnprintf(line, sizeof(line), "%s%s%s", program, args[0] ? " " : "", args);
		args = line;
		mod = ax_find_module("lxstart");
	}
	if (!p || mod < 0)
		return !p ? -KE_NOMEM : -KE_SRCH;
	int32_t pid = lx_new_pid();
	struct kc_spawn sp = { (uint32_t)mod, SPAWN_ANY_CPU, 3, SPAWN_STOPPED, args };
	int64_t ep = ax_spawn(&sp), r = ep;
	if (ep > 0 && ((r = kcall6(KC_PRIV, (uint64_t)ep, KPRIV_LINUX, 0, 0, 0, 0)) < 0 ||
		       (r = route_to_vfs((endpoint_t)ep)) < 0 || (r = kcall2(KC_LX_PID, (uint64_t)ep, (uint64_t)pid)) < 0))
		ax_kill((endpoint_t)ep);
	if (r < 0)
		return r;
	*p = (struct lxproc){ .ep = (endpoint_t)ep, .pid = pid, .pgid = pid, .sid = pid, .used = true,
			      .toplevel = true, .exit_signal = 17 };
	lx_limits_init(p);
	const char *base = program;
	for (const char *q = program; *q; q++)
		if (*q == '/')
			base = q + 1;
	ksnprintf(p->name, sizeof(p->name), "%s", base);
	/* the console becomes its controlling terminal, its group the foreground */
	struct kmsg m = { .type = VFS_SESSION, .w = { p->ep, (uint64_t)pid } };
	lx_vfs_call(&m);
	if ((r = kcall1(KC_START, (uint64_t)ep)) < 0) {
		ax_kill((endpoint_t)ep);
		p->used = false;
		return r;
	}
	ax_printf("pm: started %s as pid %d\n", program, p->pid);
	return 0;
}

static bool from_service(endpoint_t ep, const char *label)
{
	int64_t s = ax_svc_lookup(label, NULL);
	return s > 0 && (endpoint_t)s == ep;
}

static void on_message(struct ax_evloop *l, struct kmsg *m)
{
	(void)l;
	if (m->type == PM_SIGNAL) {
		/* The terminal's ^C and friends: from vfs or the console only. */
		int64_t r = -LX_EPERM;
		if (from_service(m->source, "vfs") || from_service(m->source, "console"))
			r = lx_kill(NULL, (int64_t)m->w[0], m->w[1]);
		lx_answer(m->source, r); /* fails harmlessly if it was a non-blocking send */
		return;
	}
	struct lxproc *p = lx_find((endpoint_t)m->w[6]);
	if ((m->type & 0xffff0000u) != KMSG_LINUX || !p || p->zombie)
		return; /* not one of ours: no answer (a caller gets none either) */
	struct lxcall c = { m->source, p, m->type & 0xffff, { 0 } };
	memcpy(c.a, m->w, sizeof(c.a));
	int64_t r = lx_serve(&c);
	if (r != PM_HOLD)
		lx_answer(m->source, r);
}

static void on_report(struct ax_evloop *l, const struct kmsg *m)
{
	(void)l;
	if (m->type == KMSG_LINUX_CANCEL) {
		lx_cancel((endpoint_t)m->w[0]);
		return;
	}
	struct lxproc *p = lx_find((endpoint_t)m->w[0]);
	if (!p || p->zombie)
		return;
	/* Linux processes end with a wait status (the kernel's exit report); a fault report
	 * comes only from a process that never became one: call it SIGSEGV. */
	if (m->type == KMSG_PROC_EXIT)
		p->cpu_us = m->w[2];
	lx_ended(p, m->type == KMSG_PROC_FAULT ? 11 | 0x80 : (int32_t)m->w[1]);
}

/* A restart with the old tables: the processes are ours again (the kernel made us their
 * parent and their server); those that ended while no pm listened are ended now. The calls
 * the old pm held (wait4, a vfork) ended with EINTR in their threads. */
static void adopt(void)
{
	int alive = 0, gone = 0;
	for (int i = 0; i < MAX_PROCS; i++) {
		struct lxproc *p = &lx_procs[i];
		if (!p->used || p->zombie)
			continue;
		p->vfork_parent = 0;
		if (kcall2(KC_INFO, KI_THREAD_STATE, p->ep) < 0) {
			lx_ended(p, 9); /* (its status is lost: as if killed) */
			gone++;
		} else {
			alive++;
		}
	}
	ax_printf("pm: restarted (generation %lu): %d processes taken over, %d had ended, %d objects dropped\n",
		  (unsigned long)ax_keep_generation(), alive, gone, ax_keep_sweep());
}

static int serve(void)
{
	/* restartable: the tables are kept memory, so a live update replaces us as a restart */
	struct ax_evloop l = { .on_message = on_message, .on_report = on_report, .poll = lx_itimer_poll,
			       .restartable = true };
	return (int)ax_evloop_run(&l);
}

int main(int argc, char **argv)
{
	ax_svc_init(argc, argv);
	if (lx_table_init()) {
		adopt();
		return serve();
	}
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
			if (!ax_svc_rs_arg(argv[k]))
				n += (size_t)ksnprintf(args + n, sizeof(args) - n, "%s%s", n ? " " : "", argv[k]);
		int64_t r = run(argv[i] + 4, args);
		if (r < 0)
			ax_printf("pm: cannot start %s: error %lld\n", argv[i] + 4, (long long)r);
		break; /* one program per pm; the rest of the line was its arguments */
	}
	return serve();
}
