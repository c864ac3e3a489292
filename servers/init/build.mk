# init: the first process rs starts (servers/init/README.md).
init_SRCS := servers/init/init.c
$(eval $(call native_prog,init))
