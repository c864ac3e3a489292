"""The tcp server alone (servers/tcp/README.md), driven by a stand-in for syscall
(tests/user/tcpstand.c, run as the service `syscall`).

- Over tcp's own loopback (no ip): a listener, a connect and its accept, 4 MiB each way with
  every byte checked, a half-close each way (the FIN seen as an SBD_FIN piece after all the
  data), both closed; a connect to a port nobody listens on is refused (-ECONNREFUSED).
  Then tcp is killed: it restores the listener from ds before its SK_HELLO, syscall's replay
  of bind and listen is answered 0, and a new connection is accepted on the same listener
  socket and carries 256 KiB each way. Requests in the wrong state get the Linux errno.
- With the real e1000 and ip on a tap device in a network namespace the test creates and
  deletes: a host client sends 20 MiB to the stand-in's echo listener and checks the hash of
  what comes back (bounded in time); tcp's counters are printed."""
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

from conftest import Guest, ROOT, USER_DIR, boot, tap_net
from test_rs import write_conf

CONF = """# tcp engine test: syscall is a stand-in
service ds heartbeat=2000
service console ioports=0x3f8-0x3ff irq=4 control
service syscall binary=tcpstand args="role=sys mib=4"
service tcp heartbeat=2000 backoff=20
"""
MODULES = ("rs conf=tcp_engine.conf", "tcp_engine.conf", "ds", "console", "tcp", "tcpstand")


def counters(out, who):
    lines = re.findall(r"^tcpstand: %s tcp counters: (.*)$" % who, out, re.M)
    assert lines, out[-3000:]
    return dict(kv.split() for line in lines for kv in line.strip(", ").split(", "))


def test_tcp_loopback_streams_and_a_listener_surviving_a_restart():
    write_conf("tcp_engine.conf", CONF)
    script = [(r"tcpstand: phase 1 done", "service kill tcp\r")]
    r = boot("", smp=2, modules=MODULES, timeout=400, script=script, until=r"^tcpstand: (done|.*failed)")
    out = r.output.replace("axolotl> ", "")
    tail = out[-5000:]
    print("\n".join(l for l in out.splitlines() if l.startswith("tcpstand: ")))
    assert re.search(r"^tcpstand: socket 1 listening on port 5000: 0$", out, re.M), tail
    assert re.search(r"^tcpstand: socket 2 connected from port \d+: 0$", out, re.M), tail
    assert re.search(r"^tcpstand: socket 3 accepted: peer port \d+, local 127\.0\.0\.1:5000: 0$", out, re.M), tail
    assert re.search(r"^tcpstand: connect to a closed port: -111$", out, re.M), tail
    # requests in the wrong state: connect on a listener, accept with nothing pending and
    # on a socket that is not a listener, an unknown socket, an unknown option
    bad = [int(v) for v in re.findall(r"^tcpstand: bad request \d+: (-?\d+)$", out, re.M)]
    assert bad == [-106, -11, -22, -9, -92], (bad, tail)
    m = re.search(r"^tcpstand: transfer: (\d+) bytes each way in (\d+) ms \((\d+) KiB/s\), got (\d+) and (\d+), "
                  r"corrupt (\d+), FIN seen by both$", out, re.M)
    assert m, tail
    size, ms, rate, got1, got2, bad = map(int, m.groups())
    assert size == 4 << 20 and got1 == size and got2 == size and bad == 0, m.group(0)
    print("loopback: %d KiB/s (both directions together)" % rate)
    for sock in (2, 3, 4):
        assert re.search(r"^tcpstand: socket %d closed: 0$" % sock, out, re.M), tail
    c = counters(out, "phase 1")
    assert c["malformed"] == "0" and c["bad_desc"] == "0" and c["corrupt_bufs"] == "0", c
    assert int(c["accepts"]) == 1 and int(c["connects"]) == 1 and int(c["connect_fail"]) == 1, c
    # tcp was killed and restarted: the listener came back from ds before its hello
    assert re.search(r"rs: tcp exited with status", out, re.M), tail
    assert re.search(r"^tcp: restored 1 listeners from ds \(\d+ slots\)$", out, re.M), tail
    assert "tcpstand: HELLO from tcp incarnation 1" in out, tail
    assert re.search(r"^tcpstand: listener rebound after the restart: 0$", out, re.M), tail
    assert re.search(r"^tcpstand: socket 6 accepted: peer port \d+, local 127\.0\.0\.1:5000: 0$", out, re.M), tail
    m = re.search(r"^tcpstand: after the restart: (\d+) bytes each way in \d+ ms \(\d+ KiB/s\), got (\d+) and (\d+), "
                  r"corrupt 0, FIN seen by both$", out, re.M)
    assert m and m.group(1) == m.group(2) == m.group(3) == str(256 * 1024), tail
    assert re.search(r"^tcpstand: socket 1 closed: 0$", out, re.M), tail
    assert "tcpstand: done" in out, tail
    assert "lwip: assertion" not in out and "panic" not in out.lower(), tail


REAL = ("e1000", "ip", "tcp", "tcpstand")
NS = "axolotl-tcptest"
GUEST_MAC = "52:54:00:12:34:57"
TOTAL = 20 << 20

# The host client in the namespace: TOTAL bytes to port 7 in one connection, reading the
# echo at the same time; prints the hashes and the time.
CLIENT = r"""
import hashlib, os, selectors, socket, sys, time
total, dst = int(sys.argv[2]), (sys.argv[1], 7)
data = hashlib.sha256(b"seed").digest() * 1024
s = socket.create_connection(dst, timeout=60)
s.setblocking(False)
sel = selectors.DefaultSelector()
sel.register(s, selectors.EVENT_READ | selectors.EVENT_WRITE)
sent, got, hs, hr = 0, 0, hashlib.sha256(), hashlib.sha256()
t0 = time.monotonic()
deadline = t0 + float(sys.argv[3])
shut = False
while got < total and time.monotonic() < deadline:
    for key, ev in sel.select(1.0):
        if ev & selectors.EVENT_WRITE and sent < total:
            chunk = data[sent % len(data):][:min(65536, total - sent)]
            n = s.send(chunk)
            hs.update(chunk[:n])
            sent += n
        if ev & selectors.EVENT_READ:
            b = s.recv(262144)
            if not b:
                break
            hr.update(b)
            got += len(b)
    if sent >= total and not shut:
        s.shutdown(socket.SHUT_WR)
        sel.modify(s, selectors.EVENT_READ)
        shut = True
dt = time.monotonic() - t0
print("client: sent %d got %d in %.1f s (%.0f KiB/s) %s" % (sent, got, dt, got / 1024 / max(dt, 0.001),
      "match" if hs.digest() == hr.digest() and got == total else "MISMATCH"), flush=True)
"""


def real_stack():
    return all(os.path.exists(os.path.join(USER_DIR, p)) for p in REAL)


@pytest.mark.skipif(not real_stack(), reason="needs the e1000, ip and tcp servers")
@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("ip") or not os.path.exists("/dev/net/tun"),
                    reason="needs root, iproute2 and /dev/net/tun for a namespace with a tap device")
def test_tcp_echo_of_20_mib_with_a_host_client():
    conf = ("service ds heartbeat=2000\n"
            "service console ioports=0x3f8-0x3ff irq=4 control\n"
            "service e1000 pci=8086:100e dma heartbeat=10000\n"
            'service ip dma heartbeat=10000 args="if=e1000 addr=10.9.2.2/24 pf=none"\n'
            "service tcp dma heartbeat=10000 backoff=20\n"
            'service syscall binary=tcpstand args="role=echo port=7"\n')
    write_conf("tcpecho.conf", conf)
    mods = ("rs conf=tcpecho.conf", "tcpecho.conf", "ds", "console") + REAL
    tools = os.path.join(ROOT, "tools")
    subprocess.run([os.path.join(tools, "net-ns.sh"), "down", NS], check=False)
    subprocess.run([os.path.join(tools, "net-ns.sh"), "up", NS, "10.9.2.1/24"], check=True)
    res = None
    try:
        with Guest("", mods, net=tap_net(mac=GUEST_MAC), netns=NS, name="tcp-echo-netns") as g:
            g.wait_for(r"^tcpstand: echo listening on port 7: 0$", timeout=240)
            g.wait_for(r"^ip: attached to tcp", timeout=120)
            res = subprocess.run(["ip", "netns", "exec", NS, sys.executable, "-c", CLIENT, "10.9.2.2", str(TOTAL),
                                  "600"], capture_output=True, text=True, timeout=700)
            # tcpstand prints its counters on two lines: the checks need the second (bad_desc)
            g.wait_for(r"^tcpstand: echo tcp counters: .*\bbad_desc ", timeout=120)
            out = g.output.replace("axolotl> ", "")
    finally:
        subprocess.run([os.path.join(tools, "net-ns.sh"), "down", NS], check=False)
    tail = out[-4000:]
    print(res.stdout, res.stderr)
    print("\n".join(l for l in out.splitlines() if l.startswith("tcpstand: ")))
    assert "match" in res.stdout and "MISMATCH" not in res.stdout, (res.stdout, res.stderr, tail)
    assert re.search(r"^tcpstand: echo socket 2 closed after %d bytes$" % TOTAL, out, re.M), tail
    c = counters(out, "echo")
    assert c["malformed"] == "0" and c["bad_desc"] == "0" and c["csum_err"] == "0", c
    assert "lwip: assertion" not in out and "panic" not in out.lower(), tail
