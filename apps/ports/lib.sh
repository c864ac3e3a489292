# Shared helpers for the port recipes (apps/ports/*/build.sh); sourced, not run.
#
#   fetch_source PKG VERSION   Debian source package PKG, version VERSION if the archive still
#                              serves it (else its current one, with a warning), downloaded
#                              into build/ports/src/PKG and unpacked there with the Debian
#                              patches applied, once. Sets SRC_DIR and SRC_VERSION.
#   fresh_copy DIR             copies SRC_DIR to DIR (removed first): every build starts clean.
#   kernel_headers DIR         copies the host's Linux UAPI headers into DIR, for musl-gcc
#                              (whose include path has none): pass -isystem DIR.
#   install_out APP FILE...    copies finished files (or directories) into build/ports/out/APP, last, so that a
#                              failed build leaves no output that looks up to date.

set -euo pipefail

PORTS_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PORTS_DIR=$PORTS_TOP/build/ports
PORTS_SRC=$PORTS_DIR/src
PORTS_WORK=$PORTS_DIR/work
PORTS_OUT=$PORTS_DIR/out
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}

warn() { echo "WARNING: $*" >&2; }
step() { echo "==> $*"; }

fetch_source() {
	local pkg=$1 pinned=$2
	local dir=$PORTS_SRC/$pkg
	local stamp=$dir/.unpacked
	if [ ! -f "$stamp" ]; then
		step "fetching Debian source package $pkg (expected version $pinned)"
		rm -rf "$dir"
		mkdir -p "$dir/dl"
		# The download is done in dl/, and an archive that has moved on (it keeps only the
		# newest version of a suite) gets the current version, with a warning.
		if ! (cd "$dir/dl" && apt-get source --download-only -q "$pkg=$pinned"); then
			warn "$pkg $pinned is not served any more; taking the archive's current version"
			(cd "$dir/dl" && apt-get source --download-only -q "$pkg")
		fi
		local dsc
		dsc=$(find "$dir/dl" -maxdepth 1 -name "${pkg}_*.dsc" | sort | tail -n 1)
		[ -n "$dsc" ] || { echo "no .dsc for $pkg downloaded" >&2; return 1; }
		local version
		version=$(sed -n 's/^Version: //p' "$dsc" | head -n 1)
		step "unpacking $pkg $version with the Debian patches"
		dpkg-source -x "$dsc" "$dir/tree"
		echo "$version" > "$stamp"
	fi
	SRC_DIR=$dir/tree
	SRC_VERSION=$(cat "$stamp")
	if [ "$SRC_VERSION" != "$pinned" ]; then
		warn "$pkg: building Debian version $SRC_VERSION, the recipe was written for $pinned"
	fi
	step "$pkg source: $SRC_DIR (Debian $SRC_VERSION)"
}

fresh_copy() {
	rm -rf "$1"
	mkdir -p "$(dirname "$1")"
	cp -a "$SRC_DIR" "$1"
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
