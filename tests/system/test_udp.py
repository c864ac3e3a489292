"""The socket front door (issue 6): Linux programs' UDP socket calls pass from vfs to
`syscall` (KC_LX_PASS) and reach the socket engine through channels, the data moving through
each socket's shared buffers (servers/syscall/README.md).

Two layers:
- with `udpstub`, a loopback stand-in for udp run as the service `udp`
  (servers/syscall/test/udpstub.c): the socket calls' semantics and errnos
  (tests/linux/udptest.c), datagrams to ourselves, and a udp restart under a ping-pong
  that keeps its sockets;
- with the real stack (e1000, ip, udp; skipped until they are built): a host client
  exchanges 10000 datagrams with udpecho through a restricted user-networking forward,
  an 8000-byte datagram round-trips (fragments), and udp is killed mid-stream."""
import os
import re
import socket
import time

import pytest

from conftest import Guest, USER_DIR, boot, free_port, user_net
from test_rs import write_conf

STUB_MODULES = ("ds", "console", "vfs", "initrd.cpio", "pm", "lxstart", "syscall", "udpstub")


def stub_conf(run, pm_restart="never"):
    return ("service ds heartbeat=2000\n"
            "service console ioports=0x3f8-0x3ff irq=4 control\n"
            "service vfs kcalls=vcopy\n"
            "service syscall kcalls=vcopy\n"
            "service udp binary=udpstub backoff=20\n"
            'service pm kcalls=vcopy args="run=%s" restart=%s\n' % (run, pm_restart))


def results(out):
    return {name: status for status, name in re.findall(r"^UDPTEST (PASS|FAIL) (\w+)$", out, re.M)}


def test_udp_calls_and_loopback_through_syscall():
    write_conf("udpcalls.conf", stub_conf("/bin/udptest calls loop"))
    r = boot("", smp=2, modules=("rs conf=udpcalls.conf", "udpcalls.conf") + STUB_MODULES, timeout=240,
             until=r"^udptest: \d+ passed, \d+ failed$")
    out = r.output.replace("axolotl> ", "")  # the prompt shares a line with what follows it
    tail = out[-4000:]
    res = results(out)
    assert res and set(res.values()) == {"PASS"}, ({k: v for k, v in res.items() if v != "PASS"}, tail)
    m = re.search(r"^udptest: (\d+) passed, (\d+) failed$", out, re.M)
    assert m and int(m.group(2)) == 0 and int(m.group(1)) >= 60, tail
    # the calls went through syscall and the stub, not vfs's network-less sockets
    assert re.search(r"^syscall: udp \S+ attached", out, re.M), tail
    assert "panic" not in out.lower(), tail


def test_udp_restart_keeps_the_sockets():
    write_conf("udprestart.conf", stub_conf("/bin/udptest restart 3000"))
    with Guest("", modules=("rs conf=udprestart.conf", "udprestart.conf") + STUB_MODULES,
               name="udp-restart-stub") as g:
        g.wait_for(r"^udptest: round 1000$", timeout=240)
        g.type("\x1d")  # the console's monitor
        time.sleep(0.5)
        g.type("service kill udp\r")
        g.wait_for(r"^udpstub: attached, restart 1$", timeout=60)
        g.wait_for(r"^udptest: round 2000$", timeout=240)
        g.type("service kill udp\r")
        g.wait_for(r"^udpstub: attached, restart 2$", timeout=60)
        m = g.wait_for(r"^udptest: restart: 3000 rounds, (\d+) resends, (\d+) stale, (\d+) corrupt$", timeout=300)
        assert m.group(3) == "0", g.output[-3000:]
        g.wait_for(r"^udptest: 1 passed, 0 failed$", timeout=30)
        out = g.output.replace("axolotl> ", "")
        assert len(re.findall(r"^syscall: udp says hello", out, re.M)) == 3, out[-3000:]


REAL = ("e1000", "ip", "udp")


def real_stack():
    return all(os.path.exists(os.path.join(USER_DIR, p)) for p in REAL)


@pytest.mark.skipif(not real_stack(), reason="needs the e1000, ip and udp servers (branches drv, ip, udp)")
def test_udp_echo_with_a_host_client():
    port = free_port()
    conf = ("service ds heartbeat=2000\n"
            "service console ioports=0x3f8-0x3ff irq=4 control\n"
            "service vfs kcalls=vcopy\n"
            "service syscall kcalls=vcopy\n"
            "service e1000 pci=all dma heartbeat=1000\n"
            "service ip heartbeat=1000\n"
            "service udp heartbeat=1000 backoff=20\n"
            'service pm kcalls=vcopy args="run=/bin/udpecho 7" restart=never\n')
    write_conf("udpecho.conf", conf)
    mods = ("rs conf=udpecho.conf", "udpecho.conf", "ds", "console", "vfs", "initrd.cpio", "pm", "lxstart",
            "syscall") + REAL
    with Guest("", modules=mods, net=user_net("e1000", fwds=[("udp", port, 7)]), name="udp-echo") as g:
        g.wait_for(r"^udpecho: listening on 7$", timeout=240)
        g.wait_for(r"ip: .*(lease|address)", timeout=120)
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.settimeout(1.0)
        dst = ("127.0.0.1", port)

        def exchange(seq, size=64):
            payload = seq.to_bytes(4, "big") + bytes((seq * 7 + i) & 0xff for i in range(size - 4))
            for _ in range(10):
                s.sendto(payload, dst)
                try:
                    while True:
                        data, _ = s.recvfrom(65536)
                        if data[:4] == payload[:4]:
                            assert data == payload, f"datagram {seq} corrupted"
                            return
                except socket.timeout:
                    continue
            raise AssertionError(f"datagram {seq}: no echo after 10 tries\n{g.output[-3000:]}")

        try:
            for i in range(10000):
                exchange(i)
                if i == 5000:
                    g.type("\x1d")
                    time.sleep(0.3)
                    g.type("service kill udp\r")
            exchange(10001, size=8000)  # fragmented both ways
        finally:
            s.close()
        assert re.search(r"^syscall: udp says hello", g.output, re.M)
