# pm: the POSIX personality's process manager (servers/pm/README.md); its table of Linux
# system call names is generated from the host's kernel headers.
$(B)/gen/linux_syscalls.h: tools/gen-linux-syscalls.sh
	@mkdir -p $(dir $@)
	tools/gen-linux-syscalls.sh > $@
pm_SRCS := $(addprefix servers/pm/,pm.c syscalls.c sysinfo.c ptable.c fork.c wait.c itimer.c creds.c)
pm_CFLAGS := -I$(B)/gen
pm_DEPS := $(B)/gen/linux_syscalls.h
$(eval $(call native_prog,pm))
# lxstart: the Linux program pm starts to exec a file (pm run=/PATH); built with musl-gcc.
$(B)/user/lxstart: servers/pm/lxstart.c
	@mkdir -p $(dir $@)
	musl-gcc -std=c11 -O2 -Wall -Wextra -Werror -static -o $@ $<
USER_PROGS += $(B)/user/lxstart
