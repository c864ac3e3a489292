/* Requests to rs (lib/rs/rs_proto.h): lookups and commands from services, the live-update
 * handshake, and the control calls of the service command (servers/rs/README.md). */
#include "rs.h"
#include "service.h"
#include "rs_swifi.h"
#include "swifi.h"

#define QUIESCE_NS 2000000000ull /* the old instance must be at rest within 2 s */
#define READY_NS 5000000000ull   /* and the new one ready within 5 s, or we roll back */

/* A NUL-padded name field out of a message, NUL-terminated in out (cap + 1 bytes). */
static bool field(const void *src, size_t cap, char *out)
{
	memcpy(out, src, cap);
	out[cap] = 0;
	return out[0] && strlen(out) < cap;
}

static void answer(endpoint_t to, int64_t result)
{
	struct kmsg m = { .type = 0 };
	m.w[6] = (uint64_t)result;
	ax_reply(to, &m);
}

static void update_done(struct svc *s, int64_t result)
{
	if (s->up.requester)
		answer(s->up.requester, result);
	s->up.phase = UP_NONE;
	s->up.requester = s->up.next = 0;
	s->up.old_waiting = false;
	s->up.replacing = false;
	s->cmds &= ~(1u << RS_DO_QUIESCE);
}

/* The update failed: the new instance goes, the old one (if waiting) resumes. */
static void rollback(struct svc *s, const char *why)
{
	rs_log("update of %s to %s failed (%s): rolled back", s->c.name, s->up.binary, why);
	if (s->up.next)
		ax_kill(s->up.next);
	if (s->up.old_waiting && s->ep) {
		struct kmsg m = { .type = 0, .w = { 1 } }; /* resume */
		ax_reply(s->ep, &m);
	}
	update_done(s, -KE_INTR);
	svc_heartbeat_reset(s);
	rsds_publish(s);
}

void rsctl_replace_failed(struct svc *s, const char *why)
{
	rs_log("update of %s to %s failed (%s): %s comes back as after a crash", s->c.name, s->up.binary, why,
	       s->c.binary);
	update_done(s, -KE_INTR);
}

void rsctl_update_died(struct svc *s, endpoint_t ep)
{
	if (ep && ep == s->up.next) {
		s->up.next = 0; /* already dead */
		rollback(s, "the new instance ended");
	} else if (!ep) { /* the old instance died: nothing to roll back to, its restart follows */
		rs_log("update of %s abandoned: the old instance ended", s->c.name);
		if (s->up.next)
			ax_kill(s->up.next);
		update_done(s, -KE_DEADSRCDST);
	}
}

uint64_t rsctl_check_updates(void)
{
	uint64_t next = 0, now = ax_time_ns();
	for (int i = 0; i < nsvc; i++) {
		struct svc *s = &svcs[i];
		if (s->up.phase == UP_NONE)
			continue;
		if (now >= s->up.deadline_ns) {
			if (s->up.phase == UP_QUIESCING) {
				rs_log("update of %s abandoned: it did not quiesce", s->c.name);
				update_done(s, -KE_AGAIN);
			} else {
				rollback(s, "the new instance was not ready in time");
			}
			continue;
		}
		uint64_t d = s->up.deadline_ns - now;
		if (!next || d < next)
			next = d;
	}
	return next;
}

/* RS_QUIESCED from the old instance: start the new one, or give up. */
static bool quiesced(struct svc *s, struct kmsg *m)
{
	if (s->up.phase != UP_QUIESCING) {
		m->w[0] = 1; /* no update (any more): carry on */
		return true;
	}
	if ((int64_t)m->w[0] < 0) {
		rs_log("%s cannot be updated (error %lld)", s->c.name, (long long)(int64_t)m->w[0]);
		update_done(s, -KE_NOSYS);
		m->w[0] = 0;
		return true;
	}
	if (m->w[0] == RS_QUIESCED_REPLACE) {
		/* Its state survives a restart (ds, kept memory): it ends here, and the new binary
		 * starts as its restart would (report() -> svc_replace). */
		rs_log("%s quiesced: replacing it with %s as on a restart", s->c.name, s->up.binary);
		s->up.replacing = true;
		s->up.deadline_ns = ax_time_ns() + READY_NS;
		ax_kill(s->ep);
		return false; /* never answered: it ends */
	}
	s->up.old_waiting = true; /* answered on a rollback; killed on success */
	int64_t ep = svc_start(s, s->up.binary, START_UPDATE);
	if (ep < 0) {
		rollback(s, "cannot start the new binary");
		return false;
	}
	rs_log("%s quiesced, new instance %#x (%s) taking over", s->c.name, (unsigned)ep, s->up.binary);
	s->up.next = (endpoint_t)ep;
	s->up.phase = UP_STARTING;
	s->up.deadline_ns = ax_time_ns() + READY_NS;
	return false;
}

/* RS_READY from a new instance: commit the update. */
static int64_t ready(endpoint_t from)
{
	struct svc *s = NULL;
	for (int i = 0; i < nsvc && !s; i++)
		if ((svcs[i].up.phase == UP_STARTING || svcs[i].up.phase == UP_REPLACED) && svcs[i].up.next == from)
			s = &svcs[i];
	if (!s)
		return -KE_PERM;
	uint64_t stall_us = (ax_time_ns() - s->up.asked_ns) / 1000;
	bool replaced = s->up.phase == UP_REPLACED; /* the old one has ended already (rs.c running()) */
	char how[40] = "replaced it as on a restart";
	if (!replaced) {
		endpoint_t old = s->ep;
		s->build_id = module_build_id(s->up.binary);
		s->retired = old;
		if (s->c.keep)
			ax_legacy(LEG_KEEP, old, 0);
		ax_kill(old);
		s->ep = from;
		s->cmds = 0; /* commands queued for the old instance die with it */
		s->started_ns = ax_time_ns();
		if (s->c.dedicated && ax_sched(from, (uint32_t)s->c.cpu, KS_DEDICATED) < 0)
			rs_log("%s: CPU %d could not be dedicated to the new instance", s->c.name, s->c.cpu);
		if (s->c.keep) { /* the new instance's memory is kept from now on; the old one's is not */
			ax_legacy(LEG_KEEP, from, 1);
			s->legacy_given = -1;
		}
		ksnprintf(how, sizeof(how), "replaces %#x", (unsigned)old);
	}
	memcpy(s->c.binary, s->up.binary, sizeof(s->c.binary));
	rs_log("%s updated to %s: %#x %s (stall %llu.%03llu ms)", s->c.name, s->up.binary, (unsigned)from, how,
	       (unsigned long long)(stall_us / 1000), (unsigned long long)(stall_us % 1000));
	update_done(s, 0);
	svc_heartbeat_reset(s);
	if (!replaced)
		rsds_registered(s, from); /* the name now belongs to the new instance */
	rsds_publish(s);
	return 0;
}

static int64_t start_update(struct svc *s, const struct kmsg *m, endpoint_t from)
{
	char bin[RS_NAME_LEN + 1];
	if (!field(&m->w[3], RS_NAME_LEN, bin) || ax_find_module(bin) < 0)
		return -KE_INVAL;
	if (s->up.phase != UP_NONE)
		return -KE_BUSY;
	memset(s->up.binary, 0, sizeof(s->up.binary));
	memcpy(s->up.binary, bin, strlen(bin));
	s->up.phase = UP_QUIESCING;
	s->up.requester = from;
	s->up.asked_ns = ax_time_ns();
	s->up.deadline_ns = s->up.asked_ns + QUIESCE_NS;
	rs_log("updating %s to %s: asking it to quiesce", s->c.name, bin);
	svc_queue_cmd(s, RS_DO_QUIESCE);
	rsds_publish(s);
	return 0;
}

/* A code fault (rs_swifi.c) is applied here and now; the others are the service's to run
 * (lib/axrt/service.c). out: the seed used, the faults applied, 1 for a code fault (one
 * that no instruction fits is answered 0 with none applied). */
static int64_t inject(struct svc *s, const struct kmsg *m, uint64_t out[3])
{
	char word[RS_WORD_LEN + 1];
	if (!field(&m->w[3], RS_WORD_LEN, word))
		return -KE_INVAL;
	if (!strcmp(word, "random") || swifi_type_by_name(word) >= 0) {
		uint32_t n = RS_INJECT_COUNT(m->w[5]);
		out[0] = m->w[6];
		int64_t r = swifi_inject(s, word, n ? n : 1, &out[0], RS_INJECT_AT(m->w[5]));
		out[1] = r > 0 ? (uint64_t)r : 0;
		out[2] = 1;
		return r < 0 && r != -KE_SRCH ? r : 0;
	}
	rs_log("injecting %s into %s", word, s->c.name);
	if (!strcmp(word, "crash"))
		svc_queue_cmd(s, RS_DO_CRASH);
	else if (!strcmp(word, "hang"))
		svc_queue_cmd(s, RS_DO_HANG);
	else {
		memcpy(s->word, word, RS_WORD_LEN);
		svc_queue_cmd(s, RS_DO_INJECT);
	}
	return 0;
}

static void list(struct kmsg *m)
{
	uint64_t i = m->w[0];
	memset(m->w, 0, sizeof(m->w));
	if (i >= (uint64_t)nsvc) {
		m->w[6] = (uint64_t)-KE_SRCH;
		return;
	}
	const struct svc *s = &svcs[i];
	memcpy(m->w, s->c.name, RS_NAME_LEN);
	m->w[3] = s->ep | (uint64_t)(uint32_t)s->c.cpu << 32;
	m->w[4] = s->restarts | (uint64_t)svc_state(s) << 32 | (uint64_t)s->c.dedicated << 40;
	uint64_t up_ms = s->ep ? (ax_time_ns() - s->started_ns) / 1000000 : 0;
	m->w[5] = (up_ms > 0xffffffffu ? 0xffffffffu : up_ms) | (uint64_t)s->build_id << 32;
}

/* `service kill rs`, `service inject rs crash` and `service inject rs hang`: we end (after
 * answering), or spin until the kernel's watchdog kills us, and the kernel starts our
 * successor, which adopts the services (rs.c adopt()). */
static int64_t control_self(struct kmsg *m, endpoint_t from)
{
	char word[RS_WORD_LEN + 1] = "";
	bool ok = m->type == RS_KILL;
	if (m->type == RS_INJECT && field(&m->w[3], RS_WORD_LEN, word))
		ok = !strcmp(word, "crash") || (!strcmp(word, "hang") && rs_watched);
	if (!ok)
		return -KE_NOSYS; /* (a hang with no watchdog on us: nobody would notice it) */
	memset(m->w, 0, sizeof(m->w));
	ax_reply(from, m);
	rs_log("%s", m->type == RS_KILL ? "killed by the service command: ending"
		     : word[0] == 'c'	? "injected fault: crashing"
					: "injected fault: hanging until the kernel's watchdog ends us");
	if (m->type == RS_KILL)
		ax_exit(-9);
	if (word[0] == 'c')
		ax_svc_crash();
	ax_svc_hang();
}

/* The service command's calls; the caller is a service configured with `control`. */
static int64_t control(struct kmsg *m, endpoint_t from, bool *deferred, uint64_t out[3])
{
	char name[RS_NAME_LEN + 1];
	bool named = field(m->w, RS_NAME_LEN, name);
	if (named && !strcmp(name, "rs") && !svc_by_name("rs"))
		return control_self(m, from);
	struct svc *s = named ? svc_by_name(name) : NULL;
	if (!s)
		return -KE_SRCH;
	bool running = s->ep && s->up.phase == UP_NONE;
	switch (m->type) {
	case RS_START:
		if (s->ep || !s->stopped)
			return -KE_BUSY;
		s->stopped = false;
		s->restart_at_ns = 0; /* the main loop starts it now */
		return 0;
	case RS_STOP:
		if (s->up.phase != UP_NONE)
			return -KE_BUSY;
		s->stopped = true;
		if (s->ep)
			ax_kill(s->ep);
		else
			rsds_publish(s);
		return 0;
	case RS_KILL:
		return running ? ax_kill(s->ep) : -KE_AGAIN;
	case RS_RESTART:
		if (s->up.phase != UP_NONE)
			return -KE_BUSY;
		s->stopped = false;
		if (!s->ep) {
			s->restart_at_ns = 0;
			return 0;
		}
		s->restart_now = true;
		return ax_kill(s->ep);
	case RS_UPDATE:
	case RS_UPDATE_NOWAIT: {
		int64_t r = running ? start_update(s, m, from) : -KE_AGAIN;
		if (m->type == RS_UPDATE_NOWAIT && r == 0)
			s->up.requester = 0; /* answered now: nobody waits for the outcome */
		*deferred = r == 0 && m->type == RS_UPDATE;
		return r;
	}
	case RS_INJECT:
		return running ? inject(s, m, out) : -KE_AGAIN;
	}
	return -KE_NOSYS;
}

void rsctl_message(struct kmsg *m)
{
	endpoint_t from = m->source;
	struct svc *caller = svc_by_ep(from);
	char name[RS_NAME_LEN + 1];
	int64_t r = 0;
	switch (m->type) {
	case RS_LOOKUP: {
		struct svc *s = field(m->w, RS_NAME_LEN, name) ? svc_by_name(name) : NULL;
		memset(m->w, 0, sizeof(m->w));
		if (!s || s->absent)
			r = -KE_SRCH; /* (absent: its device is not there, it never runs) */
		else if (!s->ep)
			r = -KE_AGAIN; /* one of ours, down now: crashed (its restart is coming) or stopped */
		else
			m->w[0] = s->ep, m->w[1] = s->up.phase == UP_STARTING ? s->up.next : 0;
		break;
	}
	case RS_CMD: {
		memset(m->w, 0, sizeof(m->w));
		uint32_t pending = caller ? caller->cmds : 0;
		if (pending) {
			uint32_t cmd = (uint32_t)__builtin_ctz(pending);
			caller->cmds &= ~(1u << cmd);
			m->w[0] = cmd;
			memcpy(&m->w[1], caller->word, RS_WORD_LEN);
			m->w[3] = caller->ds_for_cmd;
		}
		break;
	}
	case RS_QUIESCED:
		if (!caller)
			r = -KE_PERM;
		else if (!quiesced(caller, m))
			return; /* answered later */
		break;
	case RS_READY:
		r = ready(from);
		break;
	case RS_COMPLAIN:
		r = caller ? stall_complaint(caller, m) : -KE_PERM;
		memset(m->w, 0, sizeof(m->w));
		if (r > 0)
			m->w[0] = 1, r = 0;
		break;
	case RS_LOG:
		rs_log_read(m);
		ax_reply(from, m);
		return;
	case RS_LIST:
	case RS_START:
	case RS_STOP:
	case RS_KILL:
	case RS_RESTART:
	case RS_UPDATE:
	case RS_UPDATE_NOWAIT:
	case RS_INJECT: {
		if (!caller || !caller->c.control) {
			r = -KE_PERM;
			break;
		}
		if (m->type == RS_LIST) {
			list(m);
			ax_reply(from, m);
			return;
		}
		bool deferred = false;
		uint64_t out[3] = { 0, 0, 0 };
		r = control(m, from, &deferred, out);
		if (deferred)
			return; /* RS_UPDATE: answered when it commits or rolls back */
		memset(m->w, 0, sizeof(m->w));
		m->w[0] = out[0], m->w[1] = out[1], m->w[2] = out[2];
		break;
	}
	default:
		r = -KE_NOSYS;
	}
	m->w[6] = (uint64_t)r;
	ax_reply(from, m);
}
