#!/usr/bin/env python3
"""The one place that builds Axolotl's QEMU command line.

Used by `make run` (which execs it) and by the system tests (which import it), so both boot
the same virtual machine. Accelerator: auto picks KVM only where tools/accel.sh says real
hardware virtualization works, TCG (multi-threaded) everywhere else.

QEMU itself: build/qemu's QEMU 10 (tools/fetch-qemu.sh, run by `make deps`), or the binary
named by the environment variable QEMU.
"""
import argparse
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QEMU_DEFAULT = os.path.join(ROOT, "build", "qemu", "bin", "qemu-system-x86_64")


def qemu_binary():
    """$QEMU if set, else build/qemu's wrapper (tools/fetch-qemu.sh)."""
    q = os.environ.get("QEMU")
    if q:
        return q
    if not os.access(QEMU_DEFAULT, os.X_OK):
        raise SystemExit(f"{QEMU_DEFAULT} is missing: run `make deps` (tools/fetch-qemu.sh fetches QEMU 10), "
                         "or set QEMU=/path/to/qemu-system-x86_64")
    return QEMU_DEFAULT


def qemu_version(qemu=None):
    """The first line of `qemu --version`: "QEMU emulator version 10.0.2 (Debian ...)"."""
    out = subprocess.run([qemu or qemu_binary(), "--version"], capture_output=True, text=True)
    return out.stdout.split("\n")[0].strip()


def resolve_accel(accel):
    if accel == "auto":
        out = subprocess.run([os.path.join(ROOT, "tools", "accel.sh")], capture_output=True, text=True)
        accel = out.stdout.strip() or "tcg"
    if accel not in ("kvm", "tcg"):
        raise SystemExit(f"ACCEL must be auto, kvm or tcg, not {accel!r}")
    return accel


# The NICs by the names `make run NIC=` and `make bench NIC=` take: QEMU's device for each
# (virtio-net without its legacy interface: Axolotl drives virtio 1.0 only).
NIC_MODELS = {"e1000": "e1000", "virtio": "virtio-net-pci,disable-legacy=on", "igb": "igb"}


def nic_device(name):
    """QEMU's -device for a NIC name (NIC_MODELS), or the name itself (a QEMU model)."""
    return NIC_MODELS.get(name, name)


def gdb_args(port):
    """QEMU's gdb stub on 127.0.0.1 only, the machine stopped until gdb says continue."""
    return ("-gdb", f"tcp:127.0.0.1:{int(port)}", "-S")


def qemu_command(iso, smp=4, mem=512, cpu=None, accel="auto", serial="stdio", extra=(), uefi=False, net=()):
    """net: QEMU arguments for the network devices; none means no NIC at all (QEMU would
    otherwise add an unrestricted user-networking one)."""
    accel = resolve_accel(accel)
    if cpu is None:
        cpu = "host" if accel == "kvm" else "max"
    cmd = [
        qemu_binary(),
        "-machine", "q35",
        "-accel", "kvm" if accel == "kvm" else "tcg,thread=multi",
        "-cpu", cpu,
        "-smp", str(smp),
        "-m", str(mem),
        "-display", "none",
        "-no-reboot",
        "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04",
        "-serial", serial,
        "-cdrom", iso,
        "-boot", "d",
    ]
    if uefi:
        cmd += ["-bios", "/usr/share/ovmf/OVMF.fd"]
    cmd += list(net) if net else ["-nic", "none"]
    return cmd + list(extra)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--iso", required=True)
    ap.add_argument("--smp", type=int, default=4)
    ap.add_argument("--mem", type=int, default=512)
    ap.add_argument("--cpu", default=None)
    ap.add_argument("--accel", default="auto")
    ap.add_argument("--uefi", action="store_true")
    ap.add_argument("--nic", default="e1000", help="NIC model on restricted user networking, or none")
    ap.add_argument("--fwd", action="append", default=[],
                    help="host forward PROTO:HOSTPORT:GUESTPORT, bound to 127.0.0.1 (repeatable)")
    ap.add_argument("--monitor", help="also a QEMU monitor on this unix socket (for tools/qprof.py)")
    ap.add_argument("--gdb", type=int, help="QEMU's gdb stub on 127.0.0.1:PORT, stopped before the "
                    "first instruction (make debug)")
    ap.add_argument("--print", action="store_true", help="print the command instead of running it")
    a = ap.parse_args()
    # With a terminal, multiplex the monitor on stdio (Ctrl-A X quits); without one, plain serial.
    serial = "mon:stdio" if sys.stdin.isatty() else "stdio"
    net = ()
    if a.nic != "none":
        # restrict=on: the guest reaches nothing outside this machine; forwards only from
        # 127.0.0.1.
        fw = ""
        for f in a.fwd:
            proto, hp, gp = f.split(":")
            fw += f",hostfwd={proto}:127.0.0.1:{int(hp)}-:{int(gp)}"
        net = ("-netdev", "user,id=n0,restrict=on" + fw, "-device", f"{nic_device(a.nic)},netdev=n0")
    extra = ("-monitor", f"unix:{a.monitor},server,nowait") if a.monitor else ()
    if a.gdb:
        extra += gdb_args(a.gdb)
    cmd = qemu_command(a.iso, a.smp, a.mem, a.cpu, a.accel, serial, extra=extra, uefi=a.uefi, net=net)
    if a.print:
        print(" ".join(cmd))
        return
    sys.stdout.flush()
    os.execvp(cmd[0], cmd)


if __name__ == "__main__":
    main()
