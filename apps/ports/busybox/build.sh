#!/usr/bin/env bash
# busybox from Debian's `busybox` source package: one static musl binary, installed as
# /bin/busybox with a symlink for every applet. Output: build/ports/out/busybox/{busybox,
# initrd.args} (the second holds the --symlink arguments for tools/mkcpio.py).
source "$(dirname "$0")/../lib.sh"

fetch_source busybox 1:1.35.0-4+deb12u1
work_dir busybox
unpack "$W/src"
kernel_headers "$W/kinc"
cd "$W/src"

# Sets CONFIG_$1 to $2 (y, n or a quoted string) in .config.
set_cfg() {
	sed -i -e "/^CONFIG_$1=/d" -e "/^# CONFIG_$1 is not set/d" .config
	if [ "$2" = n ]; then
		echo "# CONFIG_$1 is not set" >> .config
	else
		echo "CONFIG_$1=$2" >> .config
	fi
}

# No build date in the binary (as Debian builds it): the same sources give the same bytes.
export KCONFIG_NOTIMESTAMP=1

step "configuring (defconfig, static, no tc)"
make -s defconfig > /dev/null
set_cfg STATIC y
# tc needs the kernel's qdisc headers (linux/pkt_sched.h details) that musl lacks.
set_cfg TC n
# ash is /bin/sh with job control and line editing (defconfig's choices, made explicit).
set_cfg SH_IS_ASH y
set_cfg SH_IS_HUSH n
set_cfg SH_IS_NONE n
set_cfg ASH y
set_cfg ASH_JOB_CONTROL y
set_cfg FEATURE_EDITING y
set_cfg FEATURE_EDITING_HISTORY 255
{ yes "" || true; } | make -s oldconfig > /dev/null
for opt in STATIC ASH ASH_JOB_CONTROL FEATURE_EDITING SH_IS_ASH; do
	grep -q "^CONFIG_$opt=y" .config || { echo "CONFIG_$opt did not stay on" >&2; exit 1; }
done

step "building with musl-gcc (-j$JOBS)"
# The banner says what was built: "BusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1, Axolotl port)".
make -j"$JOBS" CC=musl-gcc EXTRA_CFLAGS="-isystem $W/kinc" \
	BB_EXTRA_VERSION="Debian $SRC_VERSION, Axolotl port" busybox
strip busybox

# One symlink per applet, to /bin/busybox (paths as busybox itself lists them).
./busybox --list-full | sort | sed 's|^|--symlink=/|; s|$|=/bin/busybox|' > initrd.args
[ -s initrd.args ] || { echo "busybox --list-full printed nothing" >&2; exit 1; }
step "$(wc -l < initrd.args) applets"
install_out busybox initrd.args busybox
