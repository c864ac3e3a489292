# tcp: lwIP's TCP engine (README.md). seg.c is pure and host-tested (tests/unit/test_tcp_seg.c).
include lib/lwip/lwip.mk
tcp_SRCS := servers/tcp/tcp.c servers/tcp/rx.c servers/tcp/sock.c servers/tcp/stream.c servers/tcp/netq.c \
	servers/tcp/seg.c servers/tcp/adopt.c
# lwIP's pcbs, segments, pools and heap pointers are kept with tcp's image (a live update
# keeps every connection, README.md); netif.c and timeouts.c hold code pointers and are made
# again.
TCP_LWIP_KEPT := core/mem.c core/memp.c core/pbuf.c core/stats.c core/tcp.c core/tcp_in.c core/tcp_out.c
$(eval $(call lwip_instance,tcp,servers/tcp,$(LWIP_CORE) core/tcp.c core/tcp_in.c core/tcp_out.c core/stats.c,$(TCP_LWIP_KEPT)))
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
# A tcp whose kept state has another layout (TCP_STATE_VERSION 4): a live update to it is
# refused, and the old binary comes back and takes its state again, every connection kept
# (tests/system/test_tcp_apps.py).
$(eval $(call layout2_prog,tcp,servers/tcp/tcp.c,TCP_STATE_VERSION=4))
