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
- versions.json parses, names the kernel package, version and release, and gives for each
  of the four binaries the sha256 of the file in the build (the same binaries as Axolotl's).
"""
import hashlib
import json
import os
import re
import socket
import subprocess
import threading
import time
import urllib.request

import pytest

from conftest import ROOT, free_port, save_log, user_net

GUEST = os.path.join(ROOT, "build", "bench", "linux")
MKGUEST = os.path.join(ROOT, "tools", "bench", "mkguest.sh")
# What mkguest.sh packs, by path in the guest (its BINARIES); built by `make ports user`.
BINARIES = {
    "/bin/lighttpd": "build/ports/out/lighttpd/lighttpd",
    "/bin/memcached": "build/ports/out/memcached/memcached",
    "/bin/iperf": "build/ports/out/iperf/iperf",
    "/bin/tcphash": "build/user/tcphash",
}
WWW = "build/www/4mib.bin"


def sha256(path):
    h = hashlib.sha256()
    with open(os.path.join(ROOT, path), "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class LinuxGuest:
    """The Linux guest in QEMU: its serial output (on QEMU's stdout) read by a thread,
    wait_for(regex) bounded; QEMU killed by its PID in close() (use `with`)."""

    def __init__(self, net):
        cmd = ["qemu-system-x86_64", "-machine", "q35", "-cpu", "qemu64", "-smp", "2", "-m", "1024",
               "-accel", "tcg", "-nographic", "-no-reboot",
               "-kernel", os.path.join(GUEST, "vmlinuz"),
               "-initrd", os.path.join(GUEST, "initramfs.cpio.gz"),
               "-append", "console=ttyS0 quiet"] + list(net)
        self._chunks = []
        self._cond = threading.Condition()
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT)
        self._th = threading.Thread(target=self._reader, daemon=True)
        self._th.start()

    def _reader(self):
        for raw in iter(lambda: self.proc.stdout.read1(4096), b""):
            with self._cond:
                self._chunks.append(raw.decode("utf-8", "replace").replace("\r", ""))
                self._cond.notify_all()
        with self._cond:
            self._chunks.append("")
            self._cond.notify_all()

    @property
    def output(self):
        with self._cond:
            return "".join(self._chunks)

    def wait_for(self, regex, timeout, start=0):
        """The first match of regex (multiline) in whole lines after offset start; raises
        AssertionError with the log's tail on timeout or QEMU's exit."""
        deadline = time.monotonic() + timeout
        pat = re.compile(regex, re.M)
        with self._cond:
            while True:
                text = "".join(self._chunks)
                m = pat.search(text[:text.rfind("\n") + 1], start)
                if m:
                    return m
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    raise AssertionError(f"{regex!r} not seen in {timeout} s; log tail:\n{text[-3000:]}")
                self._cond.wait(min(left, 0.5))

    def type(self, text):
        self.proc.stdin.write(text.encode())
        self.proc.stdin.flush()

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()  # our own QEMU, by PID
        self.proc.wait()
        self._th.join(5)
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        save_log("bench-linux-guest", self.output)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def build_guest():
    """Runs mkguest.sh (after building what it packs, if missing); skips the test only when
    apt-get download failed (mkguest.sh's "cannot download" message)."""
    missing = [p for p in list(BINARIES.values()) + [WWW] if not os.path.exists(os.path.join(ROOT, p))]
    if missing:
        subprocess.run(["make", "-s", "-C", ROOT, "ports", "user", WWW], check=True)
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
    assert versions["files"]["/srv/www/4mib.bin"] == sha256(WWW)
    assert versions["files"]["/etc/rc"] == sha256("rootfs/etc/rc")

    http = free_port(socket.SOCK_STREAM)
    hashport = free_port(socket.SOCK_STREAM)
    t1 = time.monotonic()
    with LinuxGuest(user_net("e1000", [("tcp", http, 80), ("tcp", hashport, 7000)])) as g:
        # not anchored: the terminal reset the kernel's boot sends can stand before it
        m = g.wait_for(r"linux-guest: up (\S+)$", timeout=120)
        t_up = time.monotonic() - t1
        assert m.group(1) == kernel["release"], (m.group(1), kernel)
        g.wait_for(r"^rc: started lighttpd \(80\), memcached \(11211\), iperf \(5001\), tcphash \(7000\)",
                   timeout=120 - t_up)
        t_rc = time.monotonic() - t1
        # every module loaded, the NIC found and the gateway answered (guest-init says if not)
        assert not re.search(r"linux-guest: (insmod|no Ethernet|10\.0\.2\.2 does not)", g.output), \
            g.output[-3000:]

        # The shell rc runs has the applications' environment: the library's switch is off.
        mark = len(g.output)
        g.type("echo axolotl_sock=${AXOLOTL_SOCK:-unset}\n")
        g.wait_for(r"^axolotl_sock=0$", timeout=30, start=mark)

        want = open(os.path.join(ROOT, "rootfs", "srv", "www", "hello.txt"), "rb").read()
        t2 = time.monotonic()
        deadline = t2 + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{http}/hello.txt", timeout=10) as resp:
                    status, body = resp.status, resp.read()
                break
            except OSError as e:  # the forward answers before lighttpd does
                if time.monotonic() > deadline:
                    raise AssertionError(f"lighttpd did not answer in 30 s: {e!r}; log tail:\n{g.output[-3000:]}")
                time.sleep(0.5)
        t_fetch = time.monotonic() - t2
        assert status == 200 and body == want, (status, body)
    print(f"linux guest: mkguest.sh {t_build:.1f} s, kernel up {t_up:.1f} s, rc's servers up {t_rc:.1f} s "
          f"after QEMU's start, /hello.txt {t_fetch * 1000:.0f} ms; kernel {kernel['package']} {kernel['version']}, "
          f"initramfs {os.path.getsize(os.path.join(GUEST, 'initramfs.cpio.gz'))} bytes")
