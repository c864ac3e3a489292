#!/usr/bin/env python3
"""Builds a bootable GRUB 2 ISO (BIOS, and UEFI where grub-efi-amd64-bin is installed).

usage: mkiso.py KERNEL OUTPUT [--cmdline "kernel options"] [--module "PATH [ARGS]"]...

Each module is copied to /boot/mods/<name> and loaded with the command line
"<name> ARGS"; the kernel starts the first one (init), init starts the rest."""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kernel")
    ap.add_argument("output")
    ap.add_argument("--cmdline", default="")
    ap.add_argument("--module", action="append", default=[])
    a = ap.parse_args()
    out_dir = os.path.dirname(os.path.abspath(a.output))
    os.makedirs(out_dir, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out_dir, prefix=".iso.") as tmp:
        os.makedirs(os.path.join(tmp, "boot", "grub"))
        os.makedirs(os.path.join(tmp, "boot", "mods"))
        shutil.copy(a.kernel, os.path.join(tmp, "boot", "axolotl.elf"))
        lines = []
        for spec in a.module:
            path, _, args = spec.partition(" ")
            name = os.path.basename(path)
            shutil.copy(path, os.path.join(tmp, "boot", "mods", name))
            lines.append(f"\tmodule2 /boot/mods/{name} {name} {args}".rstrip())
        with open(os.path.join(ROOT, "boot", "grub.cfg")) as f:
            cfg = f.read()
        cfg = cfg.replace("@CMDLINE@", a.cmdline).replace("\t@MODULES@", "\n".join(lines))
        with open(os.path.join(tmp, "boot", "grub", "grub.cfg"), "w") as f:
            f.write(cfg)
        r = subprocess.run(["grub-mkrescue", "-o", a.output + ".tmp", tmp], capture_output=True, text=True)
        if r.returncode:
            sys.stderr.write(r.stdout + r.stderr)
            sys.exit(1)
        os.replace(a.output + ".tmp", a.output)


if __name__ == "__main__":
    main()
