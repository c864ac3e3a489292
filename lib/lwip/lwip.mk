# lwIP for Axolotl servers (lib/lwip/README.md). Included by the build.mk of each server that
# runs an lwIP instance (ip, udp, tcp):
#
#   include lib/lwip/lwip.mk
#   ip_SRCS := servers/ip/ip.c ...
#   $(eval $(call lwip_instance,ip,servers/ip,core/init.c core/ipv4/ip4.c ...))
#   $(eval $(call native_prog,ip))
#
# lwip_instance NAME, OPTS_DIR, FILES: compiles FILES (paths under lwIP's src/) and
# lib/lwip/port.c with OPTS_DIR/lwipopts.h into build/obj/NAME/lwip/, adds them to
# NAME_EXTRA_OBJS, and gives NAME's own sources lwIP's include path and the fetch as an
# order-only prerequisite. lwIP's files are built without -Werror (it is not our code);
# port.c and the server's files keep it. KEPT (optional): those of FILES whose variables
# are the server's kept image (lib/axrt/keep.h): their .data and .bss become .data.kept and
# .bss.kept, at the kept section's fixed address (tcp: its pcbs, pools and heap survive a
# live update).
ifndef LWIP_MK
LWIP_MK := 1

LWIP_DIR := $(B)/ports/out/lwip/tree
LWIP_STAMP := $(B)/ports/out/lwip/.stamp
LWIP_INC := -Ilib/lwip/include -I$(LWIP_DIR)/src/include

$(LWIP_STAMP): lib/lwip/fetch.sh apps/ports/lib.sh
	@lib/lwip/fetch.sh
# lwIP's sources are made by the fetch.
$(LWIP_DIR)/src/%.c: $(LWIP_STAMP) ;

define lwip_instance
$(1)_LWIP_OBJS := $$(patsubst %.c,$(B)/obj/$(1)/lwip/%.o,$(3))
$$($(1)_LWIP_OBJS): $(B)/obj/$(1)/lwip/%.o: $(LWIP_DIR)/src/%.c $(B)/kflags | $(LWIP_STAMP)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(filter-out -Werror,$$(UCFLAGS)) $(LWIP_INC) -I$(2) -c $$< -o $$@
	$$(if $$(filter $$*.c,$(4)),objcopy --rename-section .data=.data.kept --rename-section .bss=.bss.kept $$@)
$(B)/obj/$(1)/lwip/port.o: lib/lwip/port.c $(B)/kflags | $(LWIP_STAMP)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(UCFLAGS) $(LWIP_INC) -I$(2) -c $$< -o $$@
$(1)_EXTRA_OBJS += $$($(1)_LWIP_OBJS) $(B)/obj/$(1)/lwip/port.o
$(1)_CFLAGS += $(LWIP_INC) -I$(2)
$(1)_DEPS += $(LWIP_STAMP)
endef

# lwip_xport NAME, OPTS_DIR: a socket engine's ip/syscall side and event loop (xport.c,
# xact.c, xsys.c, xport.h), compiled with NAME's lwipopts.h; call after lwip_instance.
define lwip_xport
$(B)/obj/$(1)/lwip/x%.o: lib/lwip/x%.c lib/lwip/xport.h lib/net/sock_ax.h $(B)/kflags | $(LWIP_STAMP)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(UCFLAGS) $(LWIP_INC) -I$(2) -Ilib/lwip -Ilib/net -Ikernel -c $$< -o $$@
$(1)_EXTRA_OBJS += $(B)/obj/$(1)/lwip/xport.o $(B)/obj/$(1)/lwip/xact.o $(B)/obj/$(1)/lwip/xsys.o
$(1)_CFLAGS += -Ilib/lwip
endef

# The files of the IPv4 core every instance needs; add the protocols on top.
LWIP_CORE := core/init.c core/def.c core/inet_chksum.c core/ip.c core/mem.c core/memp.c \
	core/netif.c core/pbuf.c core/timeouts.c core/ipv4/ip4.c core/ipv4/ip4_addr.c
endif
