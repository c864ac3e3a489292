# lib/netdrv: what the NIC drivers share (README.md), built once and linked by each driver
# (NAME_EXTRA_OBJS += $(NETDRV_OBJS), spelled out in the drivers' build.mk, which come first).
NETDRV_SRCS := $(wildcard lib/netdrv/*.c)
NETDRV_OBJS := $(patsubst lib/netdrv/%.c,$(B)/obj/netdrv/%.o,$(NETDRV_SRCS))
$(NETDRV_OBJS): $(B)/obj/netdrv/%.o: lib/netdrv/%.c $(B)/kflags
	@mkdir -p $(dir $@)
	$(CC) $(UCFLAGS) -Ilib/netdrv -Ilib/net -Ilib/pci -c $< -o $@
