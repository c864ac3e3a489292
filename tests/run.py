#!/usr/bin/env python3
"""Runs every test: the host unit tests (build/unit/test_*, built by `make unit`), then the
pytest system tests, and prints one closing `N passed, N failed` line. Exit status 0 only
when nothing failed."""
import glob
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def find_python_with_pytest():
    for py in (sys.executable, "python3", "/usr/bin/python3"):
        if subprocess.run([py, "-c", "import pytest"], capture_output=True).returncode == 0:
            return py
    sys.exit("tests: no Python with pytest found (make deps installs python3-pytest)")


def run_unit():
    passed = failed = 0
    bins = sorted(glob.glob(os.path.join(ROOT, "build", "unit", "test_*")))
    if not bins:
        print("unit: no unit-test binaries found; run `make unit`")
        return 0, 1
    for b in bins:
        proc = subprocess.run([b], capture_output=True, text=True, timeout=600)
        out = proc.stdout + proc.stderr
        p = len(re.findall(r"^PASS ", out, re.M))
        f = len(re.findall(r"^FAIL ", out, re.M))
        for line in out.splitlines():
            if line.startswith("FAIL ") or "ERROR: AddressSanitizer" in line or "runtime error" in line:
                print(f"unit: {line}")
        if proc.returncode != 0 and f == 0:
            f = 1  # crashed (sanitizer report) without a FAIL line
            print(f"unit: {os.path.basename(b)} exited with {proc.returncode}")
        print(f"unit: {os.path.basename(b)}: {p} passed, {f} failed")
        passed += p
        failed += f
    return passed, failed


def run_system():
    py = find_python_with_pytest()
    xml = os.path.join(ROOT, "build", "pytest.xml")
    args = [py, "-m", "pytest", "-p", "no:cacheprovider", "-v", "-rs", f"--junitxml={xml}",
            os.path.join(ROOT, "tests", "system"), os.path.join(ROOT, "tests", "bench")] + sys.argv[1:]
    rc = subprocess.run(args, cwd=ROOT).returncode
    if not os.path.exists(xml):
        return 0, 1
    root = ET.parse(xml).getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    total = sum(int(s.get("tests", 0)) for s in suites)
    bad = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
    skipped = sum(int(s.get("skipped", 0)) for s in suites)
    if rc not in (0, 1) and bad == 0:
        bad = 1  # pytest itself failed (collection error, interrupted)
    return total - bad - skipped, bad


def main():
    up, uf = run_unit()
    sp, sf = run_system()
    print(f"unit tests: {up} passed, {uf} failed; system tests: {sp} passed, {sf} failed")
    print(f"{up + sp} passed, {uf + sf} failed")
    sys.exit(1 if uf + sf else 0)


if __name__ == "__main__":
    main()
