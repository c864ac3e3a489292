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
import time

import pytest

from conftest import Guest, ROOT, user_net
from test_rs import write_conf

MODULES_BASE = ("ds", "console", "e1000", "ip", "pingtest")


def conf(ping_args):
    return f"""# ip system test
service ds heartbeat=2000
service console ioports=0x3f8-0x3ff irq=4 control
service e1000 pci=8086:100e dma heartbeat=1000
service ip dma heartbeat=2000 args="if=e1000 dhcp pf=none"
service pingtest restart=never args="{ping_args}"
"""


def modules(name):
    return (f"rs conf={name}", name) + MODULES_BASE


def test_dhcp_ping_fragments_tables_and_restarts():
    write_conf("iptest.conf", conf("10.0.2.2 count=4 size=8000 interval=100 rounds=12 show"))
    with Guest("", modules=modules("iptest.conf"), smp=2, net=user_net("e1000")) as g:
        g.wait_for(r"^ip: e1000: dhcp lease 10\.0\.2\.15/24 gw ", timeout=120)
        g.wait_for(r"^pingtest: round 1: 4 sent, 4 replies", timeout=120)
        # kill ip while pinging: rs restarts it, it restores the lease from ds, e1000 re-attaches
        g.type("service kill ip\r")
        g.wait_for(r"^ip: e1000: restored 10\.0\.2\.15/24 gw \S+ from ds", timeout=60)
        g.wait_for(r"^e1000: attached to ip", timeout=60, start=g.output.rfind("restored"))
        mark = g.mark()
        g.wait_for(r"^pingtest: round \d+: 4 sent, 4 replies", timeout=120, start=mark)
        # kill the driver while pinging: it resets the device and says ND_RESET
        g.type("service kill e1000\r")
        g.wait_for(r"^ip: e1000: driver reset, mac 52:54:00:12:34:56, link up", timeout=60, start=mark)
        mark = g.mark()
        g.wait_for(r"^pingtest: round \d+: 4 sent, 4 replies", timeout=120, start=mark)
        g.wait_for(r"^pingtest: \| rx_bad_options \d+", timeout=180)
        out = g.output
    assert re.search(r"^rs: ip exited", out, re.M) or re.search(r"^rs: restarting ip", out, re.M), out[-3000:]
    assert re.search(r"^pingtest: done: 12 rounds, (\d+) replies", out, re.M), out[-3000:]
    replies = int(re.search(r"^pingtest: done: 12 rounds, (\d+) replies", out, re.M).group(1))
    assert replies >= 40, out[-3000:]  # 48 echoes in 12 rounds; a few may be lost at a kill
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
