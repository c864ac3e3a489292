#!/usr/bin/env bash
# Runs one port's recipe (apps/ports/APP/build.sh) with its output in
# build/ports/log/APP.log; on failure shows the log's last 40 lines and fails.
#   run.sh APP
set -euo pipefail
app=$1
top=$(cd "$(dirname "$0")/../.." && pwd)
export PORTS_DIR=${PORTS_DIR:-$top/build/ports}
log=$PORTS_DIR/log/$app.log
mkdir -p "$PORTS_DIR/log"

for tool in apt-get dpkg-source musl-gcc gcc g++ autoreconf libtoolize make readelf; do
	if ! command -v "$tool" > /dev/null; then
		echo "ports: $app: '$tool' is missing; run 'make deps' (tools/deps.sh) first" >&2
		exit 1
	fi
done

echo "ports: building $app (log: ${log#"$top"/})" >&2
start=$(date +%s)
if ! "$top/apps/ports/$app/build.sh" > "$log" 2>&1; then
	echo "ports: $app FAILED after $(($(date +%s) - start)) s; last 40 lines of ${log#"$top"/}:" >&2
	tail -n 40 "$log" | sed 's/^/    /' >&2
	exit 1
fi
took=$(($(date +%s) - start))
echo "==> built in $took s" >> "$log"
echo "ports: $app built in $took s" >&2
grep '^WARNING:' "$log" | sed "s/^/ports: $app: /" >&2 || true
