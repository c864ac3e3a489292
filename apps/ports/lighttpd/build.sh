#!/usr/bin/env bash
# lighttpd from Debian's `lighttpd` source package: one static musl binary with its modules
# compiled in (LIGHTTPD_STATIC), linked with the
# user-space socket library (lib/sock: ld --wrap, $AXSOCK_MUSL). Output: build/ports/out/lighttpd/lighttpd. Its configuration
# is rootfs/etc/lighttpd.conf.
source "$(dirname "$0")/../lib.sh"

# The modules a static lighttpd can load (src/plugin-static.h). mod_indexfile, mod_dirlisting
# and mod_staticfile are loaded by every configuration, so they must be here.
MODULES="mod_access mod_accesslog mod_alias mod_dirlisting mod_indexfile mod_redirect
mod_setenv mod_staticfile mod_status"

fetch_source lighttpd 1.4.69-1
work_dir lighttpd
unpack "$W/src"
cd "$W/src"

# musl has no <sys/queue.h> (used by the bundled ls-hpack): take glibc's, which includes
# nothing else, into a private include directory.
mkdir -p "$W/inc/sys"
cp /usr/include/x86_64-linux-gnu/sys/queue.h "$W/inc/sys/queue.h"

for m in $MODULES; do
	echo "PLUGIN_INIT($m)"
done > src/plugin-static.h

# Every module of src/Makefile.am's static list is compiled in; the ones plugin-static.h does
# not name are unreferenced, and -ffunction-sections with --gc-sections drops them. No TLS,
# no regular expressions (pcre2), no compression (mod_deflate is not loaded). libtool
# swallows -static, not --static.
step "configuring (musl-gcc, LIGHTTPD_STATIC, modules: $(echo $MODULES))"
LIGHTTPD_STATIC=yes ./configure CC=musl-gcc \
	CPPFLAGS="-isystem $W/inc" CFLAGS="-O2 -ffunction-sections -fdata-sections" \
	LDFLAGS="--static -Wl,--gc-sections $(axsock_ldflags)" LIBS="$AXSOCK_MUSL" \
	--enable-static --disable-shared --without-openssl --without-pcre --without-pcre2 \
	--without-zlib --without-bzip2 --without-zstd --without-brotli --without-libdeflate \
	--without-lua --without-mysql --without-pgsql --without-ldap --without-pam

step "building (-j$JOBS)"
# versionstamp.h and the config parser are built sources: make them first.
make -C src parsers versionstamp
make -j"$JOBS" -C src lighttpd
axsock_check src/lighttpd
strip src/lighttpd
install_out lighttpd src/lighttpd
