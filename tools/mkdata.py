#!/usr/bin/env python3
"""Writes SIZE bytes of deterministic data to OUTPUT: SHA-256 in counter mode over a fixed
label, so every build makes the same file and a test can recompute it. Used for the web
server's large test file (Makefile: build/www/4mib.bin, /srv/www/4mib.bin in the initrd).

    mkdata.py SIZE OUTPUT [LABEL]
"""
import hashlib
import os
import sys


def data(size, label=b"axolotl"):
    out = bytearray()
    i = 0
    while len(out) < size:
        out += hashlib.sha256(label + i.to_bytes(8, "little")).digest()
        i += 1
    return bytes(out[:size])


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    label = sys.argv[3].encode() if len(sys.argv) == 4 else b"axolotl"
    tmp = sys.argv[2] + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data(int(sys.argv[1]), label))
    os.replace(tmp, sys.argv[2])


if __name__ == "__main__":
    main()
