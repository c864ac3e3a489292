/* The driver's event loop: arguments, the interrupt line, the poll (device rings, ip's
 * channel, the link), ds notifications (ip restarted), counters (NETQ_SHOW) and injected
 * faults. */
#include "netdrv_int.h"
#include "service.h"
#include "heartbeat.h"
#include "netq_proto.h"
#include "pci.h"
#include "pci_axolotl.h"

#define TICK_NS 100000000ull /* the link, and the interrupt safety net */

struct netdrv nd = { .rx_pool = -1, .bdf = -1 };
struct ax_evloop nd_loop;
static uint64_t next_tick_ns;

void netdrv_link_check(void)
{
	bool up = nd.ops->link();
	if (up == nd.link)
		return;
	nd.link = up;
	nd.c.link_changes++;
	ax_printf("%s: link %s\n", nd.ops->name, up ? "up" : "down");
	struct netdev_msg m = { .type = ND_LINK, .arg = up ? NDL_UP : 0 };
	netdrv_up_push(0, &m); /* a lost link message is repaired by the next change or ND_RESET */
}

/* Interrupts, NAPI-style. The kernel masks the line at each interrupt; we acknowledge the
 * device's cause and leave the line masked while the loop finds work, polling the rings, so
 * a busy device costs no interrupt per batch. With nothing left to do, irq_rearm unmasks the
 * line and reads the cause again: the I/O APIC may take the line as edge-triggered and
 * ignore it while masked, and the device holds it until the cause is read; so either it
 * reads 0 (the next event makes a new edge) or an event came meanwhile and the loop polls
 * once more. Not KIRQ_WATCHED: the line stays masked for as long as the device keeps us
 * busy (docs/decisions.md).
 * MSI-X (a driver asking with nd.msix_want, the kernel giving vectors: KC_MSI_BIND): no line
 * and nothing masked in the kernel; the same rule with the mask at the device: irq_hold(true)
 * when an interrupt is taken, irq_hold(false) and the cause read again when idle (a message
 * that came while held is sent by the device at the unmask, so none is lost). */
static bool irq_masked, irq_bound, msix_closed;
static struct pci_msix msix_cap;          /* the function's MSI-X capability (msix_nvec > 0) */
static volatile uint8_t *msix_table;      /* its table, mapped */

static uint32_t irq_ack(void)
{
	bool link = false;
	uint32_t cause = nd.ops->irq_ack(&link);
	nd.msix_fired = 0;
	if (link)
		netdrv_link_check();
	return cause;
}

/* MSI-X: every vector masked at the device while the loop polls, or unmasked: the driver's
 * own mask register, else the entries' mask bits (a message that comes meanwhile waits in
 * the pending bits and is sent at the unmask). */
static void msix_hold(bool hold)
{
	if (nd.ops->irq_hold) {
		nd.ops->irq_hold(hold);
		return;
	}
	for (unsigned i = 0; i < nd.msix_nvec; i++)
		pci_msix_entry_mask(msix_table, i, hold);
}

static void irq_taken(void)
{
	if (nd.msix_nvec)
		msix_hold(true);
	irq_masked = true;
	irq_ack();
}

static bool irq_rearm(void)
{
	if (!irq_masked)
		return false;
	irq_masked = false;
	if (nd.msix_nvec)
		msix_hold(false);
	else
		kcall1(KC_IRQ_UNMASK, nd.irq);
	return irq_ack() != 0;
}

/* MSI-X: vectors from the kernel, vector i notifying NETDRV_IRQ_BIT << i (so the loop knows
 * which fired: nd.msix_fired, vec_irqs); the function's table (its BAR mapped here)
 * programmed with the kernel's messages, the entries beyond masked, MSI-X enabled and INTx
 * off. 0, or why not (logged by the caller). */
static int64_t msix_bind(const char **why)
{
	uint16_t bdf = (uint16_t)nd.bdf;
	struct pci_msix m;
	if (!nd.pci || pci_msix_find(&pci_kcall, nd.pci, &m) < 0) {
		*why = "the function has no MSI-X capability";
		return -KE_NOSYS;
	}
	unsigned n = nd.msix_want < m.size ? nd.msix_want : m.size;
	n = n < KMSI_MAX ? n : KMSI_MAX;
	uint64_t bits[KMSI_MAX];
	struct kc_msi out[KMSI_MAX];
	for (unsigned i = 0; i < n; i++)
		bits[i] = NETDRV_IRQ_BIT << i;
	int64_t r = kcall6(KC_MSI_BIND, bdf, n, (uint64_t)bits, (uint64_t)out, 0, 0);
	if (r == -KE_BUSY && n > 1) { /* the kernel's pool is short: everything on one vector */
		n = 1;
		r = kcall6(KC_MSI_BIND, bdf, n, (uint64_t)bits, (uint64_t)out, 0, 0);
	}
	if (r < 0) {
		*why = "the kernel gave no vectors";
		return r;
	}
	uint64_t pa = m.table_phys & ~0xfffull;
	uint64_t pages = (m.table_phys - pa + (uint64_t)m.size * PCI_MSIX_ENTRY + 4095) / 4096;
	int64_t va = kcall6(KC_MMIO_MAP, pa, pages, 0, 0, 0, 0);
	if (va < 0) {
		kcall6(KC_MSI_BIND, bdf, 0, 0, 0, 0, 0);
		*why = "cannot map the MSI-X table";
		return va;
	}
	volatile uint8_t *table = (volatile uint8_t *)va + (m.table_phys - pa);
	if ((r = pci_msix_control(&pci_kcall, bdf, &m, true, true)) < 0) { /* on, every entry held */
		kcall6(KC_MSI_BIND, bdf, 0, 0, 0, 0, 0);
		*why = "cannot enable MSI-X";
		return r;
	}
	for (unsigned i = 0; i < m.size; i++) {
		if (i < n)
			pci_msix_entry_write(table, i, out[i].addr, out[i].data, false);
		else
			pci_msix_entry_mask(table, i, true);
	}
	pci_command(&pci_kcall, bdf, PCI_CMD_INTX_OFF, 0);
	pci_msix_control(&pci_kcall, bdf, &m, true, false);
	nd.msix_nvec = n;
	msix_cap = m;
	msix_table = table;
	ax_printf("%s: MSI-X: %u of %u vectors (CPU vector %#x%s), table at BAR %u + %#x\n", nd.ops->name, n, m.size,
		  out[0].vector, n > 1 ? "..." : "", m.table_bar, m.table_off);
	return 0;
}

/* The INTx line after all: MSI-X left on by an earlier instance is turned off. */
static void msix_off(void)
{
	struct pci_msix m;
	if (nd.pci && pci_msix_find(&pci_kcall, nd.pci, &m) == 0)
		pci_msix_control(&pci_kcall, (uint16_t)nd.bdf, &m, false, false);
}

/* The ISA line rs gave, or polling without one. */
static void bind_line(void)
{
	if (!nd.irq) {
		ax_printf("%s: no interrupt: polling\n", nd.ops->name);
		nd.poll_mode = true;
		nd.ops->set_poll(true);
		return;
	}
	int64_t r = kcall6(KC_IRQ_BIND, nd.irq, NETDRV_IRQ_BIT, 0, 0, 0, 0);
	if (r < 0) {
		ax_printf("%s: cannot bind IRQ %u (%lld): polling\n", nd.ops->name, nd.irq, (long long)r);
		nd.poll_mode = true;
		nd.ops->set_poll(true);
		return;
	}
	irq_bound = true;
}

void nd_bind_irq(void)
{
	if (irq_bound)
		return;
	if (nd.msix_want && !msix_closed) {
		/* only before the first reset: the driver sets its device's mode there */
		msix_closed = true;
		const char *why = "msix=0";
		int64_t r = nd.no_msix ? -KE_PERM : msix_bind(&why);
		if (r == 0) {
			irq_bound = true;
			return;
		}
		msix_off();
		if (nd.no_msix)
			ax_printf("%s: msix=0: the INTx line\n", nd.ops->name);
		else
			ax_printf("%s: no MSI-X (%s, %lld): the INTx line\n", nd.ops->name, why, (long long)r);
	}
	bind_line();
}

void netdrv_msix_refused(const char *why)
{
	if (!nd.msix_nvec)
		return;
	uint16_t bdf = (uint16_t)nd.bdf;
	ax_printf("%s: the device refused MSI-X (%s): the INTx line\n", nd.ops->name, why);
	pci_msix_control(&pci_kcall, bdf, &msix_cap, false, false);
	kcall6(KC_MSI_BIND, bdf, 0, 0, 0, 0, 0);
	pci_command(&pci_kcall, bdf, 0, PCI_CMD_INTX_OFF);
	nd.msix_nvec = 0;
	nd.msix_fired = 0;
	msix_table = NULL;
	irq_bound = irq_masked = false;
	if (!nd.poll_mode)
		bind_line();
}

static bool poll(struct ax_evloop *l)
{
	(void)l;
	uint64_t now = ax_time_ns();
	if (now >= next_tick_ns) {
		next_tick_ns = now + TICK_NS;
		netdrv_link_check();
		if (!nd.poll_mode && irq_bound)
			irq_taken(); /* the safety net: a lost edge cannot stall us (rearmed below) */
	}
	if (!nd.attached) {
		if (now >= ndl.next_attach_ns)
			nd_attach();
		return false;
	}
	if (nd.deaf)
		return false;
	int work = nd.ops->harvest();
	for (unsigned q = 0; q < nd.nq && nd.attached; q++) {
		if (q) /* ip notifies us for queue q while its flag is up (the loop sleeps on queue 0's) */
			atomic_store_explicit(&ndl.q[q].down.sh->sleeping, 1, memory_order_relaxed);
		work += nd_serve_down(q);
		if (nd.attached)
			nd_rx_refill(q);
	}
	if (nd.attached)
		nd.ops->publish();
	for (unsigned q = 0; q < nd.nq && nd.attached; q++) {
		struct netdrv_qlink *l = &ndl.q[q];
		if (l->kick_ip) {
			l->kick_ip = false;
			chan_kick(&l->up, &ndl.plat);
		}
		chan_ax_watch(&l->up_w, &l->up, &ndl.plat); /* (we look every 50 ms) */
	}
	return work > 0 || (irq_bound && !nd.poll_mode && irq_rearm());
}

static void on_notify(struct ax_evloop *l, uint64_t bits)
{
	(void)l;
	uint64_t irq = bits & (nd.msix_nvec ? (NETDRV_IRQ_BIT << nd.msix_nvec) - NETDRV_IRQ_BIT : NETDRV_IRQ_BIT);
	if (irq) {
		for (unsigned i = 0; i < nd.msix_nvec; i++)
			if (irq & NETDRV_IRQ_BIT << i)
				nd.c.vec_irqs[i]++;
		nd.c.irqs++;
		nd.msix_fired |= (uint32_t)(irq / NETDRV_IRQ_BIT);
		irq_taken();
	}
	if (bits & DS_NOTIFY_BIT)
		nd_ds_changed();
}

/* ---- counters (NETQ_SHOW NQ_COUNTERS): the device's lines, then the driver's ---- */

void netdrv_irq_mode(char *out, size_t cap)
{
	if (nd.poll_mode)
		ksnprintf(out, cap, "polling mode");
	else if (nd.msix_nvec)
		ksnprintf(out, cap, "interrupt mode (MSI-X, %u vector%s)", nd.msix_nvec, nd.msix_nvec > 1 ? "s" : "");
	else
		ksnprintf(out, cap, "interrupt mode (INTx)");
}

bool netdrv_counter(uint64_t i, const char *const *names, const uint64_t *vals, size_t n, char *out, size_t cap)
{
	if (i >= n)
		return false;
	ksnprintf(out, cap, "%s %llu", names[i], (unsigned long long)vals[i]);
	return true;
}

static bool counter_line(uint64_t i, char *out, size_t cap)
{
	if (nd.ops->counter(i, out, cap))
		return true;
	uint64_t dev = 0;
	char tmp[8];
	while (nd.ops->counter(dev, tmp, sizeof(tmp)))
		dev++;
	static const char *const names[] = { "rx_frames_to_ip", "tx_frames_queued", "tx_failed", "bad_messages",
		"pool_errors", "interrupts", "resets", "msix_vectors", "link_up" };
	const struct netdrv_counters *c = &nd.c;
	const uint64_t vals[] = { c->rx_frames, c->tx_frames, c->tx_failed, c->bad_msgs, c->pool_errors, c->irqs,
		c->resets, nd.msix_nvec, nd.link };
	size_t n = sizeof(vals) / sizeof(vals[0]);
	if (i - dev < n - 1) /* (link_up stays last: the tests wait for it) */
		return netdrv_counter(i - dev, names, vals, n, out, cap);
	uint64_t v = i - dev - (n - 1); /* each vector's notifications, then link_up */
	if (v < nd.msix_nvec) {
		ksnprintf(out, cap, "vector%llu_interrupts %llu", (unsigned long long)v, (unsigned long long)c->vec_irqs[v]);
		return true;
	}
	return netdrv_counter(i - dev - nd.msix_nvec, names, vals, n, out, cap);
}

static void on_message(struct ax_evloop *l, struct kmsg *m)
{
	(void)l;
	endpoint_t from = m->source;
	if (m->type == NETQ_SHOW) {
		uint64_t topic = m->w[0], line = m->w[1];
		memset(m->w, 0, sizeof(m->w));
		if (topic != NQ_COUNTERS) {
			m->type = (uint32_t)-2; /* -ENOENT: not served here */
		} else {
			if (line == 0 && nd.ops->stats)
				nd.ops->stats();
			char text[NETQ_TEXT + 1];
			m->type = counter_line(line, text, sizeof(text)) ? NETQ_LINE : NETQ_END;
			if (m->type == NETQ_LINE)
				memcpy(m->w, text, strlen(text));
		}
	} else {
		memset(m->w, 0, sizeof(m->w));
		m->type = (uint32_t)-KE_INVAL;
	}
	ax_reply(from, m);
}

static void inject(struct ax_evloop *l, const char *word)
{
	(void)l;
	const char *name = nd.ops->name;
	if (!strcmp(word, "reset")) {
		netdrv_reattach("reset injected");
	} else if (!strcmp(word, "refuse")) {
		/* what a branch fault in the segment check did in the fault campaign: every frame
		 * ip gives is answered as bad, ip's channel moving on */
		nd.refuse = true;
		ax_printf("%s: injected fault: every frame from ip is refused\n", name);
	} else if (!strcmp(word, "deaf")) {
		/* what code faults in poll did in the fault campaign: the loop and its heartbeat
		 * run on, ip's channel and the device are no longer served */
		nd.deaf = true;
		ax_printf("%s: injected fault: ip's channel and the device are no longer served\n", name);
	} else if (!nd.ops->inject || !nd.ops->inject(word)) {
		ax_printf("%s: no injectable fault named %s\n", name, word);
	}
}

int netdrv_main(const struct netdrv_ops *ops, int argc, char **argv)
{
	ax_svc_init(argc, argv);
	nd.ops = ops;
	/* its service name: a live update may run another binary */
	ksnprintf(nd.ifname, sizeof(nd.ifname), "%s", ax_svc.label);
	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "pci=", 4) && nd.bdf < 0)
			nd.bdf = pci_parse_bdf(argv[i] + 4);
		else if (!strcmp(argv[i], "dedicated=1"))
			nd.dedicated = nd.poll_mode = true;
		else if (!strcmp(argv[i], "poll=1"))
			nd.poll_mode = true;
		else if (!strcmp(argv[i], "msix=0"))
			nd.no_msix = true;
		else if (!strncmp(argv[i], "name=", 5) && strlen(argv[i] + 5) < sizeof(nd.ifname))
			memcpy(nd.ifname, argv[i] + 5, strlen(argv[i] + 5) + 1);
	}
	if (nd.bdf < 0) {
		ax_printf("%s: no pci=BB:DD.F argument (give the service pci=VVVV:DDDD in system.conf)\n", ops->name);
		return 1;
	}
	if (ops->init(argc, argv) < 0)
		return 1;
	if (!nd.irq && !(nd.msix_want && !nd.no_msix))
		nd.poll_mode = true;
	if (!nd.poll_mode)
		nd_bind_irq();
	msix_closed = true; /* (a later switch to interrupts, ND_CONF, takes the line) */
	chan_axolotl_platform(&ndl.plat, &ndl.ipwake);
	/* restartable: the device is reset, ip's buffers and channels are ip's, ip resends */
	nd_loop = (struct ax_evloop){ .on_message = on_message, .on_notify = on_notify, .poll = poll,
				      .inject = inject, .wait_ns = WAIT_DETACHED_NS, .restartable = true };
	nd_reset();
	char k[16];
	nd_key(k, "%s.down");
	dsc_subscribe("ip", k);
	nd_key(k, "%s.up");
	dsc_subscribe("ip", k);
	nd_key(k, "rx.%s");
	dsc_subscribe("ip", k);
	ops->banner();
	nd_attach();
	return (int)ax_evloop_run(&nd_loop);
}
