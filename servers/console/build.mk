# console: the system console and its monitor (servers/console/README.md).
console_SRCS := $(addprefix servers/console/,console.c lineed.c commands.c service_cmd.c term.c net_cmd.c \
	perf_cmd.c)
$(eval $(call native_prog,console))
