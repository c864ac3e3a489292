"""The e1000 driver (drivers/e1000) against QEMU's 82540EM on restricted user networking,
with tests/user/nettest.c standing in for ip (run by rs as the service `ip`, so the names in
ds are ip's). rs finds the device by its PCI id (pci=8086:100e) and gives it BARs and its
interrupt line. One boot runs the story: ARP and ICMP echo to QEMU's gateway (checksums in
software and offloaded, two-segment frames), the driver killed and restarted by rs while
pings go on, garbage from "ip", the driver's counters, and ip itself restarted (the driver
sees ip's new names in ds, resets and attaches again). A second boot has no NIC: rs logs the
missing device once and does not start the driver. Another names the driver by a list of
ids (any of them: the first present is driven) beside a service whose list holds a bad id
(not started; rs and the rest run on). A third runs the driver in polling mode on a
dedicated core."""
import re

from conftest import Guest, boot, user_net
from test_rs import write_conf

P = r"^(?:axolotl> )?"  # a line may start after the console's prompt
MODULES = ("rs conf=e1000test.conf", "e1000test.conf", "ds", "console", "e1000", "nettest")
CONF = """# e1000 test
service ds heartbeat=2000
service console ioports=0x3f8-0x3ff irq=4 control
service e1000 pci=8086:100e dma heartbeat=2000 backoff=50
service ip binary=nettest dma args="if=e1000" backoff=50
"""


def test_e1000_pings_survives_restarts_and_garbage():
    write_conf("e1000test.conf", CONF)
    with Guest("", modules=MODULES, smp=2, net=user_net("e1000"), name="e1000-story") as g:
        g.wait_for(P + r"rs: e1000: PCI 8086:100e is 00:[0-9a-f]{2}\.0, 1 memory BARs, 1 I/O BARs, IRQ (\d+)$", 60)
        g.wait_for(P + r"e1000: 82540EM at 00:[0-9a-f]{2}\.0, MAC 52:54:00:12:34:56, IRQ \d+, interrupt mode", 30)
        g.wait_for(P + r"nettest: driver reset 1: MAC 52:54:00:12:34:56, link up$", 30)
        g.wait_for(P + r"nettest: ARP reply: 10\.0\.2\.2 is at 52:55:0a:00:02:02$", 30)
        g.wait_for(P + r"nettest: echo reply seq 1 from 10\.0\.2\.2 \(software checksums", 30)
        g.wait_for(P + r"nettest: echo reply seq 2 from 10\.0\.2\.2 \(checksums offloaded", 30)
        g.wait_for(P + r"nettest: echo reply seq \d+ .*, 25 replies$", 60)
        # the driver killed: rs restarts it, it resets, attaches, and the pings go on
        mark = g.mark()
        g.type("service kill e1000\r")
        g.wait_for(P + r"rs: restarting e1000 in \d+ ms$", 30, mark)
        g.wait_for(P + r"e1000: attached to ip ", 30, mark)
        g.wait_for(P + r"nettest: driver reset 2: MAC 52:54:00:12:34:56, link up$", 30, mark)
        g.wait_for(P + r"nettest: pings resumed after driver reset 2$", 60, mark)
        # garbage from ip: every malformed message dropped and counted, nothing crashes
        mark = g.mark()
        g.type("service inject ip garbage\r")
        m = g.wait_for(P + r"nettest: garbage sent: (\d+) messages$", 30, mark)
        assert int(m.group(1)) == 48
        m = g.wait_for(P + r"nettest: pings continue after garbage: (\d+) garbage TX failed back, (\d+) pool errors$",
                       60, mark)
        assert int(m.group(1)) >= 8 and int(m.group(2)) >= 1, m.group(0)
        mark = g.mark()
        g.type("service inject ip counters\r")
        end = g.wait_for(P + r"nettest: counters end; (\d+) sent, (\d+) replies \((\d+) offloaded\), (\d+) bad", 30, mark)
        counters = dict(re.findall(P + r"nettest: e1000 counter (\w+) (\d+)$", g.output[mark:], re.M))
        assert int(counters["bad_messages"]) >= 20, counters
        assert int(counters["rx_packets"]) >= 25 and int(counters["tx_packets"]) >= 25, counters
        assert int(counters["rx_bytes"]) > 0 and int(counters["tx_bytes"]) > 0, counters
        assert int(counters["interrupts"]) > 0, counters  # interrupt mode really took interrupts
        assert int(counters["crc_errors"]) == 0 and counters["link_up"] == "1", counters
        assert int(end.group(4)) == 0 and int(end.group(3)) > 0, end.group(0)
        # ND_CONF: polling and back to interrupts, pings continue in both
        for word, mode in (("poll", "polling"), ("irq", "interrupt")):
            mark = g.mark()
            g.type(f"service inject ip {word}\r")
            g.wait_for(P + f"e1000: {mode} mode$", 30, mark)
            g.wait_for(P + r"nettest: pings continue after ND_CONF$", 60, mark)
        # ip restarts: the driver sees new names in ds, resets and attaches to the new ip
        mark = g.mark()
        g.type("service kill ip\r")
        g.wait_for(P + r"nettest: exported ip/e1000\.down, .*\(restart 1\)$", 30, mark)
        g.wait_for(P + r"e1000: ip exported new channels: resetting and attaching again$", 30, mark)
        g.wait_for(P + r"nettest: driver reset 1: MAC 52:54:00:12:34:56, link up$", 30, mark)
        g.wait_for(P + r"nettest: echo reply seq 4 from 10\.0\.2\.2", 60, mark)
        out = g.output
        assert "rs: e1000 crashed" not in out, out[-3000:]
        assert "nettest: bad echo reply" not in out and "nettest: bad ND_RX" not in out, out[-3000:]
        assert len(re.findall(r"^rs: \w+ hung", out, re.M)) == 0, out[-3000:]


def test_missing_device_is_logged_once_and_not_started():
    write_conf("e1000test.conf", CONF)
    r = boot("", smp=2, modules=MODULES, timeout=60, until=r"^nettest: exported ip/e1000\.down")
    r2 = r.output
    assert re.search(r"^rs: e1000: no PCI device 8086:100e$", r2, re.M), r2[-3000:]
    assert len(re.findall(r"no PCI device", r2)) == 1, r2[-3000:]
    assert not re.search(r"^rs: started e1000", r2, re.M), r2[-3000:]
    assert not re.search(r"^rs: restarting e1000", r2, re.M), r2[-3000:]


# A driver named by a list of ids, any of which it drives: the first two absent here, the
# 82540EM third; and a service whose list holds a bad id, which is not started while rs and
# every other service run on.
ANY_CONF = CONF.replace("service e1000 pci=8086:100e dma", "service e1000 pci=8086:10fb,1af4:1041,8086:100e dma") + \
    "service broken binary=e1000 pci=8086:10fb,8086:10zz,8086:100e dma\n"


def test_any_of_several_pci_ids_and_a_bad_id():
    write_conf("e1000any.conf", ANY_CONF)
    modules = ("rs conf=e1000any.conf", "e1000any.conf") + MODULES[2:]
    with Guest("", modules=modules, smp=2, net=user_net("e1000"), name="e1000-any") as g:
        # the first id of the list that is present: the third
        g.wait_for(P + r"rs: e1000: PCI 8086:100e is 00:[0-9a-f]{2}\.0, 1 memory BARs, 1 I/O BARs, IRQ (\d+)$", 60)
        g.wait_for(P + r"nettest: echo reply seq 2 from 10\.0\.2\.2", 60)
        out = g.output
        assert re.search(r"^rs: broken: configuration line 6: PCI id must be VVVV:DDDD or VVVV:DDDD#N: 8086:10zz; "
                         r"not started$", out, re.M), out[-3000:]
        assert "rs: 5 services in e1000any.conf" in out, out[-3000:]
        for name in ("ds", "console", "e1000", "ip"):
            assert re.search(r"^rs: started %s as " % name, out, re.M), (name, out[-3000:])
        assert not re.search(r"^rs: (started|restarting) broken", out, re.M), out[-3000:]
        assert not re.search(r"no PCI device", out), out[-3000:]
        mark = g.mark()
        g.type("service list\r")
        m = g.wait_for(P + r"broken\s+(\S+)", 30, mark)
        assert m.group(1) == "stopped", m.group(0)  # (not absent: its line is wrong, not its machine)


POLL_CONF = CONF.replace("service e1000 pci=8086:100e dma", "service e1000 pci=8086:100e dma cpu=1 dedicated")


def test_e1000_polls_on_a_dedicated_core():
    write_conf("e1000poll.conf", POLL_CONF)
    mods = ("rs conf=e1000poll.conf", "e1000poll.conf") + MODULES[2:]
    with Guest("", modules=mods, smp=2, net=user_net("e1000"), name="e1000-poll") as g:
        g.wait_for(P + r"e1000: 82540EM at .* polling mode, link up, restart 0$", 60)
        g.wait_for(P + r"nettest: echo reply seq 2 from 10\.0\.2\.2 \(checksums offloaded", 60)
        g.wait_for(P + r"nettest: echo reply seq \d+ .*, 25 replies$", 90)
        mark = g.mark()
        g.type("service inject ip counters\r")
        g.wait_for(P + r"nettest: counters end", 30, mark)
        counters = dict(re.findall(P + r"nettest: e1000 counter (\w+) (\d+)$", g.output[mark:], re.M))
        assert counters["interrupts"] == "0", counters


E1000E_CONF = CONF.replace("8086:100e", "8086:10d3").replace('args="if=e1000"', 'args="if=e1000 icmp_l4=0"')


def test_e1000e_82574_pings_with_rx_checksums():
    """The 82574 (QEMU's e1000e) through the same driver: legacy descriptors, its EERD
    layout; QEMU's model reports RX checksums (NDF_RX_IP4_OK) and offloads only TCP/UDP
    checksums, so the ICMP checksum is computed by nettest there."""
    write_conf("e1000e.conf", E1000E_CONF)
    mods = ("rs conf=e1000e.conf", "e1000e.conf") + MODULES[2:]
    with Guest("", modules=mods, smp=2, net=user_net("e1000e"), name="e1000e") as g:
        g.wait_for(P + r"e1000: 82574 at 00:[0-9a-f]{2}\.0, MAC 52:54:00:12:34:56, IRQ \d+, interrupt mode", 60)
        g.wait_for(P + r"nettest: echo reply seq 1 from 10\.0\.2\.2 \(software checksums, rx flags 0x1\)", 60)
        g.wait_for(P + r"nettest: echo reply seq 2 from 10\.0\.2\.2 \(checksums offloaded, rx flags 0x1\)", 30)
        g.wait_for(P + r"nettest: echo reply seq \d+ .*, 25 replies$", 60)
        assert "nettest: bad echo reply" not in g.output
