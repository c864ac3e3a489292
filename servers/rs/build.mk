# rs: the reincarnation server (servers/rs/README.md). lib/pci resolves `pci=VENDOR:DEVICE`
# services (rs_pci.c); lib/swifi mutates a server's code for fault injection (rs_swifi.c).
rs_SRCS := servers/rs/rs.c servers/rs/rs_ds.c servers/rs/rs_ctl.c servers/rs/rs_hang.c servers/rs/rs_stall.c servers/rs/rs_pci.c \
	servers/rs/rs_swifi.c lib/sysconf/sysconf.c
rs_CFLAGS := -Ilib/pci -Ilib/swifi
rs_EXTRA_OBJS := $(PCI_OBJS) $(SWIFI_OBJS)
$(eval $(call native_prog,rs))
