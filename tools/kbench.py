#!/usr/bin/env python3
"""Kernel microbenchmarks: boots Axolotl with utest's measuring tests and prints cycles per
IPC round trip (same core, cross core), per notify, per wait/wake across cores on the MWAIT
and the blocking path, and per request/reply over lib/chan channels across cores. Usage: tools/kbench.py [--cpu max] [--smp 4] [--runs 3]"""
import argparse
import os
import re
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "system"))
from conftest import EXIT_POWEROFF, run_user_tests  # noqa: E402

TESTS = ["pingpong-same", "pingpong-cross", "notify", "wait", "chan"]
FIELDS = [("IPC round trip, same core (avg)", "pingpong-same", "avg_cycles"),
          ("IPC round trip, same core (best)", "pingpong-same", "best_cycles"),
          ("IPC round trip, cross core (avg)", "pingpong-cross", "avg_cycles"),
          ("IPC round trip, cross core (best)", "pingpong-cross", "best_cycles"),
          ("notify, sender side", "notify", "cycles_per_notify"),
          ("wait/wake cross core, dedicated waiter", "wait", "dedicated_cycles"),
          ("wait/wake cross core, blocking waiter + notify", "wait", "blocking_cycles"),
          ("channel round trip, cross core (avg)", "chan", "avg_cycles"),
          ("channel round trip, cross core (best)", "chan", "best_cycles")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cpu", default="max")
    ap.add_argument("--smp", type=int, default=4)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    samples = {f[0]: [] for f in FIELDS}
    path = "?"
    for i in range(a.runs):
        r, res = run_user_tests("utest", TESTS, ("uecho",), smp=a.smp, cpu=a.cpu, timeout=300)
        lines = {name: rest for name, (status, rest) in res.items() if status == "PASS"}
        if r.returncode != EXIT_POWEROFF or len(lines) != len(TESTS):
            print(r.output[-2000:])
            sys.exit("kbench: run %d failed" % (i + 1))
        for label, test, key in FIELDS:
            samples[label].append(int(re.search(key + r"=(\d+)", lines[test]).group(1)))
        path = re.search(r"path=(\w+)", lines["wait"]).group(1)
    print("Axolotl kernel microbenchmarks: -cpu %s -smp %d, %d runs, TSC cycles (median [min-max])"
          % (a.cpu, a.smp, a.runs))
    print("accelerator: %s; dedicated-core wait path: %s" % (os.environ.get("ACCEL", "auto"), path))
    for label, _, _ in FIELDS:
        v = samples[label]
        print("  %-48s %9d  [%d-%d]" % (label, statistics.median(v), min(v), max(v)))


if __name__ == "__main__":
    main()
