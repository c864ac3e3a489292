/* User-space system tests of the microkernel core (run by tests/system/test_user.py).
 *   utest <test>...   runs the named tests, printing UTEST PASS/FAIL lines.
 * Helpers are spawned from the uecho boot module. */
#include "utest.h"
#include <axolotl/kstat.h>
#include "chan_axolotl.h"
#include "ds_proto.h"

static uint32_t ncpus(void) { return (uint32_t)kcall1(KC_INFO, KI_NCPUS); }

/* Waits for the kernel's report about ep; returns the message type. */
static uint32_t wait_report(endpoint_t ep, struct kmsg *out)
{
	for (;;) {
		if (ax_receive(EP_KERNEL, out) < 0)
			continue;
		if ((out->type == KMSG_PROC_EXIT || out->type == KMSG_PROC_FAULT) && out->w[0] == ep)
			return out->type;
	}
}

static void stop_echo(endpoint_t ep)
{
	struct kmsg m = { .type = 2 };
	ax_call(ep, &m);
	wait_report(ep, &m);
}

static void t_hello(int argc, char **argv)
{
	CHECK("hello", argc >= 2 && !strcmp(argv[0], "utest"), "argv[0] is %s", argv[0]);
	endpoint_t me = ax_self();
	CHECK("hello", me != EP_NONE && (me & 0xffff) != 0, "bad endpoint %#x", me);
	ax_printf("UTEST PASS hello endpoint=%#x cpu=%u\n", me, ax_cpu());
}

static void pingpong(const char *name, bool cross)
{
	uint32_t here = ax_cpu(), n = ncpus();
	if (cross && n < 2) {
		ax_printf("UTEST SKIP %s: one CPU\n", name);
		return;
	}
	/* Pin ourselves so "same core" and "cross core" mean what they say. */
	CHECK(name, kcall6(KC_SCHED, ax_self(), here, 0, 0, 0, 0) == 0, "cannot pin myself");
	uint32_t there = cross ? (here + 1) % n : here;
	int64_t ep = ax_spawn_named("uecho", "echo", there, 2);
	CHECK(name, ep > 0, "spawn failed: %lld", (long long)ep);
	enum { ROUNDS = 2000 };
	uint64_t best = UINT64_MAX, total = 0;
	for (uint64_t i = 0; i < ROUNDS; i++) {
		struct kmsg m = { .type = 1 };
		m.w[0] = i * 3;
		m.w[6] = ~i;
		uint64_t t0 = ax_rdtsc();
		int64_t r = ax_call((endpoint_t)ep, &m);
		uint64_t d = ax_rdtsc() - t0;
		CHECK(name, r == 0, "call %llu failed: %lld", (unsigned long long)i, (long long)r);
		CHECK(name, m.w[0] == i * 3 + 1 && m.w[6] == ~i && m.source == (endpoint_t)ep,
		      "round %llu: bad reply %llu from %#x", (unsigned long long)i,
		      (unsigned long long)m.w[0], m.source);
		total += d;
		if (d < best)
			best = d;
	}
	CHECK(name, ax_cpu() == here, "I moved from cpu%u to cpu%u", here, ax_cpu());
	stop_echo((endpoint_t)ep);
	kcall6(KC_SCHED, ax_self(), SPAWN_ANY_CPU, 0, 0, 0, 0);
	ax_printf("UTEST PASS %s cpus=%u,%u rounds=%d avg_cycles=%llu best_cycles=%llu\n", name, here,
		  there, ROUNDS, (unsigned long long)(total / ROUNDS), (unsigned long long)best);
}

static void t_notify(void)
{
	int64_t ep = ax_spawn_named("uecho", "notify-sink", SPAWN_ANY_CPU, 2);
	CHECK("notify", ep > 0, "spawn failed");
	enum { N = 100000 };
	uint64_t t0 = ax_rdtsc();
	for (uint64_t i = 0; i < N; i++)
		CHECK("notify", ax_notify((endpoint_t)ep, 1ull << (i % 64)) == 0, "notify %llu failed",
		      (unsigned long long)i);
	uint64_t cyc = (ax_rdtsc() - t0) / N;
	CHECK("notify", ax_notify((endpoint_t)ep, 0) == -KE_INVAL, "empty notify accepted");
	struct kmsg m = { .type = 1 };
	CHECK("notify", ax_call((endpoint_t)ep, &m) == 0, "final call failed");
	CHECK("notify", m.w[0] == ~0ull, "bits lost: %#llx", (unsigned long long)m.w[0]);
	CHECK("notify", m.w[1] >= 1 && m.w[1] <= N, "%llu notifications", (unsigned long long)m.w[1]);
	uint64_t delivered = m.w[1];
	wait_report((endpoint_t)ep, &m);
	ax_printf("UTEST PASS notify sent=%d delivered_messages=%llu cycles_per_notify=%llu\n", N,
		  (unsigned long long)delivered, (unsigned long long)cyc);
}

static void t_calldie(void)
{
	/* Server takes the call and dies without replying. */
	int64_t ep = ax_spawn_named("uecho", "die-on-call", SPAWN_ANY_CPU, 2);
	CHECK("calldie", ep > 0, "spawn failed");
	struct kmsg m = { .type = 1 };
	int64_t r = ax_call((endpoint_t)ep, &m);
	CHECK("calldie", r == -KE_DEADSRCDST, "call to a dying server returned %lld", (long long)r);
	struct kmsg rep;
	CHECK("calldie", wait_report((endpoint_t)ep, &rep) == KMSG_PROC_EXIT && rep.w[1] == 7,
	      "no exit report with status 7");
	/* Server dies before it ever receives: the queued caller fails too. */
	ep = ax_spawn_named("uecho", "die-later", SPAWN_ANY_CPU, 2);
	CHECK("calldie", ep > 0, "spawn failed");
	r = ax_call((endpoint_t)ep, &m);
	CHECK("calldie", r == -KE_DEADSRCDST, "queued call returned %lld", (long long)r);
	wait_report((endpoint_t)ep, &rep);
	/* The endpoint is stale now. */
	r = ax_call((endpoint_t)ep, &m);
	CHECK("calldie", r == -KE_DEADSRCDST, "call to a stale endpoint returned %lld", (long long)r);
	CHECK("calldie", ax_send(ax_self(), &m) == -KE_DEADLK, "send to self did not fail");
	ax_printf("UTEST PASS calldie\n");
}

static void t_fault(void)
{
	int64_t ep = ax_spawn_named("uecho", "crash", SPAWN_ANY_CPU, 2);
	CHECK("fault", ep > 0, "spawn failed");
	struct kmsg rep;
	uint32_t type = wait_report((endpoint_t)ep, &rep);
	CHECK("fault", type == KMSG_PROC_FAULT, "got report type %#x", type);
	CHECK("fault", rep.w[1] == 14 && rep.w[4] == 0 && (rep.w[2] & 2),
	      "wrong fault details: vector %llu addr %#llx error %#llx", (unsigned long long)rep.w[1],
	      (unsigned long long)rep.w[4], (unsigned long long)rep.w[2]);
	CHECK("fault", rep.w[3] >= 0x400000 && rep.w[3] < 0x800000, "rip %#llx", (unsigned long long)rep.w[3]);
	/* The rest of the system goes on: a fresh echo server still answers. */
	int64_t echo = ax_spawn_named("uecho", "echo", SPAWN_ANY_CPU, 2);
	struct kmsg m = { .type = 1 };
	m.w[0] = 41;
	CHECK("fault", echo > 0 && ax_call((endpoint_t)echo, &m) == 0 && m.w[0] == 42, "echo after fault failed");
	stop_echo((endpoint_t)echo);
	ax_printf("UTEST PASS fault rip=%#llx\n", (unsigned long long)rep.w[3]);
}

static void t_spawnloop(void)
{
	struct kmsg rep;
	/* Warm up once: caches (kernel stacks, slab pages) fill on first use. */
	int64_t ep = ax_spawn_named("uecho", "exit 3", SPAWN_ANY_CPU, 2);
	CHECK("spawnloop", ep > 0, "spawn failed");
	wait_report((endpoint_t)ep, &rep);
	int64_t free0 = kcall1(KC_INFO, KI_FREE_FRAMES), mo0 = kcall1(KC_INFO, KI_MEMOBJS);
	int64_t th0 = kcall1(KC_INFO, KI_THREADS);
	enum { N = 1000 };
	for (int i = 0; i < N; i++) {
		ep = ax_spawn_named("uecho", "exit 3", SPAWN_ANY_CPU, 2);
		CHECK("spawnloop", ep > 0, "spawn %d failed: %lld", i, (long long)ep);
		CHECK("spawnloop", wait_report((endpoint_t)ep, &rep) == KMSG_PROC_EXIT && rep.w[1] == 3,
		      "child %d: bad report", i);
	}
	int64_t free1 = kcall1(KC_INFO, KI_FREE_FRAMES), mo1 = kcall1(KC_INFO, KI_MEMOBJS);
	int64_t th1 = kcall1(KC_INFO, KI_THREADS);
	CHECK("spawnloop", mo1 == mo0, "memory objects %lld -> %lld", (long long)mo0, (long long)mo1);
	CHECK("spawnloop", th1 == th0, "threads %lld -> %lld", (long long)th0, (long long)th1);
	CHECK("spawnloop", free1 == free0, "free frames %lld -> %lld", (long long)free0, (long long)free1);
	ax_printf("UTEST PASS spawnloop cycles=%d free_frames=%lld\n", N, (long long)free1);
}

static void t_dedicated(void)
{
	uint32_t n = ncpus();
	if (n < 3) {
		ax_printf("UTEST SKIP dedicated: needs 3 CPUs\n");
		return;
	}
	uint32_t core = n - 1;
	int64_t ded = ax_spawn_named("uecho", "spin 40", SPAWN_ANY_CPU, 2);
	CHECK("dedicated", ded > 0, "spawn failed");
	CHECK("dedicated", kcall6(KC_SCHED, (uint64_t)ded, core, KS_DEDICATED, 0, 0, 0) == 0, "dedicate failed");
	int64_t other[3];
	for (int i = 0; i < 3; i++) {
		other[i] = ax_spawn_named("uecho", "spin 40", SPAWN_ANY_CPU, 2);
		CHECK("dedicated", other[i] > 0, "spawn failed");
	}
	/* Nobody else may be placed there. */
	CHECK("dedicated", kcall6(KC_SCHED, (uint64_t)other[0], core, 0, 0, 0, 0) == -KE_BUSY,
	      "pinning another thread to the dedicated core succeeded");
	CHECK("dedicated", ax_spawn_named("uecho", "exit 0", core, 2) == -KE_BUSY,
	      "spawning onto the dedicated core succeeded");
	struct kmsg m = { .type = 1 };
	ax_call((endpoint_t)ded, &m);
	for (int i = 0; i < 3; i++)
		ax_call((endpoint_t)other[i], &m);
	/* Reports and the four exit reports come interleaved, the exits in any order. */
	endpoint_t left[4] = { (endpoint_t)ded, (endpoint_t)other[0], (endpoint_t)other[1], (endpoint_t)other[2] };
	int64_t t0 = kcall2(KC_INFO, KI_CPU_TICKS, core), t1 = -1;
	int reports = 0, on_core = 0, ded_reports = 0, intruders = 0, exits = 0;
	while (reports < 4 * 40 || exits < 4) {
		if (ax_receive(EP_ANY, &m) < 0)
			continue;
		if (m.source == EP_KERNEL) {
			for (int i = 0; i < 4; i++)
				if (m.type == KMSG_PROC_EXIT && left[i] && left[i] == (endpoint_t)m.w[0])
					left[i] = 0, exits++;
			continue;
		}
		if (m.type != 3)
			continue;
		/* A report received before ded's last was taken while the core was still ded's
		 * (sends are synchronous: ded exits only after its last one is received); after
		 * that the core is free and the others may move there. */
		if (m.source == (endpoint_t)ded) {
			on_core += m.w[0] == core;
			if (++ded_reports == 40) /* the core is free (and ticks) once ded is gone */
				t1 = kcall2(KC_INFO, KI_CPU_TICKS, core);
		} else if (ded_reports < 40) {
			intruders += m.w[0] == core;
		}
		reports++;
	}
	CHECK("dedicated", on_core == 40, "dedicated thread ran elsewhere (%d of 40 on cpu%u)", on_core, core);
	CHECK("dedicated", intruders == 0, "%d reports of other threads from the dedicated core", intruders);
	/* No periodic tick while the dedicated thread runs or its core idles. */
	CHECK("dedicated", t1 - t0 <= 2, "dedicated core took %lld ticks", (long long)(t1 - t0));
	/* The core is free again once its thread is gone, or placed without the flag. */
	int64_t e = ax_spawn_named("uecho", "echo", core, 2);
	CHECK("dedicated", e > 0, "core still taken after its thread exited: %lld", (long long)e);
	CHECK("dedicated", ax_sched((endpoint_t)e, core, KS_DEDICATED) == 0, "re-dedicate failed");
	CHECK("dedicated", ax_spawn_named("uecho", "exit 0", core, 2) == -KE_BUSY, "second dedication not exclusive");
	CHECK("dedicated", ax_sched((endpoint_t)e, SPAWN_ANY_CPU, 0) == 0, "unpin failed");
	int64_t x = ax_spawn_named("uecho", "exit 0", core, 2);
	CHECK("dedicated", x > 0, "core still dedicated after unpinning: %lld", (long long)x);
	wait_report((endpoint_t)x, &m);
	stop_echo((endpoint_t)e);
	ax_printf("UTEST PASS dedicated core=%u ticks_during=%lld\n", core, (long long)(t1 - t0));
}

/* One request to a "share" helper; returns the reply's w[0]. */
static uint64_t ask(endpoint_t ep, uint32_t type, uint64_t a, uint64_t b, uint64_t c)
{
	struct kmsg m = { .type = type };
	m.w[0] = a, m.w[1] = b, m.w[2] = c;
	if (ax_call(ep, &m) < 0)
		return ~0ull;
	return m.w[0];
}

static void t_share(void)
{
	int64_t h = ax_mo_create(1, 0);
	CHECK("share", h > 0, "create failed: %lld", (long long)h);
	int64_t va = ax_mo_map(h, 0, 0, 1, KP_R | KP_W);
	CHECK("share", va > 0, "map failed: %lld", (long long)va);
	volatile uint64_t *mine = (volatile uint64_t *)va;
	mine[3] = 0x1111;
	int64_t ep = ax_spawn_named("uecho", "share", SPAWN_ANY_CPU, 2);
	CHECK("share", ep > 0, "spawn failed");
	int64_t ch = ax_mo_grant(h, (endpoint_t)ep, KP_R);
	CHECK("share", ch > 0, "grant failed: %lld", (long long)ch);
	CHECK("share", ax_mo_grant(h, (endpoint_t)ep, KP_R | 8) == -KE_INVAL, "bad rights accepted");
	CHECK("share", kcall6(KC_MO_GRANT, (uint64_t)h, (uint64_t)ep | 1ull << 32, KP_R, 0, 0, 0) == -KE_INVAL,
	      "a 64-bit endpoint was truncated");
	/* Read-only grant: a writable mapping is refused, a read-only one works. */
	CHECK("share", (int64_t)ask((endpoint_t)ep, 1, (uint64_t)ch, KP_R | KP_W, 0) == -KE_PERM,
	      "grantee mapped a read-only grant writable");
	uint64_t cva = ask((endpoint_t)ep, 1, (uint64_t)ch, KP_R, 0);
	CHECK("share", (int64_t)cva > 0, "grantee map failed: %lld", (long long)cva);
	CHECK("share", ask((endpoint_t)ep, 2, cva + 24, 0, 0) == 0x1111, "grantee does not see the data");
	mine[3] = 0x2222;
	CHECK("share", ask((endpoint_t)ep, 2, cva + 24, 0, 0) == 0x2222, "grantee does not see a new write");
	/* Its write faults it, and only it. */
	struct kmsg m = { .type = 3 };
	m.w[0] = cva + 24, m.w[1] = 0xbad;
	ax_call((endpoint_t)ep, &m);
	struct kmsg rep;
	CHECK("share", wait_report((endpoint_t)ep, &rep) == KMSG_PROC_FAULT, "write to a read-only grant did not fault");
	CHECK("share", rep.w[1] == 14 && rep.w[4] == cva + 24 && (rep.w[2] & 2), "fault details: vector %llu addr %#llx",
	      (unsigned long long)rep.w[1], (unsigned long long)rep.w[4]);
	CHECK("share", mine[3] == 0x2222, "the faulting write landed");
	mine[3] = 0x3333; /* the creator is unharmed */
	CHECK("share", ax_mo_destroy(h) == 0 && ax_mo_destroy(h) == -KE_INVAL, "destroy");
	ax_printf("UTEST PASS share grantee_va=%#llx\n", (unsigned long long)cva);
}

static void t_revoke(void)
{
	int64_t h = ax_mo_create(2, 0);
	int64_t va = h > 0 ? ax_mo_map(h, 0, 0, 2, KP_R | KP_W) : -1;
	CHECK("revoke", va > 0, "create/map failed");
	((volatile uint64_t *)va)[512] = 77;
	int64_t ep = ax_spawn_named("uecho", "share", SPAWN_ANY_CPU, 2);
	int64_t other = ax_spawn_named("uecho", "share", SPAWN_ANY_CPU, 2);
	CHECK("revoke", ep > 0 && other > 0, "spawn failed");
	int64_t ch = ax_mo_grant(h, (endpoint_t)ep, KP_R | KP_W);
	struct kmsg m = { .type = 1 };
	m.w[0] = (uint64_t)ch, m.w[1] = KP_R | KP_W;
	CHECK("revoke", ax_call((endpoint_t)ep, &m) == 0 && (int64_t)m.w[0] > 0, "grantee map failed");
	uint64_t cva = m.w[0];
	CHECK("revoke", ask((endpoint_t)ep, 2, cva, 0, 0) == 0, "page 0 not zero");
	ask((endpoint_t)ep, 3, cva + 8, 55, 0);
	CHECK("revoke", ((volatile uint64_t *)va)[1] == 55, "the grantee's write is not visible");
	/* Nobody but the granter takes a grant back. */
	CHECK("revoke", kcall2(KC_MO_REVOKE, (uint64_t)other, 1) == -KE_INVAL, "revoke of nothing");
	CHECK("revoke", ax_mo_revoke((endpoint_t)ep, ch) == 0, "revoke failed");
	CHECK("revoke", ax_mo_revoke((endpoint_t)ep, ch) == -KE_INVAL, "second revoke accepted");
	m = (struct kmsg){ .type = 2 };
	m.w[0] = cva + 4096;
	ax_call((endpoint_t)ep, &m);
	struct kmsg rep;
	CHECK("revoke", wait_report((endpoint_t)ep, &rep) == KMSG_PROC_FAULT && rep.w[4] == cva + 4096,
	      "access after revoke did not fault at the revoked page");
	CHECK("revoke", ((volatile uint64_t *)va)[512] == 77, "owner lost its data");
	/* Destroy by the creator takes every grant with it. */
	int64_t oh = ax_mo_grant(h, (endpoint_t)other, KP_R);
	uint64_t ova = ask((endpoint_t)other, 1, (uint64_t)oh, KP_R, 0);
	CHECK("revoke", (int64_t)ova > 0 && ask((endpoint_t)other, 2, ova + 8, 0, 0) == 55, "second grantee");
	CHECK("revoke", ax_mo_destroy(h) == 0, "destroy failed");
	m = (struct kmsg){ .type = 2 };
	m.w[0] = ova;
	ax_call((endpoint_t)other, &m);
	CHECK("revoke", wait_report((endpoint_t)other, &rep) == KMSG_PROC_FAULT && rep.w[4] == ova,
	      "grantee kept access after destroy");
	ax_printf("UTEST PASS revoke\n");
}

static void t_moloop(void)
{
	struct kmsg rep, m;
	int64_t free0 = 0, mo0 = 0;
	enum { N = 1000 };
	for (int i = 0; i <= N; i++) {
		if (i == 1) { /* the first round warms caches */
			free0 = kcall1(KC_INFO, KI_FREE_FRAMES);
			mo0 = kcall1(KC_INFO, KI_MEMOBJS);
		}
		int64_t ep = ax_spawn_named("uecho", "mo", SPAWN_ANY_CPU, 2);
		CHECK("moloop", ep > 0, "spawn %d failed: %lld", i, (long long)ep);
		m = (struct kmsg){ .type = 1 };
		CHECK("moloop", ax_call((endpoint_t)ep, &m) == 0 && (int64_t)m.w[0] > 0, "round %d: no grant", i);
		int64_t h = (int64_t)m.w[0];
		int64_t va = ax_mo_map(h, 0, 2, 2, KP_R);
		CHECK("moloop", va > 0 && ((volatile uint64_t *)va)[512] == 0xab03, "round %d: bad data", i);
		CHECK("moloop", wait_report((endpoint_t)ep, &rep) == KMSG_PROC_EXIT && rep.w[1] == 4,
		      "round %d: child failed (%llu)", i, (unsigned long long)rep.w[1]);
		/* The granter is gone; our handle still keeps the memory until we drop it. */
		CHECK("moloop", ((volatile uint64_t *)va)[512] == 0xab03, "round %d: memory vanished", i);
		CHECK("moloop", ax_mo_destroy(h) == 0, "round %d: destroy", i);
	}
	int64_t free1 = kcall1(KC_INFO, KI_FREE_FRAMES), mo1 = kcall1(KC_INFO, KI_MEMOBJS);
	CHECK("moloop", mo1 == mo0, "memory objects %lld -> %lld", (long long)mo0, (long long)mo1);
	CHECK("moloop", free1 == free0, "free frames %lld -> %lld", (long long)free0, (long long)free1);
	ax_printf("UTEST PASS moloop cycles=%d free_frames=%lld\n", N, (long long)free1);
}

/* A lazy object (MOF_LAZY): no page is made until a mapping of it is touched; each is made
 * once, zeroed, and every mapper sees the same one (ours, a grantee's, vcopy's); the
 * mappings' protections hold; destroying it gives back exactly what was made. */
static void lazy_round(bool fault, int64_t *free_before)
{
	enum { PAGES = 64 };
	int64_t free0 = *free_before = kcall1(KC_INFO, KI_FREE_FRAMES), d0 = kcall2(KC_INFO, KI_STAT, KST_DEMAND_PAGES);
	int64_t h = ax_mo_create(PAGES, MOF_LAZY);
	int64_t va = h > 0 ? ax_mo_map(h, 0, 0, PAGES, KP_R | KP_W) : -1;
	CHECK("lazy", va > 0, "create/map failed: %lld %lld", (long long)h, (long long)va);
	CHECK("lazy", free0 - kcall1(KC_INFO, KI_FREE_FRAMES) < 8, "pages made before any touch: %lld frames",
	      (long long)(free0 - kcall1(KC_INFO, KI_FREE_FRAMES)));
	volatile uint64_t *mine = (volatile uint64_t *)va;
	int64_t ep = ax_spawn_named("uecho", "share", SPAWN_ANY_CPU, 2);
	int64_t ch = ep > 0 ? ax_mo_grant(h, (endpoint_t)ep, KP_R | KP_W) : -1;
	int64_t ro = ep > 0 ? ax_mo_grant(h, (endpoint_t)ep, KP_R) : -1;
	CHECK("lazy", ch > 0 && ro > 0, "spawn/grant failed");
	uint64_t cva = ask((endpoint_t)ep, 1, (uint64_t)ch, KP_R | KP_W, PAGES);
	uint64_t rva = ask((endpoint_t)ep, 1, (uint64_t)ro, KP_R, PAGES);
	CHECK("lazy", (int64_t)cva > 0 && (int64_t)rva > 0, "grantee maps failed");
	int64_t free_mapped = kcall1(KC_INFO, KI_FREE_FRAMES); /* (the helper took its own) */
	/* The grantee makes page 7 (zeros); we see its page, and it ours. */
	CHECK("lazy", ask((endpoint_t)ep, 2, cva + 7 * 4096 + 8, 0, 0) == 0, "a new page is not zero");
	CHECK("lazy", mine[7 * 512 + 1] == 0, "our view of the grantee's page is not zero");
	ask((endpoint_t)ep, 3, cva + 9 * 4096 + 16, 0x9999, 0);
	CHECK("lazy", mine[9 * 512 + 2] == 0x9999, "the grantee's write to a new page is not ours to see");
	mine[11 * 512 + 3] = 0x1111;
	CHECK("lazy", ask((endpoint_t)ep, 2, cva + 11 * 4096 + 24, 0, 0) == 0x1111, "our write is not the grantee's");
	CHECK("lazy", ask((endpoint_t)ep, 2, rva + 11 * 4096 + 24, 0, 0) == 0x1111, "nor its read-only view's");
	/* The kernel's copy into a page nobody made yet makes it. */
	static const char text[16] = "lazy and copied";
	CHECK("lazy", ax_vcopy(EP_NONE, text, (endpoint_t)ep, (void *)(cva + 13 * 4096 + 100), 16) == 16 &&
		      !memcmp((const void *)(va + 13 * 4096 + 100), text, 16), "vcopy into a new page");
	int64_t made = kcall2(KC_INFO, KI_STAT, KST_DEMAND_PAGES) - d0;
	CHECK("lazy", made >= 4, "%lld pages made at first touch (counter)", (long long)made);
	CHECK("lazy", free_mapped - kcall1(KC_INFO, KI_FREE_FRAMES) < PAGES / 2, "the untouched pages were made too");
	struct kmsg m = { .type = 3 }, rep;
	if (fault) { /* a read-only mapping's write to a page not made: made, then refused */
		m.w[0] = rva + 20 * 4096, m.w[1] = 0xbad;
		ax_call((endpoint_t)ep, &m);
		CHECK("lazy", wait_report((endpoint_t)ep, &rep) == KMSG_PROC_FAULT && rep.w[4] == rva + 20 * 4096 &&
			      (rep.w[2] & 3) == 3, "a write through a read-only lazy mapping did not fault as a protection fault");
		CHECK("lazy", mine[20 * 512] == 0, "the refused write landed");
	} else {
		ask((endpoint_t)ep, 9, 0, 0, 0); /* ends */
		CHECK("lazy", wait_report((endpoint_t)ep, &rep) == KMSG_PROC_EXIT, "the helper did not end");
	}
	CHECK("lazy", ax_mo_destroy(h) == 0, "destroy");
}

static void t_lazy(void)
{
	CHECK("lazy", ax_mo_create(1, MOF_LAZY | MOF_DMA) == -KE_INVAL, "lazy DMA memory accepted");
	CHECK("lazy", ax_mo_create(1, 4) == -KE_INVAL, "an unknown flag accepted");
	int64_t free0;
	lazy_round(true, &free0); /* also warms the page tables and the heap */
	int64_t mo0 = kcall1(KC_INFO, KI_MEMOBJS);
	lazy_round(false, &free0);
	int64_t free1 = kcall1(KC_INFO, KI_FREE_FRAMES), mo1 = kcall1(KC_INFO, KI_MEMOBJS);
	CHECK("lazy", free1 == free0 && mo1 == mo0, "frames %lld -> %lld, objects %lld -> %lld", (long long)free0,
	      (long long)free1, (long long)mo0, (long long)mo1);
	ax_printf("UTEST PASS lazy\n");
}

/* Legacies (KC_LEGACY): a child's handles outlive it when its parent keeps them, and move
 * into a stopped child with their numbers; what the parent granted is not kept; a dropped or
 * given legacy leaves no object behind. */
static int64_t spawn_stopped(const char *args)
{
	struct kc_spawn s = { (uint32_t)ax_find_module("uecho"), SPAWN_ANY_CPU, 2, SPAWN_STOPPED, args };
	return ax_spawn(&s);
}

static void mo_child_that_ended(bool keep, int64_t parent_grant, endpoint_t *out)
{
	struct kmsg m = { .type = 1 }, rep;
	int64_t ep = spawn_stopped("mo");
	*out = 0;
	CHECK("legacy", ep > 0, "spawn failed");
	if (parent_grant) /* its handle 1, granted by us */
		CHECK("legacy", ax_mo_grant(parent_grant, (endpoint_t)ep, KP_R) == 1, "grant to the stopped child");
	CHECK("legacy", ax_legacy(LEG_KEEP, (endpoint_t)ep, keep) == 0, "keep refused");
	CHECK("legacy", kcall1(KC_START, (uint64_t)ep) == 0, "start");
	CHECK("legacy", ax_call((endpoint_t)ep, &m) == 0 && (int64_t)m.w[0] > 0, "the child's grant");
	CHECK("legacy", ax_mo_destroy((int64_t)m.w[0]) == 0, "dropping its grant");
	CHECK("legacy", wait_report((endpoint_t)ep, &rep) == KMSG_PROC_EXIT && rep.w[1] == 4, "the child did not end");
	*out = (endpoint_t)ep;
}

static void t_legacy(void)
{
	int64_t mo0 = kcall1(KC_INFO, KI_MEMOBJS), free0 = kcall1(KC_INFO, KI_FREE_FRAMES);
	int64_t ours = ax_mo_create(1, 0);
	CHECK("legacy", ax_legacy(LEG_KEEP, ax_self(), 1) == -KE_PERM, "kept a process that is not our child");
	CHECK("legacy", kcall2(KC_INFO, KI_HANDLE, (uint64_t)ours) == (KP_R | KP_W | KP_X | 0x100) &&
		      kcall2(KC_INFO, KI_HANDLE, 1u << 20) == -KE_SRCH, "KI_HANDLE");
	/* Not kept: nothing to give. */
	endpoint_t a;
	mo_child_that_ended(false, 0, &a);
	CHECK("legacy", ax_legacy(LEG_COUNT, a, 0) == -KE_SRCH, "a legacy nobody asked for");
	/* Kept: its three objects (handles 2, 3, 4), not our grant (handle 1). */
	mo_child_that_ended(true, ours, &a);
	CHECK("legacy", ax_legacy(LEG_COUNT, a, 0) == 3, "%lld handles kept, not 3", (long long)ax_legacy(LEG_COUNT, a, 0));
	int64_t running = ax_spawn_named("uecho", "share", SPAWN_ANY_CPU, 2);
	CHECK("legacy", ax_legacy(LEG_GIVE, a, (endpoint_t)running) == -KE_INVAL, "given to a running child");
	int64_t b = spawn_stopped("share");
	CHECK("legacy", b > 0 && ax_legacy(LEG_GIVE, a, (endpoint_t)b) == 3, "give failed");
	CHECK("legacy", ax_legacy(LEG_COUNT, a, 0) == -KE_SRCH, "given twice");
	CHECK("legacy", kcall1(KC_START, (uint64_t)b) == 0, "start");
	uint64_t va = ask((endpoint_t)b, 1, 3, KP_R | KP_W, 4); /* the 4-page object, its handle 3 */
	CHECK("legacy", (int64_t)va > 0 && ask((endpoint_t)b, 2, va + 2 * 4096, 0, 0) == 0xab02,
	      "the new instance does not see its predecessor's data (%llx)", (unsigned long long)va);
	CHECK("legacy", (int64_t)ask((endpoint_t)b, 1, 1, KP_R, 1) < 0, "our grant to the dead child was kept");
	ask((endpoint_t)b, 9, 0, 0, 0);
	ask((endpoint_t)running, 9, 0, 0, 0);
	struct kmsg rep;
	wait_report((endpoint_t)b, &rep);
	wait_report((endpoint_t)running, &rep);
	/* Dropped: everything goes back. */
	mo_child_that_ended(true, 0, &a);
	CHECK("legacy", ax_legacy(LEG_DROP, a, 0) == 0 && ax_legacy(LEG_DROP, a, 0) == -KE_SRCH, "drop");
	ax_mo_destroy(ours);
	int64_t mo1 = kcall1(KC_INFO, KI_MEMOBJS), free1 = kcall1(KC_INFO, KI_FREE_FRAMES);
	CHECK("legacy", mo1 == mo0 && free1 == free0, "objects %lld -> %lld, frames %lld -> %lld", (long long)mo0,
	      (long long)mo1, (long long)free0, (long long)free1);
	ax_printf("UTEST PASS legacy\n");
}

static void t_vcopy(void)
{
	static char src[10000], back[10000];
	for (int i = 0; i < (int)sizeof(src); i++)
		src[i] = (char)(i * 7 + 3);
	int64_t ep = ax_spawn_named("uecho", "share", SPAWN_ANY_CPU, 2);
	CHECK("vcopy", ep > 0, "spawn failed");
	uint64_t cbuf = ask((endpoint_t)ep, 5, 0, 0, 0);
	CHECK("vcopy", ax_vcopy(EP_NONE, src, (endpoint_t)ep, (void *)cbuf, 512) == 512, "copy out failed");
	CHECK("vcopy", ax_vcopy((endpoint_t)ep, (void *)cbuf, EP_NONE, back, 512) == 512, "copy back failed");
	CHECK("vcopy", !memcmp(src, back, 512), "data differs");
	/* Across page boundaries in both spaces, into our own memory. */
	CHECK("vcopy", ax_vcopy(EP_NONE, src + 1, EP_NONE, back + 3, 9000) == 9000 && !memcmp(src + 1, back + 3, 9000),
	      "unaligned self copy");
	CHECK("vcopy", ax_vcopy(EP_NONE, src, (endpoint_t)ep, (void *)0x401000, 8) == -KE_FAULT,
	      "copy into read-only text accepted");
	CHECK("vcopy", ax_vcopy(EP_NONE, (void *)0x10, (endpoint_t)ep, (void *)cbuf, 8) == -KE_FAULT, "unmapped source");
	CHECK("vcopy", ax_vcopy(EP_NONE, src, 0x7777, back, 8) == -KE_DEADSRCDST, "bad endpoint");
	CHECK("vcopy", kcall6(KC_VCOPY, 0, (uint64_t)src, (uint64_t)ep | 1ull << 32, (uint64_t)back, 8, 0) == -KE_INVAL,
	      "a 64-bit endpoint was truncated");
	CHECK("vcopy", ax_vcopy(EP_NONE, src, EP_NONE, back, 5u << 20) == -KE_INVAL, "huge copy");
	/* An ordinary process may not do it. */
	CHECK("vcopy", (int64_t)ask((endpoint_t)ep, 4, (uint64_t)src, cbuf, 8) == -KE_PERM, "unprivileged vcopy allowed");
	ask((endpoint_t)ep, 9, 0, 0, 0);
	struct kmsg rep;
	wait_report((endpoint_t)ep, &rep);
	ax_printf("UTEST PASS vcopy\n");
}

/* KC_TEXT: we patch a child's text (uecho text's text_value(): mov $0x1111, %eax; ret) and it
 * runs the new code; a second child of the same binary runs the old; the limits hold. */
static uint64_t text_call(endpoint_t ep, uint32_t type, uint64_t w0, uint64_t w1, uint64_t *addr)
{
	struct kmsg m = { .type = type, .w = { w0, w1 } };
	if (ax_call(ep, &m))
		return ~0ull;
	if (addr)
		*addr = m.w[1];
	return m.w[0];
}

static void t_text(void)
{
	int64_t a = ax_spawn_named("uecho", "text", SPAWN_ANY_CPU, 2);
	int64_t b = ax_spawn_named("uecho", "text", SPAWN_ANY_CPU, 2);
	CHECK("text", a > 0 && b > 0, "spawn failed");
	uint64_t fn = 0;
	CHECK("text", text_call((endpoint_t)a, 1, 0, 0, &fn) == 0x1111 && fn, "text_value() gave no 0x1111");
	uint8_t code[6], patch[4] = { 0x22, 0x22, 0, 0 };
	CHECK("text", ax_text((endpoint_t)a, KT_READ, fn, code, 6) == 6, "read failed");
	CHECK("text", code[0] == 0xb8 && code[1] == 0x11 && code[2] == 0x11 && code[5] == 0xc3,
	      "text_value() is not mov $0x1111, %%eax; ret: %02x %02x %02x .. %02x", code[0], code[1], code[2], code[5]);
	CHECK("text", ax_text((endpoint_t)a, KT_WRITE, fn + 1, patch, 4) == 4, "write failed");
	CHECK("text", text_call((endpoint_t)a, 1, 0, 0, NULL) == 0x2222, "the patched child runs the old code");
	CHECK("text", text_call((endpoint_t)b, 1, 0, 0, NULL) == 0x1111, "the other instance's text changed too");
	CHECK("text", ax_text((endpoint_t)b, KT_READ, fn, code, 6) == 6 && code[1] == 0x11, "b's copy reads patched");
	/* Where a ran: every sample is an instruction of its text. */
	uint64_t samples[TEXT_SAMPLES];
	int64_t n = ax_text((endpoint_t)a, KT_SAMPLES, 0, samples, sizeof(samples));
	CHECK("text", n > 0 && n <= TEXT_SAMPLES, "samples: %lld", (long long)n);
	for (int64_t i = 0; i < n; i++)
		CHECK("text", ax_text((endpoint_t)a, KT_READ, samples[i], code, 1) == 1, "sample %#llx is not in its text",
		      (unsigned long long)samples[i]);
	CHECK("text", ax_text((endpoint_t)a, KT_SAMPLES, 0, samples, 8) <= 1, "samples overran the buffer");
	/* Limits: only text, only a child's, only small patches. */
	uint8_t big[TEXT_PATCH_MAX + 1] = { 0 };
	CHECK("text", ax_text((endpoint_t)a, KT_WRITE, fn, big, TEXT_PATCH_MAX + 1) == -KE_INVAL, "long patch taken");
	CHECK("text", ax_text((endpoint_t)a, KT_WRITE, fn, big, 0) == -KE_INVAL, "empty patch taken");
	CHECK("text", ax_text((endpoint_t)a, KT_READ, fn, big, TEXT_READ_MAX + 1) == -KE_INVAL, "long read taken");
	CHECK("text", ax_text((endpoint_t)a, KT_READ, 0x1000, code, 1) == -KE_FAULT, "unmapped address read");
	/* (every native process has its stack where ours is: writable, not executable) */
	CHECK("text", ax_text((endpoint_t)a, KT_WRITE, (uint64_t)code & ~4095ull, patch, 4) == -KE_FAULT,
	      "a patch into the stack taken");
	CHECK("text", ax_text((endpoint_t)a, KT_WRITE, fn, (void *)0x10, 4) == -KE_FAULT, "bad source taken");
	CHECK("text", ax_text((endpoint_t)a, 9, fn, code, 1) == -KE_INVAL, "unknown op taken");
	CHECK("text", ax_text(ax_self(), KT_READ, fn, code, 1) == -KE_PERM, "our own text through KC_TEXT");
	CHECK("text", ax_text(0x7777, KT_READ, fn, code, 1) == -KE_DEADSRCDST, "bad endpoint");
	CHECK("text", (int64_t)text_call((endpoint_t)b, 3, (uint64_t)a, fn, NULL) == -KE_PERM, "a sibling read a's text");
	stop_echo((endpoint_t)a);
	stop_echo((endpoint_t)b);
	ax_printf("UTEST PASS text\n");
}

/* The waiter sleeps on a doorbell in shared memory on another core; we ring it ROUNDS times.
 * With `notify`, each ring is followed by a notify (the fallback protocol). */
static void wait_round(const char *name, uint32_t cpu, bool dedicate, bool notify, uint64_t *cycles)
{
	int64_t h = ax_mo_create(1, 0);
	int64_t va = h > 0 ? ax_mo_map(h, 0, 0, 1, KP_R | KP_W) : -1;
	CHECK(name, va > 0, "create/map failed");
	volatile uint64_t *bell = (volatile uint64_t *)va, *ack = bell + 8;
	int64_t ep = ax_spawn_named("uecho", "waiter", cpu, 2);
	CHECK(name, ep > 0, "spawn failed");
	if (dedicate)
		CHECK(name, ax_sched((endpoint_t)ep, cpu, KS_DEDICATED) == 0, "dedicate failed");
	struct kmsg m = { .type = 1 };
	m.w[0] = (uint64_t)ax_mo_grant(h, (endpoint_t)ep, KP_R | KP_W);
	CHECK(name, ax_call((endpoint_t)ep, &m) == 0 && (int64_t)m.w[0] > 0, "waiter could not map");
	enum { ROUNDS = 200 };
	uint64_t total = 0;
	for (uint64_t i = 1; i <= ROUNDS; i++) {
		uint64_t v = i == ROUNDS ? ~0ull : i;
		/* Give the waiter time to go back to sleep, so each ring measures a real wake-up
		 * (and the sleeping path is taken) rather than a waiter still polling. */
		for (uint64_t g = ax_time_ns(); ax_time_ns() - g < 500000;)
			__asm__ volatile("pause");
		uint64_t t0 = ax_rdtsc(), spins = 0;
		*bell = v;
		if (notify)
			ax_notify((endpoint_t)ep, 1);
		while (*ack != v) {
			if (++spins > 2000000000ull)
				FAIL(name, "ring %llu never acknowledged", (unsigned long long)i);
			__asm__ volatile("pause");
		}
		total += ax_rdtsc() - t0;
	}
	struct kmsg rep;
	CHECK(name, wait_report((endpoint_t)ep, &rep) == KMSG_PROC_EXIT && rep.w[1] == 0, "waiter failed: %llu",
	      (unsigned long long)rep.w[1]);
	ax_mo_destroy(h);
	*cycles = total / ROUNDS;
}

static void t_wait(void)
{
	uint32_t n = ncpus(), here = ax_cpu();
	if (n < 3) {
		ax_printf("UTEST SKIP wait: needs 3 CPUs\n");
		return;
	}
	static uint64_t word = 5;
	CHECK("wait", ax_wait(&word, 4) == KW_DOORBELL, "changed doorbell did not return at once");
	CHECK("wait", ax_wait((uint64_t *)0x10, 0) == -KE_FAULT, "bad doorbell pointer");
	CHECK("wait", ax_wait((uint64_t *)((char *)&word + 1), 0) == -KE_INVAL, "unaligned doorbell");
	CHECK("wait", ax_notify(ax_self(), 2) == 0 && ax_wait(&word, 5) == KW_IPC, "pending notify did not end the wait");
	struct kmsg m;
	CHECK("wait", ax_receive(EP_ANY, &m) == 0 && m.type == KMSG_NOTIFY && m.w[0] == 2, "notification lost");
	/* A timeout ends a wait with nothing to report, and not before it passed. */
	uint64_t t0 = ax_time_ns();
	int64_t tr = ax_wait_timeout(&word, 5, 50000000);
	uint64_t waited = ax_time_ns() - t0;
	CHECK("wait", tr == 0 && waited >= 50000000, "timeout wait returned %lld after %llu ns", (long long)tr,
	      (unsigned long long)waited);
	CHECK("wait", ax_sched(ax_self(), here, 0) == 0, "cannot pin myself");
	bool monitor = kcall2(KC_INFO, KI_CPU_FEATURES, n - 1) == 1;
	int64_t mw0 = kcall1(KC_INFO, KI_WAIT_MWAIT), bl0 = kcall1(KC_INFO, KI_WAIT_BLOCK);
	uint64_t ded = 0, shared = 0;
	/* A dedicated core: MWAIT where the CPU has it, so the store alone must wake the waiter. */
	wait_round("wait", n - 1, true, !monitor, &ded);
	int64_t mw1 = kcall1(KC_INFO, KI_WAIT_MWAIT), bl1 = kcall1(KC_INFO, KI_WAIT_BLOCK);
	if (monitor)
		CHECK("wait", mw1 > mw0 && bl1 == bl0, "dedicated waiter did not use MWAIT (mwait %lld, block %lld)",
		      (long long)(mw1 - mw0), (long long)(bl1 - bl0));
	else
		CHECK("wait", mw1 == mw0 && bl1 > bl0, "no MONITOR, yet mwait %lld block %lld", (long long)(mw1 - mw0),
		      (long long)(bl1 - bl0));
	/* A shared core: the waiter blocks and the notify after the store wakes it. */
	wait_round("wait", (here + 1) % n == n - 1 ? 1 : (here + 1) % n, false, true, &shared);
	int64_t bl2 = kcall1(KC_INFO, KI_WAIT_BLOCK), mw2 = kcall1(KC_INFO, KI_WAIT_MWAIT);
	CHECK("wait", bl2 > bl1 && mw2 == mw1, "shared-core waiter did not block");
	ax_sched(ax_self(), SPAWN_ANY_CPU, 0);
	ax_printf("UTEST PASS wait path=%s dedicated_cycles=%llu blocking_cycles=%llu mwait_waits=%lld block_waits=%lld\n",
		  monitor ? "mwait" : "block", (unsigned long long)ded, (unsigned long long)shared,
		  (long long)(mw1 - mw0), (long long)(bl2 - bl1));
}

static void t_fpu(void)
{
	/* Three processes on one core keep different values in their XMM registers across
	 * yields to each other: each must get its own back. */
	int64_t ep[3];
	char args[16];
	for (int i = 0; i < 3; i++) {
		ksnprintf(args, sizeof(args), "fpu %d", i + 1);
		ep[i] = ax_spawn_named("uecho", args, 1 % ncpus(), 2);
		CHECK("fpu", ep[i] > 0, "spawn failed");
	}
	int ok = 0;
	for (int n = 0; n < 3;) {
		struct kmsg m;
		if (ax_receive(EP_KERNEL, &m) < 0 || (m.type != KMSG_PROC_EXIT && m.type != KMSG_PROC_FAULT))
			continue;
		for (int i = 0; i < 3; i++)
			if (ep[i] && (endpoint_t)m.w[0] == (endpoint_t)ep[i]) {
				ok += m.type == KMSG_PROC_EXIT && m.w[1] == 0;
				ep[i] = 0, n++;
			}
	}
	CHECK("fpu", ok == 3, "%d of 3 processes kept their registers", ok);
	ax_printf("UTEST PASS fpu\n");
}

/* Request/reply over two SPSC channels in one shared object, the echo server on another
 * core; then a corrupted channel must be reported by the server, not crash it. */
static void t_chan(void)
{
	uint32_t n = ncpus(), here = ax_cpu();
	if (n < 2) {
		ax_printf("UTEST SKIP chan: one CPU\n");
		return;
	}
	CHECK("chan", ax_sched(ax_self(), here, 0) == 0, "cannot pin myself");
	enum { SIZE = 4 * 4096, REQ = 0, REP = 2 * 4096, ROUNDS = 2000 };
	int64_t h = ax_mo_create(SIZE / 4096, 0);
	int64_t va = h > 0 ? ax_mo_map(h, 0, 0, SIZE / 4096, KP_R | KP_W) : -1;
	CHECK("chan", va > 0, "create/map failed");
	CHECK("chan", spsc_init((char *)va + REQ, REP - REQ, 64, 64) > 0 &&
			      spsc_init((char *)va + REP, SIZE - REP, 64, 64) > 0, "spsc_init failed");
	struct spsc req, rep;
	CHECK("chan", spsc_attach(&req, (char *)va + REQ, REP - REQ, SPSC_PRODUCER) == 0 &&
			      spsc_attach(&rep, (char *)va + REP, SIZE - REP, SPSC_CONSUMER) == 0, "attach failed");
	int64_t ep = ax_spawn_named("uecho", "chanecho", (here + 1) % n, 2);
	CHECK("chan", ep > 0, "spawn failed");
	struct kmsg m = { .type = 1 };
	m.w[0] = (uint64_t)ax_mo_grant(h, (endpoint_t)ep, KP_R | KP_W), m.w[1] = REQ, m.w[2] = REP, m.w[3] = SIZE;
	CHECK("chan", ax_call((endpoint_t)ep, &m) == 0 && m.w[0] == 1, "server could not attach");
	struct chan_axolotl_peer server = { (endpoint_t)ep, 1, 0 };
	struct chan_platform plat;
	chan_axolotl_platform(&plat, &server);
	uint64_t total = 0, best = ~0ull, kicks = 0;
	for (uint64_t i = 0; i < ROUNDS; i++) {
		struct kmsg q = { .type = 5 };
		q.w[0] = i * 7, q.w[6] = ~i;
		uint64_t t0 = ax_rdtsc();
		CHECK("chan", spsc_push(&req, &q) == 0, "request %llu: queue full", (unsigned long long)i);
		kicks += chan_kick(&req, &plat) == 1;
		uint64_t spins = 0;
		int r;
		while ((r = spsc_pop(&rep, &q)) == CHAN_EAGAIN)
			if (++spins > 4000000000ull)
				FAIL("chan", "reply %llu never came", (unsigned long long)i);
		uint64_t d = ax_rdtsc() - t0;
		CHECK("chan", r == 0 && q.w[0] == i * 7 + 1 && q.w[6] == ~i, "reply %llu wrong", (unsigned long long)i);
		total += d;
		best = d < best ? d : best;
	}
	/* Garbage from the producer side: the head jumps far beyond the tail. */
	atomic_store_explicit(&((struct spsc_shared *)((char *)va + REQ))->head, 1ull << 40, memory_order_release);
	ax_notify((endpoint_t)ep, 1);
	while (ax_receive(EP_ANY, &m) < 0 || m.source != (endpoint_t)ep)
		;
	CHECK("chan", m.type == 7, "server did not report the corrupted channel (type %u)", m.type);
	m = (struct kmsg){ .type = 1 };
	m.w[0] = 9;
	CHECK("chan", ax_call((endpoint_t)ep, &m) == 0 && m.w[0] == 10, "server dead after the corruption");
	stop_echo((endpoint_t)ep);
	ax_mo_destroy(h);
	ax_sched(ax_self(), SPAWN_ANY_CPU, 0);
	ax_printf("UTEST PASS chan cpus=%u,%u rounds=%d avg_cycles=%llu best_cycles=%llu kicks=%llu\n", here,
		  (here + 1) % n, ROUNDS, (unsigned long long)(total / ROUNDS), (unsigned long long)best,
		  (unsigned long long)kicks);
}

static int64_t ds_req(endpoint_t ds, uint32_t type, const char *a, const char *b, uint64_t v, uint64_t *out)
{
	struct kmsg q = { .type = type };
	if (type == DS_REGISTER) {
		q.w[0] = v;
		memcpy(&q.w[1], a, strlen(a));
	} else if (type == DS_PUT) {
		memcpy(&q.w[0], a, strlen(a));
		q.w[2] = v, q.w[5] = 8;
	} else {
		memcpy(&q.w[0], a, strlen(a));
		memcpy(&q.w[2], b, strlen(b));
	}
	if (ax_call(ds, &q) < 0)
		return -9999;
	if (out)
		*out = q.w[2];
	return (int64_t)q.w[6];
}

static uint64_t client_do(endpoint_t c, endpoint_t ds, uint32_t type, uint64_t v, int64_t *r)
{
	struct kmsg m = { .type = type };
	m.w[0] = ds, m.w[1] = v;
	*r = ax_call(c, &m) < 0 ? -9999 : (int64_t)m.w[6];
	return m.w[2];
}

/* Client c (uecho dsclient) puts v into ds: sent without waiting for its answer, then
 * watched until it is blocked awaiting ds's (held). Its thread state, as KI_THREAD_STATE. */
static int64_t put_held_by_ds(endpoint_t c, endpoint_t ds, uint64_t v, uint64_t t0)
{
	struct kmsg p = { .type = 1 };
	p.w[0] = ds, p.w[1] = v;
	while (ax_sendnb(c, &p) == -KE_AGAIN && ax_time_ns() - t0 < 5000000000ull)
		; /* until it waits in receive */
	int64_t st;
	while (((st = kcall2(KC_INFO, KI_THREAD_STATE, c)) & 0xffff) != 0x0303 && ax_time_ns() - t0 < 5000000000ull)
		;
	return st;
}

static void t_ds(void)
{
	endpoint_t ds = (endpoint_t)ax_spawn_named("ds", "", SPAWN_ANY_CPU, 2);
	CHECK("ds", (int64_t)ds > 0, "spawn ds failed");
	uint64_t v = 0;
	int64_t r;
	CHECK("ds", ds_req(ds, DS_PUT, "answer", 0, 42, 0) == -KE_PERM, "unregistered put accepted");
	CHECK("ds", ds_req(ds, DS_REGISTER, "utest", 0, ax_self(), 0) == 0, "register failed");
	CHECK("ds", ds_req(ds, DS_PUT, "answer", 0, 42, 0) == 0, "put failed");
	CHECK("ds", ds_req(ds, DS_GET, "utest", "answer", 0, &v) == 0 && v == 42, "get: %llu", (unsigned long long)v);
	CHECK("ds", ds_req(ds, DS_GET, "utest", "nothing", 0, 0) == -2, "missing key found");
	CHECK("ds", ds_req(ds, DS_GET, "a/b", "x", 0, 0) == -KE_INVAL, "bad label accepted");
	CHECK("ds", ds_req(ds, DS_SUBSCRIBE, "client", "*", 0, 0) == 0, "subscribe failed");
	/* A client writes only its own namespace, registered by us (ds's launcher). */
	endpoint_t c = (endpoint_t)ax_spawn_named("uecho", "dsclient", SPAWN_ANY_CPU, 2);
	CHECK("ds", ds_req(ds, DS_REGISTER, "client", 0, c, 0) == 0, "register client failed");
	client_do(c, ds, 3, 0, &r);
	CHECK("ds", r == -KE_PERM, "a client registered itself: %lld", (long long)r);
	client_do(c, ds, 1, 7, &r);
	CHECK("ds", r == 0, "client put: %lld", (long long)r);
	struct kmsg m;
	while (ax_receive(EP_ANY, &m) < 0 || m.source != EP_KERNEL || m.type != KMSG_NOTIFY)
		;
	CHECK("ds", m.w[0] & DS_NOTIFY_BIT, "no ds notification bit");
	struct kmsg q = { .type = DS_CHECK };
	CHECK("ds", ax_call(ds, &q) == 0 && q.w[6] == 0 && !strcmp((char *)&q.w[0], "client") &&
			    !strcmp((char *)&q.w[2], "count"), "check did not name client/count");
	q = (struct kmsg){ .type = DS_CHECK };
	CHECK("ds", ax_call(ds, &q) == 0 && (int64_t)q.w[6] == -KE_AGAIN, "a second change reported");
	/* The client dies and comes back: its saved state is there for the new endpoint. */
	ax_kill(c);
	wait_report(c, &m);
	endpoint_t c2 = (endpoint_t)ax_spawn_named("uecho", "dsclient", SPAWN_ANY_CPU, 2);
	CHECK("ds", ds_req(ds, DS_REGISTER, "client", 0, c2, 0) == 0, "re-register failed");
	v = client_do(c2, ds, 2, 0, &r);
	CHECK("ds", r == 0 && v == 7, "restarted client sees %llu (%lld)", (unsigned long long)v, (long long)r);
	client_do(c2, ds, 1, 8, &r);
	CHECK("ds", r == 0 && ds_req(ds, DS_GET, "client", "count", 0, &v) == 0 && v == 8, "restarted client put");
	client_do(c2, ds, 9, 0, &r);
	wait_report(c2, &m);
	/* A put that overtakes its label (rs registers without waiting for ds) is held, and
	 * stored and answered when the label lands: the client is seen blocked awaiting ds's
	 * answer, then its value is there once we have registered it. */
	endpoint_t c3 = (endpoint_t)ax_spawn_named("uecho", "dsclient", SPAWN_ANY_CPU, 2);
	int64_t st = put_held_by_ds(c3, ds, 5, ax_time_ns());
	CHECK("ds", (st & 0xffff) == 0x0303 && kcall2(KC_INFO, KI_THREAD_PEER, c3) == ds,
	      "an early put was not held (client state %#llx)", (unsigned long long)st);
	CHECK("ds", ds_req(ds, DS_REGISTER, "client3", 0, c3, 0) == 0, "register client3 failed");
	CHECK("ds", ds_req(ds, DS_GET, "client3", "count", 0, &v) == 0 && v == 5, "held put not stored: %llu",
	      (unsigned long long)v);
	/* One whose label never comes is refused at ds's first message after the hold (a
	 * second): it is back in receive, its put not stored. */
	endpoint_t c4 = (endpoint_t)ax_spawn_named("uecho", "dsclient", SPAWN_ANY_CPU, 2);
	uint64_t t0 = ax_time_ns();
	st = put_held_by_ds(c4, ds, 6, t0);
	CHECK("ds", (st & 0xffff) == 0x0303, "an unlabelled put was not held (client state %#llx)", (unsigned long long)st);
	while (ax_time_ns() - t0 < 1200000000ull)
		;
	CHECK("ds", ds_req(ds, DS_GET, "client4", "count", 0, 0) == -2, "unlabelled put stored");
	while (((st = kcall2(KC_INFO, KI_THREAD_STATE, c4)) & 0xffff) != 0x0203 && ax_time_ns() - t0 < 6000000000ull)
		;
	CHECK("ds", (st & 0xffff) == 0x0203, "a held put was never refused (client state %#llx)", (unsigned long long)st);
	client_do(c3, ds, 9, 0, &r);
	wait_report(c3, &m);
	client_do(c4, ds, 9, 0, &r);
	wait_report(c4, &m);
	ax_kill(ds);
	wait_report(ds, &m);
	ax_printf("UTEST PASS ds\n");
}

/* Random arguments at every kernel call that returns. */
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) { return xorshift64(&rng); }

static uint64_t nasty(void)
{
	static const uint64_t v[] = { 0, 1, ~0ull, 0x7fffffffffffull, 0x800000000000ull,
				      0xffff800000000000ull, 0xffffffff80100000ull, 0x1000, 0x400000,
				      0x7fff00000000ull - 8, 0xfffffffeull, 0xffffffffull, 64, 65536 };
	uint64_t r = rnd();
	return (r & 3) ? v[r % (sizeof(v) / sizeof(v[0]))] : rnd();
}

static void t_fuzz(void)
{
	static const uint32_t calls[] = { KC_DEBUG_WRITE, KC_SELF, KC_MODULE_INFO, KC_SPAWN, KC_SEND,
					  KC_CALL, KC_REPLY, KC_SENDNB, KC_NOTIFY, KC_TIME, KC_CPU,
					  KC_KILL, KC_INFO, KC_SCHED, KC_RECEIVE, KC_MO_CREATE, KC_MO_MAP,
					  KC_MO_UNMAP, KC_MO_GRANT, KC_MO_REVOKE, KC_MO_DESTROY, KC_MO_PHYS,
					  KC_VCOPY, KC_WAIT, KC_PRIV, KC_IRQ_BIND, KC_IRQ_UNMASK, KC_MMIO_MAP,
					  KC_PCI_CFG, KC_START, KC_MODULE_MAP, KC_ALIVE /* not the root: refused */,
					  KC_COUNT, 999 };
	endpoint_t me = ax_self();
	/* A notification that stays pending makes every wait return at once. */
	ax_notify(me, 1);
	long n = 0, errors = 0;
	for (; n < 100000; n++) {
		uint32_t c = calls[rnd() % (sizeof(calls) / sizeof(calls[0]))];
		uint64_t a0 = nasty(), a1 = nasty(), a2 = nasty();
		if (c == KC_DEBUG_WRITE && a0 < 0x800000000000ull)
			a0 |= 0xffff800000000000ull; /* only unreadable buffers: no garbage on the console */
		if ((c == KC_RECEIVE || c == KC_KILL || c == KC_SCHED) &&
		    (a0 == EP_ANY || a0 == EP_KERNEL || a0 == me))
			a0 = 0x12345; /* would block forever, or end this very test */
		if (c == KC_SPAWN && a0 < 0x800000000000ull)
			a0 = 0x10; /* a readable struct could spawn real programs */
		if (c == KC_MODULE_INFO && a1 >= 0x400000 && a1 < 0x800000000000ull)
			a1 = 8;
		if (c == KC_MO_CREATE)
			a0 &= 15; /* big objects only cost time: zeroing under TCG */
		if (c == KC_MO_UNMAP && a0 == 0x400000)
			a0 = 0x1000; /* our own text */
		if (c == KC_VCOPY)
			a2 = 0x12345; /* never into our own memory */
		if (c == KC_PCI_CFG && (a2 & KPCI_WRITE))
			a2 &= ~(uint64_t)KPCI_WRITE; /* random config writes could reprogram devices */
		if (c == KC_IRQ_BIND || c == KC_MMIO_MAP)
			a0 |= 1ull << 40; /* only invalid lines and ranges: no real device touched */
		int64_t r = kcall6(c, a0, a1, a2, nasty(), nasty(), nasty());
		errors += r < 0;
	}
	CHECK("fuzz", ax_self() == me, "lost my identity");
	ax_printf("UTEST PASS fuzz calls=%ld errors=%ld\n", n, errors);
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *t = argv[i];
		if (!strcmp(t, "hello")) t_hello(argc, argv);
		else if (!strcmp(t, "pingpong-same")) pingpong(t, false);
		else if (!strcmp(t, "pingpong-cross")) pingpong(t, true);
		else if (!strcmp(t, "notify")) t_notify();
		else if (!strcmp(t, "calldie")) t_calldie();
		else if (!strcmp(t, "fault")) t_fault();
		else if (!strcmp(t, "spawnloop")) t_spawnloop();
		else if (!strcmp(t, "dedicated")) t_dedicated();
		else if (!strcmp(t, "fuzz")) t_fuzz();
		else if (!strcmp(t, "share")) t_share();
		else if (!strcmp(t, "revoke")) t_revoke();
		else if (!strcmp(t, "moloop")) t_moloop();
		else if (!strcmp(t, "vcopy")) t_vcopy();
		else if (!strcmp(t, "text")) t_text();
		else if (!strcmp(t, "lazy")) t_lazy();
		else if (!strcmp(t, "legacy")) t_legacy();
		else if (!strcmp(t, "wait")) t_wait();
		else if (!strcmp(t, "fpu")) t_fpu();
		else if (!strcmp(t, "chan")) t_chan();
		else if (!strcmp(t, "ds")) t_ds();
		else {
			ax_printf("UTEST FAIL %s: no such test\n", t);
			failures++;
		}
	}
	ax_printf("UTEST DONE failures=%d\n", failures);
	return failures;
}
