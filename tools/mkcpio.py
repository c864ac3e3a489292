#!/usr/bin/env python3
"""Packs a directory into a newc (SVR4 "070701") cpio archive: the initrd the vfs server
loads as its root file system. Directories and regular files only; owner root, mtime 0 so
the archive is reproducible.   mkcpio.py DIR OUTPUT"""
import os
import sys


def entry(name, mode, data, ino):
    fields = [ino, mode, 0, 0, 2 if mode & 0o040000 else 1, 0, len(data), 0, 0, 0, 0, len(name) + 1, 0]
    hdr = b"070701" + b"".join(b"%08x" % f for f in fields)
    out = hdr + name.encode() + b"\0"
    out += b"\0" * (-len(out) % 4)
    out += data + b"\0" * (-len(data) % 4)
    return out


def main():
    root, output = sys.argv[1], sys.argv[2]
    parts, ino = [], 1
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        rel = os.path.relpath(dirpath, root)
        if rel != ".":
            parts.append(entry(rel, 0o040755, b"", ino))
            ino += 1
        for f in sorted(filenames):
            path = os.path.join(dirpath, f)
            name = f if rel == "." else os.path.join(rel, f)
            mode = 0o100755 if os.access(path, os.X_OK) else 0o100644
            with open(path, "rb") as fh:
                parts.append(entry(name, mode, fh.read(), ino))
            ino += 1
    parts.append(entry("TRAILER!!!", 0, b"", 0))
    with open(output, "wb") as fh:
        fh.write(b"".join(parts))


if __name__ == "__main__":
    main()
