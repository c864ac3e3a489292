#!/usr/bin/env bash
# Host-side sanity check of a port's binary: a stripped, static x86-64 ELF executable (no
# program interpreter, no dynamic section) that runs on the host and prints what is expected.
#   check.sh [--any-status] FILE REGEX [ARG...]
# runs FILE ARG... and wants REGEX (grep -E) in its output (standard output and error);
# the exit status must be 0 unless --any-status (iperf -v exits 1).
set -euo pipefail
any=
if [ "${1:-}" = --any-status ]; then
	any=1
	shift
fi
file=$1 regex=$2
shift 2
fail() { echo "ports: check of $file failed: $*" >&2; exit 1; }

hdr=$(readelf -h "$file" 2>&1) || fail "not an ELF file"
grep -q 'Class: *ELF64' <<< "$hdr" || fail "not ELF64"
grep -q 'Machine: *Advanced Micro Devices X86-64' <<< "$hdr" || fail "not x86-64"
grep -q 'Type: *EXEC' <<< "$hdr" || fail "not a (non-PIE) executable"
phdrs=$(readelf -lW "$file")
! grep -q 'INTERP' <<< "$phdrs" || fail "has a program interpreter (dynamically linked)"
! grep -q 'DYNAMIC' <<< "$phdrs" || fail "has a dynamic section"
! readelf -SW "$file" | grep -q '\.symtab' || fail "not stripped"

status=0
out=$("$file" "$@" 2>&1) || status=$?
[ -n "$any" ] || [ "$status" = 0 ] || fail "'$(basename "$file") $*' exited with $status: $out"
grep -Eq -- "$regex" <<< "$out" || fail "'$(basename "$file") $*' did not print /$regex/: $out"
echo "ports: $(basename "$file"): static, stripped, $(stat -c %s "$file") bytes; '$(basename "$file") $*': $(head -n 1 <<< "$out")" >&2
