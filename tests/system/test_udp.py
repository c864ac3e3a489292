"""The socket front door (issue 6): Linux programs' UDP socket calls pass from vfs to
`syscall` (KC_LX_PASS) and reach the socket engine through channels, the data moving through
each socket's shared buffers (servers/syscall/README.md).

Two layers:
- with `udpstub`, a loopback stand-in for udp run as the service `udp`
  (servers/syscall/test/udpstub.c), and again with the real udp (its lwIP loopback, no ip):
  the socket calls' semantics and errnos (tests/linux/udptest.c), datagrams to ourselves,
  and a udp restart under a ping-pong that keeps its sockets; with the real udp once more
  as udptest-lib, linked with the user-space socket library (lib/sock), whose answers
  must be the same;
- with the real stack (e1000, ip, udp): a client on the host side of a tap device in a
  network namespace the test creates and deletes exchanges 10000 checked datagrams with
  udpecho, an 8000-byte datagram round-trips (IP fragments), and udp is killed mid-stream:
  the echo goes on on the same socket. (QEMU's restricted user networking cannot carry it:
  slirp drops the guest's UDP replies to a hostfwd when restrict=on.)"""
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

from conftest import assert_library_use, Guest, ROOT, USER_DIR, boot, tap_net
from test_rs import write_conf

BASE_MODULES = ("ds", "console", "vfs", "initrd.cpio", "pm", "lxstart", "syscall")
# The engine behind syscall: the stub, or the real udp (its lwIP loopback carries datagrams
# to 127.0.0.1 without ip).
ENGINES = {
    "udpstub": ("service udp binary=udpstub backoff=20\n", ("udpstub",), r"^udpstub: attached, restart %d$"),
    "udp": ("service udp dma heartbeat=2000 backoff=20\n", ("udp",), r"^udp: started \(restart %d\)"),
}


def engine_conf(engine, run):
    return ("service ds heartbeat=2000\n"
            "service console ioports=0x3f8-0x3ff irq=4 control\n"
            "service vfs kcalls=vcopy\n"
            "service syscall kcalls=vcopy\n" + ENGINES[engine][0] +
            'service pm kcalls=vcopy args="run=%s" restart=never\n' % run)


def engine_modules(engine, conf_name):
    return ("rs conf=" + conf_name, conf_name) + BASE_MODULES + ENGINES[engine][1]


def results(out):
    return {name: status for status, name in re.findall(r"^UDPTEST (PASS|FAIL) (\w+)$", out, re.M)}


def prog_params():
    """udptest with each engine, and linked with the user-space socket library (lib/sock,
    ld --wrap) with the real udp (udpstub lends no buffers to the library)."""
    real = os.path.exists(os.path.join(USER_DIR, "udp"))
    need = pytest.mark.skipif(not real, reason="needs the udp server")
    return [("udpstub", "udptest"), pytest.param("udp", "udptest", marks=need),
            pytest.param("udp", "udptest-lib", marks=need)]


@pytest.mark.parametrize("engine,prog", prog_params())
def test_udp_calls_and_loopback_through_syscall(engine, prog):
    name = "%s-calls-%s.conf" % (prog, engine)
    write_conf(name, engine_conf(engine, "/bin/%s calls loop" % prog))
    r = boot("", smp=2, modules=engine_modules(engine, name), timeout=240,
             until=r"^udptest: \d+ passed, \d+ failed$")
    out = r.output.replace("axolotl> ", "")  # the prompt shares a line with what follows it
    tail = out[-4000:]
    res = results(out)
    assert res and set(res.values()) == {"PASS"}, ({k: v for k, v in res.items() if v != "PASS"}, tail)
    m = re.search(r"^udptest: (\d+) passed, (\d+) failed$", out, re.M)
    assert m and int(m.group(2)) == 0 and int(m.group(1)) >= 60, tail
    # a signal ends a blocked receive held by syscall (KMSG_LINUX_CANCEL went there); user
    # space cannot send a message type of the kernel's range (a forged passed call)
    assert res.get("recv_eintr") == "PASS" and res.get("kernel_types_refused") == "PASS", res
    # the calls went through syscall and the engine, not vfs's network-less sockets
    assert re.search(r"^syscall: udp \S+ attached", out, re.M), tail
    assert_library_use(out, "udptest", prog.endswith("-lib"))
    assert "panic" not in out.lower(), tail


@pytest.mark.parametrize("engine,prog", prog_params())
def test_udp_restart_keeps_the_sockets(engine, prog):
    name = "%s-restart-%s.conf" % (prog, engine)
    # udp is killed twice while the ping-pong runs: after round 1000, and again once the
    # program has gone on past the first restart. 30000 rounds (10 s and more) leave room for
    # a kill typed behind a busy console: with 3000, a CI run's kills landed after the end.
    rounds = 30000
    write_conf(name, engine_conf(engine, "/bin/%s restart %d" % (prog, rounds)))
    started = ENGINES[engine][2]
    with Guest("", modules=engine_modules(engine, name), name="%s-restart-%s" % (prog, engine)) as g:
        g.wait_for(r"udptest: round 1000$", timeout=240)  # console echo may share the line
        g.type("\x1d")  # the console's monitor
        time.sleep(0.5)
        g.type("service kill udp\r")
        first = g.wait_for(started % 1, timeout=60)
        g.wait_for(r"udptest: round \d+$", timeout=240, start=first.end())  # going on after it
        g.type("service kill udp\r")
        second = g.wait_for(started % 2, timeout=60, start=first.end())
        # (these not anchored at the start: the echo of a late typed kill may begin the line)
        g.wait_for(r"syscall: udp says hello \(incarnation 2\)", timeout=60, start=first.end())
        m = g.wait_for(r"udptest: restart: %d rounds, (\d+) resends, (\d+) stale, (\d+) corrupt$" % rounds,
                       timeout=300)
        assert m.start() > second.end(), ("the run ended before udp's second restart", g.output[-3000:])
        assert m.group(3) == "0", g.output[-3000:]
        g.wait_for(r"udptest: 1 passed, 0 failed$", timeout=30)
        out = g.output.replace("axolotl> ", "")
        hellos = re.findall(r"syscall: udp says hello \(incarnation (\d+)\)", out)
        assert sorted(hellos) == ["0", "1", "2"], (hellos, out[-3000:])
        assert_library_use(out, "udptest", prog.endswith("-lib"))


REAL = ("e1000", "ip", "udp")
NS = "axolotl-udptest"
GUEST_MAC = "52:54:00:12:34:56"

# The client in the namespace: 10000 checked datagrams of 64 bytes, then one of 8000 (IP
# fragments both ways); each is sent again after 1 s without its echo (10 tries). It prints
# `client: N` every 1000 so the test can kill udp in the middle.
CLIENT = r"""
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(1.0)
dst = (sys.argv[1], 7)
resent = 0
def exchange(seq, size):
    global resent
    payload = seq.to_bytes(4, "big") + bytes((seq * 7 + i) & 0xff for i in range(size - 4))
    for _ in range(10):
        s.sendto(payload, dst)
        try:
            while True:
                data, src = s.recvfrom(65536)
                if data[:4] == payload[:4]:
                    if data != payload or src != dst:
                        print("client: datagram %d corrupted" % seq, flush=True)
                        sys.exit(1)
                    return
        except socket.timeout:
            resent += 1
    print("client: datagram %d: no echo after 10 tries" % seq, flush=True)
    sys.exit(1)
for i in range(10000):
    exchange(i, 64)
    if (i + 1) % 1000 == 0:
        print("client: %d" % (i + 1), flush=True)
exchange(10000, 8000)
print("client: done, 10001 echoed, %d resent" % resent, flush=True)
"""

# Which server the test kills when the client has exchanged that many datagrams: each
# restarted by rs, the echo goes on on the same socket (thesis table 2.1).
KILLS = {"client: 2000": "e1000", "client: 4000": "ip", "client: 6000": "pf", "client: 8000": "udp"}

# N datagrams to port 7, each waited for 0.3 s: prints how many were echoed.
PROBE = r"""
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(0.3)
n, got = int(sys.argv[2]), 0
for i in range(n):
    s.sendto(b"probe %d" % i, (sys.argv[1], 7))
    try:
        while s.recvfrom(2048)[0] != b"probe %d" % i:
            pass
        got += 1
    except socket.timeout:
        pass
print("echoed %d of %d" % (got, n))
"""


def real_stack():
    return all(os.path.exists(os.path.join(USER_DIR, p)) for p in REAL)



@pytest.mark.skipif(not real_stack(), reason="needs the e1000, ip and udp servers (branches drv, ip, udp)")
@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("ip") or not os.path.exists("/dev/net/tun"),
                    reason="needs root, iproute2 and /dev/net/tun for a namespace with a tap device")
def test_udp_echo_with_a_host_client_restarts_and_a_pf_rule():
    conf = ("service ds heartbeat=2000\n"
            "service console ioports=0x3f8-0x3ff irq=4 control\n"
            "service vfs kcalls=vcopy\n"
            "service syscall kcalls=vcopy\n"
            "service e1000 pci=8086:100e dma heartbeat=3000\n"
            'service ip dma heartbeat=3000 args="if=e1000 addr=10.9.1.2/24 pf=pf"\n'
            "service pf heartbeat=3000 backoff=20\n"
            "service udp dma heartbeat=3000 backoff=20\n"
            'service pm kcalls=vcopy args="run=/bin/udpecho 7" restart=never\n')
    write_conf("udpecho.conf", conf)
    mods = ("rs conf=udpecho.conf", "udpecho.conf", "ds", "console", "vfs", "initrd.cpio", "pm", "lxstart",
            "syscall", "pf") + REAL
    tools = os.path.join(ROOT, "tools")
    subprocess.run([os.path.join(tools, "net-ns.sh"), "down", NS], check=False)
    subprocess.run([os.path.join(tools, "net-ns.sh"), "up", NS, "10.9.1.1/24"], check=True)
    client = None
    try:
        with Guest("", mods, net=tap_net(mac=GUEST_MAC), netns=NS, name="udp-echo-netns") as g:
            g.wait_for(r"^udpecho: listening on 7$", timeout=240)
            g.wait_for(r"^ip: e1000: driver attached", timeout=120)
            g.wait_for(r"^ip: attached to udp", timeout=120)  # packets for port 7 reach udp
            client = subprocess.Popen(["ip", "netns", "exec", NS, sys.executable, "-c", CLIENT, "10.9.1.2"],
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            lines = []
            deadline = time.monotonic() + 900
            for line in client.stdout:
                lines.append(line.strip())
                if line.strip() == "client: 1000":
                    g.type("\x1d")  # the console's monitor
                    time.sleep(0.3)
                victim = KILLS.get(line.strip())
                if victim:
                    g.type(f"service kill {victim}\r")
                if time.monotonic() > deadline:
                    break
            client.wait(timeout=60)
            # A pf rule blocking the port: datagrams to it disappear, and pf counts them.
            mark = g.mark()
            g.type("pf add block in proto udp to any port 7\r")
            g.wait_for(r"^pf: rule 1 added|rule added|^1 ", timeout=30, start=mark)
            blocked = subprocess.run(["ip", "netns", "exec", NS, sys.executable, "-c", PROBE, "10.9.1.2", "20"],
                                     capture_output=True, text=True, timeout=120).stdout.strip()
            mark = g.mark()
            g.type("pf counters\r")
            m = g.wait_for(r"^\s*blocked_in (\d+)", timeout=30, start=mark)
            blocked_in = int(m.group(1))
            g.type("pf flush\r")
            time.sleep(1)
            passed = subprocess.run(["ip", "netns", "exec", NS, sys.executable, "-c", PROBE, "10.9.1.2", "20"],
                                    capture_output=True, text=True, timeout=120).stdout.strip()
            out = g.output.replace("axolotl> ", "")
    finally:
        if client and client.poll() is None:
            client.kill()  # our own client, by PID
        subprocess.run([os.path.join(tools, "net-ns.sh"), "down", NS], check=False)
    tail = "\n".join(lines[-20:]) + "\n" + out[-4000:]
    assert "client: done, 10001 echoed" in lines[-1], tail
    assert client.returncode == 0, tail
    # Each server was killed mid-stream and restarted; syscall reattached the same socket
    # after udp's restart, and the echo went on.
    for victim in KILLS.values():
        assert re.search(r"^rs: %s exited with status" % victim, out, re.M), tail
        assert re.search(r"^rs: started %s as \S+ \(restarts 1\)" % victim, out, re.M), tail
    assert len(re.findall(r"^syscall: udp says hello", out, re.M)) == 2, tail
    assert blocked == "echoed 0 of 20", (blocked, tail)
    assert blocked_in >= 20, tail
    assert passed == "echoed 20 of 20", (passed, tail)
    assert len(re.findall(r"^udpecho: listening on 7$", out, re.M)) == 1, tail  # never reopened
    assert "panic" not in out.lower() and "lwip: assertion" not in out, tail
