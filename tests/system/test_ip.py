"""The ip server (servers/ip, issue 6) on the e1000 driver and QEMU's restricted user
networking: a DHCP lease from QEMU, pings to the gateway through NETQ_PING (pingtest), 8000-
byte echoes fragmented both ways, the tables, and recovery: ip and e1000 are killed while
pinging and the pings resume (ip restores its lease from ds, the driver re-attaches).
A second test sends malformed frames from the host through a tap device in a network
namespace of its own (tools/net-ns.sh, tools/net-send.py) and checks ip drops and counts
them and still answers."""
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

from conftest import Guest, ROOT, tap_net, user_net
from test_rs import write_conf

MODULES_BASE = ("ds", "console", "e1000", "ip", "pingtest")


def conf(ping_args):
    return f"""# ip system test
service ds heartbeat=2000
service console ioports=0x3f8-0x3ff irq=4 control
service e1000 pci=8086:100e dma heartbeat=3000
service ip dma heartbeat=2000 args="if=e1000 dhcp pf=none"
service pingtest restart=never args="{ping_args}"
"""


def modules(name):
    return (f"rs conf={name}", name) + MODULES_BASE


def command(g, text, expect, start, tries=3):
    """Types a console command, again if what it should cause does not show (a typed line
    can be lost under heavy console output on TCG)."""
    for i in range(tries):
        g.type(text + "\r")
        try:
            return g.wait_for(expect, timeout=30, start=start)
        except AssertionError:
            if i == tries - 1:
                raise


def test_dhcp_ping_fragments_tables_and_restarts():
    # 30 rounds of 4 echoes 100 ms apart: the test kills ip, then e1000, while they run (a CI
    # boot with 12 rounds finished them all before it could type the second kill)
    # a bad queues= (2^64 + 1: read naively it wraps to a valid 1) is refused with a line, and
    # ip goes on with its default
    write_conf("iptest.conf", conf("10.0.2.2 count=4 size=8000 interval=100 rounds=30 show").replace(
        "if=e1000 dhcp", "if=e1000 queues=18446744073709551617 dhcp"))
    with Guest("", modules=modules("iptest.conf"), smp=2, net=user_net("e1000")) as g:
        g.wait_for(r"^ip: queues=18446744073709551617: want 1\.\.8, using 4", timeout=120)
        g.wait_for(r"^ip: e1000: dhcp lease 10\.0\.2\.15/24 gw ", timeout=120)
        g.wait_for(r"^pingtest: round 1: 4 sent, 4 replies", timeout=120)
        # kill ip while pinging: rs restarts it, it restores the lease from ds, e1000 re-attaches
        mark = g.mark()  # (ip may have exited at boot already)
        command(g, "service kill ip", r"^(?:axolotl> )?rs: ip exited", mark)
        g.wait_for(r"^ip: e1000: restored 10\.0\.2\.15/24 gw \S+ from ds", timeout=60, start=mark)
        g.wait_for(r"^e1000: attached to ip", timeout=60, start=g.output.rfind("restored"))
        mark = g.mark()
        # pingtest's next question names a session of the killed ip: the new one answers
        # -ENOENT and pingtest starts a new round through it
        g.wait_for(r"^pingtest: round \d+: 4 sent, 4 replies", timeout=60, start=mark)
        # kill the driver while pinging: it resets the device and says ND_RESET
        command(g, "service kill e1000", r"^(?:axolotl> )?rs: e1000 exited", mark)
        g.wait_for(r"^ip: e1000: driver reset, mac 52:54:00:12:34:56, link up", timeout=60, start=mark)
        mark = g.mark()
        g.wait_for(r"^pingtest: round \d+: 4 sent, 4 replies", timeout=120, start=mark)
        g.wait_for(r"^pingtest: \| rx_bad_options \d+", timeout=180)
        out = g.output
    assert re.search(r"^rs: ip exited", out, re.M) or re.search(r"^rs: restarting ip", out, re.M), out[-3000:]
    assert re.search(r"^pingtest: done: 30 rounds, (\d+) replies", out, re.M), out[-3000:]
    replies = int(re.search(r"^pingtest: done: 30 rounds, (\d+) replies", out, re.M).group(1))
    assert replies >= 110, out[-3000:]  # 120 echoes in 30 rounds; a few may be lost at a kill
    # 8000-byte echoes: fragmented out, reassembled in
    assert re.search(r"^pingtest: seq \d+ reply 8000 bytes ttl \d+ rtt \d+ us", out, re.M)
    m = re.search(r"^pingtest: \| frag_recv (\d+)$", out, re.M)
    assert m and int(m.group(1)) > 0, out[-3000:]
    m = re.search(r"^pingtest: \| frag_xmit (\d+)$", out, re.M)
    assert m and int(m.group(1)) > 0, out[-3000:]
    # the tables
    assert re.search(r"^pingtest: \| e1000 10\.0\.2\.15/24 52:54:00:12:34:56 mtu 1500 up dhcp", out, re.M)
    assert re.search(r"^pingtest: \| 10\.0\.2\.0/24 dev e1000 connected", out, re.M)
    assert re.search(r"^pingtest: \| 10\.0\.2\.2 52:55:0a:00:02:02 e1000", out, re.M), out[-3000:]
    assert not re.search(r"lwip: assertion", out)


NS = "axolotl-iptest"
GUEST_MAC = "52:54:00:12:34:56"



def counter(out, name):
    m = re.findall(rf"^pingtest: \| {name} (\d+)$", out, re.M)
    assert m, f"counter {name} not shown"
    return int(m[-1])


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("ip") or not os.path.exists("/dev/net/tun"),
                    reason="needs root, iproute2 and /dev/net/tun for a namespace with a tap device")
def test_malformed_frames_are_dropped_and_counted():
    write_conf("iptest-ns.conf", conf("10.9.0.1 count=3 size=2000 interval=300 rounds=15 show").replace(
        "if=e1000 dhcp pf=none", "if=e1000 addr=10.9.0.2/24 pf=none"))
    tools = os.path.join(ROOT, "tools")
    subprocess.run([os.path.join(tools, "net-ns.sh"), "down", NS], check=False)
    subprocess.run([os.path.join(tools, "net-ns.sh"), "up", NS, "10.9.0.1/24"], check=True)
    try:
        with Guest("", modules("iptest-ns.conf"), net=tap_net(mac=GUEST_MAC), netns=NS, name="test_ip-netns") as g:
            g.wait_for(r"^ip: e1000: driver attached", timeout=120)
            r = subprocess.run(["ip", "netns", "exec", NS, sys.executable, os.path.join(tools, "net-send.py"),
                                "tap0", GUEST_MAC, "10.9.0.1", "10.9.0.2"],
                               capture_output=True, text=True, timeout=120)
            assert "net-send: sent 12 malformed frames" in r.stdout, r.stdout + r.stderr
            assert r.returncode == 0, r.stdout + r.stderr + g.output[-3000:]  # every 8000-byte echo answered
            g.wait_for(r"^pingtest: \| rx_bad_options \d+", timeout=180)
            out = g.output
    finally:
        subprocess.run([os.path.join(tools, "net-ns.sh"), "down", NS], check=False)
    # (frames are padded to 60 bytes, so the 10-byte header counts as a bad total length)
    assert counter(out, "rx_bad_short") >= 1, out[-4000:]
    assert counter(out, "ip_drop") >= 1         # version 6: lwIP drops it before the hook
    assert counter(out, "rx_bad_hlen") >= 1
    assert counter(out, "rx_bad_totlen") >= 2
    assert counter(out, "rx_bad_csum") >= 1
    assert counter(out, "rx_bad_frag") >= 1    # the ping of death
    assert counter(out, "frag_drop") >= 1      # overlapping fragments, dropped by lwIP's reassembly
    m = re.search(r"^pingtest: done: 15 rounds, (\d+) replies", out, re.M)
    assert m and int(m.group(1)) >= 40, out[-4000:]
    assert not re.search(r"rs: ip (crashed|exited)|lwip: assertion", out)
