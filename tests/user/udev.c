/* User-space system tests of device privileges (run by tests/system/test_devices.py).
 *   udev <test>...      runs the named tests (pit, ports, pci, mmio, dma, fuzz), printing
 *                       UTEST PASS/FAIL lines; init gave it every privilege.
 *   udev child-... ...  helper modes, spawned stopped by the tests and given a subset. */
#include "utest.h"
#include "ioport.h"


static int64_t priv(endpoint_t ep, uint64_t kind, uint64_t a, uint64_t b)
{
	return kcall6(KC_PRIV, ep, kind, a, b, 0, 0);
}
static int64_t pci_read(uint64_t bdf, uint64_t off, uint64_t width)
{
	return kcall6(KC_PCI_CFG, bdf, off, width, 0, 0, 0);
}
static int64_t mmio_map(uint64_t pa, uint64_t n, uint64_t va) { return kcall6(KC_MMIO_MAP, pa, n, va, 0, 0, 0); }

/* Non-blocking: is kernel IPC waiting? (KC_WAIT returns at once when the doorbell differs.) */
static bool ipc_waiting(void)
{
	static volatile uint64_t bell = 1;
	int64_t w = kcall2(KC_WAIT, (uint64_t)&bell, 0);
	return w > 0 && (w & KW_IPC);
}

/* Waits up to ms for a notification; returns its bits, 0 on timeout. */
static uint64_t wait_notify(uint64_t ms)
{
	uint64_t t0 = ax_time_ns();
	struct kmsg m;
	while (ax_time_ns() - t0 < ms * 1000000ull) {
		if (!ipc_waiting()) {
			ax_yield();
			continue;
		}
		if (ax_receive(EP_ANY, &m) == 0 && m.source == EP_KERNEL && m.type == KMSG_NOTIFY)
			return m.w[0];
	}
	return 0;
}

static void sleep_ms(uint64_t ms)
{
	uint64_t t0 = ax_time_ns();
	while (ax_time_ns() - t0 < ms * 1000000ull)
		ax_yield();
}

/* ---- helper modes ---- */

static void fuzz_calls(long n, endpoint_t target, long *errors);

static int child(int argc, char **argv)
{
	const char *mode = argv[1];
	if (!strcmp(mode, "child-pit")) {
		/* PIT channel 0, rate generator, about 100 Hz. */
		ax_outb(0x43, 0x34);
		ax_outb(0x40, 11932 & 0xff);
		ax_outb(0x40, 11932 >> 8);
		if (kcall2(KC_IRQ_BIND, 0, 0) != -KE_INVAL)
			return 10;
		if (kcall2(KC_IRQ_BIND, 1, 1) != -KE_PERM)
			return 11;
		if (kcall1(KC_IRQ_UNMASK, 0) != -KE_PERM) /* not bound yet */
			return 12;
		if (kcall6(KC_IRQ_BIND, 0, 0x10, 2, 0, 0, 0) != -KE_INVAL) /* an unknown flag */
			return 18;
		if (kcall6(KC_IRQ_BIND, 0, 0x10, KIRQ_WATCHED, 0, 0, 0) != 0)
			return 13;
		if (wait_notify(3000) != 0x10)
			return 14;
		/* Masked now: ten periods pass without another notification, and the kernel says
		 * since when the line waits for us (KI_IRQ_MASKED, what rs watches). */
		sleep_ms(100);
		if (ipc_waiting())
			return 15;
		int64_t mk = kcall2(KC_INFO, KI_IRQ_MASKED, 0);
		if ((endpoint_t)(mk & 0xffffffff) != ax_self() || (mk >> 32) < 100)
			return 19;
		if (kcall1(KC_IRQ_UNMASK, 0) != 0)
			return 16;
		if (kcall2(KC_INFO, KI_IRQ_MASKED, 0) != 0)
			return 20;
		if (wait_notify(3000) != 0x10)
			return 17;
		return 0;
	}
	if (!strcmp(mode, "child-bindhold")) {
		/* Binds IRQ 0, answers calls with the result, exits on type 2. */
		int64_t r = kcall2(KC_IRQ_BIND, 0, 1);
		struct kmsg m;
		for (;;) {
			if (ax_receive(EP_ANY, &m) < 0 || m.source == EP_KERNEL)
				continue;
			uint32_t type = m.type;
			m.w[0] = (uint64_t)r;
			ax_reply(m.source, &m);
			if (type == 2)
				return 0;
		}
	}
	if (!strcmp(mode, "child-bindbusy"))
		return kcall2(KC_IRQ_BIND, 0, 1) == -KE_BUSY ? 0 : 1;
	if (!strcmp(mode, "child-io") && argc >= 6) {
		/* child-io <parent> <bit> <delay ms> <port> [port2]: notify bit after the first read,
		 * bit+1 after the second. */
		endpoint_t parent = (endpoint_t)ax_atou(argv[2]);
		uint64_t bit = ax_atou(argv[3]);
		sleep_ms(ax_atou(argv[4]));
		ax_inb((uint16_t)ax_atou(argv[5]));
		ax_notify(parent, 1ull << bit);
		if (argc >= 7) {
			ax_inb((uint16_t)ax_atou(argv[6]));
			ax_notify(parent, 2ull << bit);
		}
		return 0;
	}
	if (!strcmp(mode, "child-ioloop") && argc >= 4) {
		/* child-ioloop <port> <ms>: reads the port between yields for a while. */
		uint16_t port = (uint16_t)ax_atou(argv[2]);
		uint64_t t0 = ax_time_ns(), ms = ax_atou(argv[3]);
		while (ax_time_ns() - t0 < ms * 1000000ull) {
			ax_inb(port);
			ax_yield();
		}
		return 0;
	}
	if (!strcmp(mode, "child-pci") && argc >= 3) {
		if (ax_atou(argv[2]) == 0)
			return pci_read(0, 0, 4) == -KE_PERM ? 0 : 1;
		if (pci_read(0, 0, 2) != 0x8086)
			return 2;
		if (pci_read(8, 0, 2) != -KE_PERM) /* 00:01.0 was not given */
			return 3;
		return 0;
	}
	if (!strcmp(mode, "child-mmio") && argc >= 3) {
		if (ax_atou(argv[2]) == 0)
			return mmio_map(0xfec00000, 1, 0) == -KE_PERM ? 0 : 1;
		int64_t va = mmio_map(0xfec00000, 1, 0);
		if (va <= 0)
			return 2;
		volatile uint32_t *io = (volatile uint32_t *)va;
		io[0] = 1;
		if (((io[4] >> 16) & 0xff) < 2)
			return 3;
		if (mmio_map(0xfec01000, 1, 0) != -KE_PERM || mmio_map(0xfec00000, 2, 0) != -KE_PERM)
			return 4;
		return 0;
	}
	if (!strcmp(mode, "child-dma") && argc >= 3) {
		int64_t h = kcall2(KC_MO_CREATE, 4, MOF_DMA);
		if (ax_atou(argv[2]) == 0)
			return h == -KE_PERM ? 0 : 1;
		if (h <= 0)
			return 2;
		uint64_t first = (uint64_t)kcall2(KC_MO_PHYS, (uint64_t)h, 0);
		if (!first || (first & 0xfff) || (int64_t)first < 0)
			return 3;
		for (uint64_t i = 1; i < 4; i++)
			if ((uint64_t)kcall2(KC_MO_PHYS, (uint64_t)h, i) != first + i * 4096)
				return 4;
		if (kcall2(KC_MO_PHYS, (uint64_t)h, 4) != -KE_INVAL)
			return 5;
		int64_t plain = kcall2(KC_MO_CREATE, 1, 0);
		if (plain <= 0 || kcall2(KC_MO_PHYS, (uint64_t)plain, 0) != -KE_PERM)
			return 6;
		return 0;
	}
	if (!strcmp(mode, "child-fuzz")) {
		/* The fuzz with only a few privileges: the refusal paths. */
		long errors = 0;
		fuzz_calls(2000, EP_NONE, &errors);
		return errors > 0 ? 0 : 1;
	}
	if (!strcmp(mode, "child-wait"))
		for (;;)
			ax_yield(); /* a stopped target for the fuzzer; killed by the parent */
	ax_printf("udev: bad helper mode %s\n", mode);
	return 99;
}

/* ---- the tests ---- */

static uint64_t notes; /* notification bits collected while waiting for reports */

static int64_t spawn_stopped(const char *args, uint32_t cpu)
{
	int idx = ax_find_module("udev");
	if (idx < 0)
		return -KE_SRCH;
	struct kc_spawn s = { (uint32_t)idx, cpu, 2, SPAWN_STOPPED, args };
	return ax_spawn(&s);
}

/* Waits for the exit or fault reports of n children; reps[i] gets child i's. */
static void collect(int n, const int64_t *eps, struct kmsg *reps)
{
	bool got[8] = { false };
	int left = n;
	struct kmsg m;
	while (left) {
		if (ax_receive(EP_ANY, &m) < 0 || m.source != EP_KERNEL)
			continue;
		if (m.type == KMSG_NOTIFY) {
			notes |= m.w[0];
			continue;
		}
		if (m.type != KMSG_PROC_EXIT && m.type != KMSG_PROC_FAULT)
			continue;
		for (int i = 0; i < n; i++)
			if (!got[i] && (uint64_t)eps[i] == m.w[0]) {
				got[i] = true;
				reps[i] = m;
				left--;
			}
	}
}

/* Runs a stopped child to its end: returns the exit status, or -1000 - vector on a fault. */
static int64_t finish(int64_t ep)
{
	struct kmsg rep;
	if (ep < 0 || kcall1(KC_START, (uint64_t)ep) < 0)
		return -999;
	collect(1, &ep, &rep);
	return rep.type == KMSG_PROC_EXIT ? (int64_t)rep.w[1] : -1000 - (int64_t)rep.w[1];
}

static void t_pit(void)
{
	int64_t ep = spawn_stopped("child-pit", SPAWN_ANY_CPU);
	CHECK("pit", ep > 0, "spawn: %lld", (long long)ep);
	CHECK("pit", priv((endpoint_t)ep, KPRIV_IOPORT, 0x40, 4) == 0, "ports not given");
	CHECK("pit", priv((endpoint_t)ep, KPRIV_IRQ, 0, 0) == 0, "IRQ 0 not given");
	int64_t r = finish(ep);
	CHECK("pit", r == 0, "child-pit ended with %lld", (long long)r);
	/* Released at its exit: a new holder binds; a second one is refused while it holds. */
	int64_t hold = spawn_stopped("child-bindhold", SPAWN_ANY_CPU);
	CHECK("pit", hold > 0 && priv((endpoint_t)hold, KPRIV_IRQ, 0, 0) == 0 &&
			     kcall1(KC_START, (uint64_t)hold) == 0, "bindhold not started");
	struct kmsg m = { .type = 1 };
	CHECK("pit", ax_call((endpoint_t)hold, &m) == 0 && m.w[0] == 0, "rebind after exit: %lld",
	      (long long)m.w[0]);
	int64_t busy = spawn_stopped("child-bindbusy", SPAWN_ANY_CPU);
	CHECK("pit", busy > 0 && priv((endpoint_t)busy, KPRIV_IRQ, 0, 0) == 0, "bindbusy");
	r = finish(busy);
	CHECK("pit", r == 0, "second binder was not refused (%lld)", (long long)r);
	CHECK("pit", kcall2(KC_IRQ_BIND, 0, 1) == -KE_BUSY, "parent bound a held IRQ");
	CHECK("pit", kcall2(KC_IRQ_BIND, 2, 1) == -KE_BUSY, "cascade IRQ 2 bindable");
	CHECK("pit", kcall2(KC_IRQ_BIND, 16, 1) == -KE_INVAL, "IRQ 16 accepted");
	m.type = 2;
	ax_call((endpoint_t)hold, &m);
	struct kmsg rep;
	collect(1, &hold, &rep);
	CHECK("pit", rep.type == KMSG_PROC_EXIT && rep.w[1] == 0, "bindhold ended badly");
	ax_printf("UTEST PASS pit\n");
}

static void t_ports(void)
{
	char a[5][64];
	endpoint_t me = ax_self();
	/* I hold every port. */
	(void)ax_inb(0x61);
	/* No ports at all: the first read faults. */
	ksnprintf(a[0], 64, "child-io %u 0 0 64", me);
	/* Port 0x81 only: it reads 0x81, then faults on 0x80. */
	ksnprintf(a[1], 64, "child-io %u 2 0 129 128", me);
	/* Same CPU, interleaved with a holder of 0x80: the cached bitmap must not leak. */
	ksnprintf(a[2], 64, "child-ioloop 128 400");
	ksnprintf(a[3], 64, "child-io %u 4 150 128", me);
	ksnprintf(a[4], 64, "child-io %u 6 200 129 128", me);
	int64_t eps[5];
	for (int i = 0; i < 5; i++) {
		eps[i] = spawn_stopped(a[i], i < 2 ? SPAWN_ANY_CPU : 0);
		CHECK("ports", eps[i] > 0, "spawn %d: %lld", i, (long long)eps[i]);
	}
	CHECK("ports", priv((endpoint_t)eps[1], KPRIV_IOPORT, 0x81, 1) == 0, "give 0x81");
	CHECK("ports", priv((endpoint_t)eps[2], KPRIV_IOPORT, 0x80, 1) == 0, "give 0x80");
	CHECK("ports", priv((endpoint_t)eps[4], KPRIV_IOPORT, 0x81, 1) == 0, "give 0x81");
	CHECK("ports", priv((endpoint_t)eps[0], KPRIV_IOPORT, 0xfff0, 0x11) == -KE_INVAL, "range past 64K");
	CHECK("ports", priv((endpoint_t)eps[0], KPRIV_IOPORT, 0x80, 0) == -KE_INVAL, "empty range");
	CHECK("ports", priv(me, KPRIV_IOPORT, 0x80, 1) == -KE_PERM, "gave myself ports");
	notes = 0;
	for (int i = 0; i < 5; i++)
		CHECK("ports", kcall1(KC_START, (uint64_t)eps[i]) == 0, "start %d", i);
	struct kmsg reps[5];
	collect(5, eps, reps);
	static const bool faults[5] = { true, true, false, true, true };
	for (int i = 0; i < 5; i++) {
		if (faults[i])
			CHECK("ports", reps[i].type == KMSG_PROC_FAULT && reps[i].w[1] == 13,
			      "child %d: report %#x vector %llu", i, reps[i].type, (unsigned long long)reps[i].w[1]);
		else
			CHECK("ports", reps[i].type == KMSG_PROC_EXIT && reps[i].w[1] == 0,
			      "child %d: report %#x w1 %llu", i, reps[i].type, (unsigned long long)reps[i].w[1]);
	}
	/* Bits: child 1 read 0x81 (bit 2) but not 0x80 (bit 3); child 4 likewise (6, not 7);
	 * children 0 and 3 never read (bits 0, 4). */
	CHECK("ports", notes == ((1ull << 2) | (1ull << 6)), "notification bits %#llx", (unsigned long long)notes);
	ax_printf("UTEST PASS ports\n");
}

static void t_pci(void)
{
	/* QEMU's host bridge: Intel, i440FX (pc) or Q35 (q35, what the tests boot). */
	int64_t id = pci_read(0, 0, 4);
	CHECK("pci", id == 0x12378086 || id == 0x29c08086, "00:00.0 id %#llx", (long long)id);
	CHECK("pci", pci_read(0, 2, 2) == id >> 16 && pci_read(0, 0, 1) == 0x86 && pci_read(0, 1, 1) == 0x80,
	      "narrow reads");
	CHECK("pci", pci_read(0, 1, 2) == -KE_INVAL && pci_read(0, 2, 4) == -KE_INVAL, "misaligned accepted");
	CHECK("pci", pci_read(0, 256, 1) == -KE_INVAL && pci_read(0, 0, 3) == -KE_INVAL &&
			     pci_read(0x10000, 0, 4) == -KE_INVAL && pci_read(0, 0, 4 | 0x200) == -KE_INVAL,
	      "bad arguments accepted");
	/* A write and a read back: the command register's value, unchanged. */
	int64_t cmd = pci_read(0, 4, 2);
	CHECK("pci", cmd >= 0 && kcall6(KC_PCI_CFG, 0, 4, 2 | KPCI_WRITE, (uint64_t)cmd, 0, 0) == 0 &&
			     pci_read(0, 4, 2) == cmd, "write");
	int64_t r = finish(spawn_stopped("child-pci 0", SPAWN_ANY_CPU));
	CHECK("pci", r == 0, "child without PCI privilege: %lld", (long long)r);
	int64_t ep = spawn_stopped("child-pci 1", SPAWN_ANY_CPU);
	CHECK("pci", ep > 0 && priv((endpoint_t)ep, KPRIV_PCI, 0, 0) == 0, "give 00:00.0");
	CHECK("pci", priv((endpoint_t)ep, KPRIV_PCI, 0x10000, 0) == -KE_INVAL, "bad bdf given");
	r = finish(ep);
	CHECK("pci", r == 0, "child with 00:00.0: %lld", (long long)r);
	ax_printf("UTEST PASS pci id=%#llx\n", (long long)id);
}

static void t_mmio(void)
{
	int64_t va = mmio_map(0xfec00000, 1, 0);
	CHECK("mmio", va > 0, "IOAPIC map: %lld", (long long)va);
	volatile uint32_t *io = (volatile uint32_t *)va;
	io[0] = 1;
	uint32_t ver = io[4];
	CHECK("mmio", ((ver >> 16) & 0xff) == 23, "IOAPIC version register %#x", ver);
	/* The same registers at an address I choose. */
	uint64_t fixed = (uint64_t)va + 64 * 4096;
	CHECK("mmio", mmio_map(0xfec00000, 1, fixed) == (int64_t)fixed, "fixed va");
	CHECK("mmio", mmio_map(0xfec00000, 1, fixed) == -KE_BUSY, "double map at one va");
	CHECK("mmio", mmio_map(0x100000, 1, 0) == -KE_PERM && mmio_map(0, 1, 0) == -KE_PERM,
	      "RAM mapped");
	CHECK("mmio", mmio_map(0x9e000, 2, 0) == -KE_PERM, "range reaching into low RAM mapped");
	CHECK("mmio", mmio_map(0xa0000, 1, 0) > 0, "VGA window (not RAM) refused");
	CHECK("mmio", mmio_map(0xfec00001, 1, 0) == -KE_INVAL && mmio_map(0xfec00000, 0, 0) == -KE_INVAL,
	      "bad arguments accepted");
	int64_t r = finish(spawn_stopped("child-mmio 0", SPAWN_ANY_CPU));
	CHECK("mmio", r == 0, "child without MMIO privilege: %lld", (long long)r);
	int64_t ep = spawn_stopped("child-mmio 1", SPAWN_ANY_CPU);
	CHECK("mmio", ep > 0, "spawn");
	CHECK("mmio", priv((endpoint_t)ep, KPRIV_MMIO, 0x100000, 1) == -KE_PERM, "RAM given");
	CHECK("mmio", priv((endpoint_t)ep, KPRIV_MMIO, 0xfec00000, 1) == 0, "IOAPIC not given");
	r = finish(ep);
	CHECK("mmio", r == 0, "child with the IOAPIC page: %lld", (long long)r);
	ax_printf("UTEST PASS mmio ioapic_version=%#x\n", ver);
}

static void t_dma(void)
{
	int64_t r = finish(spawn_stopped("child-dma 0", SPAWN_ANY_CPU));
	CHECK("dma", r == 0, "child without DMA privilege: %lld", (long long)r);
	int64_t ep = spawn_stopped("child-dma 1", SPAWN_ANY_CPU);
	CHECK("dma", ep > 0 && priv((endpoint_t)ep, KPRIV_DMA, 0, 0) == 0, "give DMA");
	r = finish(ep);
	CHECK("dma", r == 0, "child with DMA privilege: %lld", (long long)r);
	ax_printf("UTEST PASS dma\n");
}

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint64_t rnd(void) { return xorshift64(&rng); }
static uint64_t nasty(void)
{
	static const uint64_t v[] = { 0, 1, 2, 3, 4, 7, 8, 15, 16, 255, 256, 0x80, 0xcf8, 0xffff, 0x10000,
				      ~0ull, 0xffffffffull, 0xfec00000, 0xfee00000, 0xfec00001,
				      0x100000, 0x7fff00000000ull, 0xffff800000000000ull, 1ull << 40,
				      KPCI_ALL, 4 | KPCI_WRITE, 0x1000 };
	uint64_t r = rnd();
	return (r & 3) ? v[r % (sizeof(v) / sizeof(v[0]))] : rnd() >> (rnd() % 64);
}

static void fuzz_calls(long n, endpoint_t target, long *errors)
{
	static const uint32_t calls[] = { KC_PRIV, KC_IRQ_BIND, KC_IRQ_UNMASK, KC_MMIO_MAP, KC_PCI_CFG };
	for (long i = 0; i < n; i++) {
		uint32_t c = calls[rnd() % 5];
		uint64_t a0 = nasty(), a1 = nasty(), a2 = nasty(), a3 = nasty();
		if (c == KC_PRIV && (rnd() & 1))
			a0 = target;
		if (c == KC_PRIV && (rnd() & 1))
			a1 = rnd() % 9;
		if (c == KC_PCI_CFG)
			a2 &= ~(uint64_t)KPCI_WRITE; /* writes could reprogram the host bridge */
		if (c == KC_MMIO_MAP && a2 && a2 < 0x1000000)
			a2 = 0; /* keep my own program and stack mapped where they are */
		int64_t r = kcall6(c, a0, a1, a2, a3, nasty(), nasty());
		*errors += r < 0;
	}
}

static void t_fuzz(void)
{
	endpoint_t me = ax_self();
	int64_t target = spawn_stopped("child-wait", SPAWN_ANY_CPU);
	CHECK("fuzz", target > 0, "spawn");
	long errors = 0;
	enum { N = 4000 };
	fuzz_calls(N, (endpoint_t)target, &errors);
	CHECK("fuzz", ax_self() == me, "lost my identity");
	CHECK("fuzz", ax_kill((endpoint_t)target) == 0, "kill target");
	struct kmsg rep;
	collect(1, &target, &rep);
	/* The same from a child holding a little: port 0x80, IRQ 5, 00:00.0, the IOAPIC. */
	int64_t f = spawn_stopped("child-fuzz", SPAWN_ANY_CPU);
	CHECK("fuzz", f > 0 && priv((endpoint_t)f, KPRIV_IOPORT, 0x80, 1) == 0 &&
			     priv((endpoint_t)f, KPRIV_IRQ, 5, 0) == 0 && priv((endpoint_t)f, KPRIV_PCI, 0, 0) == 0 &&
			     priv((endpoint_t)f, KPRIV_MMIO, 0xfec00000, 1) == 0, "fuzz child");
	int64_t r = finish(f);
	CHECK("fuzz", r == 0, "fuzz child ended with %lld", (long long)r);
	/* Still working afterwards. */
	CHECK("fuzz", pci_read(0, 0, 2) == 0x8086, "PCI read after the fuzz");
	ax_printf("UTEST PASS fuzz calls=%d errors=%ld\n", N, errors);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strncmp(argv[1], "child-", 6))
		return child(argc, argv);
	for (int i = 1; i < argc; i++) {
		const char *t = argv[i];
		if (!strcmp(t, "pit")) t_pit();
		else if (!strcmp(t, "ports")) t_ports();
		else if (!strcmp(t, "pci")) t_pci();
		else if (!strcmp(t, "mmio")) t_mmio();
		else if (!strcmp(t, "dma")) t_dma();
		else if (!strcmp(t, "fuzz")) t_fuzz();
		else {
			ax_printf("UTEST FAIL %s: no such test\n", t);
			failures++;
		}
	}
	ax_printf("UTEST DONE failures=%d\n", failures);
	return failures;
}
