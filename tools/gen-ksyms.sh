#!/bin/sh
# Writes the kernel symbol table for backtraces (section .ksyms) as assembly, from the
# function symbols of a first-pass kernel link: usage gen-ksyms.sh kernel.elf > ksyms.S
set -eu
nm -n --defined-only "$1" | awk '
	$2 ~ /^[tT]$/ && $1 ~ /^ffffffff8/ { addr[n] = $1; name[n] = $3; n++ }
	END {
		print "\t.section .ksyms, \"a\""
		print "\t.balign 8"
		printf "\t.quad %d\n", n
		for (i = 0; i < n; i++) printf "\t.quad 0x%s, .Lks%d\n", addr[i], i
		for (i = 0; i < n; i++) printf ".Lks%d: .asciz \"%s\"\n", i, name[i]
	}'
