# vfs: the file server (servers/vfs/README.md).
vfs_SRCS := $(addprefix servers/vfs/,vfs.c calls.c ramfs.c cpio.c pipe.c tty.c ldisc.c proc.c exec.c path.c \
	meta.c dev.c procfs.c eventfd.c poll.c epoll.c socket.c unix.c sysv.c fmap.c perm.c fview.c lock.c timerfd.c procpid.c procsys.c)
vfs_CFLAGS := -Ilib/net
$(eval $(call native_prog,vfs))
# A vfs whose kept state has another layout (VFS_STATE_VERSION 2), for the live-update tests.
$(eval $(call layout2_prog,vfs,servers/vfs/vfs.c,VFS_STATE_VERSION=2))
