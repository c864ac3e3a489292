"""The benchmark suite's tap network (tools/bench/netns.py, `bench.py run --net tap`): the
namespace it makes holds only a loopback and the tap device with the host's address, what
runs inside sees nothing else, and the namespace is gone afterwards: after a normal end,
after SIGTERM to the suite, and (the next time) after a run that was killed outright.
Needs root, iproute2 and /dev/net/tun (skipped without them)."""
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "bench")
sys.path.insert(0, HERE)
import netns  # noqa: E402

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("ip") or not os.path.exists("/dev/net/tun"),
                                reason="needs root, ip and /dev/net/tun")

DRIVER = [sys.executable, "-c", "import sys; sys.path.insert(0, %r); import netns; "
          "sys.exit(netns.run_inside(sys.argv[1:]))" % HERE]


def test_inside_there_is_only_the_tap_and_afterwards_no_namespace():
    p = subprocess.Popen(DRIVER + ["sh", "-c", "ip -o link; ip -o -4 addr; cat /proc/self/net/route"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = p.communicate(timeout=60)
    r = subprocess.CompletedProcess(p.args, p.returncode, out, err)
    assert r.returncode == 0, r.stderr
    links = sorted(l.split(":")[1].strip().split("@")[0] for l in r.stdout.splitlines() if l[:1].isdigit() and
                   "link/" in l)
    assert links == ["axtap0", "lo"], r.stdout
    assert f"inet {netns.HOST_ADDR}/24" in r.stdout, r.stdout
    # no default route: nothing inside can reach any other network
    assert "00000000\t00000000" not in r.stdout.replace(" ", "\t"), r.stdout
    assert f"{netns.PREFIX}{p.pid}" not in netns.names()


def test_sigterm_to_the_suite_ends_the_run_and_removes_the_namespace():
    p = subprocess.Popen(DRIVER + ["sh", "-c", "echo ready; exec sleep 60"], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "ready"
        assert netns.names() == [f"{netns.PREFIX}{p.pid}"]
        t0 = time.monotonic()
        p.send_signal(signal.SIGTERM)
        p.wait(30)
        assert time.monotonic() - t0 < 20
        assert p.returncode != 0
        assert netns.names() == []
    finally:
        if p.poll() is None:
            p.kill()  # our own driver, by PID
            p.wait()


def test_a_namespace_left_by_a_killed_run_is_removed_by_the_next():
    stale = f"{netns.PREFIX}4194999"  # above any pid_max: no process has this PID
    subprocess.run(["ip", "netns", "add", stale], check=True)
    try:
        r = subprocess.run(DRIVER + ["true"], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        assert stale not in netns.names()
    finally:
        subprocess.run(["ip", "netns", "del", stale], capture_output=True)
