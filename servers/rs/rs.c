/* rs: the reincarnation server. Starts every service of boot/system.conf with exactly the
 * privileges listed there, and restarts those that crash or exit, per their policy, with
 * back-off. See servers/rs/README.md for what is not done yet (hang detection, live update).
 *   rs [conf=MODULE]     the configuration boot module, default system.conf */
#include "axrt.h"
#include "sysconf.h"
#include "heartbeat.h"

#define MAX_SVC 32
#define BACKOFF_MAX_MS 10000
#define QUICK_CRASH_NS 1000000000ull /* dying within 1 s of a start counts as a quick crash */

struct svc {
	struct svc_conf c;
	endpoint_t ep;     /* 0: not running */
	uint32_t restarts;
	uint64_t started_ns, restart_at_ns, delay_ms;
	bool stopped;      /* ended and not to be restarted */
	/* Heartbeat (heartbeat_ms > 0): a page the service bumps, checked every period. */
	int64_t hb_handle;
	volatile uint64_t *hb;
	uint64_t hb_last, hb_check_ns;
	bool hb_pinged;
};

static struct svc svcs[MAX_SVC];
static int nsvc;

/* Gives a stopped child the privileges the configuration lists; 0 or the first error. */
static int64_t give_privileges(endpoint_t ep, const struct svc_conf *c)
{
	int64_t r = 0;
	for (int i = 0; i < c->nports && !r; i++)
		r = kcall6(KC_PRIV, ep, KPRIV_IOPORT, c->ports[i].lo, (uint64_t)c->ports[i].hi - c->ports[i].lo + 1, 0, 0);
	for (int irq = 0; irq < 16 && !r; irq++)
		if (c->irqs & (1u << irq))
			r = kcall6(KC_PRIV, ep, KPRIV_IRQ, (uint64_t)irq, 0, 0, 0);
	if (c->pci_all && !r)
		r = kcall6(KC_PRIV, ep, KPRIV_PCI, KPCI_ALL, 0, 0, 0);
	for (int i = 0; i < c->npci && !r; i++)
		r = kcall6(KC_PRIV, ep, KPRIV_PCI, c->pci[i], 0, 0, 0);
	for (int i = 0; i < c->nmmio && !r; i++)
		r = kcall6(KC_PRIV, ep, KPRIV_MMIO, c->mmio[i].pa, c->mmio[i].pages, 0, 0);
	if (c->dma && !r)
		r = kcall6(KC_PRIV, ep, KPRIV_DMA, 0, 0, 0, 0);
	uint64_t kc = (c->kcalls & SVC_KC_VCOPY ? 1ull << KC_VCOPY : 0) |
		      (c->kcalls & SVC_KC_POWEROFF ? 1ull << KC_POWEROFF : 0);
	if (kc && !r)
		r = kcall6(KC_PRIV, ep, KPRIV_KCALLS, kc, 0, 0, 0);
	if (c->dedicated && !r)
		r = ax_sched(ep, (uint32_t)c->cpu, KS_DEDICATED);
	return r;
}

/* One heartbeat page per service, kept across its restarts; 0 or an error. */
static int64_t heartbeat_page(struct svc *s)
{
	if (!s->c.heartbeat_ms || s->hb)
		return 0;
	int64_t h = ax_mo_create(1, 0), va = h > 0 ? ax_mo_map(h, 0, 0, 1, KP_R) : h;
	if (va < 0)
		return va;
	s->hb_handle = h;
	s->hb = (volatile uint64_t *)va;
	return 0;
}

static void start(struct svc *s)
{
	int mod = ax_find_module(s->c.binary);
	char args[192];
	int64_t hb = heartbeat_page(s);
	/* A restarted service learns it by its arguments and recovers its state from ds. */
	int n = ksnprintf(args, sizeof(args), "%s", s->c.args);
	if (s->restarts)
		n += ksnprintf(args + n, sizeof(args) - (size_t)n, "%srestarted=%u", n ? " " : "", s->restarts);
	if (s->c.heartbeat_ms)
		ksnprintf(args + n, sizeof(args) - (size_t)n, "%shb=1", n ? " " : "");
	struct kc_spawn sp = { (uint32_t)mod, s->c.cpu == SVC_CPU_ANY ? SPAWN_ANY_CPU : (uint32_t)s->c.cpu,
			       s->c.priority, SPAWN_STOPPED, args };
	int64_t ep = mod < 0 ? -KE_SRCH : hb < 0 ? hb : ax_spawn(&sp), r = 0;
	if (ep > 0 && s->hb) {
		/* A new process holds no handles, so the first grant to it is handle 1, which its
		 * arguments already name (hb=1). */
		int64_t gh = ax_mo_grant(s->hb_handle, (endpoint_t)ep, KP_R | KP_W);
		if (gh != 1)
			r = gh < 0 ? gh : -KE_INVAL;
	}
	if (ep > 0 && (r < 0 || (r = give_privileges((endpoint_t)ep, &s->c)) < 0 ||
		       (r = kcall1(KC_START, (uint64_t)ep)) < 0)) {
		ax_kill((endpoint_t)ep);
		ep = r;
	}
	if (ep < 0) {
		ax_printf("rs: cannot start %s (%s): error %lld\n", s->c.name, s->c.binary, (long long)ep);
		s->stopped = true;
		return;
	}
	s->ep = (endpoint_t)ep;
	s->started_ns = ax_time_ns();
	if (s->hb) {
		s->hb_last = *s->hb;
		s->hb_pinged = false;
		s->hb_check_ns = s->started_ns + s->c.heartbeat_ms * 1000000ull;
	}
	ax_printf("rs: started %s as %#x (restarts %u)\n", s->c.name, (unsigned)ep, s->restarts);
}

static void ended(struct svc *s, const struct kmsg *m)
{
	bool crashed = m->type == KMSG_PROC_FAULT;
	int64_t status = crashed ? -1 : (int64_t)m->w[1];
	if (crashed)
		ax_printf("rs: %s crashed: vector %llu at rip %#llx, address %#llx\n", s->c.name,
			  (unsigned long long)m->w[1], (unsigned long long)m->w[3], (unsigned long long)m->w[4]);
	else
		ax_printf("rs: %s exited with status %lld\n", s->c.name, (long long)status);
	s->ep = 0;
	bool again = s->c.restart == SVC_RESTART_ALWAYS || (s->c.restart == SVC_RESTART_ON_FAILURE && status != 0);
	if (!again) {
		s->stopped = true;
		ax_printf("rs: %s stays down (restart policy)\n", s->c.name);
		return;
	}
	uint64_t now = ax_time_ns();
	/* Back-off: quick crashes double the delay up to a cap; a long run resets it. */
	if (now - s->started_ns < QUICK_CRASH_NS)
		s->delay_ms = s->delay_ms ? (s->delay_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : s->delay_ms * 2)
					  : s->c.backoff_ms;
	else
		s->delay_ms = 0;
	s->restart_at_ns = now + s->delay_ms * 1000000ull;
	s->restarts++;
	ax_printf("rs: restarting %s in %llu ms\n", s->c.name, (unsigned long long)s->delay_ms);
}

/* Every period: a service whose counter moved is pinged for the next period; one that was
 * pinged and still did not move is hung, and is killed (its exit report restarts it).
 * Returns ns until the next check, 0 if none. */
static uint64_t check_heartbeats(void)
{
	uint64_t next = 0, now = ax_time_ns();
	for (int i = 0; i < nsvc; i++) {
		struct svc *s = &svcs[i];
		if (!s->ep || !s->hb)
			continue;
		if (now >= s->hb_check_ns) {
			uint64_t v = *s->hb;
			if (v == s->hb_last && s->hb_pinged) {
				ax_printf("rs: %s hung: no heartbeat for %u ms\n", s->c.name, s->c.heartbeat_ms);
				ax_kill(s->ep);
				continue;
			}
			s->hb_last = v;
			s->hb_pinged = ax_notify(s->ep, AX_PING_BIT) == 0;
			s->hb_check_ns = now + s->c.heartbeat_ms * 1000000ull;
		}
		uint64_t d = s->hb_check_ns - now;
		if (!next || d < next)
			next = d;
	}
	return next;
}

/* Starts the restarts whose delay has passed; returns ns until the next one, 0 if none. */
static uint64_t due_restarts(void)
{
	uint64_t next = 0, now = ax_time_ns();
	for (int i = 0; i < nsvc; i++) {
		struct svc *s = &svcs[i];
		if (s->ep || s->stopped)
			continue;
		if (now >= s->restart_at_ns)
			start(s);
		else if (!next || s->restart_at_ns - now < next)
			next = s->restart_at_ns - now;
	}
	return next;
}

int main(int argc, char **argv)
{
	const char *conf = "system.conf";
	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], "conf=", 5))
			conf = argv[i] + 5;
	int mod = ax_find_module(conf);
	struct kc_module_info mi;
	if (mod < 0 || ax_module_info((uint32_t)mod, &mi) < 0) {
		ax_printf("rs: no configuration module %s\n", conf);
		return 1;
	}
	int64_t va = kcall1(KC_MODULE_MAP, (uint64_t)mod);
	static struct svc_conf parsed[MAX_SVC];
	struct sysconf_error err;
	int n = va > 0 ? sysconf_parse((const char *)va, mi.size, parsed, MAX_SVC, &err) : -1;
	if (n < 0) {
		ax_printf("rs: %s line %d: %s\n", conf, va > 0 ? err.line : 0, va > 0 ? err.msg : "cannot map");
		return 2;
	}
	for (int i = 0; i < n; i++)
		svcs[nsvc++].c = parsed[i];
	ax_printf("rs: %d services in %s\n", n, conf);
	for (int i = 0; i < nsvc; i++)
		start(&svcs[i]);
	static const uint64_t never_rung = 0;
	for (;;) {
		/* Sleep until a report arrives or the next delayed restart is due. */
		uint64_t next = due_restarts(), hb = check_heartbeats();
		if (hb && (!next || hb < next))
			next = hb;
		if (next && !(ax_wait_timeout(&never_rung, 0, next) & KW_IPC))
			continue;
		struct kmsg m;
		if (ax_receive(EP_ANY, &m) < 0 || m.source != EP_KERNEL)
			continue;
		if (m.type != KMSG_PROC_EXIT && m.type != KMSG_PROC_FAULT)
			continue;
		for (int i = 0; i < nsvc; i++)
			if (svcs[i].ep && svcs[i].ep == (endpoint_t)m.w[0])
				ended(&svcs[i], &m);
	}
}
