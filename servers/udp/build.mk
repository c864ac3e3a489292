# udp: lwIP's UDP engine (README.md). pkt.c is pure and host-tested (tests/unit/test_udp_pkt.c).
include lib/lwip/lwip.mk
udp_SRCS := servers/udp/udp.c servers/udp/net.c servers/udp/sock.c servers/udp/netq.c servers/udp/pkt.c
$(eval $(call lwip_instance,udp,servers/udp,$(LWIP_CORE) core/udp.c core/stats.c))
$(eval $(call lwip_xport,udp,servers/udp))
udp_CFLAGS += -Ilib/net -Ikernel
udp_EXTRA_OBJS += $(NET_SOCKBUF_OBJ)
$(eval $(call native_prog,udp))
UNIT_EXTRA_SRCS += servers/udp/pkt.c
UNIT_EXTRA_HDRS += servers/udp/pkt.h
UNIT_EXTRA_CFLAGS += -Iservers/udp
# tests/user/udpstand.c (stand-ins for ip and syscall) uses the socket buffers too.
$(B)/user/udpstand.o: tests/user/udpstand.c $(B)/kflags
	@mkdir -p $(dir $@)
	$(CC) $(UCFLAGS) -Ilib/chan -Ilib/net -c $< -o $@
$(B)/user/udpstand: $(B)/user/udpstand.o $(NET_SOCKBUF_OBJ) $(URT_OBJS)
	$(CC) $(ULDFLAGS) -o $@ $(URT_OBJS) $< $(NET_SOCKBUF_OBJ)
