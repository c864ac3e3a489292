#!/usr/bin/env bash
# memcached from Debian's `memcached` source package, a static musl binary linked with our
# static libevent (apps/ports/libevent) and the
# user-space socket library (lib/sock: ld --wrap, $AXSOCK_MUSL). Output: build/ports/out/memcached/memcached.
source "$(dirname "$0")/../lib.sh"

LIBEVENT=$PORTS_OUT/libevent
[ -f "$LIBEVENT/lib/libevent.a" ] || { echo "libevent is not built (apps/ports/libevent)" >&2; exit 1; }

fetch_source memcached 1.6.18-1+deb12u1
work_dir memcached
unpack "$W/src"
cd "$W/src"

# The Debian patches touch configure.ac and Makefile.am: regenerate the build files.
step "autoreconf"
autoreconf -fi

# No SASL, no TLS, no documentation; memcached links with plain cc (no libtool), so -static
# reaches the linker.
step "configuring (musl-gcc, static, libevent from $LIBEVENT)"
./configure CC=musl-gcc LDFLAGS="-static $(axsock_ldflags)" LIBS="$AXSOCK_MUSL" --with-libevent="$LIBEVENT" \
	--disable-sasl --disable-sasl-pwdb --disable-tls --disable-docs --disable-coverage

step "building (-j$JOBS)"
make -j"$JOBS" memcached
axsock_check memcached
strip memcached
install_out memcached memcached
