# rs's own rules are in the top Makefile (RS_OBJS); it also links lib/pci to resolve
# `pci=VENDOR:DEVICE` services (rs_pci.c). RS_OBJS is expanded when rs is linked, so adding
# to it here is enough.
RS_OBJS += $(B)/user/rs_pci.o $(PCI_OBJS)
$(B)/user/rs: $(B)/user/rs_pci.o $(PCI_OBJS)
$(B)/user/rs_pci.o: UCFLAGS += -Ilib/pci
