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
cat > "$tmp/boot/grub/grub.cfg" <<CFG
set timeout=0
set default=0
serial --unit=0 --speed=115200
terminal_input console serial
terminal_output console serial
menuentry "Axolotl" {
	multiboot2 /boot/axolotl.elf $cmdline
	boot
}
CFG
grub-mkrescue -o "$out.tmp" "$tmp" >"$tmp/log" 2>&1 || { cat "$tmp/log" >&2; exit 1; }
mv "$out.tmp" "$out"
