#!/bin/sh
# Builds a bootable GRUB 2 ISO (BIOS and, where grub-efi-amd64-bin is installed, UEFI).
# usage: mkiso.sh <kernel.elf> <output.iso> [kernel command line]
set -eu
kernel=$1
out=$2
cmdline=${3:-}
tmp=$(mktemp -d "${out%/*}/.iso.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/boot/grub"
cp "$kernel" "$tmp/boot/axolotl.elf"
root=$(cd "$(dirname "$0")/.." && pwd)
# The command line goes into a sed replacement: escape its special characters.
esc=$(printf '%s' "$cmdline" | sed 's/[&|\\]/\\&/g')
sed "s|@CMDLINE@|$esc|" "$root/boot/grub.cfg" > "$tmp/boot/grub/grub.cfg"
grub-mkrescue -o "$out.tmp" "$tmp" >"$tmp/log" 2>&1 || { cat "$tmp/log" >&2; exit 1; }
mv "$out.tmp" "$out"
