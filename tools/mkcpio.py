#!/usr/bin/env python3
"""Packs a directory into a newc (SVR4 "070701") cpio archive: the initrd the vfs server
loads as its root file system. Owner root, mtime 0, entries in a fixed order, so the archive
is reproducible.

    mkcpio.py DIR OUTPUT [--file /PATH=HOSTFILE]... [--symlink /PATH=TARGET]... [@ARGFILE]...

DIR's directories and regular files are packed (mode 0755 for files executable on the host,
0644 otherwise; directories 0755, /tmp 01777, /root 0700). --file adds the host file HOSTFILE at PATH with mode 0755 (the ports'
binaries); --symlink adds a symbolic link at PATH (mode 0120777) whose data is TARGET.
@ARGFILE reads further arguments from ARGFILE, one per line (as --symlink=/bin/ls=/bin/busybox).
Directories implied by a path are made (0755) and every directory comes before its contents.
A path given twice, or a path under something that is not a directory, is an error."""
import argparse
import os
import sys

S_IFDIR, S_IFREG, S_IFLNK = 0o040000, 0o100000, 0o120000


def entry(name, mode, data, ino):
    fields = [ino, mode, 0, 0, 2 if mode & 0o170000 == S_IFDIR else 1, 0, len(data), 0, 0, 0, 0,
              len(name) + 1, 0]
    hdr = b"070701" + b"".join(b"%08x" % f for f in fields)
    out = hdr + name.encode() + b"\0"
    out += b"\0" * (-len(out) % 4)
    out += data + b"\0" * (-len(data) % 4)
    return out


class Tree:
    """Archive entries by path (relative, no leading slash): (mode, data)."""

    def __init__(self):
        self.entries = {}

    def add(self, path, mode, data, origin):
        parts = [p for p in path.strip("/").split("/") if p not in ("", ".")]
        if not parts or ".." in parts:
            sys.exit("mkcpio: bad archive path %r (%s)" % (path, origin))
        for i in range(1, len(parts)):
            parent = "/".join(parts[:i])
            have = self.entries.get(parent)
            if have is None:
                self.entries[parent] = (S_IFDIR | 0o755, b"")
            elif have[0] & 0o170000 != S_IFDIR:
                sys.exit("mkcpio: /%s (%s) lies under /%s, which is not a directory"
                         % ("/".join(parts), origin, parent))
        name = "/".join(parts)
        have = self.entries.get(name)
        if have is not None:
            # A directory made for a deeper path and then named itself is not a clash.
            if mode & 0o170000 == S_IFDIR and have[0] & 0o170000 == S_IFDIR:
                self.entries[name] = (mode, data)
                return
            kind = {S_IFDIR: "directory", S_IFREG: "file", S_IFLNK: "symlink"}
            sys.exit("mkcpio: /%s given twice: a %s (by %s) where there is already a %s"
                     % (name, kind[mode & 0o170000], origin, kind[have[0] & 0o170000]))
        self.entries[name] = (mode, data)

    def write(self, output):
        parts, ino = [], 1
        # Sorting on the list of components puts every directory before its contents.
        for name in sorted(self.entries, key=lambda n: n.split("/")):
            mode, data = self.entries[name]
            parts.append(entry(name, mode, data, ino))
            ino += 1
        parts.append(entry("TRAILER!!!", 0, b"", 0))
        tmp = output + ".tmp"
        with open(tmp, "wb") as fh:
            fh.write(b"".join(parts))
        os.replace(tmp, output)


def add_dir(tree, root):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        rel = os.path.relpath(dirpath, root)
        if rel != ".":
            # /tmp is everyone's, sticky, /root its owner's alone (as on every Linux system;
            # git keeps no modes)
            special = {"tmp": 0o1777, "root": 0o700}
            tree.add(rel, S_IFDIR | special.get(rel, 0o755), b"", root)
        for f in sorted(filenames):
            path = os.path.join(dirpath, f)
            name = f if rel == "." else os.path.join(rel, f)
            mode = S_IFREG | (0o755 if os.access(path, os.X_OK) else 0o644)
            with open(path, "rb") as fh:
                tree.add(name, mode, fh.read(), root)


def pair(text):
    path, sep, value = text.partition("=")
    if not sep or not path or not value:
        raise argparse.ArgumentTypeError("expected /PATH=VALUE, got %r" % text)
    return path, value


def main():
    ap = argparse.ArgumentParser(description="Packs DIR and extra entries into a newc cpio.",
                                 fromfile_prefix_chars="@")
    ap.add_argument("dir")
    ap.add_argument("output")
    ap.add_argument("--file", type=pair, action="append", default=[], metavar="/PATH=HOSTFILE",
                    help="add HOSTFILE at PATH, mode 0755")
    ap.add_argument("--symlink", type=pair, action="append", default=[], metavar="/PATH=TARGET",
                    help="add a symbolic link at PATH pointing to TARGET")
    args = ap.parse_args()

    tree = Tree()
    add_dir(tree, args.dir)
    for path, host in args.file:
        with open(host, "rb") as fh:
            tree.add(path, S_IFREG | 0o755, fh.read(), "--file " + host)
    for path, target in args.symlink:
        tree.add(path, S_IFLNK | 0o777, target.encode(), "--symlink " + target)
    tree.write(args.output)


if __name__ == "__main__":
    main()
