#!/usr/bin/env bash
# Redis from Debian's `redis` source package: redis-server and redis-cli, static musl
# binaries with the libraries Redis bundles (Lua, hiredis, hdr_histogram, linenoise), the C
# library's malloc (not the bundled jemalloc), no TLS and no systemd, redis-server linked
# with the user-space socket library (lib/sock: ld --wrap, $AXSOCK_MUSL).
# Output: build/ports/out/redis/redis-server, build/ports/out/redis/redis-cli.
source "$(dirname "$0")/../lib.sh"

fetch_source redis 5:7.0.15-1~deb12u10
work_dir redis
unpack "$W/src"
cd "$W/src"

# FINAL_LIBS is Redis's list of system libraries for Linux, given whole on the command line
# so that the socket library's archive comes after every object that calls what it wraps.
COMMON=(CC=musl-gcc MALLOC=libc BUILD_TLS=no USE_SYSTEMD=no)
step "building redis-server (-j$JOBS, musl-gcc, static, lib/sock)"
make -j"$JOBS" "${COMMON[@]}" LDFLAGS="-static $(axsock_ldflags)" \
	FINAL_LIBS="-lm -ldl -pthread -lrt $AXSOCK_MUSL" redis-server
axsock_check src/redis-server
mkdir -p "$W/bin"
cp src/redis-server "$W/bin/"
# (other flags make Redis's Makefile clean the tree first: redis-server was kept aside)
step "building redis-cli (-j$JOBS, musl-gcc, static)"
make -j"$JOBS" "${COMMON[@]}" LDFLAGS="-static" redis-cli
cp src/redis-cli "$W/bin/"
strip "$W/bin/redis-server" "$W/bin/redis-cli"
install_out redis "$W/bin/redis-server" "$W/bin/redis-cli"
