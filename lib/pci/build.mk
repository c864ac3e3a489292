# lib/pci: built once for Axolotl programs (PCI_OBJS, linked by rs and the NIC drivers) and
# into the host unit tests (the portable part, pci.c).
PCI_OBJS := $(B)/obj/pci/pci.o $(B)/obj/pci/pci_axolotl.o
$(PCI_OBJS): $(B)/obj/pci/%.o: lib/pci/%.c $(B)/kflags
	@mkdir -p $(dir $@)
	$(CC) $(UCFLAGS) -Ilib/pci -c $< -o $@
UNIT_EXTRA_SRCS += lib/pci/pci.c
UNIT_EXTRA_HDRS += lib/pci/pci.h
UNIT_EXTRA_CFLAGS += -Ilib/pci
