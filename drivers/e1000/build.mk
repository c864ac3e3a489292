# drivers/e1000: the Intel 82540EM / 82574 driver (README.md).
e1000_SRCS := drivers/e1000/e1000.c drivers/e1000/hw.c drivers/e1000/rings.c
e1000_CFLAGS := -Ilib/net -Ilib/pci -Ilib/netdrv -Idrivers/e1000
# lib/pci and lib/netdrv (their build.mk are included after this file, so their objects are
# named here)
e1000_EXTRA_OBJS := $(B)/obj/pci/pci.o $(B)/obj/pci/pci_axolotl.o \
	$(patsubst lib/netdrv/%.c,$(B)/obj/netdrv/%.o,$(wildcard lib/netdrv/*.c))
$(eval $(call native_prog,e1000))
# tests/unit/test_e1k_stat.c: the statistics registers' arithmetic (e1k_stat.h, header only)
UNIT_EXTRA_HDRS += drivers/e1000/e1k_stat.h
UNIT_EXTRA_CFLAGS += -Idrivers/e1000
