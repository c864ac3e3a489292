# drivers/virtio-net: the virtio 1.0 network driver (README.md).
virtio-net_SRCS := drivers/virtio-net/vnet.c drivers/virtio-net/rxtx.c drivers/virtio-net/virtio_pci.c \
	drivers/virtio-net/virtq.c drivers/virtio-net/ctrlq.c
virtio-net_CFLAGS := -Ilib/net -Ilib/pci -Ilib/netdrv -Idrivers/virtio-net
# lib/pci and lib/netdrv (their build.mk are included after this file, so their objects are
# named here)
virtio-net_EXTRA_OBJS := $(B)/obj/pci/pci.o $(B)/obj/pci/pci_axolotl.o \
	$(patsubst lib/netdrv/%.c,$(B)/obj/netdrv/%.o,$(wildcard lib/netdrv/*.c))
$(eval $(call native_prog,virtio-net))
# tests/unit/test_virtq.c: the split virtqueue and the control queue's command (portable C)
UNIT_EXTRA_SRCS += drivers/virtio-net/virtq.c drivers/virtio-net/ctrlq.c
UNIT_EXTRA_HDRS += drivers/virtio-net/virtq.h drivers/virtio-net/ctrlq.h
UNIT_EXTRA_CFLAGS += -Idrivers/virtio-net
