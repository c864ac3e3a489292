#!/usr/bin/env bash
# Builds the stock-Linux comparison guest of `make bench` (issue 9) into the directory $1
# (the Makefile passes build/bench/linux):
#   $1/vmlinuz              Debian's kernel (the real package behind linux-image-amd64)
#   $1/initramfs.cpio.gz    busybox-static, the NIC modules, and the very application
#                           binaries, configuration and /etc/rc that Axolotl's image has
#   $1/versions.json        what went in: package versions and the binaries' sha256
# Downloads go to $1/debs and are kept: a second run downloads nothing (and needs no
# network). Everything else under $1 is made again each run, byte for byte the same from
# the same inputs. The application binaries must exist (`make ports user` builds them).
# Boot it with the QEMU line of tests/system/test_bench_guest.py.
set -euo pipefail

if [ $# -ne 1 ] || [ -z "$1" ]; then
	echo "usage: $0 OUTDIR" >&2
	exit 2
fi
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$1"
OUT=$(cd "$1" && pwd)
DEBS=$OUT/debs
PKGS=$OUT/pkg
STAGE=$OUT/root

die() {
	echo "mkguest: $*" >&2
	exit 1
}

# The NIC drivers are modules in Debian's kernel; busybox insmod does no dependency
# resolution, so this is their load order (each after what it depends on, checked below).
# e1000, virtio_net and igb: the NICs `make bench NIC=` gives both systems.
MODULES=(virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci failover net_failover virtio_net e1000
	dca i2c-algo-bit igb)

# The applications, at the paths Axolotl's /etc/rc runs them from (its PATH has /bin).
BINARIES=(
	"/bin/lighttpd:build/ports/out/lighttpd/lighttpd"
	"/bin/memcached:build/ports/out/memcached/memcached"
	"/bin/iperf:build/ports/out/iperf/iperf"
	"/bin/tcphash:build/user/tcphash"
	"/bin/netmicro:build/user/netmicro"
)
# Configuration and data, the same files as in Axolotl's initrd.
FILES=(
	"/etc/lighttpd.conf:rootfs/etc/lighttpd.conf"
	"/etc/passwd:rootfs/etc/passwd"
	"/etc/group:rootfs/etc/group"
	"/etc/hosts:rootfs/etc/hosts"
	"/etc/rc:rootfs/etc/rc"
	"/srv/www/11kib.bin:build/www/11kib.bin"
	"/srv/www/512kib.bin:build/www/512kib.bin"
	"/srv/www/4mib.bin:build/www/4mib.bin"
)
# What guest-init and /etc/rc call; busybox-static must have them all.
APPLETS=(sh mount mkdir insmod ip ifconfig route setsid cttyhack sleep grep cat echo poweroff sync
	hostname ls ps kill dmesg uname ping)

# Fail before downloading anything if the caller has not built the applications.
missing=()
for pair in "${BINARIES[@]}" "${FILES[@]}"; do
	[ -f "$ROOT/${pair#*:}" ] || missing+=("${pair#*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
	die "missing in $ROOT: ${missing[*]} (build them first: make ports user www)"
fi
[ -d "$ROOT/rootfs/srv/www" ] || die "missing $ROOT/rootfs/srv/www"

# --- 1. the packages -------------------------------------------------------------------
# linux-image-amd64 is a metapackage: the kernel is in the linux-image-<abi>-amd64 it
# depends on. Resolved from the local package lists (no network needed for this).
meta_deps=$(apt-cache show --no-all-versions linux-image-amd64 2>/dev/null | sed -n 's/^Depends: //p' | head -1)
KPKG=$(printf '%s\n' "$meta_deps" | tr ',' '\n' | grep -o 'linux-image-[0-9][^ (]*-amd64' | head -1) || true
if [ -z "$KPKG" ]; then
	# older apt-cache output or a list without Depends: ask apt-cache depends instead
	KPKG=$(apt-cache depends linux-image-amd64 2>/dev/null | grep -o 'linux-image-[0-9][^ ]*-amd64' | head -1) || true
fi
[ -n "$KPKG" ] || die "apt-cache knows no linux-image-amd64 (are Debian's package lists there? apt-get update)"

candidate() { # the version apt-get download would fetch
	apt-cache show --no-all-versions "$1" 2>/dev/null | sed -n 's/^Version: //p' | head -1
}
KVER=$(candidate "$KPKG")
BBVER=$(candidate busybox-static)
[ -n "$KVER" ] || die "apt-cache has no version of $KPKG"
[ -n "$BBVER" ] || die "apt-cache has no version of busybox-static"

mkdir -p "$DEBS"
deb_file() { # apt-get download's file name: the epoch's colon is written %3a
	echo "$DEBS/${1}_${2//:/%3a}_amd64.deb"
}
fetch() {
	local pkg=$1 ver=$2 file
	file=$(deb_file "$pkg" "$ver")
	if [ -s "$file" ]; then
		return
	fi
	echo "mkguest: downloading $pkg $ver" >&2
	# apt-get download writes into the current directory; a subshell keeps ours.
	if ! (cd "$DEBS" && apt-get download -q "$pkg=$ver" >&2); then
		die "cannot download $pkg $ver with apt-get download (no network or no Debian mirror?)"
	fi
	[ -s "$file" ] || die "apt-get download left no $file"
}
fetch "$KPKG" "$KVER"
fetch busybox-static "$BBVER"
KDEB=$(deb_file "$KPKG" "$KVER")
BBDEB=$(deb_file busybox-static "$BBVER")

# Unpacked once per package version (a marker says it finished).
KDIR=$PKGS/$(basename "$KDEB" .deb)
BBDIR=$PKGS/$(basename "$BBDEB" .deb)
if [ ! -e "$BBDIR/.done" ]; then
	rm -rf "$BBDIR"
	mkdir -p "$BBDIR"
	dpkg-deb -x "$BBDEB" "$BBDIR"
	touch "$BBDIR/.done"
fi
# (extracted again when the module list changes)
KDONE=$KDIR/.done-$(printf '%s\n' "${MODULES[@]}" | md5sum | cut -c1-12)
if [ ! -e "$KDONE" ]; then
	rm -rf "$KDIR"
	mkdir -p "$KDIR"
	# The whole package unpacks to about 400 MB of modules; only the kernel image and the
	# modules above are needed, so dpkg-deb hands its file tree to tar, which takes just
	# those (tar fails if one is not there).
	pats=("./boot/vmlinuz-*")
	for m in "${MODULES[@]}"; do
		pats+=("./lib/modules/*/kernel/*/$m.ko*")
	done
	dpkg-deb --fsys-tarfile "$KDEB" | tar -x -C "$KDIR" --wildcards "${pats[@]}"
	touch "$KDONE"
fi

# --- 2. kernel and modules ---------------------------------------------------------------
vmlinuz=$(find "$KDIR/boot" -maxdepth 1 -name 'vmlinuz-*' | head -1)
[ -n "$vmlinuz" ] || die "no boot/vmlinuz-* in $KDEB"
KREL=${vmlinuz##*/vmlinuz-}
cp "$vmlinuz" "$OUT/vmlinuz.tmp"
mv "$OUT/vmlinuz.tmp" "$OUT/vmlinuz"

rm -rf "$STAGE"
mkdir -p "$STAGE"/{bin,sbin,usr/bin,usr/sbin,dev,proc,sys,tmp,root,etc,srv/www,lib/modules}
chmod 1777 "$STAGE/tmp"

# A module's dependencies, from its .modinfo section (modinfo where kmod is installed).
mod_depends() {
	if command -v modinfo >/dev/null 2>&1; then
		modinfo -F depends "$1"
	else
		tr '\0' '\n' <"$1" | sed -n 's/^depends=//p' | head -1
	fi
}
loaded=" "
for m in "${MODULES[@]}"; do
	src=$(find "$KDIR/lib/modules/$KREL/kernel" \( -name "$m.ko" -o -name "$m.ko.xz" -o -name "$m.ko.zst" \
		-o -name "$m.ko.gz" \) | head -1)
	[ -n "$src" ] || die "module $m not in $KDEB"
	dst=$STAGE/lib/modules/$m.ko
	# busybox insmod takes plain ELF objects: decompress on the host
	case "$src" in
	*.xz) xz -dc "$src" >"$dst" ;;
	*.zst) zstd -q -dc "$src" >"$dst" ;;
	*.gz) gzip -dc "$src" >"$dst" ;;
	*) cp "$src" "$dst" ;;
	esac
	for d in $(mod_depends "$dst" | tr ',' ' '); do
		case "$loaded" in
		*" $d "*) ;;
		*) die "module $m needs $d, which is not loaded before it (fix MODULES in $0)" ;;
		esac
	done
	loaded="$loaded$m "
done
# guest-init reads the order from here (one source of truth: this script)
printf '%s\n' "${MODULES[@]}" >"$STAGE/lib/modules/load.order"

# --- 3. busybox, the applications, their files ------------------------------------------
BB=$BBDIR/bin/busybox
[ -x "$BB" ] || die "no bin/busybox in $BBDEB"
cp "$BB" "$STAGE/bin/busybox"
# busybox-static is a static x86-64 binary: it runs here and lists its own applets.
applets=$("$BB" --list)
for a in "${APPLETS[@]}"; do
	grep -qx -- "$a" <<<"$applets" || die "busybox-static $BBVER has no $a applet"
done
while read -r a; do
	case "$a" in
	busybox | "") continue ;;
	esac
	ln -s busybox "$STAGE/bin/$a"
done <<<"$applets"

for pair in "${BINARIES[@]}" "${FILES[@]}"; do
	dst=${pair%%:*}
	mkdir -p "$STAGE$(dirname "$dst")"
	cp "$ROOT/${pair#*:}" "$STAGE$dst"
done
chmod 755 "$STAGE"/bin/{lighttpd,memcached,iperf,tcphash}
cp -R "$ROOT/rootfs/srv/www/." "$STAGE/srv/www/"

# --- 4. /init -----------------------------------------------------------------------------
install -m 755 "$ROOT/tools/bench/guest-init" "$STAGE/init"

# --- the archive --------------------------------------------------------------------------
# newc, as the kernel wants it, written by busybox-static's own cpio (it runs here: no
# host cpio needed, and the same writer on every machine). Owned by root whoever builds it,
# fixed times, order and inode numbers, no gzip time stamp: the same inputs give the same
# bytes. The kernel's built-in initramfs already has /dev/console.
find "$STAGE" -exec touch -h -d @0 {} +
(cd "$STAGE" && find . -mindepth 1 | LC_ALL=C sort |
	"$BB" cpio -o -H newc -R 0:0 --ignore-devno --renumber-inodes) | gzip -9 -n >"$OUT/initramfs.cpio.gz.tmp"
mv "$OUT/initramfs.cpio.gz.tmp" "$OUT/initramfs.cpio.gz"

# --- 5. versions.json ---------------------------------------------------------------------
sha() { sha256sum "$1" | cut -d' ' -f1; }
{
	printf '{\n'
	printf '  "kernel": {"package": "%s", "version": "%s", "release": "%s", "sha256": "%s"},\n' \
		"$KPKG" "$KVER" "$KREL" "$(sha "$OUT/vmlinuz")"
	printf '  "busybox-static": {"package": "busybox-static", "version": "%s", "sha256": "%s"},\n' \
		"$BBVER" "$(sha "$STAGE/bin/busybox")"
	printf '  "modules": [%s],\n' "$(printf '"%s", ' "${MODULES[@]}" | sed 's/, $//')"
	printf '  "binaries": {\n'
	n=0
	for pair in "${BINARIES[@]}"; do
		n=$((n + 1))
		sep=","
		[ $n -lt ${#BINARIES[@]} ] || sep=""
		printf '    "%s": {"source": "%s", "sha256": "%s"}%s\n' "${pair%%:*}" "${pair#*:}" \
			"$(sha "$STAGE${pair%%:*}")" "$sep"
	done
	printf '  },\n'
	printf '  "files": {\n'
	n=0
	for pair in "${FILES[@]}"; do
		n=$((n + 1))
		sep=","
		[ $n -lt ${#FILES[@]} ] || sep=""
		printf '    "%s": "%s"%s\n' "${pair%%:*}" "$(sha "$STAGE${pair%%:*}")" "$sep"
	done
	printf '  },\n'
	printf '  "initramfs_sha256": "%s"\n' "$(sha "$OUT/initramfs.cpio.gz")"
	printf '}\n'
} >"$OUT/versions.json.tmp"
mv "$OUT/versions.json.tmp" "$OUT/versions.json"

echo "mkguest: $OUT: kernel $KPKG $KVER ($KREL), busybox-static $BBVER," \
	"initramfs $(stat -c %s "$OUT/initramfs.cpio.gz") bytes" >&2
