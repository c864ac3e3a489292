# drivers/ixgbe: the Intel 82576 / 82599 advanced-descriptor driver (README.md).
ixgbe_SRCS := drivers/ixgbe/ixgbe.c drivers/ixgbe/hw.c drivers/ixgbe/rings.c drivers/ixgbe/chip.c
ixgbe_CFLAGS := -Ilib/net -Ilib/pci -Ilib/netdrv -Idrivers/ixgbe -Idrivers/e1000
# lib/pci and lib/netdrv (their build.mk are included after this file, so their objects are
# named here)
ixgbe_EXTRA_OBJS := $(B)/obj/pci/pci.o $(B)/obj/pci/pci_axolotl.o \
	$(patsubst lib/netdrv/%.c,$(B)/obj/netdrv/%.o,$(wildcard lib/netdrv/*.c))
$(eval $(call native_prog,ixgbe))
# tests/unit/test_ixgbe_model.c: the chip table and the descriptors against a register model
UNIT_EXTRA_SRCS += drivers/ixgbe/chip.c
UNIT_EXTRA_HDRS += drivers/ixgbe/chip.h drivers/ixgbe/ix_regs.h drivers/ixgbe/desc.h lib/netdrv/msix_map.h
# (-iquote: only lib/netdrv/msix_map.h is meant, the pure vector rule chip.c includes)
UNIT_EXTRA_CFLAGS += -Idrivers/ixgbe -iquote lib/netdrv
