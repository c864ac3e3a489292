#!/bin/sh
# Installs what building and testing Axolotl needs on a Debian machine, and enables deb-src
# (later build steps fetch third-party sources with `apt-get source`). Idempotent; silent
# when everything is already present.
set -eu

PKGS="gcc binutils make grub-pc-bin grub-efi-amd64-bin grub-common xorriso mtools
qemu-system-x86 ovmf python3 python3-pytest dpkg-dev musl-tools linux-libc-dev"
# The application ports (apps/ports): autotools for the recipes that regenerate their build
# files, g++ and glibc's static libraries for iperf, glibc's <sys/queue.h> for lighttpd.
PKGS="$PKGS autoconf automake libtool g++ libc6-dev"
# The TCP application tests' host clients (tests/system/test_tcp_apps.py): curl, and iperf 2
# against the guest's iperf server.
PKGS="$PKGS curl iperf"
# The benchmark suite's Linux guest (tools/bench/mkguest.sh, built by `make test` too): its
# initramfs, and the kernel modules it unpacks.
PKGS="$PKGS cpio gzip xz-utils zstd kmod"
# `make debug` and its test (tests/system/test_debug.py): gdb with Python.
PKGS="$PKGS gdb"
# QEMU 10's virtio-gpu-gl module (build/qemu, tools/fetch-qemu.sh) links virglrenderer, which
# bookworm's QEMU 7.2 does not pull in; QEMU 10 opens the module for `-device help`.
PKGS="$PKGS libvirglrenderer1"
# `make bench` (tools/deps.sh bench): the plots.
if [ "${1:-}" = bench ]; then
	PKGS="$PKGS gnuplot-nox"
fi

SUDO=
if [ "$(id -u)" != 0 ]; then
	SUDO=sudo
fi

missing=
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing="$missing $p"
	fi
done

# deb-src: add a source entry mirroring the first deb822 or one-line source, once.
need_update=
srcfile=/etc/apt/sources.list.d/axolotl-deb-src.sources
if ! grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/; then
	if [ -f /etc/apt/sources.list.d/debian.sources ]; then
		sed 's/^Types:.*/Types: deb-src/' /etc/apt/sources.list.d/debian.sources | $SUDO tee "$srcfile" >/dev/null
	elif [ -f /etc/apt/sources.list ]; then
		grep -E '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' |
			$SUDO tee /etc/apt/sources.list.d/axolotl-deb-src.list >/dev/null
	fi
	need_update="enabling deb-src"
elif [ -z "$(apt-cache showsrc busybox 2>/dev/null | head -n 1)" ]; then
	# deb-src is configured but its package lists were never fetched.
	need_update="fetching the deb-src lists"
fi

if [ -n "$missing" ] || [ -n "$need_update" ]; then
	echo "deps: installing:${missing:- (none)}${need_update:+; $need_update}" >&2
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update -qq
	if [ -n "$missing" ]; then
		# shellcheck disable=SC2086
		$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
	fi
fi
# QEMU 10 from bookworm-backports into build/qemu (bookworm's qemu-system-x86 above brings
# the libraries it links against and OVMF); silent when it is already there.
"$(dirname "$0")/fetch-qemu.sh"
