/* The hang verdict (README.md, "Heartbeats"). A service that was pinged and did not beat
 * for a whole period is hung only if it had the means to beat: it used half the period in
 * CPU time since the ping, or it sits blocked on no one. A thread
 * that is runnable but was given no CPU, or is blocked on a peer that is, is starved:
 * killing it cannot help, and on a loaded machine (a busy host under TCG, where a virtual
 * CPU may get little real time) it would turn slowness into crashes and lost connections. */
#include "rs.h"

/* KI_THREAD_STATE's fields (kernel/abi/axolotl/kcall.h). */
enum { TS_READY = 1, TS_RUNNING = 2, TS_BLOCKED = 3 };
enum { TB_SEND = 1, TB_RECEIVE = 2, TB_REPLY = 3 };

struct tstate {
	uint32_t state, reason, cpu;
	endpoint_t peer;
};

static bool thread_state(endpoint_t ep, struct tstate *t)
{
	int64_t st = kcall2(KC_INFO, KI_THREAD_STATE, ep);
	if (st < 0)
		return false;
	int64_t peer = kcall2(KC_INFO, KI_THREAD_PEER, ep);
	*t = (struct tstate){ (uint32_t)st & 0xff, ((uint32_t)st >> 8) & 0xff, ((uint32_t)st >> 16) & 0xff,
			      peer > 0 ? (endpoint_t)peer : 0 };
	return true;
}

uint64_t hang_cpu_us(endpoint_t ep)
{
	int64_t us = kcall2(KC_INFO, KI_PROC_CPU_US, ep);
	return us > 0 ? (uint64_t)us : 0;
}

/* What the thread is doing, for the log: its state, on whom it is blocked, its CPU and the
 * user address it last entered the kernel from (`addr2line -e build/user/NAME RIP`). */
static void describe(endpoint_t ep, const struct tstate *t, char *out, size_t n)
{
	static const char *const states[] = { "free", "ready", "running", "blocked", "dead" };
	static const char *const why[] = { "", " sending to", " receiving from", " awaiting a reply from",
					   " in a wait", " in a futex wait", " a zombie" };
	char whom[16] = "";
	if (t->state == TS_BLOCKED && t->reason >= TB_SEND && t->reason <= TB_REPLY)
		ksnprintf(whom, sizeof(whom), " %#x", t->peer);
	int64_t rip = kcall2(KC_INFO, KI_THREAD_RIP, ep);
	ksnprintf(out, n, "%s%s%s on cpu %u, last in the kernel from %#llx", t->state < 5 ? states[t->state] : "?",
		  t->state == TS_BLOCKED && t->reason < 7 ? why[t->reason] : "", whom, t->cpu,
		  (unsigned long long)(rip > 0 ? rip : 0));
}

/* A thread blocked in a call waits for whomever the call is with: follow the calls (a
 * closed receive too) to the thread at the end of the chain. A cycle would be a deadlock
 * (the kernel refuses a call that closes one; this only guards the walk). */
static enum hang_verdict chain_end(const struct tstate *t0, endpoint_t self, endpoint_t *end)
{
	endpoint_t seen[HANG_CHAIN_MAX] = { self };
	int k = 1;
	endpoint_t p = t0->peer;
	while (p && k < HANG_CHAIN_MAX) {
		for (int i = 0; i < k; i++)
			if (seen[i] == p)
				return HV_HUNG;
		struct tstate q;
		*end = p;
		if (!thread_state(p, &q))
			return HV_WAITING; /* gone: the call fails with it */
		if (q.state == TS_READY)
			return HV_STARVED;
		if (q.state != TS_BLOCKED || q.reason < TB_SEND || q.reason > TB_REPLY || !q.peer)
			return HV_WAITING; /* running, or waiting for something else: its own heartbeat tells */
		seen[k++] = p;
		p = q.peer;
	}
	return HV_WAITING;
}

enum hang_verdict hang_judge(endpoint_t ep, uint64_t cpu_us_at_ping, uint32_t period_ms, char *where, size_t n,
			     endpoint_t *end)
{
	struct tstate t;
	*end = 0;
	if (!thread_state(ep, &t)) {
		ksnprintf(where, n, "gone");
		return HV_HUNG;
	}
	describe(ep, &t, where, n); /* from the same reading the verdict is made of */
	/* Half, not less: the guest's CPU time includes time its virtual CPU was not run by a
	 * busy host. A spinner among others still passes it within a few periods, the CPU time
	 * being counted from the ping. */
	/* On a CPU or waiting for one, the same measure: a thread that has just got the CPU
	 * after a period without it is starved, not hung (the kernel counts the current run). */
	if (t.state == TS_READY || t.state == TS_RUNNING)
		return hang_cpu_us(ep) - cpu_us_at_ping < (uint64_t)period_ms * 500 ? HV_STARVED : HV_HUNG;
	if (t.state == TS_BLOCKED && (t.reason == TB_SEND || t.reason == TB_REPLY) && t.peer)
		return chain_end(&t, ep, end);
	return HV_HUNG;
}
