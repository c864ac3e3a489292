/* The virtio 1.0 PCI transport, modern only (virtio spec §4.1): the structures the vendor
 * capabilities point at (common configuration, notification, ISR status, device
 * configuration), feature negotiation, queue set-up. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#define VIRTIO_VENDOR 0x1af4
#define VIRTIO_DEV_NET_MODERN 0x1041 /* 0x1040 + device type 1 */

#define PCI_CAP_VENDOR 0x09
/* struct virtio_pci_cap's fields, from the capability's start */
#define VCAP_CFG_TYPE 3
#define VCAP_BAR 4
#define VCAP_OFFSET 8
#define VCAP_LENGTH 12
#define VCAP_NOTIFY_MULT 16 /* notify capability only */
enum { VCFG_COMMON = 1, VCFG_NOTIFY = 2, VCFG_ISR = 3, VCFG_DEVICE = 4 };

/* Common configuration (struct virtio_pci_common_cfg). */
#define VC_DFSELECT 0x00
#define VC_DF 0x04
#define VC_GFSELECT 0x08
#define VC_GF 0x0c
#define VC_MSIX 0x10
#define VC_NUMQ 0x12
#define VC_STATUS 0x14
#define VC_CFGGEN 0x15
#define VC_Q_SELECT 0x16
#define VC_Q_SIZE 0x18
#define VC_Q_MSIX 0x1a
#define VC_Q_ENABLE 0x1c
#define VC_Q_NOFF 0x1e
#define VC_Q_DESC 0x20
#define VC_Q_DRIVER 0x28
#define VC_Q_DEVICE 0x30

/* Device status bits. */
#define VS_ACK 1
#define VS_DRIVER 2
#define VS_DRIVER_OK 4
#define VS_FEATURES_OK 8
#define VS_NEEDS_RESET 64
#define VS_FAILED 128

#define VIRTIO_F_VERSION_1 32
#define VIRTIO_NO_VECTOR 0xffff
#define VISR_QUEUE 1
#define VISR_CONFIG 2

struct virtio_pci {
	volatile uint8_t *common, *isr, *device, *notify;
	uint32_t notify_mult, notify_len;
	uint32_t device_len;
};

/* Finds the four structures through the function's vendor capabilities and maps their BARs
 * (bdf: the function, held). 0 or a negative error with *why set. */
int64_t vpci_map(uint16_t bdf, struct virtio_pci *v, const char **why);
/* Resets the device (status 0, read back until it is). */
void vpci_reset(const struct virtio_pci *v);
void vpci_status(const struct virtio_pci *v, uint8_t bits); /* ORs bits into the status */
uint8_t vpci_get_status(const struct virtio_pci *v);
/* The features the device offers. */
uint64_t vpci_device_features(const struct virtio_pci *v);
/* Offers want & what the device has (VERSION_1 required): the features agreed, or 0 if the
 * device refuses them (FEATURES_OK not kept) or lacks VERSION_1. */
uint64_t vpci_negotiate(const struct virtio_pci *v, uint64_t want, uint64_t *offered);
/* Queue q's size (clamped to max, a power of two), 0 if the queue does not exist. */
uint16_t vpci_queue_size(const struct virtio_pci *v, uint16_t q, uint16_t max);
/* Gives queue q its size, its MSI-X vector (*vector: VIRTIO_NO_VECTOR for INTx; on return
 * what the device read back, VIRTIO_NO_VECTOR if it refused the vector) and the bus
 * addresses of its parts, enables it; returns its notification address, or NULL if the
 * device places it outside the notification area. */
volatile uint16_t *vpci_queue_setup(const struct virtio_pci *v, uint16_t q, uint16_t size, uint64_t desc,
				    uint64_t avail, uint64_t used, uint16_t *vector);
/* config_msix_vector written; what the device read back (VIRTIO_NO_VECTOR: refused). */
uint16_t vpci_config_vector(const struct virtio_pci *v, uint16_t vector);
/* Reads (so acknowledges, and lowers INTx) the interrupt status. INTx only: with MSI-X
 * the vector says what happened and the register is not read. */
uint8_t vpci_isr(const struct virtio_pci *v);
