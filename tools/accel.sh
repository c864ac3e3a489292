#!/bin/sh
# Prints the QEMU accelerator to use for ACCEL=auto: kvm only where /dev/kvm is backed by real
# VT-x/AMD-V. The kvm_pvm module found on some cloud machines cannot run unmodified kernels.
if [ -r /dev/kvm ] && [ -w /dev/kvm ] && [ ! -d /sys/module/kvm_pvm ] &&
   grep -qwE 'vmx|svm' /proc/cpuinfo 2>/dev/null; then
	echo kvm
else
	echo tcg
fi
