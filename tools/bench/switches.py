#!/usr/bin/env python3
"""Who runs after whom: reads a saved /proc/axolotl/switches (the kernel's switch trace,
docs/benchmarks.md "Who wakes whom") and prints, per unit of work, how often each process
was switched to and who had woken it, and what the processes switched away from were
blocked in.

    python3 tools/bench/switches.py FILE [--unit lx.288]

--unit: the event that counts one unit of work, as `FROM:WHY` or `WHY` (default `lx.288`,
an accept4: one per HTTP connection). Only the switches from the first such event to the
last are counted (not the `cat` that read the file), divided by the units between."""
import argparse
import collections
import re
import sys


def parse(text):
    """The trace's events: (seq, tsc, cpu, from, to, why, waker)."""
    evs = []
    for line in text.splitlines():
        f = line.split()
        if len(f) == 7 and f[0].isdigit():
            evs.append((int(f[0]), int(f[1]), int(f[2]), f[3], f[4], f[5], f[6]))
    return evs


def summarize(evs, unit):
    frm, _, why = unit.rpartition(":")
    at = [i for i, e in enumerate(evs) if e[5] == why and (not frm or e[3] == frm)]
    evs = evs[at[0]:at[-1]] if len(at) > 1 else []
    units = len(at) - 1
    woken = collections.Counter((e[4], e[6]) for e in evs)
    to = collections.Counter(e[4] for e in evs)
    blocked = collections.Counter((e[3], e[5]) for e in evs)
    return units, to, woken, blocked


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file")
    ap.add_argument("--unit", default="lx.288")
    a = ap.parse_args()
    evs = parse(open(a.file).read())
    units, to, woken, blocked = summarize(evs, a.unit)
    if units < 1:
        sys.exit(f"switches: no {a.unit} in {len(evs)} switches")
    print(f"{sum(to.values())} switches over {units} units ({a.unit}): {sum(to.values()) / units:.1f} per unit")
    print("switched to, per unit (woken by):")
    for p, n in to.most_common():
        by = ", ".join(f"{w} {c / units:.2f}" for (q, w), c in woken.most_common() if q == p)
        print(f"  {p:10s} {n / units:6.2f}   ({by})")
    print("switched from, per unit (blocked in):")
    for p in to:
        why = ", ".join(f"{w} {c / units:.2f}" for (q, w), c in blocked.most_common() if q == p)
        if why:
            print(f"  {p:10s} {why}")


if __name__ == "__main__":
    main()
