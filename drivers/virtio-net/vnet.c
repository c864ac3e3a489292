/* virtio-net: the driver of virtio 1.0 network devices on PCI (QEMU's `virtio-net-pci`,
 * modern: `disable-legacy=on`, id 1af4:1041), a native server run by rs with
 * `pci=1af4:1041`. lib/netdrv serves ip (lib/net/netdev_proto.h) and runs the loop; this
 * file gives it the device: set-up and reset with feature negotiation, the queue pairs and
 * the control queue that says how many run (VIRTIO_NET_F_MQ), MAC and link from the device
 * configuration, the interrupts (an MSI-X vector per pair and one for the configuration and
 * the control queue, or INTx and the interrupt status), counters. README.md.
 *   virtio-net pci=BB:DD.F [queues=N] [msix=0] [dedicated=1] [poll=1] [name=IF] [restarted=N] [hb=H] */
#include "vnet.h"
#include "pci_axolotl.h"
#include "service.h"
#include "heartbeat.h"

struct vnet vn;

#define WANT ((1ull << VIRTIO_F_VERSION_1) | (1ull << VNET_F_MAC) | (1ull << VNET_F_STATUS) | \
	      (1ull << VNET_F_CSUM) | (1ull << VNET_F_GUEST_CSUM))
#define MQ ((1ull << VNET_F_MQ) | (1ull << VNET_F_CTRL_VQ)) /* both or neither */

static int64_t fail(const char *what, int64_t e)
{
	ax_printf("virtio-net: %s (%lld)\n", what, (long long)e);
	return e < 0 ? e : -KE_INVAL;
}

static uint8_t cfg8(uint32_t off) { return *(volatile uint8_t *)(vn.pci.device + off); }

/* pages of MOF_DMA memory, contiguous (first and last page checked): its handle, mapping
 * and bus address; false if there is none. */
static bool dma_pages(uint64_t pages, int64_t *h, uint8_t **mem, uint64_t *bus)
{
	*h = ax_mo_create(pages, MOF_DMA);
	int64_t va = *h > 0 ? ax_mo_map(*h, 0, 0, pages, KP_R | KP_W) : *h;
	int64_t p0 = va > 0 ? kcall2(KC_MO_PHYS, (uint64_t)*h, 0) : va;
	int64_t pl = p0 > 0 ? kcall2(KC_MO_PHYS, (uint64_t)*h, pages - 1) : p0;
	if (pl < 0 || pl != p0 + (int64_t)(pages - 1) * 4096)
		return false;
	*mem = (uint8_t *)va;
	*bus = (uint64_t)p0;
	return true;
}

/* max_virtqueue_pairs, read before the features are agreed (virtio 1.0 §3.1.1 allows it):
 * 1 unless the device offers MQ and the control queue it needs. */
static uint16_t device_pairs(void)
{
	if ((vn.offered & MQ) != MQ || vn.pci.device_len < VNET_CFG_MAX_PAIRS + 2)
		return 1;
	uint16_t n = (uint16_t)(cfg8(VNET_CFG_MAX_PAIRS) | cfg8(VNET_CFG_MAX_PAIRS + 1) << 8);
	return n < VNET_CTRL_MQ_PAIRS_MIN || n > VNET_CTRL_MQ_PAIRS_MAX ? 1 : n;
}

static int64_t init(int argc, char **argv)
{
	unsigned want = VNET_DEF_PAIRS; /* queues=N */
	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], "queues=", 7))
			want = (unsigned)ax_atou(argv[i] + 7);
	if (want < 1 || want > NETDEV_MAXQ)
		return fail("queues= is 1..8", -KE_INVAL);
	const char *why;
	struct pci_func f;
	int64_t r = pci_read_func(&pci_kcall, (uint16_t)nd.bdf, &f);
	if (r < 0)
		return fail("cannot read its PCI function", r);
	nd.irq = f.int_pin && f.int_line >= 1 && f.int_line <= 15 ? f.int_line : 0;
	vn.func = f;
	nd.pci = &vn.func; /* lib/netdrv finds the MSI-X table there */
	if ((r = vpci_map((uint16_t)nd.bdf, &vn.pci, &why)) < 0)
		return fail(why, r);
	vn.offered = vpci_device_features(&vn.pci);
	vn.dev_pairs = device_pairs();
	vn.npairs = vn.dev_pairs < want ? vn.dev_pairs : want;
	nd.max_queues = vn.npairs; /* ip's offer decides how many of them run (set_queues) */
	nd.msix_want = NETDRV_MSIX_WANT(vn.npairs); /* a vector per pair, one for config and ctrl */
	for (unsigned pi = 0; pi < vn.npairs; pi++) {
		struct vnet_pair *vp = &vn.p[pi];
		if (!dma_pages(VNET_PAIR_PAGES, &vp->mem_h, &vp->mem, &vp->mem_bus))
			return fail("cannot make its queues (DMA memory)", -KE_NOMEM);
		vp->rx_hdr = (volatile struct vnet_hdr *)(vp->mem + 6 * 4096);
		vp->tx_hdr = (volatile struct vnet_hdr *)(vp->mem + 7 * 4096);
		vp->rx_hdr_bus = vp->mem_bus + 6 * 4096;
		vp->tx_hdr_bus = vp->mem_bus + 7 * 4096;
	}
	if (vn.npairs > 1 && !dma_pages(1, &vn.ctrl_h, &vn.ctrl_mem, &vn.ctrl_bus))
		return fail("cannot make its control queue (DMA memory)", -KE_NOMEM);
	return 0;
}

static void set_poll(bool poll)
{
	/* VIRTQ_AVAIL_F_NO_INTERRUPT: a hint the device may ignore (the line is not bound then) */
	for (unsigned pi = 0; pi < vn.npairs; pi++) {
		if (vn.p[pi].rx.avail)
			vn.p[pi].rx.avail->flags = poll ? 1 : 0;
		if (vn.p[pi].tx.avail)
			vn.p[pi].tx.avail->flags = poll ? 1 : 0;
	}
}

static bool link(void)
{
	if (!(vn.features & (1ull << VNET_F_STATUS)))
		return true;
	uint16_t s = (uint16_t)(cfg8(VNET_CFG_STATUS) | cfg8(VNET_CFG_STATUS + 1) << 8);
	return (s & VNET_S_LINK_UP) != 0;
}

static void read_mac(void)
{
	uint8_t gen;
	do {
		gen = *(volatile uint8_t *)(vn.pci.common + VC_CFGGEN);
		for (int i = 0; i < 6; i++)
			nd.mac[i] = cfg8(VNET_CFG_MAC + (uint32_t)i);
	} while (gen != *(volatile uint8_t *)(vn.pci.common + VC_CFGGEN));
}

/* A device that cannot be driven: a clear line and the end of this instance (rs restarts
 * it, backing off if it keeps failing). */
static void give_up(const char *why)
{
	ax_printf("virtio-net: %s: the device is marked failed\n", why);
	vpci_status(&vn.pci, VS_FAILED);
	ax_exit(1);
}

/* The MSI-X vector (table entry) v, or NO_VECTOR with INTx. */
static uint16_t vector(uint32_t v) { return nd.msix_nvec ? (uint16_t)v : VIRTIO_NO_VECTOR; }

/* A vector the device read back as something else than it was given: it refused it (the
 * first refusal is kept for the log line). */
static void vector_check(const char *what, uint16_t want, uint16_t got)
{
	if (got != want && !vn.vec_refused[0])
		ksnprintf(vn.vec_refused, sizeof(vn.vec_refused), "%s vector %u read back as %#x", what, want, got);
}

/* Virtqueue idx (at most max entries) over desc, avail and used of our memory at va/bus,
 * interrupting through MSI-X vector vec (NO_VECTOR: INTx); its doorbell, NULL if the device
 * refuses it. */
static volatile uint16_t *queue_setup(struct virtq *q, uint16_t idx, uint16_t max, uint8_t *va, uint64_t bus,
				      uint32_t avail_off, uint32_t used_off, uint16_t vec)
{
	uint16_t n = vpci_queue_size(&vn.pci, idx, max), got = vec;
	if (n < 2 || virtq_init(q, n, va, va + avail_off, va + used_off) != VQ_OK)
		return NULL;
	volatile uint16_t *bell = vpci_queue_setup(&vn.pci, idx, n, bus, bus + avail_off, bus + used_off, &got);
	vector_check("a queue's", vec, got);
	return bell;
}

/* Pair pi: receiveq (virtqueue 2 pi) over its first three pages, transmitq (2 pi + 1) over
 * the next three, both on the pair's MSI-X vector; false if the device refuses either. */
static bool pair_setup(unsigned pi)
{
	struct vnet_pair *vp = &vn.p[pi];
	uint16_t vec = vector(netdrv_msix_qvec(nd.msix_nvec, pi));
	vp->rx_bell = queue_setup(&vp->rx, (uint16_t)(2 * pi), VQ_MAX, vp->mem, vp->mem_bus, 4096, 8192, vec);
	vp->tx_bell = queue_setup(&vp->tx, (uint16_t)(2 * pi + 1), VQ_MAX, vp->mem + 3 * 4096,
				  vp->mem_bus + 3 * 4096, 4096, 8192, vec);
	return vp->rx_bell && vp->tx_bell;
}

/* The control queue, virtqueue 2 * max_virtqueue_pairs, in its one page: the table at 0,
 * the available ring at 256, the used ring at 512, the command at 1024. Polled: the device
 * is asked not to interrupt for it (its vector is the configuration's all the same). */
#define CTRL_CMD_OFF 1024
static bool ctrl_setup(void)
{
	_Static_assert(VQ_DESC_BYTES(VNET_CTRL_SIZE) <= 256 && VQ_AVAIL_BYTES(VNET_CTRL_SIZE) <= 256 &&
		       512 + VQ_USED_BYTES(VNET_CTRL_SIZE) <= CTRL_CMD_OFF, "the control queue's page");
	vn.ctrl_bell = queue_setup(&vn.ctrl, (uint16_t)(2 * vn.dev_pairs), VNET_CTRL_SIZE, vn.ctrl_mem, vn.ctrl_bus,
				   256, 512, vector(netdrv_msix_other(nd.msix_nvec)));
	if (!vn.ctrl_bell || vn.ctrl.size < 4)
		return false;
	vn.ctrl.avail->flags = 1; /* VIRTQ_AVAIL_F_NO_INTERRUPT */
	vn.cmd = (volatile struct vnet_ctrl_cmd *)(vn.ctrl_mem + CTRL_CMD_OFF);
	return true;
}

/* Device reset and initialisation (virtio spec §3.1.1): reset, ACKNOWLEDGE, DRIVER,
 * features, FEATURES_OK, the configuration's MSI-X vector, queues, DRIVER_OK. Every buffer
 * of the previous set-up is forgotten: ip takes them back on ND_RESET. A vector the device
 * refuses (read back as NO_VECTOR: it would never interrupt for that queue) turns MSI-X off
 * for good and the set-up runs again on the INTx line. */
static void reset(void)
{
again:
	vpci_reset(&vn.pci);
	vpci_status(&vn.pci, VS_ACK);
	vpci_status(&vn.pci, VS_DRIVER);
	vn.features = vpci_negotiate(&vn.pci, vn.npairs > 1 ? WANT | MQ : WANT, &vn.offered);
	if (!vn.features)
		give_up("the device does not offer VIRTIO_F_VERSION_1 or refuses our features");
	if (vn.features & (1ull << VNET_F_MAC))
		read_mac();
	else if (!nd.mac[0] && !nd.mac[1]) /* none from the device: a fixed local address */
		memcpy(nd.mac, (uint8_t[6]){ 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 }, 6);
	vn.vec_refused[0] = 0;
	if (nd.msix_nvec) {
		/* (`service inject virtio-net badvector`: one past any table, which the device refuses) */
		uint16_t want = vn.bad_vector ? VIRTIO_NO_VECTOR - 1 : vector(netdrv_msix_other(nd.msix_nvec));
		vector_check("the configuration", want, vpci_config_vector(&vn.pci, want));
	}
	vn.active = 1; /* the device uses the first pair until told more (§5.1.6.5.5) */
	for (unsigned pi = 0; pi < vn.npairs; pi++)
		if (!pair_setup(pi))
			give_up("the device refuses its queues");
	vn.ctrl_ok = (vn.features & MQ) == MQ && ctrl_setup();
	if ((vn.features & MQ) == MQ && !vn.ctrl_ok)
		ax_printf("virtio-net: the device refuses its control queue: one queue pair\n");
	if (nd.msix_nvec && vn.vec_refused[0]) {
		vn.bad_vector = false;
		netdrv_msix_refused(vn.vec_refused); /* (nd.msix_nvec 0 from here) */
		goto again;
	}
	set_poll(nd.poll_mode);
	vpci_status(&vn.pci, VS_DRIVER_OK);
	if (vpci_get_status(&vn.pci) & VS_NEEDS_RESET)
		give_up("the device needs a reset right after its set-up");
	if (!nd.msix_nvec)
		(void)vpci_isr(&vn.pci); /* a stale interrupt of the previous set-up */
	nd.caps = (vn.features & (1ull << VNET_F_CSUM)) ? NDF_TX_CSUM_L4 : 0;
	nd.link = link();
}

/* ip offers n pairs (lib/netdrv, at each attach after the reset): the device is told through
 * the control queue and spreads received flows over n receive queues once it says OK. Its
 * answer is polled, at most VNET_CTRL_WAIT_NS; no answer, a refusal or a used element it could
 * not have written leaves it on one pair. Returns the pairs it runs (ND_RESET tells ip). */
static unsigned set_queues(unsigned n)
{
	vn.active = 1;
	if (!vn.ctrl_ok || n <= 1)
		return 1;
	const char *why = NULL;
	if (vnet_ctrl_mq_pairs(&vn.ctrl, vn.cmd, vn.ctrl_bus + CTRL_CMD_OFF, (uint16_t)n) != VQ_OK) {
		why = "a command is still in flight";
	} else {
		if (virtq_publish(&vn.ctrl))
			*vn.ctrl_bell = (uint16_t)(2 * vn.dev_pairs);
		uint64_t deadline = ax_time_ns() + VNET_CTRL_WAIT_NS;
		int a;
		while ((a = vnet_ctrl_answer(&vn.ctrl, vn.cmd)) == VNET_CTRL_WAIT && ax_time_ns() < deadline) {
			ax_heartbeat(); /* (waiting for the device is not hanging) */
			__asm__ volatile("pause");
		}
		if (a == VNET_CTRL_DONE)
			vn.active = n;
		why = a == VNET_CTRL_DONE	? NULL
		      : a == VNET_CTRL_WAIT	? "no answer"
		      : a == VNET_CTRL_REFUSED ? "refused"
					       : "an impossible used element";
		if (a == VNET_CTRL_BAD)
			vn.ctrl_ok = false; /* not used again before the next reset */
	}
	if (why) {
		vn.c.ctrl_errors++;
		ax_printf("virtio-net: the device did not take %u queue pairs (%s): one queue pair\n", n, why);
	}
	return vn.active;
}

/* MSI-X: the vectors that fired say it all (the configuration's: maybe the link), the ISR
 * status is not read. INTx: the ISR status, read to lower the line. */
static uint32_t irq_ack(bool *link_event)
{
	if (nd.msix_nvec) {
		*link_event = (nd.msix_fired >> netdrv_msix_other(nd.msix_nvec)) & 1;
		return nd.msix_fired;
	}
	uint8_t isr = vpci_isr(&vn.pci);
	*link_event = (isr & VISR_CONFIG) != 0;
	return isr;
}

static bool counter(uint64_t i, char *out, size_t cap)
{
	const struct vnet_counters *c = &vn.c;
	static const char *const names[] = { "rx_packets", "rx_bytes", "tx_packets", "tx_bytes", "rx_drops",
		"rx_bad_length", "rx_csum_ok", "rx_csum_partial", "device_errors", "features", "queues", "ctrl_errors" };
	const uint64_t vals[] = { c->rx_packets, c->rx_bytes, c->tx_packets, c->tx_bytes, nd.c.rx_dropped,
		c->rx_bad_len, c->rx_csum_ok, c->rx_csum_partial, c->device_errors, vn.features, vn.active, c->ctrl_errors };
	return netdrv_counter(i, names, vals, sizeof(vals) / sizeof(vals[0]), out, cap);
}

/* Faults of our own (`service inject virtio-net WORD`, lib/netdrv's inject): badvector
 * programs the configuration's MSI-X vector past any table at the next reset (done here),
 * so the device refuses it and the driver falls back to INTx (tests). */
static bool inject(const char *word)
{
	if (strcmp(word, "badvector"))
		return false;
	vn.bad_vector = true;
	netdrv_reattach("a configuration vector past the MSI-X table injected");
	return true;
}

static void banner(void)
{
	uint16_t bdf = (uint16_t)nd.bdf;
	char how[48];
	netdrv_irq_mode(how, sizeof(how));
	ax_printf("virtio-net: at %02x:%02x.%x, MAC %02x:%02x:%02x:%02x:%02x:%02x, IRQ %u, %s, link %s, "
		  "queues %u/%u, features %#llx of %#llx, checksum offload %s, pairs %u of %u, restart %u\n",
		  PCI_BUS(bdf), PCI_DEV(bdf), PCI_FN(bdf), nd.mac[0], nd.mac[1], nd.mac[2], nd.mac[3], nd.mac[4],
		  nd.mac[5], nd.irq, how, nd.link ? "up" : "down", vn.p[0].rx.size,
		  vn.p[0].tx.size, (unsigned long long)vn.features, (unsigned long long)vn.offered,
		  nd.caps ? "tx" : "none", vn.npairs, vn.dev_pairs, ax_svc.restarts);
}

static const struct netdrv_ops ops = {
	.name = "virtio-net", .init = init, .reset = reset, .set_poll = set_poll, .link = link,
	.irq_ack = irq_ack, .tx = vnet_tx, .rx_room = rx_room, .rx_post = rx_post, .harvest = vnet_harvest,
	.set_queues = set_queues, .publish = vnet_publish, .counter = counter, .banner = banner, .inject = inject,
};

int main(int argc, char **argv) { return netdrv_main(&ops, argc, argv); }
