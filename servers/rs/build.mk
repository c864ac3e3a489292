# rs's own rules are in the top Makefile (RS_OBJS); it also links lib/pci to resolve
# `pci=VENDOR:DEVICE` services (rs_pci.c). RS_OBJS is expanded when rs is linked, so adding
# to it here is enough.
RS_OBJS += $(B)/user/rs_pci.o $(PCI_OBJS)
$(B)/user/rs: $(B)/user/rs_pci.o $(PCI_OBJS)
$(B)/user/rs_pci.o: UCFLAGS += -Ilib/pci
# Code-mutating fault injection (rs_swifi.c) on lib/swifi.
RS_OBJS += $(B)/user/rs_swifi.o $(SWIFI_OBJS)
$(B)/user/rs: $(B)/user/rs_swifi.o $(SWIFI_OBJS)
$(B)/user/rs_swifi.o $(B)/user/rs_ctl.o: UCFLAGS += -Ilib/swifi
