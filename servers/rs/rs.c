/* rs: the reincarnation server. Starts every service of its configuration with exactly the
 * privileges listed there, restarts those that crash, exit or hang, per their policy and
 * with back-off, keeps ds told, and runs live updates and the service command
 * (servers/rs/README.md).
 *   rs [conf=MODULE]     the configuration boot module, default system.conf */
#include "rs.h"
#include "evloop.h"
#include "heartbeat.h"
#include "keep.h"
#include "service.h"

#define BACKOFF_MAX_MS 10000
#define QUICK_CRASH_NS 1000000000ull /* dying within 1 s of a start counts as a quick crash */
/* The kernel's watchdog on us (KC_ALIVE, kernel/proc/root.c): a beat every second; five
 * seconds without one, while we had the CPU, and the kernel kills us and starts us again. */
#define ALIVE_PERIOD_NS 1000000000ull
#define ALIVE_TIMEOUT_MS 5000

/* The event log: the last LOG_EVENTS events, read by `service log`. */
#define LOG_EVENTS 64
#define LOG_TEXT 160
struct event {
	uint64_t t_ns, seq;
	char text[LOG_TEXT];
};

/* Our state, in memory the kernel keeps for our successor should we die (kernel/proc/root.c,
 * lib/axrt/keep.h): the service table and the event log. */
static struct rs_kept {
	struct svc svcs[MAX_SVC];
	int nsvc;
	struct event events[LOG_EVENTS];
	uint64_t nevents;
} *kept;
struct svc *svcs;
int nsvc;
bool rs_watched;

void rs_log(const char *fmt, ...)
{
	struct event *e = &kept->events[kept->nevents % LOG_EVENTS];
	va_list ap;
	va_start(ap, fmt);
	kvsnprintf(e->text, sizeof(e->text), fmt, ap); /* truncated to LOG_TEXT - 1 */
	va_end(ap);
	e->t_ns = ax_time_ns();
	e->seq = kept->nevents++;
	ax_printf("rs: %s\n", e->text);
}

void rs_log_read(struct kmsg *m)
{
	uint64_t i = m->w[0], off = m->w[1];
	uint64_t first = kept->nevents > LOG_EVENTS ? kept->nevents - LOG_EVENTS : 0;
	memset(m->w, 0, sizeof(m->w));
	if (i >= kept->nevents - first || off >= LOG_TEXT) {
		m->w[6] = (uint64_t)-KE_SRCH;
		return;
	}
	const struct event *e = &kept->events[(first + i) % LOG_EVENTS];
	m->w[0] = e->t_ns;
	m->w[1] = e->seq;
	size_t n = strlen(e->text + off);
	memcpy(&m->w[2], e->text + off, n < RS_LOG_CHUNK ? n : RS_LOG_CHUNK);
}

struct svc *svc_by_name(const char *name)
{
	for (int i = 0; i < nsvc; i++)
		if (!strcmp(svcs[i].c.name, name))
			return &svcs[i];
	return NULL;
}

struct svc *svc_by_ep(endpoint_t ep)
{
	for (int i = 0; ep && i < nsvc; i++)
		if (svcs[i].ep == ep)
			return &svcs[i];
	return NULL;
}

uint32_t svc_state(const struct svc *s)
{
	return s->up.phase != UP_NONE ? RS_ST_UPDATING
	       : s->ep		      ? RS_ST_RUNNING
	       : s->absent	      ? RS_ST_ABSENT
	       : s->stopped	      ? RS_ST_STOPPED
				      : RS_ST_WAITING;
}

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
	int64_t h = ax_mo_create(1, 0), va = h > 0 ? ax_mo_map(h, 0, 0, 1, KP_R | KP_W) : h;
	if (va < 0)
		return va;
	s->hb_handle = h;
	s->hb = (volatile uint64_t *)va;
	return 0;
}

/* How often a heartbeat is looked at: a quarter period, so a hang is noticed 1 to 1.25
 * periods after it began (a look once a period took up to 2: syscall hung for 5 s, and
 * lighttpd closed a keep-alive connection it could not serve for longer than its 5 s limit). */
static uint64_t hb_look_ns(const struct svc *s) { return s->c.heartbeat_ms * 250000ull; }

void svc_heartbeat_reset(struct svc *s)
{
	if (s->hb) {
		s->hb_last = *s->hb;
		s->hb_pinged = false;
		s->hb_starved = s->hb_waited = 0;
		/* (a full period here added one to the time a hang right after a call to us took
		 * to notice) */
		s->hb_check_ns = ax_time_ns() + hb_look_ns(s);
	}
}

/* Boot module mod's bytes, mapped read-only once. */
static const uint8_t *module_mapped(int mod, size_t *len)
{
	static struct { int mod; const uint8_t *va; size_t len; } mapped[64];
	static int nmapped;
	if (mod < 0)
		return NULL;
	for (int i = 0; i < nmapped; i++)
		if (mapped[i].mod == mod)
			return *len = mapped[i].len, mapped[i].va;
	struct kc_module_info mi;
	int64_t va = ax_module_info((uint32_t)mod, &mi) == 0 ? kcall1(KC_MODULE_MAP, (uint64_t)mod) : -1;
	if (va <= 0)
		return NULL;
	if (nmapped < 64)
		mapped[nmapped].mod = mod, mapped[nmapped].va = (const uint8_t *)va, mapped[nmapped++].len = mi.size;
	*len = mi.size;
	return (const uint8_t *)va;
}

const uint8_t *module_bytes(const char *binary, size_t *len)
{
	return module_mapped(ax_find_module(binary), len);
}

uint32_t module_build_id(const char *binary)
{
	static struct { int mod; uint32_t id; } known[64];
	static int nknown;
	int mod = ax_find_module(binary);
	for (int i = 0; mod >= 0 && i < nknown; i++)
		if (known[i].mod == mod)
			return known[i].id;
	size_t len;
	const uint8_t *img = module_mapped(mod, &len);
	if (!img)
		return 0;
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < len; i++)
		h = (h ^ img[i]) * 16777619u;
	if (nknown < 64)
		known[nknown].mod = mod, known[nknown++].id = h;
	return h;
}

/* keep: what the last instance held goes to the new one (same handle numbers), and what
 * this one holds is kept when it ends. A legacy that cannot be given is dropped: the new
 * instance starts from nothing, as without keep. */
static void legacy_pass(struct svc *s, endpoint_t ep)
{
	s->legacy_given = -1;
	if (!s->c.keep)
		return;
	if (s->legacy_of) {
		s->legacy_given = ax_legacy(LEG_GIVE, s->legacy_of, ep);
		if (s->legacy_given < 0) {
			rs_log("%s: its kept memory cannot be given (%lld): starts without it", s->c.name,
			       (long long)s->legacy_given);
			ax_legacy(LEG_DROP, s->legacy_of, 0);
		}
		s->legacy_of = 0;
	}
	ax_legacy(LEG_KEEP, ep, 1);
}

/* The kept memory of s's last instance is not wanted (s stays down, or it is suspect). */
static void legacy_drop(struct svc *s, const char *why)
{
	if (s->legacy_of && ax_legacy(LEG_DROP, s->legacy_of, 0) == 0)
		rs_log("%s: dropped its kept memory (%s)", s->c.name, why);
	s->legacy_of = 0;
}

/* Starts an instance of s running `binary` (the configured one, or a live update's new one
 * with update=1). Its ds label is registered before it runs. Returns its endpoint or an
 * error; does not change s->ep. */
int64_t svc_start(struct svc *s, const char *binary, enum start_kind kind)
{
	bool update = kind == START_UPDATE; /* the old instance runs on meanwhile */
	int mod = ax_find_module(binary);
	char args[240];
	int64_t hb = heartbeat_page(s);
	/* A device named by PCI id must be there: if not, the service is not started (and is
	 * not restarted either: start() marks it stopped). */
	int64_t pr = rspci_resolve(s);
	if (pr < 0) {
		s->absent = s->c.optional && pr == -KE_SRCH; /* (a bad id is an error, not an absence) */
		return pr;
	}
	/* A restarted service learns it by its arguments and recovers its state from ds; a
	 * driver learns its PCI function and whether its core is its own (to poll). */
	int n = ksnprintf(args, sizeof(args), "%s", s->c.args);
	n = rspci_args(s, args, sizeof(args), n);
	if (s->c.dedicated)
		n += ksnprintf(args + n, sizeof(args) - (size_t)n, "%sdedicated=1", n ? " " : "");
	if (s->incarnation && !update)
		n += ksnprintf(args + n, sizeof(args) - (size_t)n, "%srestarted=%u", n ? " " : "", s->incarnation);
	if (kind != START_NORMAL)
		n += ksnprintf(args + n, sizeof(args) - (size_t)n, "%supdate=1", n ? " " : "");
	if (strcmp(binary, s->c.name)) /* (its own name is its binary's otherwise) */
		n += ksnprintf(args + n, sizeof(args) - (size_t)n, "%slabel=%s", n ? " " : "", s->c.name);
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
	/* A dedicated core belongs to one thread: an update's new instance shares the CPU until
	 * it takes over (rs_ctl.c dedicates it then). */
	struct svc_conf c = s->c;
	c.dedicated = c.dedicated && !update;
	if (ep > 0 && !r)
		r = give_privileges((endpoint_t)ep, &c);
	if (ep > 0 && !r && !update)
		legacy_pass(s, (endpoint_t)ep);
	if (ep > 0 && !r)
		r = rspci_give(s, (endpoint_t)ep);
	/* The label is the service's before it runs (ds itself has none; an update's new
	 * instance gets it when the update commits). */
	if (ep > 0 && !r && !update && strcmp(s->c.name, "ds"))
		rsds_registered(s, (endpoint_t)ep);
	if (ep > 0 && (r < 0 || (r = kcall1(KC_START, (uint64_t)ep)) < 0)) {
		ax_kill((endpoint_t)ep);
		ep = r;
	}
	if (ep < 0)
		rs_log("cannot start %s (%s): error %lld", s->c.name, binary, (long long)ep);
	return ep;
}

/* Instance ep of s runs `binary` now: its bookkeeping, the log line ("started NAME as EP
 * (restarts N[, K kept handles])", or "NAME replaced by BINARY as ..." for a replacement),
 * and ds told. */
static void running(struct svc *s, endpoint_t ep, const char *binary, bool replaced)
{
	s->ep = ep;
	s->started_ns = ax_time_ns();
	s->hb_seen = false;
	s->cmds = 0;
	s->said.peer = 0;
	s->accused.first_ns = 0;
	s->build_id = module_build_id(binary);
	ax_strpad(s->binary_now, sizeof(s->binary_now), binary);
	svc_heartbeat_reset(s);
	char what[80], kept[32] = "";
	if (replaced)
		ksnprintf(what, sizeof(what), "%s replaced by %s", s->c.name, binary);
	else
		ksnprintf(what, sizeof(what), "started %s", s->c.name);
	if (s->legacy_given >= 0)
		ksnprintf(kept, sizeof(kept), ", %lld kept handles", (long long)s->legacy_given);
	rs_log("%s as %#x (restarts %u%s)", what, (unsigned)ep, s->restarts, kept);
	if (!strcmp(s->c.name, "ds"))
		rsds_ds_started(s);
	rsds_publish(s);
}

static void start(struct svc *s)
{
	s->restart_now = false;
	int64_t ep = svc_start(s, s->c.binary, START_NORMAL);
	if (ep < 0) {
		s->ep = 0;
		s->stopped = true;
		rsds_publish(s);
		return;
	}
	running(s, (endpoint_t)ep, s->c.binary, false);
}

void svc_replace(struct svc *s, const struct kmsg *report)
{
	if (s->c.keep)
		s->legacy_of = (endpoint_t)report->w[0];
	s->ep = 0;
	s->incarnation++;
	int64_t ep = svc_start(s, s->up.binary, START_REPLACE);
	if (ep < 0) { /* the old binary comes back, as after a crash */
		rsctl_replace_failed(s, "cannot start the new binary");
		s->restart_at_ns = ax_time_ns();
		s->restarts++;
		return;
	}
	s->up.next = (endpoint_t)ep;
	s->up.phase = UP_REPLACED;
	running(s, (endpoint_t)ep, s->up.binary, true);
}

void svc_queue_cmd(struct svc *s, uint32_t cmd)
{
	s->cmds |= 1u << cmd;
	ax_notify(s->ep, AX_RS_BIT);
}

static void ended(struct svc *s, const struct kmsg *m)
{
	bool crashed = m->type == KMSG_PROC_FAULT;
	int64_t status = crashed ? -1 : (int64_t)m->w[1];
	if (crashed)
		rs_log("%s crashed: vector %llu at rip %#llx, address %#llx", s->c.name,
			  (unsigned long long)m->w[1], (unsigned long long)m->w[3], (unsigned long long)m->w[4]);
	else
		rs_log("%s exited with status %lld", s->c.name, (long long)status);
	uint64_t now = ax_time_ns();
	if (s->c.keep) {
		s->legacy_of = s->ep;
		/* State that crashed its reader at once is not handed on again. */
		if (crashed && s->legacy_given >= 0 && now - s->started_ns < QUICK_CRASH_NS)
			legacy_drop(s, "the instance given it crashed at once");
	}
	s->ep = 0;
	if (s->up.phase != UP_NONE)
		rsctl_update_died(s, 0); /* the old instance died mid-update: nothing to roll back to */
	bool again = s->restart_now || s->c.restart == SVC_RESTART_ALWAYS ||
		     (s->c.restart == SVC_RESTART_ON_FAILURE && status != 0);
	if (!again || s->stopped) {
		s->stopped = true;
		rs_log("%s stays down (%s)", s->c.name, again ? "stopped" : "restart policy");
		legacy_drop(s, "it stays down");
		rsds_publish(s);
		return;
	}
	/* Back-off: quick crashes double the delay up to a cap; a long run or an explicit
	 * restart resets it. */
	if (s->restart_now || now - s->started_ns >= QUICK_CRASH_NS)
		s->delay_ms = 0;
	else
		s->delay_ms = s->delay_ms ? (s->delay_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : s->delay_ms * 2)
					  : s->c.backoff_ms;
	s->restart_at_ns = now + s->delay_ms * 1000000ull;
	s->restarts++;
	s->incarnation++;
	rs_log("restarting %s in %llu ms", s->c.name, (unsigned long long)s->delay_ms);
	rsds_publish(s);
}

/* A kernel report about one of our children. */
static void report(const struct kmsg *m)
{
	endpoint_t ep = (endpoint_t)m->w[0];
	for (int i = 0; i < nsvc; i++) {
		struct svc *s = &svcs[i];
		if (s->retired == ep) {
			s->retired = 0;
			rs_log("old instance %#x of %s has ended", (unsigned)ep, s->c.name);
			return;
		}
		if (s->up.phase == UP_REPLACED && s->up.next == ep) {
			rsctl_replace_failed(s, "the new instance ended"); /* and it restarts as before: */
			ended(s, m);
			return;
		}
		if (s->up.phase == UP_QUIESCING && s->ep == ep && s->up.replacing) {
			svc_replace(s, m); /* the old instance ended for its replacement */
			return;
		}
		if (s->up.phase != UP_NONE && s->up.next == ep) {
			rsctl_update_died(s, ep);
			return;
		}
		if (s->ep == ep) {
			ended(s, m);
			return;
		}
	}
}

/* Every period: a service whose counter moved is pinged for the next period; one that was
 * pinged and still did not move is hung, and is killed (its exit report restarts it).
 * Services in a live update, and services waiting for rs to answer an update they asked
 * for, are not checked: they wait for rs on purpose.
 * Returns ns until the next check, 0 if none. */
/* Is ep waiting for rs to answer (a live update it asked for)? Then its loop cannot turn. */
bool waiting_for_rs(endpoint_t ep)
{
	for (int i = 0; i < nsvc; i++)
		if (svcs[i].up.phase != UP_NONE && svcs[i].up.requester == ep)
			return true;
	return false;
}

static uint64_t check_heartbeats(void)
{
	uint64_t next = 0, now = ax_time_ns();
	for (int i = 0; i < nsvc; i++) {
		struct svc *s = &svcs[i];
		if (!s->ep || !s->hb || s->up.phase != UP_NONE || waiting_for_rs(s->ep)) {
			if (s->ep && s->hb)
				svc_heartbeat_reset(s); /* a fresh period once it is free again */
			continue;
		}
		uint64_t period = s->c.heartbeat_ms * 1000000ull;
		if (now >= s->hb_check_ns) {
			uint64_t v = *s->hb;
			if (v != s->hb_last) { /* it beats */
				if (s->hb_starved)
					rs_log("%s beats again after %u starved periods", s->c.name, s->hb_starved);
				if (s->hb_waited)
					rs_log("%s beats again after %u periods waiting on a peer", s->c.name, s->hb_waited);
				s->hb_starved = s->hb_waited = 0;
				s->hb_seen = true;
				s->hb_last = v;
				s->hb_pinged = false;
			} else if (!s->hb_pinged) {
				/* It stopped (or idles): a ping makes an idle loop turn once. */
				s->hb_cpu_us = hang_cpu_us(s->ep);
				s->hb_pinged = ax_notify(s->ep, AX_PING_BIT) == 0;
				s->hb_ping_ns = now;
			} else if (now - s->hb_ping_ns >= period) {
				char where[96];
				endpoint_t end;
				enum hang_verdict hv = hang_judge(s->ep, s->hb_cpu_us, s->c.heartbeat_ms, where, sizeof(where),
								  &end);
				if (hv == HV_WAITING && ++s->hb_waited > HANG_WAIT_PERIODS &&
				    (uint64_t)s->hb_waited * s->c.heartbeat_ms > HANG_WAIT_MS)
					hv = HV_HUNG;
				/* (a service still setting up, e.g. a restarted tcp formatting its pool, is
				 * not hung yet: looked at again a period later, silently) */
				bool setting_up = !s->hb_seen && now - s->started_ns < HANG_START_NS;
				if (hv == HV_HUNG && !setting_up) {
					rs_log("%s hung: no heartbeat for %u ms (counter %llu)", s->c.name,
					       s->c.heartbeat_ms * (1 + s->hb_waited), (unsigned long long)v);
					/* (where is too long for the event log's LOG_TEXT) */
					ax_printf("rs: %s is %s\n", s->c.name, where);
					ax_kill(s->ep);
					/* its exit report may take more than a loop turn on a loaded host:
					 * the next verdict is a period away, not this killed one again */
					s->hb_ping_ns = now;
					continue;
				}
				/* Not hung: look again a period later, the CPU time counted from the
				 * ping, so a spinner that does get the CPU is still caught. A service
				 * waiting in a call is not killed for its peer's slowness: the peer's own
				 * heartbeat judges the peer (killing the caller only spreads a fault). */
				if (hv == HV_STARVED && !s->hb_starved++) {
					rs_log("%s starved: no heartbeat for %u ms, but no CPU either; not killed", s->c.name,
					       s->c.heartbeat_ms);
					ax_printf("rs: %s is %s\n", s->c.name, where);
				} else if (hv == HV_WAITING && s->hb_waited == 1) {
					struct svc *e = svc_by_ep(end);
					rs_log("%s waits on %s: no heartbeat for %u ms; not killed", s->c.name,
					       e ? e->c.name : "a thread", s->c.heartbeat_ms);
					ax_printf("rs: %s is %s; the chain of calls ends at %#x\n", s->c.name, where, end);
				}
				if (hv != HV_WAITING)
					s->hb_waited = 0;
				s->hb_ping_ns = now;
			}
			s->hb_check_ns = now + hb_look_ns(s);
			if (s->hb_pinged && s->hb_ping_ns + period > now && s->hb_ping_ns + period < s->hb_check_ns)
				s->hb_check_ns = s->hb_ping_ns + period; /* the verdict when the period is up */
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

static uint64_t earliest(uint64_t a, uint64_t b) { return !a ? b : !b ? a : a < b ? a : b; }

/* A successor of a root that died: the services are running (they are ours now); what the
 * old rs was waiting for is looked at again. */
static void adopt(void)
{
	nsvc = kept->nsvc;
	int running = 0, gone = 0;
	for (int i = 0; i < nsvc; i++) {
		struct svc *s = &svcs[i];
		if (s->hb)
			s->hb = ax_keep_remap(s->hb_handle, (void *)s->hb, 4096);
		if (s->up.phase != UP_NONE) { /* its requester's call died with the old rs */
			s->up.requester = 0;
			if (s->up.phase == UP_STARTING) /* the old instance resumes: its RS_QUIESCED failed */
				rsctl_update_died(s, s->up.next);
		}
		svc_heartbeat_reset(s);
		if (s->ep && kcall2(KC_INFO, KI_THREAD_STATE, s->ep) < 0) {
			/* it ended before the old rs could hear of it: as if we had heard now */
			struct kmsg m = { .source = EP_KERNEL, .type = KMSG_PROC_EXIT, .w = { s->ep, (uint64_t)-1 } };
			report(&m);
			gone++;
		} else if (s->ep) {
			running++;
		}
	}
	int dropped = ax_keep_sweep();
	rs_log("restarted (generation %lu): %d services adopted, %d had ended, %d objects dropped",
	       (unsigned long)ax_keep_generation(), running, gone, dropped);
	rsds_resync(); /* ds hears every label and state again from us */
}

/* A message or report may have made a timer due (a start asked, a restart to schedule). */
static bool timers_stale = true;

static void on_message(struct ax_evloop *l, struct kmsg *m)
{
	(void)l;
	rsctl_message(m);
	timers_stale = true;
}

static void on_report(struct ax_evloop *l, const struct kmsg *m)
{
	(void)l;
	if (m->type == KMSG_PROC_EXIT || m->type == KMSG_PROC_FAULT)
		report(m);
	timers_stale = true;
}

/* The loop's poll: our beat to the kernel (armed at the first turn, so it sees only our
 * loop), the timers, and the sleep until the next delayed restart or heartbeat check is due,
 * an update times out, the next beat, or (2 ms) ds can take queued messages; a message or a
 * report ends it sooner. The loop polls twice before it sleeps: the timers run once per
 * turn (a second look would judge a service it just killed, not yet gone, hung again).
 * Never "work": the loop sleeps after it. */
static bool timers(struct ax_evloop *l)
{
	static uint64_t beat_ns, due_ns;
	uint64_t now = ax_time_ns();
	if (!timers_stale && now < due_ns) {
		l->wait_ns = due_ns - now;
		return false;
	}
	timers_stale = false;
	if (now >= beat_ns) {
		rs_watched = ax_alive(ALIVE_TIMEOUT_MS) == 0;
		beat_ns = now + ALIVE_PERIOD_NS;
		stall_irq_check();
	}
	uint64_t next = earliest(earliest(earliest(due_restarts(), check_heartbeats()), rsctl_check_updates()),
				 beat_ns - now);
	if (rsds_flush())
		next = earliest(next, 2000000ull);
	due_ns = now + next;
	l->wait_ns = next;
	return false;
}

int main(int argc, char **argv)
{
	ax_svc_init(argc, argv); /* restarted=N: the kernel started us again */
	bool adopted;
	uint64_t layout[] = { sizeof(struct svc), MAX_SVC, sizeof(struct event), LOG_EVENTS };
	kept = ax_keep_open(0x314b5045525352ull /* "RSREPK1" */, ax_keep_layout(layout, 4), sizeof(*kept), &adopted);
	svcs = kept->svcs;
	if (adopted) {
		adopt();
		goto loop;
	}
	const char *conf = "system.conf";
	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], "conf=", 5))
			conf = argv[i] + 5;
	int mod = ax_find_module(conf);
	struct kc_module_info mi;
	if (mod < 0 || ax_module_info((uint32_t)mod, &mi) < 0) {
		rs_log("no configuration module %s", conf);
		return 1;
	}
	int64_t va = kcall1(KC_MODULE_MAP, (uint64_t)mod);
	static struct svc_conf parsed[MAX_SVC];
	struct sysconf_error err;
	int n = va > 0 ? sysconf_parse((const char *)va, mi.size, parsed, MAX_SVC, &err) : -1;
	if (n < 0) {
		rs_log("%s line %d: %s", conf, va > 0 ? err.line : 0, va > 0 ? err.msg : "cannot map");
		return 2;
	}
	for (int i = 0; i < n; i++)
		svcs[nsvc++].c = parsed[i];
	kept->nsvc = nsvc;
	rs_log("%d services in %s", n, conf);
	/* ds first, so every other service finds its label registered when it starts. */
	struct svc *ds = svc_by_name("ds");
	if (ds)
		start(ds);
	for (int i = 0; i < nsvc; i++)
		if (&svcs[i] != ds)
			start(&svcs[i]);
loop:;
	struct ax_evloop l = { .on_message = on_message, .on_report = on_report, .poll = timers };
	return (int)ax_evloop_run(&l);
}
