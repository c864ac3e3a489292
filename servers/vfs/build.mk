# vfs: the file server (servers/vfs/README.md).
vfs_SRCS := $(addprefix servers/vfs/,vfs.c calls.c ramfs.c cpio.c pipe.c tty.c ldisc.c proc.c exec.c path.c \
	meta.c dev.c procfs.c eventfd.c poll.c epoll.c socket.c)
vfs_CFLAGS := -Ilib/net
$(eval $(call native_prog,vfs))
# A vfs whose kept state has another layout (VFS_STATE_VERSION 2): a live update to it must
# be refused and rolled back (tests/system/test_tcp_apps.py).
$(B)/obj/vfs/layout2/vfs.o: servers/vfs/vfs.c $(B)/kflags
	@mkdir -p $(dir $@)
	$(CC) $(UCFLAGS) $(vfs_CFLAGS) -DVFS_STATE_VERSION=2 -c $< -o $@
VFS_LAYOUT2_OBJS := $(filter-out $(B)/obj/vfs/servers/vfs/vfs.o,$(vfs_OBJS)) $(B)/obj/vfs/layout2/vfs.o
$(B)/user/vfs.layout2: $(VFS_LAYOUT2_OBJS) $(URT_OBJS)
	$(CC) $(ULDFLAGS) -o $@ $(URT_OBJS) $(VFS_LAYOUT2_OBJS)
USER_PROGS += $(B)/user/vfs.layout2
