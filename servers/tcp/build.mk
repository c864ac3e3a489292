# tcp: lwIP's TCP engine (README.md). seg.c is pure and host-tested (tests/unit/test_tcp_seg.c).
include lib/lwip/lwip.mk
tcp_SRCS := servers/tcp/tcp.c servers/tcp/rx.c servers/tcp/sock.c servers/tcp/stream.c servers/tcp/netq.c \
	servers/tcp/seg.c
$(eval $(call lwip_instance,tcp,servers/tcp,$(LWIP_CORE) core/tcp.c core/tcp_in.c core/tcp_out.c core/stats.c))
$(eval $(call lwip_xport,tcp,servers/tcp))
tcp_CFLAGS += -Ilib/net -Ikernel
tcp_EXTRA_OBJS += $(NET_SOCKBUF_OBJ)
$(eval $(call native_prog,tcp))
UNIT_EXTRA_SRCS += servers/tcp/seg.c
UNIT_EXTRA_HDRS += servers/tcp/seg.h
UNIT_EXTRA_CFLAGS += -Iservers/tcp
# tests/user/tcpstand.c (a stand-in for syscall) uses the socket buffers too.
$(B)/user/tcpstand.o: tests/user/tcpstand.c $(B)/kflags
	@mkdir -p $(dir $@)
	$(CC) $(UCFLAGS) -Ilib/chan -Ilib/net -c $< -o $@
$(B)/user/tcpstand: $(B)/user/tcpstand.o $(NET_SOCKBUF_OBJ) $(URT_OBJS)
	$(CC) $(ULDFLAGS) -o $@ $(URT_OBJS) $< $(NET_SOCKBUF_OBJ)
