#!/bin/bash
# Fetches lwIP 2.1.3 from Debian's source package (apps/ports/lib.sh's fetch_source: once,
# cached in build/ports/src/lwip) and unpacks it, with the Debian patches, into
# build/ports/out/lwip/tree. Nothing of lwIP is committed. The tree lives under build/ports,
# which the top-level Makefile's dependency-file search skips.
#   lib/lwip/fetch.sh        (make runs it through $(LWIP_STAMP), lib/lwip/lwip.mk)
set -euo pipefail
source "$(dirname "$0")/../../apps/ports/lib.sh"

fetch_source lwip 2.1.3+dfsg1-2
OUT=$PORTS_OUT/lwip
mkdir -p "$OUT"
rm -rf "$OUT/tree.tmp" "$OUT/tree"
unpack "$OUT/tree.tmp" >/dev/null
[ -f "$OUT/tree.tmp/src/core/ipv4/ip4.c" ] || { echo "lwip: unexpected source layout" >&2; exit 1; }
mv "$OUT/tree.tmp" "$OUT/tree"
echo "$SRC_VERSION" > "$OUT/.stamp"
