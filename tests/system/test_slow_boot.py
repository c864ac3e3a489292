"""A slow boot: the default image on one vCPU under `-icount shift=0,sleep=off` (make bench's
instruction-counting boot), where everything runs round-robin on one host thread. rs
registers each service's label with ds without blocking on ds, so here a service's first
put can reach ds before its label does; ds refuses it (EPERM) and lib/ds asks again for a
while. Before that, ip failed to export its channels and rs restarted it three times in
every such boot. The image is the one make bench boots so (bench.axolotl_image): in it vfs
found syscall before syscall had published its readiness channel, never imported it, and
lighttpd's listening socket polled as hung up for ever (vfs now imports it late).
Asserted: no service exits or is restarted, nothing fails to export, the network comes up
with QEMU's lease, and lighttpd answers through the forward."""
import os
import re
import sys
import time
import urllib.request

from conftest import ROOT

sys.path.insert(0, os.path.join(ROOT, "tools", "bench"))
import bench  # noqa: E402

LOG = os.path.join(ROOT, "build", "test-logs", "slow-boot-icount.log")


def fetch(g, path, timeout=60):
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen("http://%s:%d%s" % (g.addr(80) + (path,)), timeout=10) as r:
                return r.status, r.read()
        except OSError as e:  # the forward answers before lighttpd does
            if time.monotonic() > deadline:
                raise AssertionError(f"lighttpd did not answer: {e!r}; log tail:\n{g.output()[-3000:]}")
            time.sleep(0.5)


def test_one_vcpu_icount_boot_starts_every_service_once():
    os.makedirs(os.path.dirname(LOG), exist_ok=True)
    cfg = bench.machine_config(False, icount=True)
    g = bench.Machine("axolotl", cfg, LOG, image=bench.axolotl_image("axolotl", "user"), icount=True)
    try:
        g.wait_for(r"^tcp: interface 0 \(e1000\) 10\.0\.2\.15 mtu 1500 up$", 240)
        g.wait_for(r"^rc: started lighttpd", 60)
        want = open(os.path.join(ROOT, "rootfs", "srv", "www", "hello.txt"), "rb").read()
        assert fetch(g, "/hello.txt") == (200, want)
        out = g.output()
    finally:
        g.close()
    assert not re.search(r"^rs: \S+ exited", out, re.M), out[-3000:]
    assert not re.search(r"cannot export|: interface \S+: -\d", out), out[-3000:]
    for s in ("ip: up, restart 0", "udp: started (restart 0)", "tcp: started (restart 0)"):
        assert s in out, (s, out[-3000:])
    started = re.findall(r"^rs: started (\S+) as \S+ \(restarts (\d+)\)$", out, re.M)
    assert len(started) >= 10 and all(n == "0" for _, n in started), started
