# syscall: the socket front door (servers/syscall/README.md).
syscall_SRCS := servers/syscall/syscall.c servers/syscall/sock.c servers/syscall/engine.c servers/syscall/calls.c \
	servers/syscall/stream.c servers/syscall/vfsside.c servers/syscall/activity.c servers/syscall/keep.c
syscall_CFLAGS := -Ilib/net -Iservers/syscall
syscall_EXTRA_OBJS := $(NET_SOCKBUF_OBJ)
$(eval $(call native_prog,syscall))
# udpstub: a loopback stand-in for udp in syscall's own tests (test/udpstub.c).
udpstub_SRCS := servers/syscall/test/udpstub.c
udpstub_CFLAGS := -Ilib/net
udpstub_EXTRA_OBJS := $(NET_SOCKBUF_OBJ)
$(eval $(call native_prog,udpstub))
