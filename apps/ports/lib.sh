# Shared helpers for the port recipes (apps/ports/*/build.sh); sourced, not run.
#
#   fetch_source PKG VERSION   downloads Debian source package PKG into build/ports/src/PKG,
#                              once: version VERSION if the archive still serves it, else its
#                              current one, with a warning. Sets SRC_DSC and SRC_VERSION.
#   work_dir APP               sets W=build/ports/work/APP, empty, and removes it when the
#                              recipe ends (PORTS_KEEP_WORK=1 keeps it; see below).
#   unpack DIR                 unpacks the fetched package into DIR with the Debian patches.
#   kernel_headers DIR         copies the host's Linux UAPI headers into DIR, for musl-gcc
#                              (whose include path has none): pass -isystem DIR.
#   install_out APP FILE...    copies finished files (or directories) into build/ports/out/APP,
#                              last, so that a failed build leaves no output that looks done.
#
# Why the unpacked trees do not stay under build/: the top-level Makefile includes every
# file matching build/**/*.d (its dependency files), and these trees hold such names
# (init.d and conf.d directories, memcached's dtrace script memcached_dtrace.d). So only the
# downloads (build/ports/src), the outputs (build/ports/out) and the logs stay.

set -euo pipefail

PORTS_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PORTS_DIR=${PORTS_DIR:-$PORTS_TOP/build/ports}
PORTS_SRC=$PORTS_DIR/src
PORTS_WORK=$PORTS_DIR/work
PORTS_OUT=$PORTS_DIR/out
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}

warn() { echo "WARNING: $*" >&2; }
step() { echo "==> $*"; }

fetch_source() {
	local pkg=$1 pinned=$2
	local dir=$PORTS_SRC/$pkg
	local stamp=$dir/.fetched
	if [ ! -f "$stamp" ]; then
		step "fetching Debian source package $pkg (expected version $pinned)"
		rm -rf "$dir"
		mkdir -p "$dir"
		# An archive that has moved on (it serves only the newest version of a suite) gets
		# the current version, with a warning.
		if ! (cd "$dir" && apt-get source --download-only -q "$pkg=$pinned"); then
			warn "$pkg $pinned is not served any more; taking the archive's current version"
			rm -rf "$dir"
			mkdir -p "$dir"
			(cd "$dir" && apt-get source --download-only -q "$pkg")
		fi
		local dsc
		dsc=$(find "$dir" -maxdepth 1 -name "${pkg}_*.dsc" | sort | tail -n 1)
		[ -n "$dsc" ] || { echo "no .dsc for $pkg downloaded" >&2; return 1; }
		basename "$dsc" > "$stamp"
	fi
	SRC_DSC=$dir/$(cat "$stamp")
	SRC_VERSION=$(sed -n 's/^Version: //p' "$SRC_DSC" | head -n 1)
	if [ "$SRC_VERSION" != "$pinned" ]; then
		warn "$pkg: building Debian version $SRC_VERSION, the recipe was written for $pinned"
	fi
	step "$pkg: Debian $SRC_VERSION ($SRC_DSC)"
}

work_dir() {
	W=$PORTS_WORK/$1
	rm -rf "$W"
	mkdir -p "$W"
	if [ "${PORTS_KEEP_WORK:-}" != 1 ]; then
		# shellcheck disable=SC2064
		trap "rm -rf '$W'" EXIT
	else
		warn "keeping $W: remove it before running make (it holds *.d files)"
	fi
}

unpack() {
	step "unpacking $(basename "$SRC_DSC") with the Debian patches"
	rm -rf "$1"
	dpkg-source -x "$SRC_DSC" "$1"
}

kernel_headers() {
	local dir=$1
	rm -rf "$dir"
	mkdir -p "$dir"
	cp -a /usr/include/linux /usr/include/asm-generic /usr/include/mtd "$dir"/
	cp -a /usr/include/x86_64-linux-gnu/asm "$dir"/asm
}

install_out() {
	local app=$1
	shift
	mkdir -p "$PORTS_OUT/$app"
	local f
	for f in "$@"; do
		local name
		name=$(basename "$f")
		rm -rf "$PORTS_OUT/$app/.$name.tmp"
		cp -a "$f" "$PORTS_OUT/$app/.$name.tmp"
		rm -rf "$PORTS_OUT/$app/$name"
		mv "$PORTS_OUT/$app/.$name.tmp" "$PORTS_OUT/$app/$name"
	done
}

# The user-space socket library (lib/sock, README.md): `axsock_ldflags` prints the ld --wrap
# flags made from $AXSOCK_SYMS (lib/sock/wrap.syms); a recipe adds them to LDFLAGS and the
# archive ($AXSOCK_MUSL or $AXSOCK_GLIBC, passed by ports.mk) to LIBS, after the program's
# own libraries. `axsock_check BINARY` (before strip) fails unless it carries the wrappers.
axsock_ldflags() {
	[ -f "${AXSOCK_SYMS:-}" ] || { echo "AXSOCK_SYMS is not set (run through make ports)" >&2; return 1; }
	sed -e 's/#.*//' "$AXSOCK_SYMS" | awk 'NF { printf "-Wl,--wrap=%s ", $1 }'
}
axsock_check() {
	local sym syms
	syms=$(nm "$1")
	for sym in __wrap_read __wrap_write __wrap_recvfrom __wrap_close __wrap_accept; do
		grep -q " T $sym\$" <<< "$syms" || { echo "$1 does not carry $sym (lib/sock not linked)" >&2; return 1; }
	done
	step "$(basename "$1"): linked with lib/sock ($(grep -c ' T __wrap_' <<< "$syms") wrapped calls)"
}
