/* virtio-net: the driver of virtio 1.0 network devices on PCI (QEMU's `virtio-net-pci`,
 * modern: `disable-legacy=on`, id 1af4:1041), a native server run by rs with
 * `pci=1af4:1041`. lib/netdrv serves ip (lib/net/netdev_proto.h) and runs the loop; this
 * file gives it the device: set-up and reset with feature negotiation, MAC and link from the
 * device configuration, the interrupt status, counters. README.md.
 *   virtio-net pci=BB:DD.F [dedicated=1] [poll=1] [name=IF] [restarted=N] [hb=H] */
#include "vnet.h"
#include "pci_axolotl.h"
#include "service.h"

struct vnet vn;

#define WANT ((1ull << VIRTIO_F_VERSION_1) | (1ull << VNET_F_MAC) | (1ull << VNET_F_STATUS) | \
	      (1ull << VNET_F_CSUM) | (1ull << VNET_F_GUEST_CSUM))

static int64_t fail(const char *what, int64_t e)
{
	ax_printf("virtio-net: %s (%lld)\n", what, (long long)e);
	return e < 0 ? e : -KE_INVAL;
}

static uint8_t cfg8(uint32_t off) { return *(volatile uint8_t *)(vn.pci.device + off); }

static int64_t init(int argc, char **argv)
{
	(void)argc, (void)argv;
	const char *why;
	struct pci_func f;
	int64_t r = pci_read_func(&pci_kcall, (uint16_t)nd.bdf, &f);
	if (r < 0)
		return fail("cannot read its PCI function", r);
	nd.irq = f.int_pin && f.int_line >= 1 && f.int_line <= 15 ? f.int_line : 0;
	if ((r = vpci_map((uint16_t)nd.bdf, &vn.pci, &why)) < 0)
		return fail(why, r);
	vn.mem_h = ax_mo_create(VNET_PAGES, MOF_DMA);
	int64_t va = vn.mem_h > 0 ? ax_mo_map(vn.mem_h, 0, 0, VNET_PAGES, KP_R | KP_W) : vn.mem_h;
	int64_t p0 = va > 0 ? kcall2(KC_MO_PHYS, (uint64_t)vn.mem_h, 0) : va;
	int64_t pl = p0 > 0 ? kcall2(KC_MO_PHYS, (uint64_t)vn.mem_h, VNET_PAGES - 1) : p0;
	if (pl < 0 || pl != p0 + (VNET_PAGES - 1) * 4096)
		return fail("cannot make its queues (DMA memory)", pl < 0 ? pl : -KE_INVAL);
	vn.mem = (uint8_t *)va;
	vn.mem_bus = (uint64_t)p0;
	vn.rx_hdr = (volatile struct vnet_hdr *)(vn.mem + 6 * 4096);
	vn.tx_hdr = (volatile struct vnet_hdr *)(vn.mem + 7 * 4096);
	vn.rx_hdr_bus = vn.mem_bus + 6 * 4096;
	vn.tx_hdr_bus = vn.mem_bus + 7 * 4096;
	return 0;
}

static void set_poll(bool poll)
{
	/* VIRTQ_AVAIL_F_NO_INTERRUPT: a hint the device may ignore (the line is not bound then) */
	for (int i = 0; i < 2; i++)
		if (vn.q[i].avail)
			vn.q[i].avail->flags = poll ? 1 : 0;
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

/* Queue i over its three pages of our memory; false if the device refuses it. */
static bool queue_setup(int i)
{
	uint16_t n = vpci_queue_size(&vn.pci, (uint16_t)i, VQ_MAX);
	uint8_t *base = vn.mem + (uint64_t)i * 3 * 4096;
	uint64_t bus = vn.mem_bus + (uint64_t)i * 3 * 4096;
	if (n < 2 || virtq_init(&vn.q[i], n, base, base + 4096, base + 8192) != VQ_OK)
		return false;
	vn.doorbell[i] = vpci_queue_setup(&vn.pci, (uint16_t)i, n, bus, bus + 4096, bus + 8192);
	return vn.doorbell[i] != NULL;
}

/* Device reset and initialisation (virtio spec §3.1.1): reset, ACKNOWLEDGE, DRIVER,
 * features, FEATURES_OK, queues, DRIVER_OK. Every buffer of the previous set-up is
 * forgotten: ip takes them back on ND_RESET. */
static void reset(void)
{
	vpci_reset(&vn.pci);
	vpci_status(&vn.pci, VS_ACK);
	vpci_status(&vn.pci, VS_DRIVER);
	vn.features = vpci_negotiate(&vn.pci, WANT, &vn.offered);
	if (!vn.features)
		give_up("the device does not offer VIRTIO_F_VERSION_1 or refuses our features");
	if (vn.features & (1ull << VNET_F_MAC))
		read_mac();
	else if (!nd.mac[0] && !nd.mac[1]) /* none from the device: a fixed local address */
		memcpy(nd.mac, (uint8_t[6]){ 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 }, 6);
	if (!queue_setup(RXQ) || !queue_setup(TXQ))
		give_up("the device refuses its queues");
	set_poll(nd.poll_mode);
	vpci_status(&vn.pci, VS_DRIVER_OK);
	if (vpci_get_status(&vn.pci) & VS_NEEDS_RESET)
		give_up("the device needs a reset right after its set-up");
	(void)vpci_isr(&vn.pci); /* a stale interrupt of the previous set-up */
	nd.caps = (vn.features & (1ull << VNET_F_CSUM)) ? NDF_TX_CSUM_L4 : 0;
	nd.link = link();
}

static uint32_t irq_ack(bool *link_event)
{
	uint8_t isr = vpci_isr(&vn.pci);
	*link_event = (isr & VISR_CONFIG) != 0;
	return isr;
}

static bool counter(uint64_t i, char *out, size_t cap)
{
	const struct vnet_counters *c = &vn.c;
	static const char *const names[] = { "rx_packets", "rx_bytes", "tx_packets", "tx_bytes", "rx_drops",
		"rx_bad_length", "rx_csum_ok", "device_errors", "features" };
	const uint64_t vals[] = { c->rx_packets, c->rx_bytes, c->tx_packets, c->tx_bytes, nd.c.rx_dropped,
		c->rx_bad_len, c->rx_csum_ok, c->device_errors, vn.features };
	return netdrv_counter(i, names, vals, sizeof(vals) / sizeof(vals[0]), out, cap);
}

static void banner(void)
{
	uint16_t bdf = (uint16_t)nd.bdf;
	ax_printf("virtio-net: at %02x:%02x.%x, MAC %02x:%02x:%02x:%02x:%02x:%02x, IRQ %u, %s mode, link %s, "
		  "queues %u/%u, features %#llx of %#llx, checksum offload %s, restart %u\n",
		  PCI_BUS(bdf), PCI_DEV(bdf), PCI_FN(bdf), nd.mac[0], nd.mac[1], nd.mac[2], nd.mac[3], nd.mac[4],
		  nd.mac[5], nd.irq, nd.poll_mode ? "polling" : "interrupt", nd.link ? "up" : "down", vn.q[RXQ].size,
		  vn.q[TXQ].size, (unsigned long long)vn.features, (unsigned long long)vn.offered,
		  nd.caps ? "tx" : "none", ax_svc.restarts);
}

static const struct netdrv_ops ops = {
	.name = "virtio-net", .init = init, .reset = reset, .set_poll = set_poll, .link = link,
	.irq_ack = irq_ack, .tx = vnet_tx, .rx_room = rx_room, .rx_post = rx_post, .harvest = vnet_harvest,
	.publish = vnet_publish, .counter = counter, .banner = banner,
};

int main(int argc, char **argv) { return netdrv_main(&ops, argc, argv); }
