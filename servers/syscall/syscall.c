/* syscall: the socket front door (README.md). vfs passes the Linux calls on LX_AF_INET
 * datagram sockets here (KC_LX_PASS); syscall answers the application itself, moving the
 * data through the socket's shared buffers and asking udp over channels for the rest. */
#include "syscall.h"
#include "lx_abi.h"
#include "watch.h"
#include "netq_proto.h"
#include "service.h"
#include "chan_name.h"

bool sys_debug; /* `debug` argument: every passed call and engine event is logged */
static bool vfs_waits; /* vfs has a close for us: sleep in receive, where KC_SENDNB lands */

static bool from_vfs(endpoint_t ep)
{
	if (ep && ep == vfs_endpoint())
		return true;
	return ep && ep == vfs_endpoint_again(); /* vfs may have been restarted */
}

/* `service inject syscall overcount`: answers to reads and writes claim 1 MiB more than they
 * moved (what a fault in answer() did in the fault campaign; the kernel's check of answers,
 * kernel/linux/linux.c, must turn them into EIO). */
static bool overcount;

static void inject(struct ax_evloop *l, const char *word)
{
	(void)l;
	if (!strcmp(word, "overcount")) {
		overcount = true;
		ax_printf("syscall: injected fault: answers to reads and writes claim 1 MiB more\n");
	} else if (!strcmp(word, "noretry")) {
		calls_noretry = true; /* what an off-by-one in calls_retry did in the fault campaign */
		ax_printf("syscall: injected fault: held calls are no longer served on events\n");
	} else {
		ax_printf("syscall: no injectable fault named %s\n", word);
	}
}

static void passed_call(struct kmsg *m)
{
	struct lcall c = { .thread = m->source, .pid = (uint32_t)m->w[6], .nr = m->type & 0x3ff };
	memcpy(c.a, m->w, sizeof(c.a));
	c.sock = (uint32_t)m->w[0];
	c.vflags = (uint32_t)(m->w[0] >> 32);
	if (!from_vfs((endpoint_t)(m->w[6] >> 32))) {
		answer(c.thread, -LX_EBADF); /* only vfs's sockets come here */
		return;
	}
	if (c.nr == LX_SYS_accept || c.nr == LX_SYS_accept4)
		engine_poll(); /* a close's answer the engine left unrung parks a buffer this accept may take */
	int64_t r;
	struct sock *s = sock_get(c.sock, c.vflags & SYSP_NEW, c.vflags & SYSP_STREAM, 0, &r);
	if (s && !s->closing) {
		sock_map_into(s, c.thread, c.pid);
		r = calls_serve(&c, s);
		ready_changed(s);
	} else if (s) {
		r = -LX_EBADF;
	}
	if (sys_debug)
		ax_printf("syscall: pid %#x call %u on socket %u: %ld\n", c.pid, c.nr, c.sock,
			  r == CALL_HELD ? -1000L : r == CALL_TAKEN ? -1001L : (long)r);
	/* vfs hears of the socket's readiness before the application gets its answer, so its
	 * next poll sees the state this call left (vfs drains syscall/vfs.ev at every poll). */
	vfsside_poll();
	if (r == CALL_HELD)
		calls_hold(&c);
	else if (r != CALL_TAKEN && r != CALL_DONE)
		answer(c.thread, overcount && r > 0 && c.nr <= 1 ? r + (1 << 20) : r); /* (read 0, write 1) */
}

static void on_message(struct ax_evloop *l, struct kmsg *m)
{
	(void)l;
	if ((m->type & ~0x3ffu) == KMSG_LINUX_PASSED) {
		passed_call(m);
	} else if (m->type == SYSCALL_CLOSE && from_vfs(m->source)) {
		vfs_waits = false;
		struct sock *s = sock_find((uint32_t)m->w[0]);
		if (s && !s->closing) {
			calls_drop_sock(s->id);
			engine_close(s);
		}
	} else if (m->type == SYSCALL_EXEC && from_vfs(m->source)) {
		vfs_waits = false;
		act_exec((uint32_t)m->w[0]);
	} else if (m->type == CHAN_ATTACH) {
		engine_message(m);
	} else if (m->type == NETQ_SHOW) {
		act_netq(m);
	} else if ((m->type & 0xffff0000u) == KMSG_LINUX) {
		struct kmsg a = { .type = 0, .w = { (uint64_t)-38 } }; /* ENOSYS: not routed here */
		ax_reply(m->source, &a);
	}
}

static void on_notify(struct ax_evloop *l, uint64_t bits)
{
	(void)l;
	if (bits & SYSCALL_VFS_BIT)
		vfs_waits = true; /* udp's wake-ups need nothing: poll runs every turn */
}

static void on_report(struct ax_evloop *l, const struct kmsg *m)
{
	(void)l;
	if (m->type == KMSG_LINUX_CANCEL)
		calls_cancel((endpoint_t)m->w[0]);
}

/* Channel work; before the loop sleeps (in receive, so vfs's KC_SENDNB finds us), the event
 * channel's sleeping flag goes up so udp rings. */
static bool poll(struct ax_evloop *l)
{
	sock_trim();
	bool work = engine_poll();
	work |= vfsside_poll();
	l->wait_ns = calls_timer();
	bool missing = engine_export_missing();
	missing |= vfsside_export_missing();
	if (missing && (!l->wait_ns || l->wait_ns > 100000000))
		l->wait_ns = 100000000;
	if (engines_watched && (!l->wait_ns || l->wait_ns > CHAN_WATCH_LOOK_NS))
		l->wait_ns = CHAN_WATCH_LOOK_NS; /* an engine's channel is watched (lib/chan/watch.h) */
	if (vfs_waits)
		l->wait_ns = 0; /* timers late by vfs's retry period at most */
	if (work)
		return true;
	if (!engine_may_sleep())
		return true;
	return engine_poll(); /* hints that became due after the answers */
}

int main(int argc, char **argv)
{
	ax_svc_init(argc, argv);
	keep_init(); /* first: our predecessor's objects are told apart from ours by this */
	if (!ax_can_vcopy())
		ax_printf("syscall: no KC_VCOPY, so every socket call fails (system.conf: kcalls=vcopy)\n");
	for (int i = 1; i < argc; i++) {
		sys_debug |= !strcmp(argv[i], "debug");
		sys_map_apps |= !strcmp(argv[i], "map");
	}
	engine_init();
	vfsside_init();
	ax_printf("syscall: ready (syscall/udp.req, .ev, syscall/tcp.req, .ev, syscall/vfs.ev)\n");
	/* restartable: the socket table survives in kept memory (keep.c) */
	struct ax_evloop l = { .on_message = on_message, .on_report = on_report, .on_notify = on_notify,
				.poll = poll, .inject = inject, .restartable = true };
	return (int)ax_evloop_run(&l);
}
