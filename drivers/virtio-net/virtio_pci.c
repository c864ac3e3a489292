/* The virtio 1.0 modern PCI transport (virtio_pci.h). */
#include "axrt.h"
#include "pci_axolotl.h"
#include "virtio_pci.h"

#define R8(p, o) (*(volatile uint8_t *)((p) + (o)))
#define R16(p, o) (*(volatile uint16_t *)((p) + (o)))
#define R32(p, o) (*(volatile uint32_t *)((p) + (o)))

static int64_t cfg(uint16_t bdf, uint8_t off, uint32_t width) { return pci_kcall.read(pci_kcall.ctx, bdf, off, width); }

/* Maps [off, off+len) of a memory BAR; its virtual address or a negative error. Each BAR is
 * mapped once, whole (the structures usually share one). */
static int64_t bar_map(const struct pci_func *f, uint8_t bar, uint32_t off, uint32_t len, int64_t *mapped)
{
	if (bar >= PCI_MAX_BARS || f->bar[bar].kind != PCI_BAR_MEM || !f->bar[bar].size ||
	    (uint64_t)off + len > f->bar[bar].size)
		return -KE_INVAL;
	if (!mapped[bar]) {
		uint64_t pa = f->bar[bar].base & ~0xfffull;
		uint64_t pages = (f->bar[bar].base + f->bar[bar].size - pa + 4095) / 4096;
		int64_t va = kcall6(KC_MMIO_MAP, pa, pages, 0, 0, 0, 0);
		if (va < 0)
			return va;
		mapped[bar] = va + (int64_t)(f->bar[bar].base & 0xfff);
	}
	return mapped[bar] + off;
}

int64_t vpci_map(uint16_t bdf, struct virtio_pci *v, const char **why)
{
	struct pci_func f;
	int64_t r = pci_read_func(&pci_kcall, bdf, &f), mapped[PCI_MAX_BARS] = { 0 };
	*why = "cannot read its PCI function";
	if (r < 0)
		return r;
	*why = "not a modern virtio network device (1af4:1041)";
	if (f.vendor != VIRTIO_VENDOR || f.device != VIRTIO_DEV_NET_MODERN)
		return -KE_INVAL;
	memset(v, 0, sizeof(*v));
	for (int i = 0; i < f.ncaps; i++) {
		if (f.cap[i].id != PCI_CAP_VENDOR)
			continue;
		uint8_t c = f.cap[i].off;
		int64_t type = cfg(bdf, c + VCAP_CFG_TYPE, 1), bar = cfg(bdf, c + VCAP_BAR, 1);
		int64_t off = cfg(bdf, c + VCAP_OFFSET, 4), len = cfg(bdf, c + VCAP_LENGTH, 4);
		if (type < 0 || bar < 0 || off < 0 || len < 0)
			continue;
		volatile uint8_t **slot = type == VCFG_COMMON ? &v->common : type == VCFG_NOTIFY ? &v->notify
					: type == VCFG_ISR    ? &v->isr
					: type == VCFG_DEVICE ? &v->device
							      : NULL;
		if (!slot || *slot) /* another kind (PCI cfg access), or a second of one: the first wins */
			continue;
		if (type == VCFG_COMMON && len < 0x38)
			continue;
		int64_t va = bar_map(&f, (uint8_t)bar, (uint32_t)off, (uint32_t)len, mapped);
		if (va < 0)
			continue;
		*slot = (volatile uint8_t *)va;
		if (type == VCFG_DEVICE)
			v->device_len = (uint32_t)len;
		if (type == VCFG_NOTIFY) {
			int64_t m = cfg(bdf, c + VCAP_NOTIFY_MULT, 4);
			v->notify_mult = m > 0 ? (uint32_t)m : 0;
			v->notify_len = (uint32_t)len;
		}
	}
	*why = "a virtio structure is missing (common, notify, ISR or device configuration)";
	if (!v->common || !v->notify || !v->isr || !v->device || v->device_len < 8)
		return -KE_INVAL;
	*why = "cannot enable the function";
	/* Memory decode and bus mastering on, INTx allowed (lib/netdrv turns it off when it
	 * enables MSI-X, after init). */
	return pci_command(&pci_kcall, bdf, PCI_CMD_MEM | PCI_CMD_MASTER, PCI_CMD_INTX_OFF);
}

void vpci_reset(const struct virtio_pci *v)
{
	R8(v->common, VC_STATUS) = 0;
	for (int i = 0; i < 100000 && R8(v->common, VC_STATUS); i++)
		__asm__ volatile("pause");
}

void vpci_status(const struct virtio_pci *v, uint8_t bits) { R8(v->common, VC_STATUS) |= bits; }

uint8_t vpci_get_status(const struct virtio_pci *v) { return R8(v->common, VC_STATUS); }

uint64_t vpci_device_features(const struct virtio_pci *v)
{
	uint64_t dev = 0;
	for (uint32_t w = 0; w < 2; w++) {
		R32(v->common, VC_DFSELECT) = w;
		dev |= (uint64_t)R32(v->common, VC_DF) << (32 * w);
	}
	return dev;
}

uint64_t vpci_negotiate(const struct virtio_pci *v, uint64_t want, uint64_t *offered)
{
	uint64_t dev = vpci_device_features(v);
	*offered = dev;
	uint64_t agreed = dev & want;
	if (!(agreed & (1ull << VIRTIO_F_VERSION_1)))
		return 0;
	for (uint32_t w = 0; w < 2; w++) {
		R32(v->common, VC_GFSELECT) = w;
		R32(v->common, VC_GF) = (uint32_t)(agreed >> (32 * w));
	}
	vpci_status(v, VS_FEATURES_OK);
	return (vpci_get_status(v) & VS_FEATURES_OK) ? agreed : 0;
}

uint16_t vpci_queue_size(const struct virtio_pci *v, uint16_t q, uint16_t max)
{
	R16(v->common, VC_Q_SELECT) = q;
	uint16_t n = R16(v->common, VC_Q_SIZE);
	if (n > max)
		n = max;
	while (n & (n - 1)) /* a power of two, as the split ring's index arithmetic wants */
		n &= (uint16_t)(n - 1);
	return n;
}

volatile uint16_t *vpci_queue_setup(const struct virtio_pci *v, uint16_t q, uint16_t size, uint64_t desc,
				    uint64_t avail, uint64_t used, uint16_t *vector)
{
	volatile uint8_t *c = v->common;
	R16(c, VC_Q_SELECT) = q;
	R16(c, VC_Q_SIZE) = size;
	R16(c, VC_Q_MSIX) = *vector;
	*vector = R16(c, VC_Q_MSIX); /* (virtio 1.0 §4.1.5.1.2: NO_VECTOR when it cannot) */
	R32(c, VC_Q_DESC) = (uint32_t)desc;
	R32(c, VC_Q_DESC + 4) = (uint32_t)(desc >> 32);
	R32(c, VC_Q_DRIVER) = (uint32_t)avail;
	R32(c, VC_Q_DRIVER + 4) = (uint32_t)(avail >> 32);
	R32(c, VC_Q_DEVICE) = (uint32_t)used;
	R32(c, VC_Q_DEVICE + 4) = (uint32_t)(used >> 32);
	uint64_t at = (uint64_t)R16(c, VC_Q_NOFF) * v->notify_mult;
	if (at + 2 > v->notify_len)
		return NULL; /* the device names a doorbell outside its notification area */
	R16(c, VC_Q_ENABLE) = 1;
	return (volatile uint16_t *)(v->notify + at);
}

uint16_t vpci_config_vector(const struct virtio_pci *v, uint16_t vector)
{
	R16(v->common, VC_MSIX) = vector;
	return R16(v->common, VC_MSIX);
}

uint8_t vpci_isr(const struct virtio_pci *v) { return R8(v->isr, 0); }
