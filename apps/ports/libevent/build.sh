#!/usr/bin/env bash
# libevent from Debian's `libevent` source package, as a static musl library for memcached
# (not installed in the initrd). Output: build/ports/out/libevent/{include,lib}.
source "$(dirname "$0")/../lib.sh"

fetch_source libevent 2.1.12-stable-8+deb12u1
work_dir libevent
unpack "$W/src"
cd "$W/src"

# The Debian patches touch the build files: regenerate them.
step "autoreconf"
autoreconf -fi

step "configuring (musl-gcc, static only, no openssl, no samples or tests)"
./configure CC=musl-gcc --prefix="$W/inst" --disable-shared --enable-static \
	--disable-openssl --disable-samples --disable-libevent-regress --disable-debug-mode

step "building (-j$JOBS)"
make -j"$JOBS"
make install
install_out libevent "$W/inst/include" "$W/inst/lib"
