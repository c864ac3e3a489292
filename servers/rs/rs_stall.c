/* A consumer that stops reading (README.md, "A consumer that stops reading"). A server whose
 * loop turns, so its heartbeat beats, but that no longer reads a channel is alive and broken;
 * its producer sees it (lib/chan/watch.h) and complains here. The complaint is weighed as a
 * missed heartbeat is (rs_hang.c): the accused is restarted only if the stall is its own.
 * - Confirmed: acted on when the producer says it again a second later, not at once.
 * - Not a chain: a consumer that stopped reading because its own output stood still first
 *   (tcp holds ip's packets while ip does not read tcp's answers) has complained itself; the
 *   complaint whose stall began first names the culprit.
 * - Not starved, not waiting: a thread given no CPU, or blocked in a call on a peer, is not
 *   at fault; it is measured again.
 * - Not starting or updating: a service that has not beaten since it started within
 *   HANG_START_NS, or is in a live update, is left alone.
 * Only services may complain, and only about a running service other than themselves; a
 * lying producer can get a peer restarted, as a crash of the peer would, never more. */
#include "rs.h"

#define STALL_CONFIRM_NS 1000000000ull /* acted on when said again this much later */
#define STALL_FRESH_NS 2500000000ull   /* a complaint not repeated this long is over */

static void name_of(const struct kmsg *m, char what[RS_COMPLAIN_WHAT + 1])
{
	memcpy(what, &m->w[2], RS_COMPLAIN_WHAT);
	what[RS_COMPLAIN_WHAT] = 0;
	for (int i = 0; what[i]; i++)
		if (what[i] < 0x20 || what[i] > 0x7e)
			what[i] = '?';
}

/* When a stall said to stand for ms began. */
static uint64_t began(uint64_t now, uint64_t ms)
{
	return now - (ms * 1000000 < now ? ms * 1000000 : now);
}

/* Weighs a stall of x's: on `what` (its channel, its IRQ line), said by `by`, standing for
 * ms; `where_stuck` names it in the verdict. 1 if x was restarted, 0 if noted. */
static int64_t weigh(struct svc *x, const char *by, const char *what, const char *where_stuck, uint64_t ms)
{
	endpoint_t ep = x->ep;
	uint64_t now = ax_time_ns(), since = began(now, ms);
	if (x->up.phase != UP_NONE || waiting_for_rs(ep) || (!x->hb_seen && now - x->started_ns < HANG_START_NS))
		return 0;
	if (!x->accused.first_ns || now - x->accused.last_ns > STALL_FRESH_NS) {
		x->accused.first_ns = x->accused.last_ns = now;
		x->accused.cpu_us = hang_cpu_us(ep);
		x->accused.told = false;
		ax_printf("rs: %s says %s has made no progress on %s for %llu ms\n", by, x->c.name, what,
			  (unsigned long long)ms);
		return 0;
	}
	x->accused.last_ns = now;
	uint64_t elapsed = now - x->accused.first_ns;
	if (elapsed < STALL_CONFIRM_NS)
		return 0;
	if (x->said.peer && now - x->said.last_ns < STALL_FRESH_NS && x->said.since_ns < since) {
		/* x's own output stood still first: it holds its input back, and the culprit is
		 * further on (or, when x accuses its accuser in turn, the accuser itself) */
		if (!x->accused.told) {
			struct svc *y = svc_by_ep(x->said.peer);
			ax_printf("rs: %s waits on %s, whose channel stopped first: %s not restarted\n", x->c.name,
				  y ? y->c.name : "a peer", x->c.name);
		}
		x->accused.told = true;
		return 0;
	}
	char where[96];
	endpoint_t end;
	/* CPU time over the last quarter of the elapsed time, not half: a spinner that shares a
	 * CPU still passes it, a thread that got none does not. */
	enum hang_verdict hv = hang_judge(ep, x->accused.cpu_us, (uint32_t)(elapsed / 2000000), where, sizeof(where), &end);
	if (hv != HV_HUNG) {
		if (!x->accused.told)
			ax_printf("rs: %s made no progress on %s, but is %s: not restarted yet\n", x->c.name, what,
				  hv == HV_STARVED ? "starved of CPU" : "waiting in a call on a peer");
		x->accused.told = true;
		x->accused.first_ns = now;
		x->accused.cpu_us = hang_cpu_us(ep);
		return 0;
	}
	rs_log("%s stuck: no progress on %s for %llu ms", x->c.name, where_stuck, (unsigned long long)ms);
	ax_printf("rs: %s is %s\n", x->c.name, where);
	x->accused.first_ns = 0;
	ax_kill(ep);
	return 1;
}

int64_t stall_complaint(struct svc *c, const struct kmsg *m)
{
	endpoint_t ep = (endpoint_t)m->w[0];
	struct svc *x = ep ? svc_by_ep(ep) : NULL;
	if (!x || x->ep != ep)
		return -KE_SRCH;
	if (x == c)
		return -KE_INVAL;
	char what[RS_COMPLAIN_WHAT + 1], where[RS_COMPLAIN_WHAT + 64];
	name_of(m, what);
	uint64_t now = ax_time_ns(), ms = m->w[1] < 3600000 ? m->w[1] : 3600000;
	c->said.peer = ep, c->said.since_ns = began(now, ms), c->said.last_ns = now;
	ksnprintf(where, sizeof(where), "%s's channel %s", c->c.name, what);
	return weigh(x, c->c.name, what, where, ms);
}

/* A driver deaf to its device (README.md, "A driver deaf to its device"): a line bound
 * KIRQ_WATCHED (the driver serves each interrupt and unmasks at once) that an interrupt
 * masked IRQ_DEAF_MS ago or more and nobody unmasked is weighed as a stall of its driver's,
 * said by the kernel. Looked at once a second (rs.c). */
#define IRQ_LINES 16
#define IRQ_DEAF_MS 3000
void stall_irq_check(void)
{
	for (uint64_t irq = 0; irq < IRQ_LINES; irq++) {
		int64_t r = kcall2(KC_INFO, KI_IRQ_MASKED, irq);
		if (r <= 0 || (uint64_t)r >> 32 < IRQ_DEAF_MS)
			continue;
		endpoint_t ep = (endpoint_t)(r & 0xffffffff);
		struct svc *x = svc_by_ep(ep);
		if (!x || x->ep != ep)
			continue; /* not one of our services (a test's own binding) */
		uint64_t ms = (uint64_t)r >> 32;
		char what[16], where[48];
		ksnprintf(what, sizeof(what), "IRQ %llu", (unsigned long long)irq);
		ksnprintf(where, sizeof(where), "IRQ %llu, masked since its interrupt", (unsigned long long)irq);
		weigh(x, "the kernel", what, where, ms);
	}
}
