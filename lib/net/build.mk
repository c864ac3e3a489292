# lib/net: the network servers' shared code. Socket buffers are linked into every program
# that uses them (NAME_EXTRA_OBJS += $(NET_SOCKBUF_OBJ)) and host-tested (test_sockbuf).
NET_SOCKBUF_OBJ := $(B)/user/net/sockbuf.o
$(NET_SOCKBUF_OBJ): lib/net/sockbuf.c lib/net/sockbuf.h $(B)/kflags
	@mkdir -p $(dir $@)
	$(CC) $(UCFLAGS) -Ilib/net -c $< -o $@
UNIT_EXTRA_SRCS += lib/net/sockbuf.c
UNIT_EXTRA_HDRS += $(wildcard lib/net/*.h)
UNIT_EXTRA_CFLAGS += -Ilib/net
