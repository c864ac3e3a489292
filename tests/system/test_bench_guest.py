"""The stock-Linux comparison guest of `make bench` (issue 9): tools/bench/mkguest.sh builds
it (Debian's kernel, busybox-static, and the application binaries of Axolotl's image) into
build/bench/linux, and it boots under the same QEMU set-up as Axolotl (TCG, e1000, QEMU's
restricted user networking with forwards bound to 127.0.0.1). Asserted:
- mkguest.sh succeeds (the test is skipped only when apt-get cannot download, i.e. there is
  no network; every other failure fails it);
- the guest's /init brings the kernel up (`linux-guest: up RELEASE`, the release the
  versions.json names), and Axolotl's unchanged /etc/rc starts its four servers there;
- the shell /etc/rc runs has AXOLOTL_SOCK=0 (the socket library stays off on Linux);
- lighttpd answers /hello.txt through the host forward with rootfs/srv/www/hello.txt;
- netmicro, the suite's in-guest microbenchmark, runs there and its lines parse;
- iperf's UDP server reports a short UDP load through the forward (its log, read on the console);
- versions.json parses, names the kernel package, version and release, and gives for each
  of the four binaries the sha256 of the file in the build (the same binaries as Axolotl's).
"""
import hashlib
import json
import os
import re
import subprocess
import sys
import time
import urllib.request

import pytest

from conftest import ROOT

sys.path.insert(0, os.path.join(ROOT, "tools", "bench"))
import bench  # noqa: E402

GUEST = os.path.join(ROOT, "build", "bench", "linux")
MKGUEST = os.path.join(ROOT, "tools", "bench", "mkguest.sh")
# What mkguest.sh packs, by path in the guest (its BINARIES); built by `make ports user`.
BINARIES = {
    "/bin/lighttpd": "build/ports/out/lighttpd/lighttpd",
    "/bin/memcached": "build/ports/out/memcached/memcached",
    "/bin/iperf": "build/ports/out/iperf/iperf",
    "/bin/tcphash": "build/user/tcphash",
    "/bin/netmicro": "build/user/netmicro",
}
WWW = ["build/www/11kib.bin", "build/www/512kib.bin", "build/www/4mib.bin"]


def sha256(path):
    h = hashlib.sha256()
    with open(os.path.join(ROOT, path), "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def build_guest():
    """Runs mkguest.sh (after building what it packs, if missing); skips the test only when
    apt-get download failed (mkguest.sh's "cannot download" message)."""
    missing = [p for p in list(BINARIES.values()) + WWW if not os.path.exists(os.path.join(ROOT, p))]
    if missing:
        subprocess.run(["make", "-s", "-C", ROOT, "ports", "user", "www"], check=True)
    r = subprocess.run([MKGUEST, os.path.relpath(GUEST, ROOT)], cwd=ROOT, capture_output=True, text=True,
                       timeout=900)
    why = [l for l in r.stderr.splitlines() if l.startswith("mkguest: cannot download")]
    if r.returncode != 0 and why:
        pytest.skip("no network for apt-get download: " + why[0])
    assert r.returncode == 0, r.stderr[-3000:]


def test_linux_guest_runs_axolotls_applications():
    t0 = time.monotonic()
    build_guest()
    t_build = time.monotonic() - t0
    versions = json.load(open(os.path.join(GUEST, "versions.json")))
    kernel = versions["kernel"]
    assert re.fullmatch(r"linux-image-6\.1\.0-\d+-amd64", kernel["package"]), kernel
    assert kernel["version"] and kernel["release"] == kernel["package"][len("linux-image-"):], kernel
    assert versions["busybox-static"]["version"], versions
    # the binaries put in are the build's, byte for byte
    for path, src in BINARIES.items():
        assert versions["binaries"][path]["sha256"] == sha256(src), (path, src)
    for w in WWW:
        assert versions["files"]["/srv/www/" + os.path.basename(w)] == sha256(w)
    assert versions["files"]["/etc/rc"] == sha256("rootfs/etc/rc")

    t1 = time.monotonic()
    g = bench.Machine("linux", bench.machine_config(False), os.path.join(ROOT, "build", "test-logs",
                                                                          "bench-linux-guest.log"))
    try:
        # not anchored: the terminal reset the kernel's boot sends can stand before it
        m = g.wait_for(r"linux-guest: up (\S+)$", timeout=120)
        t_up = time.monotonic() - t1
        assert m.group(1) == kernel["release"], (m.group(1), kernel)
        g.wait_for(r"^rc: started lighttpd \(80\), memcached \(11211\), iperf \(5001, TCP and UDP\), "
                   r"tcphash \(7000\)", timeout=120 - t_up)
        t_rc = time.monotonic() - t1
        # every module loaded, the NIC found and the gateway answered (guest-init says if not)
        assert not re.search(r"linux-guest: (insmod|no Ethernet|10\.0\.2\.2 does not)", g.output()), \
            g.output()[-3000:]

        # The shell rc runs has the applications' environment: the library's switch is off.
        assert g.shell("echo axolotl_sock=${AXOLOTL_SOCK:-unset}", r"^axolotl_sock=\w+$", 30).endswith(
            "axolotl_sock=0")

        want = open(os.path.join(ROOT, "rootfs", "srv", "www", "hello.txt"), "rb").read()
        t2 = time.monotonic()
        deadline = t2 + 30
        while True:
            try:
                url = "http://%s:%d/hello.txt" % g.addr(80)
                with urllib.request.urlopen(url, timeout=10) as resp:
                    status, body = resp.status, resp.read()
                break
            except OSError as e:  # the forward answers before lighttpd does
                if time.monotonic() > deadline:
                    raise AssertionError(f"lighttpd did not answer in 30 s: {e!r}; log tail:\n{g.output()[-3000:]}")
                time.sleep(0.5)
        t_fetch = time.monotonic() - t2
        assert status == 200 and body == want, (status, body)

        micro = g.micro(2000, 20, timeout=120)
        assert set(micro) == {"recvfrom_empty", "connect_close"}, micro
        assert all(r["cycles"] > 0 and r["ns"] > 0 for r in micro.values()), micro
        rate, loss = g.iperf_udp(1e6, 1)
        assert 0.5e6 < rate < 1.5e6 and 0 <= loss <= 100, (rate, loss)
    finally:
        g.close()
    print(f"linux guest: mkguest.sh {t_build:.1f} s, kernel up {t_up:.1f} s, rc's servers up {t_rc:.1f} s "
          f"after QEMU's start, /hello.txt {t_fetch * 1000:.0f} ms; kernel {kernel['package']} {kernel['version']}, "
          f"initramfs {os.path.getsize(os.path.join(GUEST, 'initramfs.cpio.gz'))} bytes")
