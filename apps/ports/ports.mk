# Application ports (apps/ports/README.md): static Linux binaries built from Debian source
# packages, packed into the initrd. Included by the top-level Makefile; exports
#   PORTS_INITRD_ARGS  tools/mkcpio.py arguments (--file, --symlink, @argfile) adding them
#   PORTS_INITRD_DEPS  the files those arguments read (prerequisites of the initrd)
# INITRD_PORTS selects the ports in the initrd (default: all); `make INITRD_PORTS=` leaves
# them all out.
# Each output is a real file, remade only when its recipe changes: a second make does nothing.

INITRD_PORTS ?= busybox memcached lighttpd iperf redis

PORTS_OUT := $(B)/ports/out
PORTS_COMMON := apps/ports/lib.sh apps/ports/run.sh apps/ports/check.sh
# The ports linked with the user-space socket library (lib/sock/axsock.mk) get its archive
# and its wrap list, and are relinked when they change.
PORTS_RUN := PORTS_DIR=$(abspath $(B)/ports) AXSOCK_SYMS=$(abspath $(AXSOCK_SYMS)) \
	AXSOCK_MUSL=$(abspath $(AXSOCK_MUSL)) AXSOCK_GLIBC=$(abspath $(AXSOCK_GLIBC)) apps/ports/run.sh
PORTS_CHECK := apps/ports/check.sh

# busybox: /bin/busybox and one symlink per applet (initrd.args, made with the binary).
$(PORTS_OUT)/busybox/busybox $(PORTS_OUT)/busybox/initrd.args &: apps/ports/busybox/build.sh $(PORTS_COMMON)
	@$(PORTS_RUN) busybox
	@$(PORTS_CHECK) $(PORTS_OUT)/busybox/busybox '' true
PORT_busybox_ARGS := --file /bin/busybox=$(PORTS_OUT)/busybox/busybox @$(PORTS_OUT)/busybox/initrd.args
PORT_busybox_DEPS := $(PORTS_OUT)/busybox/busybox $(PORTS_OUT)/busybox/initrd.args

# libevent: a static library for memcached only.
$(PORTS_OUT)/libevent/lib/libevent.a: apps/ports/libevent/build.sh $(PORTS_COMMON)
	@$(PORTS_RUN) libevent

$(PORTS_OUT)/memcached/memcached: apps/ports/memcached/build.sh $(PORTS_COMMON) \
		$(PORTS_OUT)/libevent/lib/libevent.a $(AXSOCK_MUSL) $(AXSOCK_SYMS)
	@$(PORTS_RUN) memcached
	@$(PORTS_CHECK) $@ '^memcached 1\.6' -h
PORT_memcached_ARGS := --file /usr/bin/memcached=$(PORTS_OUT)/memcached/memcached
PORT_memcached_DEPS := $(PORTS_OUT)/memcached/memcached

# lighttpd: its configuration is rootfs/etc/lighttpd.conf, its pages rootfs/srv/www.
$(PORTS_OUT)/lighttpd/lighttpd: apps/ports/lighttpd/build.sh $(PORTS_COMMON) $(AXSOCK_MUSL) $(AXSOCK_SYMS)
	@$(PORTS_RUN) lighttpd
	@$(PORTS_CHECK) $@ '^lighttpd/1\.4' -v
PORT_lighttpd_ARGS := --file /usr/sbin/lighttpd=$(PORTS_OUT)/lighttpd/lighttpd
PORT_lighttpd_DEPS := $(PORTS_OUT)/lighttpd/lighttpd

# iperf 2: `iperf -v` prints the version on standard error and exits 1.
$(PORTS_OUT)/iperf/iperf: apps/ports/iperf/build.sh $(PORTS_COMMON) $(AXSOCK_GLIBC) $(AXSOCK_SYMS)
	@$(PORTS_RUN) iperf
	@$(PORTS_CHECK) --any-status $@ 'iperf version 2\.' -v
PORT_iperf_ARGS := --file /usr/bin/iperf=$(PORTS_OUT)/iperf/iperf
PORT_iperf_DEPS := $(PORTS_OUT)/iperf/iperf

# Redis: redis-server (with lib/sock) and redis-cli; not started at boot (tests start it).
$(PORTS_OUT)/redis/redis-server $(PORTS_OUT)/redis/redis-cli &: apps/ports/redis/build.sh $(PORTS_COMMON) \
		$(AXSOCK_MUSL) $(AXSOCK_SYMS)
	@$(PORTS_RUN) redis
	@$(PORTS_CHECK) $(PORTS_OUT)/redis/redis-server '^Redis server v=7\.' --version
PORT_redis_ARGS := --file /usr/bin/redis-server=$(PORTS_OUT)/redis/redis-server \
	--file /usr/bin/redis-cli=$(PORTS_OUT)/redis/redis-cli
PORT_redis_DEPS := $(PORTS_OUT)/redis/redis-server $(PORTS_OUT)/redis/redis-cli

# The selection is a prerequisite too (rewritten only when it changes), so that changing it
# repacks the initrd.
$(B)/ports/initrd-ports: FORCE
	@mkdir -p $(dir $@)
	@echo '$(INITRD_PORTS)' | cmp -s - $@ || echo '$(INITRD_PORTS)' > $@

PORTS_INITRD_ARGS := $(foreach p,$(INITRD_PORTS),$(PORT_$(p)_ARGS))
PORTS_INITRD_DEPS := $(foreach p,$(INITRD_PORTS),$(PORT_$(p)_DEPS)) $(B)/ports/initrd-ports

.PHONY: ports
ports: $(foreach p,$(INITRD_PORTS),$(PORT_$(p)_DEPS))
