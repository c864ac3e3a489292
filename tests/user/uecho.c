/* Helper process for the user-space system tests (spawned by utest).
 *   uecho echo         reply to every call with w[0] + 1; type 2 = reply then exit
 *   uecho die-on-call  take one call and exit without replying
 *   uecho die-later    exit after a while without receiving anything
 *   uecho crash        write to address 0
 *   uecho exit N       exit with status N at once
 *   uecho notify-sink  OR up notifications until a call arrives; reply with the bits
 *   uecho spin N       report the CPU it runs on N times (messages to the parent)
 *   uecho share        memory-object grantee: maps, reads and writes what the caller names
 *   uecho mo           creates objects, grants one to its caller, exits without cleaning up
 *   uecho waiter       waits on a doorbell in a granted object and acknowledges each ring
 *   uecho fpu SEED     keeps a pattern in every XMM register across yields; exits 0 if intact
 *   uecho chanecho     channel echo server: requests on one SPSC channel, answers on another
 *   uecho hang         beats for 300 ms (event loop turns), then spins without beating
 *   uecho busy MS      spins MS ms from its start without receiving anything, then echoes
 *   uecho callto NAME  beats, finds service NAME (RS_LOOKUP), calls it once, says after how
 *                      long it answered, then echoes (rs must not take the wait for a hang)
 *   uecho hog MS       prints KI_THREAD_STATE of its parent and of itself, then spins for MS ms
 *                      (no heartbeat; its only kernel call reads the clock) and exits 0
 *   uecho inb PORT     reads an I/O port and exits 5 (faults without the port privilege)
 *   uecho dsclient     talks to ds for its parent: 1 put count=w[1], 2 get client/count,
 *                      3 try to register itself (must fail); w[0] of the first message = ds
 *   uecho rskill NAME  asks rs (its parent) to kill NAME and exits with 0 if refused
 *   uecho text         answers type 1 with text_value() and its address, type 3 with the
 *                      result of its own KC_TEXT read of w[1] in endpoint w[0] (not its child) */
#include "axrt.h"
#include "evloop.h"
#include "heartbeat.h"
#include "service.h"
#include "ioport.h"
#include "chan_axolotl.h"
#include "ds_proto.h"
#include "rs_proto.h"

/* waiter: acknowledges each new doorbell value; ~0 ends the loop. */
struct waiter {
	volatile uint64_t *bell, *ack;
	uint64_t seen;
};

static bool waiter_poll(struct ax_evloop *l)
{
	struct waiter *w = l->ctx;
	uint64_t v = *w->bell;
	if (v == w->seen)
		return false;
	w->seen = v;
	*w->ack = v;
	l->stop = v == ~0ull;
	return true;
}

static void waiter_message(struct ax_evloop *l, struct kmsg *m)
{
	(void)l;
	ax_reply(m->source, m);
}

/* text: a function whose code the parent patches (utest t_text): mov $0x1111, %eax; ret. */
static __attribute__((noinline)) uint64_t text_value(void)
{
	return 0x1111;
}

static void text_message(struct ax_evloop *l, struct kmsg *m)
{
	endpoint_t from = m->source;
	uint8_t b;
	if (m->type == 1)
		m->w[0] = text_value(), m->w[1] = (uint64_t)&text_value;
	else if (m->type == 3)
		m->w[0] = (uint64_t)ax_text((endpoint_t)m->w[0], KT_READ, m->w[1], &b, 1);
	ax_reply(from, m);
	if (m->type == 2)
		l->stop = true;
}

/* echo: w[0] + 1 back to the caller; type 2 ends the loop. */
static void echo_message(struct ax_evloop *l, struct kmsg *m)
{
	endpoint_t from = m->source;
	m->w[0]++;
	ax_reply(from, m);
	if (m->type == 2)
		l->stop = true;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "echo";
	ax_heartbeat_init(argc, argv); /* when started by rs with a heartbeat */
	struct kmsg m;
	if (!strcmp(mode, "echo") || !strcmp(mode, "text")) {
		struct ax_evloop l = { .on_message = mode[0] == 'e' ? echo_message : text_message };
		return (int)ax_evloop_run(&l);
	}
	if (!strcmp(mode, "die-on-call")) {
		while (ax_receive(EP_ANY, &m) < 0 || m.source == EP_KERNEL)
			;
		return 7; /* the caller must get an error, not hang */
	}
	if (!strcmp(mode, "die-later")) {
		uint64_t t0 = ax_time_ns();
		while (ax_time_ns() - t0 < 200000000ull)
			ax_yield();
		return 8;
	}
	if (!strcmp(mode, "crash")) {
		*(volatile int *)0 = 1;
		return 9;
	}
	if (!strcmp(mode, "hang")) {
		static const uint64_t never = 0;
		for (uint64_t t0 = ax_time_ns(); ax_time_ns() - t0 < 300000000ull;) {
			ax_heartbeat();
			if (ax_wait_timeout(&never, 0, 20000000) & KW_IPC)
				ax_receive(EP_ANY, &m); /* rs's ping */
		}
		for (;;)
			__asm__ volatile("pause");
	}
	if (!strcmp(mode, "busy")) {
		uint64_t ms = argc > 2 ? ax_atou(argv[2]) : 1000;
		for (uint64_t t0 = ax_time_ns(); ax_time_ns() - t0 < ms * 1000000ull;)
			__asm__ volatile("pause");
		struct ax_evloop l = { .on_message = echo_message };
		return (int)ax_evloop_run(&l);
	}
	if (!strcmp(mode, "callto") && argc > 2) {
		static const uint64_t never = 0;
		int64_t peer;
		while ((peer = ax_svc_lookup(argv[2], NULL)) <= 0) {
			ax_heartbeat();
			ax_wait_timeout(&never, 0, 10000000);
		}
		uint64_t t0 = ax_time_ns();
		m = (struct kmsg){ .type = 1, .w = { 41 } };
		int64_t r = ax_call((endpoint_t)peer, &m);
		ax_printf("uecho: %s answered %lld after %llu ms\n", argv[2], (long long)(r < 0 ? r : (int64_t)m.w[0]),
			  (unsigned long long)((ax_time_ns() - t0) / 1000000));
		struct ax_evloop l = { .on_message = echo_message };
		return (int)ax_evloop_run(&l);
	}
	if (!strcmp(mode, "hog")) {
		uint64_t ms = argc > 2 ? ax_atou(argv[2]) : 1000;
		/* a thread's state is for its parent: ours is refused, our own answered */
		ax_printf("uecho: state of the parent %lld, own %lld\n",
			  (long long)kcall2(KC_INFO, KI_THREAD_STATE, kcall1(KC_INFO, KI_PARENT)),
			  (long long)kcall2(KC_INFO, KI_THREAD_STATE, kcall1(KC_SELF, 0)));
		for (uint64_t t0 = ax_time_ns(); ax_time_ns() - t0 < ms * 1000000ull;)
			__asm__ volatile("pause");
		return 0;
	}
	if (!strcmp(mode, "inb")) {
		uint16_t port = (uint16_t)(argc > 2 ? ax_atou(argv[2]) : 0x80);
		(void)ax_inb(port);
		return 5;
	}
	if (!strcmp(mode, "exit"))
		return argc > 2 ? (int)ax_atou(argv[2]) : 0;
	if (!strcmp(mode, "notify-sink")) {
		uint64_t bits = 0, notes = 0;
		for (;;) {
			if (ax_receive(EP_ANY, &m) < 0)
				continue;
			if (m.source == EP_KERNEL && m.type == KMSG_NOTIFY) {
				bits |= m.w[0];
				notes++;
				continue;
			}
			if (m.source == EP_KERNEL)
				continue;
			endpoint_t from = m.source;
			m.w[0] = bits;
			m.w[1] = notes;
			ax_reply(from, &m);
			return 0;
		}
	}
	if (!strcmp(mode, "spin")) {
		/* Ask the parent (the sender of the first message) for reports. */
		while (ax_receive(EP_ANY, &m) < 0 || m.source == EP_KERNEL)
			;
		endpoint_t parent = m.source;
		ax_reply(parent, &m);
		long n = argc > 2 ? (long)ax_atou(argv[2]) : 100;
		for (long i = 0; i < n; i++) {
			uint64_t t0 = ax_rdtsc();
			while (ax_rdtsc() - t0 < 2000000)
				;
			m.type = 3;
			m.w[0] = ax_cpu();
			if (ax_send(parent, &m) < 0)
				return 1;
		}
		return 0;
	}
	if (!strcmp(mode, "share")) {
		/* Requests: 1 map handle w[0] with prot w[1], w[2] pages (0: one; reply: va or
		 * error), 2 read u64 at
		 * w[0], 3 write w[1] at w[0], 4 vcopy w[2] bytes from the caller's w[0] to ours
		 * at w[1] (expected to fail: we hold no KC_VCOPY), 5 address of a buffer here. */
		static uint64_t buf[64];
		for (;;) {
			if (ax_receive(EP_ANY, &m) < 0 || m.source == EP_KERNEL)
				continue;
			endpoint_t from = m.source;
			volatile uint64_t *p = (volatile uint64_t *)m.w[0];
			switch (m.type) {
			case 1: m.w[0] = (uint64_t)ax_mo_map((int64_t)m.w[0], 0, 0, m.w[2] ? m.w[2] : 1, m.w[1]); break;
			case 2: m.w[0] = *p; break;
			case 3: *p = m.w[1]; break;
			case 4: m.w[0] = (uint64_t)ax_vcopy(from, (void *)m.w[0], EP_NONE, (void *)m.w[1], m.w[2]); break;
			case 5: m.w[0] = (uint64_t)buf; break;
			default: return 0;
			}
			ax_reply(from, &m);
		}
	}
	if (!strcmp(mode, "mo")) {
		int64_t h[3];
		static const uint64_t pages[3] = { 1, 4, 16 };
		for (int i = 0; i < 3; i++) {
			h[i] = ax_mo_create(pages[i], 0);
			int64_t va = h[i] > 0 ? ax_mo_map(h[i], 0, 0, pages[i], KP_R | KP_W) : -1;
			if (va < 0)
				return 20 + i;
			for (uint64_t pg = 0; pg < pages[i]; pg++)
				((volatile uint64_t *)va)[pg * 512] = 0xab00 + pg;
		}
		while (ax_receive(EP_ANY, &m) < 0 || m.source == EP_KERNEL)
			;
		m.w[0] = (uint64_t)ax_mo_grant(h[1], m.source, KP_R);
		ax_reply(m.source, &m);
		return 4; /* objects, mappings and the grant's source left for the kernel to clean */
	}
	if (!strcmp(mode, "waiter")) {
		/* First message: w[0] = handle of the shared page. Doorbell at word 0, our
		 * acknowledgement at word 8 (another cache line); ~0 ends the loop. */
		while (ax_receive(EP_ANY, &m) < 0 || m.source == EP_KERNEL)
			;
		int64_t va = ax_mo_map((int64_t)m.w[0], 0, 0, 1, KP_R | KP_W);
		m.w[0] = (uint64_t)va;
		ax_reply(m.source, &m);
		if (va < 0)
			return 1;
		struct waiter w = { (volatile uint64_t *)va, (volatile uint64_t *)va + 8, 0 };
		struct ax_evloop l = { .on_message = waiter_message, .poll = waiter_poll, .doorbell = w.bell, .ctx = &w };
		return ax_evloop_run(&l) < 0 ? 2 : 0;
	}
	if (!strcmp(mode, "chanecho")) {
		/* First message: w[0] = handle of the shared object, w[1]/w[2] = offsets of the
		 * request and reply channels, w[3] = object size. Each request's w[0] comes back + 1.
		 * A corrupted request channel is reported (type 7) and dropped; we keep answering
		 * kernel IPC: type 1 echo, type 2 stop. */
		while (ax_receive(EP_ANY, &m) < 0 || m.source == EP_KERNEL)
			;
		endpoint_t parent = m.source;
		uint64_t size = m.w[3];
		int64_t va = ax_mo_map((int64_t)m.w[0], 0, 0, size / 4096, KP_R | KP_W);
		struct spsc req, rep;
		int ok = va > 0 && spsc_attach(&req, (char *)va + m.w[1], size - m.w[1], SPSC_CONSUMER) == 0 &&
			 spsc_attach(&rep, (char *)va + m.w[2], size - m.w[2], SPSC_PRODUCER) == 0;
		m.w[0] = (uint64_t)ok;
		ax_reply(parent, &m);
		if (!ok)
			return 1;
		struct chan_axolotl_peer self = { 0 };
		struct chan_platform plat;
		chan_axolotl_platform(&plat, &self);
		bool channel_ok = true;
		for (;;) {
			struct kmsg q;
			int r = channel_ok ? spsc_pop(&req, &q) : CHAN_EAGAIN;
			if (r == 0) {
				q.w[0]++;
				while (spsc_push(&rep, &q) == CHAN_EAGAIN)
					; /* the parent drains replies; never full for long */
				continue;
			}
			if (r == CHAN_ECORRUPT) {
				channel_ok = false;
				/* A blocking send: the parent may not be in its receive yet, and a
				 * non-blocking one would lose the report (both then sleep forever). */
				struct kmsg e = { .type = 7 };
				ax_send(parent, &e);
				continue;
			}
			self.last_wait = 0;
			if (channel_ok && chan_sleep(&req, &plat) == CHAN_ECORRUPT)
				continue;
			if (!channel_ok || (self.last_wait & KW_IPC)) {
				if (ax_receive(EP_ANY, &m) < 0 || m.source == EP_KERNEL)
					continue;
				endpoint_t from = m.source;
				m.w[0]++;
				ax_reply(from, &m);
				if (m.type == 2)
					return 0;
			}
		}
	}
	if (!strcmp(mode, "rskill") && argc > 2) {
		/* Only services configured with `control` may use rs's control calls. */
		m = (struct kmsg){ .type = RS_KILL };
		ax_strpad(m.w, RS_NAME_LEN, argv[2]);
		int64_t r = ax_call((endpoint_t)kcall1(KC_INFO, KI_PARENT), &m);
		ax_printf("uecho: rs answered %lld to kill %s\n", (long long)(r < 0 ? r : (int64_t)m.w[6]), argv[2]);
		return r == 0 && (int64_t)m.w[6] == -KE_PERM ? 0 : 1;
	}
	if (!strcmp(mode, "dsclient")) {
		endpoint_t ds = 0;
		for (;;) {
			if (ax_receive(EP_ANY, &m) < 0 || m.source == EP_KERNEL)
				continue;
			endpoint_t from = m.source;
			if (!ds)
				ds = (endpoint_t)m.w[0];
			struct kmsg q = { 0 };
			if (m.type == 1) {
				q.type = DS_PUT;
				memcpy(q.w, "count", 6);
				q.w[2] = m.w[1], q.w[5] = 8;
			} else if (m.type == 2) {
				q.type = DS_GET;
				memcpy(&q.w[0], "client", 7);
				memcpy(&q.w[2], "count", 6);
			} else if (m.type == 3) {
				q.type = DS_REGISTER;
				q.w[0] = ax_self();
				memcpy(&q.w[1], "evil", 5);
			} else {
				return 0;
			}
			m.w[6] = ax_call(ds, &q) < 0 ? ~0ull : q.w[6];
			m.w[2] = q.w[2];
			ax_reply(from, &m);
		}
	}
	if (!strcmp(mode, "fpu")) {
		uint64_t seed = argc > 2 ? ax_atou(argv[2]) : 1, bad = 0;
		for (uint64_t round = 0; round < 300; round++) {
			uint64_t in[16], out[16];
			for (int i = 0; i < 16; i++)
				in[i] = seed * 0x9e3779b97f4a7c15ull + round * 131 + (uint64_t)i;
#define XMM_ALL(op) op(0) op(1) op(2) op(3) op(4) op(5) op(6) op(7) op(8) op(9) op(10) op(11) op(12) op(13) op(14) op(15)
#define XMM_LOAD(n) "movq " #n "*8(%0), %%xmm" #n "\n\t"
#define XMM_STORE(n) "movq %%xmm" #n ", " #n "*8(%0)\n\t"
			__asm__ volatile(XMM_ALL(XMM_LOAD) : : "r"(in) : "memory");
			ax_yield();
			__asm__ volatile(XMM_ALL(XMM_STORE) : : "r"(out) : "memory");
			for (int i = 0; i < 16; i++)
				bad += in[i] != out[i];
		}
		return bad ? 1 : 0;
	}
	ax_printf("uecho: unknown mode %s\n", mode);
	return 2;
}
