# Axolotl top-level build. `make run` boots the system in QEMU; `make test` runs every test.
# Both first run `deps`, which installs whatever is missing on a Debian machine, and QEMU 10
# from bookworm-backports into build/qemu (tools/fetch-qemu.sh; QEMU=/path/to/qemu-system-x86_64
# runs another QEMU).

ACCEL ?= auto
# As many vCPUs as the host has cores, at most 4: under TCG each vCPU is a host thread, and
# more of them than cores leaves QEMU's own device thread short of CPU.
SMP ?= $(shell n=$$(nproc 2>/dev/null || echo 2); [ $$n -gt 4 ] && n=4; echo $$n)
MEM ?= 1024
CPU ?=
CMDLINE ?=
B := build

CC := gcc
# The Linux ABI's numbers (errno, signals, system calls, flags: LX_ names), generated from the
# host's headers by tools/gen-linux-abi.sh at every make, rewritten only when they change;
# everything built here includes it from $(B)/gen.
LX_ABI := $(B)/gen/lx_abi.h
KCFLAGS := -std=c11 -O2 -g -Wall -Wextra -Werror -ffreestanding -fno-stack-protector \
	-fno-pic -fno-pie -mno-red-zone -mcmodel=kernel -mgeneral-regs-only \
	-fno-omit-frame-pointer -fno-optimize-sibling-calls -fno-asynchronous-unwind-tables \
	-fno-common -Ikernel -Ikernel/abi -I$(B)/gen -MMD -MP
KASFLAGS := -Ikernel -MMD -MP
KLDFLAGS := -nostdlib -static -no-pie -Wl,--no-warn-rwx-segments -Wl,--build-id=none -z max-page-size=4096 -z noexecstack -T kernel/linker.ld

KSRCS := $(shell find kernel -name '*.c' -not -path 'kernel/vdso/*' | sort)
KASMS := $(shell find kernel -name '*.S' | sort)
KOBJS := $(patsubst %,$(B)/%.o,$(KSRCS) $(KASMS))

.PHONY: all deps kernel iso user run debug test unit kbench faults clean www FORCE
.SECONDEXPANSION:
all: iso

deps:
	@tools/deps.sh

kernel: $(B)/axolotl.elf
iso: $(B)/axolotl.iso

$(LX_ABI): tools/gen-linux-abi.sh FORCE
	@tools/gen-linux-abi.sh $@

# Objects depend on the flags they were built with: changing KCFLAGS rebuilds everything.
# (Everything built depends on this file, so the ABI header is made before anything.)
$(B)/kflags: FORCE | $(LX_ABI)
	@mkdir -p $(B)
	@echo '$(KCFLAGS) $(KASFLAGS) $(KLDFLAGS)' | cmp -s - $@ || echo '$(KCFLAGS) $(KASFLAGS) $(KLDFLAGS)' > $@

$(B)/kernel/%.c.o: kernel/%.c $(B)/kflags
	@mkdir -p $(dir $@)
	$(CC) $(KCFLAGS) -c $< -o $@

$(B)/kernel/%.S.o: kernel/%.S $(B)/kflags
	@mkdir -p $(dir $@)
	$(CC) $(KASFLAGS) -c $< -o $@

# The vDSO (kernel/vdso, docs/kernel-api.md section 8c): a small ELF shared object of user
# code the kernel maps into every Linux process. Freestanding, position-independent, integer
# only, everything hidden but its exports; check.sh proves it needs no loader (one R+X
# segment, no relocations, the LINUX_2.6 symbols) before image.S embeds it in the kernel.
VDSO_CFLAGS := -std=c11 -O2 -Wall -Wextra -Werror -ffreestanding -fPIC -fno-stack-protector \
	-fvisibility=hidden -mgeneral-regs-only -fno-asynchronous-unwind-tables -fno-unwind-tables \
	-fcf-protection=none -Ikernel -Ikernel/abi -I$(B)/gen -MMD -MP
VDSO_LDFLAGS := -shared -nostdlib -Wl,-T,kernel/vdso/vdso.lds -Wl,--version-script=kernel/vdso/vdso.map \
	-Wl,-soname=linux-vdso.so.1 -Wl,--hash-style=both -Wl,-Bsymbolic -Wl,--no-undefined \
	-Wl,--build-id=none -Wl,-z,max-page-size=4096 -Wl,-z,noexecstack
$(B)/vdso/vdso.o: kernel/vdso/vdso.c $(B)/kflags
	@mkdir -p $(dir $@)
	$(CC) $(VDSO_CFLAGS) -c $< -o $@
$(B)/vdso/vdso.so: $(B)/vdso/vdso.o kernel/vdso/vdso.lds kernel/vdso/vdso.map kernel/vdso/check.sh
	$(CC) $(VDSO_CFLAGS) $(VDSO_LDFLAGS) -o $@.tmp $<
	kernel/vdso/check.sh $@.tmp
	@mv $@.tmp $@
$(B)/kernel/vdso/image.S.o: kernel/vdso/image.S $(B)/vdso/vdso.so $(B)/kflags
	@mkdir -p $(dir $@)
	$(CC) $(KASFLAGS) -DVDSO_SO='"$(B)/vdso/vdso.so"' -c $< -o $@
# tests/unit/test_vdso.c loads and runs the built vDSO on the host.
$(B)/unit/test_vdso: $(B)/vdso/vdso.so

# Two links: the first finds the function addresses, the second adds the symbol table
# after all code (so no function moves); the check proves it.
$(B)/axolotl.elf: $(KOBJS) kernel/linker.ld tools/gen-ksyms.sh
	$(CC) $(KLDFLAGS) -o $(B)/kernel.pass1.elf $(KOBJS)
	tools/gen-ksyms.sh $(B)/kernel.pass1.elf > $(B)/ksyms.S
	$(CC) -c $(B)/ksyms.S -o $(B)/ksyms.o
	$(CC) $(KLDFLAGS) -o $@.tmp $(KOBJS) $(B)/ksyms.o
	@nm -n $(B)/kernel.pass1.elf | grep ' [tT] ' > $(B)/syms.1
	@nm -n $@.tmp | grep ' [tT] ' > $(B)/syms.2
	@cmp -s $(B)/syms.1 $(B)/syms.2 || { echo "ksyms: function addresses moved between links" >&2; exit 1; }
	@mv $@.tmp $@

# User programs: freestanding, static, linked with the native runtime (lib/axrt) and the
# kernel's pure printf/string code. Built without SSE to stay small; the kernel saves x87/SSE
# state for the programs that use it.
UCFLAGS := -std=c11 -O2 -g -Wall -Wextra -Werror -ffreestanding -fno-stack-protector -fno-pic \
	-fno-pie -mgeneral-regs-only -fno-omit-frame-pointer -fno-asynchronous-unwind-tables \
	-Ilib/axrt -Ilib/chan -Ilib/ds -Ilib/rs -Ilib/posix -Ilib/sysconf -Ikernel/abi -I$(B)/gen -MMD -MP
ULDFLAGS := -nostdlib -static -no-pie -Wl,--build-id=none -Wl,-z,max-page-size=4096 \
	-Wl,-z,noexecstack -Wl,-T,lib/axrt/kept.ld
URT_OBJS := $(B)/user/rt/crt0.o $(B)/user/rt/axrt.o $(B)/user/rt/evloop.o $(B)/user/rt/heartbeat.o \
	$(B)/user/rt/service.o $(B)/user/rt/heap.o $(B)/user/dslib/ds_client.o $(B)/user/rt/printf.o \
	$(B)/user/rt/string.o $(B)/user/rt/kstat_text.o $(B)/user/rt/keep.o
URT_OBJS += $(patsubst lib/chan/%.c,$(B)/user/chan/%.o,$(wildcard lib/chan/*.c))
USER_PROGS := $(patsubst tests/user/%.c,$(B)/user/%,$(wildcard tests/user/*.c))

$(B)/user/rt/crt0.o: lib/axrt/crt0.S $(B)/kflags
	@mkdir -p $(dir $@)
	$(CC) -c $< -o $@
$(B)/user/chan/%.o: lib/chan/%.c $(B)/kflags
	@mkdir -p $(dir $@)
	$(CC) $(UCFLAGS) -Ilib/chan -c $< -o $@
$(B)/user/dslib/%.o: lib/ds/%.c $(B)/kflags
	@mkdir -p $(dir $@)
	$(CC) $(UCFLAGS) -c $< -o $@
$(B)/user/rt/%.o: lib/axrt/%.c $(B)/kflags
	@mkdir -p $(dir $@)
	$(CC) $(UCFLAGS) -c $< -o $@
# Every program links keep.o: a change of the kept section's script relinks them all.
$(B)/user/rt/keep.o: lib/axrt/kept.ld
$(B)/user/rt/%.o: kernel/lib/%.c $(B)/kflags
	@mkdir -p $(dir $@)
	$(CC) $(UCFLAGS) -Ikernel -c $< -o $@
$(B)/user/%.o: tests/user/%.c $(B)/kflags
	@mkdir -p $(dir $@)
	$(CC) $(UCFLAGS) -Ilib/chan -c $< -o $@
$(B)/user/%: $(B)/user/%.o $(URT_OBJS)
	$(CC) $(ULDFLAGS) -o $@ $(URT_OBJS) $<

include lib/sock/axsock.mk
include apps/ports/ports.mk
# Our own Linux test programs go in too, so tests can execve them from the file system.
INITRD_TESTS := $(B)/user/lxproc $(B)/user/lxvdso $(B)/user/udpecho $(B)/user/udptest $(B)/user/tcptest \
	$(B)/user/tcphash $(B)/user/sockbench $(B)/user/sockevil $(B)/user/sockwake $(B)/user/sockposix \
	$(B)/user/fileview $(B)/user/tcptest-lib $(B)/user/udptest-lib $(B)/user/netmicro
# lighttpd's larger files, /srv/www/{11kib,512kib,4mib}.bin (the tests' 4 MiB and the
# benchmarks' sizes): made at build time (deterministic, not committed); the small one is
# rootfs/srv/www/hello.txt.
WWW_SIZES := 11kib:11264 512kib:524288 4mib:4194304
WWW_FILES := $(foreach s,$(WWW_SIZES),$(B)/www/$(word 1,$(subst :, ,$(s))).bin)
$(WWW_FILES): $(B)/www/%.bin: tools/mkdata.py
	@mkdir -p $(dir $@)
	tools/mkdata.py $(word 2,$(subst :, ,$(filter $*:%,$(WWW_SIZES)))) $@
www: $(WWW_FILES)
$(B)/user/initrd.cpio: tools/mkcpio.py $(shell find rootfs) $(PORTS_INITRD_DEPS) $(INITRD_TESTS) $(WWW_FILES)
	@mkdir -p $(dir $@)
	tools/mkcpio.py rootfs $@ $(PORTS_INITRD_ARGS) $(foreach t,$(INITRD_TESTS),--file /bin/$(notdir $(t))=$(t)) \
		$(foreach f,$(WWW_FILES),--file /srv/www/$(notdir $(f))=$(f))
USER_PROGS += $(B)/user/initrd.cpio

# Linux programs (tests/linux): unmodified static binaries built with musl-gcc, run under pm.
LXCFLAGS := -std=c11 -O2 -g -Wall -Wextra -Werror -static -D_GNU_SOURCE
LINUX_PROGS := $(patsubst tests/linux/%.c,$(B)/user/%,$(wildcard tests/linux/*.c))
$(LINUX_PROGS): $(B)/user/%: tests/linux/%.c tests/linux/libcount.h
	@mkdir -p $(dir $@)
	musl-gcc $(LXCFLAGS) -o $@ $<
USER_PROGS += $(LINUX_PROGS)

# Linux programs linked with the user-space socket library (lib/sock, docs/sockets.md),
# which runs the socket buffers' ring code (lib/net/sockbuf.c, lib/chan/spsc.c) in the
# application.
# sockbench, sockevil and sockwake call the library explicitly (no --wrap: the C library's
# calls stay system calls); sockposix and fileview are unmodified programs linked with the wrap flags
# (lib/sock/axsock.mk), as the ports are.
$(B)/user/sockbench $(B)/user/sockevil $(B)/user/sockwake: $(B)/user/%: tests/sock/%.c $(AXSOCK_MUSL) $(wildcard tests/sock/*.h lib/sock/*.h lib/net/*.h lib/chan/*.h)
	@mkdir -p $(dir $@)
	musl-gcc $(LXCFLAGS) -Ilib/sock -Ilib/net -Ilib/chan -o $@ $< $(AXSOCK_MUSL)
$(B)/user/sockposix $(B)/user/fileview: $(B)/user/%: tests/sock/%.c $(AXSOCK_MUSL) $(AXSOCK_SYMS) $(wildcard tests/sock/*.h lib/sock/*.h lib/net/*.h)
	@mkdir -p $(dir $@)
	musl-gcc $(LXCFLAGS) -Ilib/sock -Ilib/net -o $@ $< $(AXSOCK_LDFLAGS) $(AXSOCK_MUSL)
USER_PROGS += $(B)/user/sockbench $(B)/user/sockevil $(B)/user/sockwake $(B)/user/sockposix $(B)/user/fileview
# tcptest and udptest once more, linked with the library (ld --wrap): the socket checks of
# issues 6 and 7 through lib/sock (tests/system/test_tcp.py and test_udp.py run both).
$(B)/user/tcptest-lib $(B)/user/udptest-lib: $(B)/user/%-lib: tests/linux/%.c tests/linux/libcount.h $(AXSOCK_MUSL) $(AXSOCK_SYMS)
	@mkdir -p $(dir $@)
	musl-gcc $(LXCFLAGS) -o $@ $< $(AXSOCK_LDFLAGS) $(AXSOCK_MUSL)
USER_PROGS += $(B)/user/tcptest-lib $(B)/user/udptest-lib
# The benchmark suite's in-guest microbenchmarks (tools/bench/netmicro.c), linked with the
# library as the applications are; the Linux guest carries the same binary.
$(B)/user/netmicro: tools/bench/netmicro.c tests/linux/libcount.h $(AXSOCK_MUSL) $(AXSOCK_SYMS)
	@mkdir -p $(dir $@)
	musl-gcc $(LXCFLAGS) -o $@ $< $(AXSOCK_LDFLAGS) $(AXSOCK_MUSL)
USER_PROGS += $(B)/user/netmicro

# The recovery tests' pipeline (tests/pipeline): relay2 is relay built as version 2.
PIPELINE := $(B)/user/source $(B)/user/relay $(B)/user/relay2 $(B)/user/sink
USER_PROGS += $(PIPELINE)
$(B)/user/pl_%.o: tests/pipeline/%.c $(B)/kflags
	@mkdir -p $(dir $@)
	$(CC) $(UCFLAGS) -c $< -o $@
$(B)/user/pl_relay2.o: tests/pipeline/relay.c $(B)/kflags
	@mkdir -p $(dir $@)
	$(CC) $(UCFLAGS) -DRELAY_VERSION=2 -c $< -o $@
$(PIPELINE): $(B)/user/%: $(B)/user/pl_%.o $(URT_OBJS)
	$(CC) $(ULDFLAGS) -o $@ $(URT_OBJS) $<

# Servers, drivers and libraries with a build.mk of their own (servers/ip/build.mk, ...):
# each lists NAME_SRCS (and NAME_CFLAGS, NAME_EXTRA_OBJS, NAME_DEPS: order-only prerequisites
# of its objects, such as fetched sources) and calls native_prog; host-tested sources go in
# UNIT_EXTRA_SRCS/HDRS, their include folders in UNIT_EXTRA_CFLAGS.
define native_prog
$(1)_OBJS := $$(patsubst %.c,$(B)/obj/$(1)/%.o,$$($(1)_SRCS))
$$($(1)_OBJS): $(B)/obj/$(1)/%.o: %.c $(B)/kflags | $$($(1)_DEPS)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(UCFLAGS) $$($(1)_CFLAGS) -c $$< -o $$@
$(B)/user/$(1): $$($(1)_OBJS) $$($(1)_EXTRA_OBJS) $$(URT_OBJS)
	$$(CC) $$(ULDFLAGS) -o $$@ $$(URT_OBJS) $$($(1)_OBJS) $$($(1)_EXTRA_OBJS)
USER_PROGS += $(B)/user/$(1)
endef
# $(call layout2_prog,NAME,FILE,DEFINE): NAME.layout2, NAME linked again with FILE (the one
# that declares its kept state) built with -DDEFINE: a binary whose kept state has another
# layout, which a live update must refuse and roll back (tests/system/test_tcp_apps.py).
define layout2_prog
$(B)/obj/$(1)/layout2/$(notdir $(2:.c=.o)): $(2) $(B)/kflags | $$($(1)_DEPS)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(UCFLAGS) $$($(1)_CFLAGS) -D$(3) -c $$< -o $$@
$(1)_LAYOUT2_OBJS := $$(filter-out $(B)/obj/$(1)/$(2:.c=.o),$$($(1)_OBJS)) $(B)/obj/$(1)/layout2/$(notdir $(2:.c=.o))
$(B)/user/$(1).layout2: $$($(1)_LAYOUT2_OBJS) $$($(1)_EXTRA_OBJS) $$(URT_OBJS)
	$$(CC) $$(ULDFLAGS) -o $$@ $$(URT_OBJS) $$($(1)_LAYOUT2_OBJS) $$($(1)_EXTRA_OBJS)
USER_PROGS += $(B)/user/$(1).layout2
endef
UNIT_EXTRA_SRCS :=
UNIT_EXTRA_HDRS :=
UNIT_EXTRA_CFLAGS :=
include $(sort $(wildcard lib/*/build.mk servers/*/build.mk drivers/*/build.mk))

# Second versions for live update (tests/system/test_tcp_apps.py): each server that updates
# as a restart, linked again with the build tag "v2" (lib/axrt/build_v2.c): a binary that
# differs, and says so when it takes over.
UPDATE_V2 := e1000 ip pf udp tcp syscall ds console pm vfs
define v2_prog
$(B)/user/$(1).v2: $$($(1)_OBJS) $$($(1)_EXTRA_OBJS) $$(URT_OBJS) $(B)/user/rt/build_v2.o
	$$(CC) $$(ULDFLAGS) -o $$@ $(B)/user/rt/build_v2.o $$(URT_OBJS) $$($(1)_OBJS) $$($(1)_EXTRA_OBJS)
USER_PROGS += $(B)/user/$(1).v2
endef
$(foreach p,$(UPDATE_V2),$(eval $(call v2_prog,$(p))))

user: $(USER_PROGS)

# The default image: rs (module 0, the root of the service tree), its configuration, and the
# services boot/system.conf names. $(call mkimage,CONF): the recipe of an image booting with
# the service configuration CONF (the benchmark suite's variants of boot/system.conf too).
NET_MODULES := $(B)/user/e1000 $(B)/user/virtio-net $(B)/user/ixgbe $(B)/user/ip $(B)/user/pf $(B)/user/udp $(B)/user/tcp $(B)/user/syscall
IMAGE_MODULES := $(B)/user/ds $(B)/user/console $(B)/user/vfs $(B)/user/initrd.cpio $(B)/user/pm \
	$(B)/user/lxstart $(NET_MODULES)
IMAGE_DEPS := $(B)/axolotl.elf $(B)/user/rs $(IMAGE_MODULES) boot/pf.conf tools/mkiso.py boot/grub.cfg
mkimage = tools/mkiso.py $(B)/axolotl.elf $@ --cmdline "$(CMDLINE)" --module "$(B)/user/rs conf=$(notdir $(1))" \
	--module $(1) $(foreach m,$(IMAGE_MODULES),--module $(m)) --module boot/pf.conf
$(B)/axolotl.iso: $(IMAGE_DEPS) boot/system.conf
	$(call mkimage,boot/system.conf)
# The benchmark suite's configurations (tools/bench/bench.py writes build/bench/NAME.conf).
$(B)/bench/axolotl-%.iso: $(B)/bench/%.conf $(IMAGE_DEPS)
	$(call mkimage,$<)

# /etc/rc's applications, forwarded from 127.0.0.1 on the host (README.md): lighttpd,
# memcached, iperf, tcphash (PROTO:HOSTPORT:GUESTPORT; `make run RUN_FWDS=` for none).
RUN_FWDS ?= tcp:8080:80 tcp:11211:11211 tcp:5001:5001 tcp:7000:7000
# The NIC: e1000 (QEMU's 82540EM, the default), virtio (virtio-net-pci, modern only) or igb
# (QEMU's 82576, driven by drivers/ixgbe; tools/qemu_cmd.py NIC_MODELS); the image has every
# driver and rs starts the one whose device is there (docs/devices.md).
NIC ?= e1000
run: deps
	@$(MAKE) --no-print-directory iso
	@echo "Booting Axolotl in QEMU (ACCEL=$(ACCEL) SMP=$(SMP) MEM=$(MEM)); quit with Ctrl-A X" >&2
	@echo "Forwarded from 127.0.0.1: $(RUN_FWDS) (host:guest ports); NIC $(NIC)" >&2
	@python3 tools/qemu_cmd.py --iso $(B)/axolotl.iso --smp $(SMP) --mem $(MEM) --accel $(ACCEL) \
		$(if $(CPU),--cpu $(CPU)) $(foreach f,$(RUN_FWDS),--fwd $(f)) $(if $(MONITOR),--monitor $(MONITOR)) \
		--nic $(NIC)

# `make debug`: `make run` with QEMU's gdb stub on 127.0.0.1:$(GDBPORT), stopped before the
# firmware's first instruction; `gdb -x tools/gdb/axolotl.gdb` (another terminal) attaches,
# runs to kmain and has ax-threads, ax-sym and ax-break (docs/testing.md, "Debugging").
GDBPORT ?= 1234
debug: deps
	@$(MAKE) --no-print-directory iso
	@echo "QEMU waits for gdb on 127.0.0.1:$(GDBPORT); in another terminal, from $(CURDIR):" >&2
	@echo "    GDBPORT=$(GDBPORT) gdb -x tools/gdb/axolotl.gdb" >&2
	@python3 tools/qemu_cmd.py --iso $(B)/axolotl.iso --smp $(SMP) --mem $(MEM) --accel $(ACCEL) \
		$(if $(CPU),--cpu $(CPU)) $(foreach f,$(RUN_FWDS),--fwd $(f)) --gdb $(GDBPORT)

# Host unit tests (pure kernel code, lib/chan and lib/sysconf built with ASan and UBSan). The threaded
# channel test is built a second time with TSan (which cannot be combined with ASan). kernel/ is
# searched for "..." includes only (-iquote): its linux/ must not hide the host's <linux/...>.
UNIT_BASE_CFLAGS := -std=c11 -g -O1 -Wall -Wextra -Werror -fno-sanitize-recover=all \
	-fno-omit-frame-pointer -iquote kernel -Ikernel/abi -I$(B)/gen -Itests/unit -Ilib/chan -Ilib/sysconf -Ilib/ds -Iservers/ds -Iservers/console -Iservers/vfs -DVFS_HOST -pthread
UNIT_CFLAGS := $(UNIT_BASE_CFLAGS) -fsanitize=address,undefined
UNIT_KSRCS := kernel/lib/printf.c kernel/boot/bootinfo.c kernel/boot/cmdline.c \
	kernel/mm/frame_bitmap.c kernel/acpi/madt.c kernel/proc/elf.c
CHAN_SRCS := lib/chan/spsc.c lib/chan/doorbell.c lib/chan/pool.c lib/chan/reqdb.c lib/chan/watch.c
CHAN_HDRS := $(wildcard lib/chan/*.h)
LIB_SRCS := $(CHAN_SRCS) lib/sysconf/sysconf.c servers/ds/store.c servers/vfs/ramfs.c servers/vfs/cpio.c servers/console/lineed.c \
	servers/vfs/ldisc.c
LIB_HDRS := $(CHAN_HDRS) lib/sysconf/sysconf.h servers/ds/store.h lib/ds/ds_proto.h servers/vfs/ramfs.h servers/vfs/vfs_alloc.h servers/console/lineed.h \
	servers/vfs/ldisc.h
UNIT_TESTS := $(patsubst tests/unit/%.c,$(B)/unit/%,$(wildcard tests/unit/test_*.c)) \
	$(B)/unit/test_chan_threads_tsan
LIB_SRCS += $(UNIT_EXTRA_SRCS)
LIB_HDRS += $(UNIT_EXTRA_HDRS)

$(B)/unit/%: tests/unit/%.c tests/unit/unit.h $(UNIT_KSRCS) $(LIB_SRCS) $(LIB_HDRS) $(LX_ABI)
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) $(UNIT_EXTRA_CFLAGS) -o $@ $< $(UNIT_KSRCS) $(LIB_SRCS)

$(B)/unit/test_chan_threads_tsan: tests/unit/test_chan_threads.c tests/unit/unit.h $(CHAN_SRCS) $(LX_ABI) \
		$(CHAN_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_BASE_CFLAGS) -fsanitize=thread -DCHAN_TSAN -o $@ $< $(CHAN_SRCS)

# Channel microbenchmark (host, optimised, no sanitizers; not part of `make test`).
$(B)/chanbench: tools/chanbench.c $(CHAN_SRCS) $(CHAN_HDRS)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g -Wall -Wextra -Werror -Ilib/chan -pthread -o $@ $< $(CHAN_SRCS)

.PHONY: chanbench
chanbench: $(B)/chanbench
	$(B)/chanbench

unit: $(UNIT_TESTS)

test: deps
	@$(MAKE) --no-print-directory iso user unit
	@python3 tests/run.py

# The benchmark suite (docs/benchmarks.md, tools/bench): Axolotl against a stock Debian Linux
# guest running the same application binaries in the same virtual machine. Never part of
# `make test` (which checks only the suite's parsers and that the Linux guest builds and
# serves). `make bench FULL=1`: the full sweep; `NET=tap`: a tap device in a network
# namespace of the suite's own (root) instead of QEMU's user networking.
.PHONY: bench bench-guest
bench-guest:
	@$(MAKE) --no-print-directory iso user
	tools/bench/mkguest.sh $(B)/bench/linux
bench:
	@tools/deps.sh bench
	@$(MAKE) --no-print-directory bench-guest
	@python3 tools/bench/bench.py run $(if $(FULL),--full) $(if $(NET),--net $(NET)) --nic $(NIC)

# The fault-injection campaign (tools/faults/README.md): random code faults injected into
# the network servers under a checked load, each run's verdict as in the MINIX 3 thesis's
# tables 2.3 and 2.4. `make faults QUICK=1`: 3 short runs; RUNS=N, SERVERS=a,b, SEED=S,
# FAULTS=kill,crash,hang (the clean deaths a user types) or swifi types instead of random.
faults:
	@tools/fetch-qemu.sh
	@$(MAKE) --no-print-directory iso user
	@python3 tools/faults/campaign.py --runs $(or $(RUNS),$(if $(QUICK),3,100)) --servers $(if $(SERVERS),$(SERVERS),e1000,ip,pf,udp,tcp,syscall) $(if $(QUICK),--quick) $(if $(SEED),--seed $(SEED)) $(if $(FAULTS),--faults $(FAULTS))

# Kernel microbenchmarks (docs/kernel-api.md): IPC, notify, wait/wake, in cycles.
kbench: deps
	@$(MAKE) --no-print-directory kernel user
	@python3 tools/kbench.py $(if $(CPU),--cpu $(CPU)) --smp $(SMP)

clean:
	rm -rf $(B)

-include $(shell find $(B) -path $(B)/ports -prune -o -path $(B)/bench -prune -o -name '*.d' -type f -print 2>/dev/null)
