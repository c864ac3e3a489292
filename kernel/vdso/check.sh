#!/bin/sh
# Checks a freshly linked vDSO (kernel/vdso) before the kernel embeds it: the kernel maps the
# file as it is into every Linux process, so it must need no loader at all.
#   - an ELF shared object with one PT_LOAD at offset 0 and address 0, read+execute, whose
#     file size is its memory size, and a PT_DYNAMIC; no writable section but .dynamic;
#   - no relocations of any kind, no DT_NEEDED, no TEXTREL, no undefined symbols;
#   - the exported functions, each of version LINUX_2.6, found through DT_HASH and
#     DT_GNU_HASH (musl reads the first, glibc either), with DT_VERSYM and DT_VERDEF;
#   - small: the image fits the pages kernel/linux/vdso.c gives it (VDSO_MAX_PAGES).
# Usage: check.sh VDSO.so
set -eu
so=$1
fail() { echo "vdso check: $so: $*" >&2; exit 1; }

readelf -hW "$so" | grep -q 'Type: *DYN' || fail "not a shared object (ET_DYN)"
phdrs=$(readelf -lW "$so")
[ "$(echo "$phdrs" | grep -c '^ *LOAD ')" = 1 ] || fail "wants exactly one PT_LOAD"
echo "$phdrs" | grep -Eq '^ *LOAD +0x0+ 0x0+ 0x0+ (0x[0-9a-f]+) \1 R E ' ||
	fail "the PT_LOAD must be R E at offset 0, address 0, with file size = memory size"
echo "$phdrs" | grep -q '^ *DYNAMIC ' || fail "no PT_DYNAMIC"

# Writable data would be read-only here (and every process's): none but .dynamic, which
# nothing writes.
wsecs=$(readelf -SW "$so" | sed -n 's/^ *\[ *[0-9]*\] *\([^ ]*\) .* \([A-Z]*W[A-Z]*\) .*/\1/p' | grep -v '^\.dynamic$' || true)
[ -z "$wsecs" ] || fail "has writable sections: $wsecs"

relocs=$(readelf -rW "$so")
echo "$relocs" | grep -q 'There are no relocations in this file' || fail "has relocations: $relocs"
dyn=$(readelf -dW "$so")
for tag in NEEDED TEXTREL RELA REL JMPREL; do
	echo "$dyn" | grep -q "(${tag})" && fail "has DT_${tag}"
done
for tag in HASH GNU_HASH SYMTAB STRTAB VERSYM VERDEF; do
	echo "$dyn" | grep -q "(${tag})" || fail "no DT_${tag}"
done
[ -z "$(nm -D --undefined-only "$so")" ] || fail "undefined symbols: $(nm -D --undefined-only "$so")"

syms=$(readelf --dyn-syms -VW "$so")
for f in __vdso_clock_gettime __vdso_gettimeofday __vdso_time __vdso_clock_getres __vdso_getcpu; do
	echo "$syms" | grep -Eq " FUNC +(GLOBAL|WEAK) +DEFAULT +[0-9]+ ${f}@@LINUX_2\.6\$" ||
		fail "does not export ${f}@@LINUX_2.6"
done

size=$(wc -c < "$so")
[ "$size" -le $((4 * 4096)) ] || fail "is $size bytes, more than the 4 pages the kernel allows"
exit 0
