#!/usr/bin/env bash
# iperf 2 from Debian's `iperf` source package: a static binary built with the host's gcc/g++
# and glibc (iperf 2 is C++; musl-gcc has no C++ library),
# linked with the user-space socket library built for glibc (lib/sock: ld --wrap, $AXSOCK_GLIBC). Output: build/ports/out/iperf/iperf.
source "$(dirname "$0")/../lib.sh"

fetch_source iperf 2.1.8+dfsg-1
work_dir iperf
unpack "$W/src"
cd "$W/src"

# The Debian patches touch the build files: regenerate them.
step "autoreconf"
autoreconf -fi

# iperf links with plain g++ (no libtool), so -static reaches the linker. No build id: it
# hashes the unstripped binary, whose debugging information names the build directory.
step "configuring (gcc/g++, glibc, static)"
./configure LDFLAGS="-static -Wl,--build-id=none $(axsock_ldflags)" LIBS="$AXSOCK_GLIBC"

step "building (-j$JOBS)"
make -j"$JOBS"
axsock_check src/iperf
strip src/iperf
install_out iperf src/iperf
