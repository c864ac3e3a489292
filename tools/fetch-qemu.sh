#!/bin/sh
# Fetches QEMU 10 from Debian's bookworm-backports into build/qemu, without touching the
# machine's apt configuration or installed packages (docs/decisions.md): a private apt tree
# (build/qemu/apt: its own sources list naming only bookworm-backports of the machine's
# Debian mirror, its own lists and cache) downloads the packages, `dpkg -x` unpacks them into
# build/qemu/root, and build/qemu/bin/qemu-system-x86_64 is a wrapper that runs that binary
# with its own firmware, data and modules. Everything that starts QEMU here runs the wrapper
# (tools/qemu_cmd.py; QEMU=/path/to/qemu-system-x86_64 overrides). The libraries it links
# against are bookworm's (brought by bookworm's qemu-system-x86, which tools/deps.sh keeps
# installed); the check below fails if one is missing or too old.
# Idempotent: prints nothing when build/qemu is already complete.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
Q=$ROOT/build/qemu
WRAP=$Q/bin/qemu-system-x86_64
WANT="QEMU emulator version 10."
SUITE=bookworm-backports
# qemu-system-x86 10 needs seabios >> 1.16.3-1~ (bookworm has 1.16.2); the two module
# packages hold the display and audio modules QEMU 10 probes at start-up (without them it
# would find bookworm's QEMU 7.2 modules in /usr/lib and complain that they do not match).
PKGS="qemu-system-x86 qemu-system-common qemu-system-data qemu-system-modules-opengl
qemu-system-modules-spice seabios"
# Libraries QEMU 10 needs at a version bookworm lacks: none for 10.0 (checked with ldd
# below); name their packages here should a later backport need one.
LIBPKGS=""

have() {
	[ -x "$WRAP" ] && [ -f "$Q/stamp" ] && "$WRAP" --version 2>/dev/null | head -n 1 | grep -q "^$WANT"
}
if have; then
	exit 0
fi

mkdir -p "$Q"
# One fetch at a time (make test and make run started together).
exec 9>"$Q/lock"
flock 9
if have; then
	exit 0
fi
echo "fetch-qemu: fetching QEMU 10 from $SUITE into build/qemu" >&2

# The machine's Debian mirror and key: the first deb822 stanza of debian.sources that serves
# deb for bookworm, else the first bookworm line of sources.list, else deb.debian.org.
MIRROR= KEY=
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
	set -- $(awk '
		/^[ \t]*$/ { if (deb && bw && uri != "") { print uri, key; exit } deb = bw = 0; uri = key = ""; next }
		/^Types:/ { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
		/^Suites:/ { for (i = 2; i <= NF; i++) if ($i == "bookworm") bw = 1 }
		/^URIs:/ { uri = $2 }
		/^Signed-By:/ { key = $2 }
		END { if (deb && bw && uri != "") print uri, key }' /etc/apt/sources.list.d/debian.sources | head -n 1)
	MIRROR=${1:-} KEY=${2:-}
fi
if [ -z "$MIRROR" ] && [ -f /etc/apt/sources.list ]; then
	MIRROR=$(awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i !~ /\]$/ && $i !~ /=/) {
		if ($(i + 1) == "bookworm") { print $i; exit } break } }' /etc/apt/sources.list)
fi
MIRROR=${MIRROR:-http://deb.debian.org/debian}
KEY=${KEY:-/usr/share/keyrings/debian-archive-keyring.gpg}

A=$Q/apt
mkdir -p "$A/sources.list.d" "$A/preferences.d" "$A/state/lists/partial" "$A/cache/archives/partial" "$A/debs"
echo "deb [signed-by=$KEY] $MIRROR $SUITE main" >"$A/sources.list"
# -o options: only this tree's sources, lists and cache; the downloads run as whoever runs
# this (apt's _apt sandbox user cannot write into build/).
APT_OPTS="-q -o Dir::Etc::SourceList=$A/sources.list -o Dir::Etc::SourceParts=$A/sources.list.d
-o Dir::Etc::PreferencesParts=$A/preferences.d -o Dir::State=$A/state -o Dir::Cache=$A/cache
-o APT::Sandbox::User=$(id -un)"
# shellcheck disable=SC2086
apt-get $APT_OPTS update >"$A/update.log" 2>&1 || { cat "$A/update.log" >&2; exit 1; }
rm -f "$A/debs/"*.deb
for p in $PKGS $LIBPKGS; do
	# shellcheck disable=SC2086
	(cd "$A/debs" && apt-get $APT_OPTS download "$p/$SUITE") >>"$A/download.log" 2>&1 ||
		{ cat "$A/download.log" >&2; exit 1; }
done

rm -rf "$Q/root" "$Q/bin" "$Q/stamp"
for d in "$A/debs/"*.deb; do
	dpkg -x "$d" "$Q/root"
done
mkdir -p "$Q/bin"
cat >"$WRAP" <<'EOF'
#!/bin/sh
# QEMU 10 from bookworm-backports, unpacked by tools/fetch-qemu.sh: its libraries first,
# its modules only (not the system QEMU's), its firmware and data ahead of the system's
# (ipxe's option ROMs still come from /usr/lib/ipxe/qemu).
R=$(cd "$(dirname "$(readlink -f "$0")")/../root" && pwd)
LD_LIBRARY_PATH=$R/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
QEMU_MODULE_DIR=$R/usr/lib/x86_64-linux-gnu/qemu
export LD_LIBRARY_PATH QEMU_MODULE_DIR
exec "$R/usr/bin/qemu-system-x86_64" -L "$R/usr/share/qemu" -L "$R/usr/share/seabios" "$@"
EOF
chmod +x "$WRAP"

# Every library the binary needs is there at a sufficient version: ldd finds them all, and
# the binary runs (the loader refuses a library whose symbol versions are too old).
missing=$(LD_LIBRARY_PATH=$Q/root/usr/lib/x86_64-linux-gnu ldd "$Q/root/usr/bin/qemu-system-x86_64" | grep 'not found' || true)
if [ -n "$missing" ]; then
	echo "fetch-qemu: libraries missing (add their packages to LIBPKGS or tools/deps.sh):" >&2
	echo "$missing" >&2
	exit 1
fi
got=$("$WRAP" --version 2>&1 | head -n 1)
case $got in
"$WANT"*) ;;
*) echo "fetch-qemu: expected $WANT*, got: $got" >&2; exit 1 ;;
esac
ls "$A/debs" >"$Q/stamp"
echo "fetch-qemu: $got in build/qemu/bin" >&2
