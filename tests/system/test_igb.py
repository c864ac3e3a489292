"""The default image on QEMU's emulated Intel 82576 (`-device igb`, QEMU 8.0 and later: the
QEMU 10 of build/qemu), as `make run NIC=igb` boots it: rs finds 8086:10c9 and starts
drivers/ixgbe (advanced descriptors, RSS, MSI-X: from KC_MSI_BIND a vector per queue pair and one
for the link),
e1000 and virtio-net (optional, no device) are absent. One guest for the file (a module fixture, test_tcp_apps.boot_apps), the
tests in this order:
- the boot: the driver's device line (82576, interrupt mode through 5 MSI-X vectors, link
  up), the others absent, the lease;
- lighttpd's files byte-exact, memcached's values exact, through forwards of 127.0.0.1;
- UDP: udpecho answers 50 datagrams from the host, each exact on the wire (filter-dump);
- the driver's counters (netstat): frames both ways, interrupts taken (MSI-X messages: the
  vectors' notifications), no bad descriptors,
  RX checksum status given to ip and counted there (tcp_rx_csum_hw), TX checksum offload
  used (the device's contexts, tcp_tx_csum_hw), every frame RSS-hashed;
- RSS: 64 connections spread over the 4 queues, each flow on one, and each queue's own MSI-X
  vector took interrupts;
- ixgbe killed under a checked 16 MiB TCP stream: rs restarts it, the one connection
  carries every byte, and new connections are served after the restart;
- ixgbe deaf to ip, then refusing every frame (`service inject`): ip tells rs, which
  restarts it, each under a checked stream.
Every load is bounded in bytes and time; nothing pings from the guest's console."""
import os
import re
import time

import pytest

import sysconf_variants
import tcp_tools
from conftest import ROOT, free_port
from test_tcp_apps import (DEAF, HOST, REFUSE, boot_apps, driver_fault_restarted_on_ips_word,
                           driver_killed_under_a_stream, driver_updated_under_a_stream, note)
import test_virtio_net

NIC = "igb"
DRV = "ixgbe"
STREAM = 16 << 20
UDP_PORT = free_port()
PCAP = os.path.join(ROOT, "build", "test-logs", "igb.pcap")


@pytest.fixture(scope="module")
def apps():
    os.makedirs(os.path.dirname(PCAP), exist_ok=True)
    if os.path.exists(PCAP):
        os.remove(PCAP)
    try:
        yield from boot_apps(sysconf_variants.default(), "igb", nic=NIC, driver=DRV, extra_fwds=[("udp", UDP_PORT, 7)],
                             net_extra=["-object", f"filter-dump,id=dump0,netdev=n0,file={PCAP}"])
    finally:
        if os.path.exists(PCAP):
            os.remove(PCAP)


def test_rs_starts_the_driver_of_the_nic_that_is_there(apps):
    out = apps.out()
    m = re.search(r"^rs: ixgbe: PCI 8086:10c9 is 00:[0-9a-f]{2}\.0, (\d+) memory BARs, \d+ I/O BARs, IRQ (\d+)$",
                  out, re.M)
    assert m and int(m.group(1)) >= 1 and 1 <= int(m.group(2)) <= 15, out[:6000]
    # (the link comes up when the PHY's autonegotiation, restarted at every reset, completes)
    assert re.search(r"^ixgbe: 82576 at 00:[0-9a-f]{2}\.0, MAC 52:54:00:12:34:56, IRQ \d+, interrupt mode \(MSI-X, 5 vectors\), "
                     r"link (up|down), queues 4 \(RSS over \d\)", out, re.M), out[:6000]
    # lib/netdrv took 5 vectors from the kernel's pool (0x50..0x6f), one per queue pair and one
    # for the link, and programmed entries 0..4 of the table QEMU's igb (10 entries) has in BAR 3
    m = re.search(r"^(?:axolotl> )?ixgbe: MSI-X: 5 of (\d+) vectors \(CPU vector (0x[0-9a-f]+)\.\.\.\), table at BAR (\d) \+ (?:0x[0-9a-f]+|0)$", out, re.M)
    assert m and int(m.group(1)) >= 5 and 0x50 <= int(m.group(2), 16) < 0x70, out[:6000]
    assert not re.search(r"ixgbe: no MSI-X", out), out[:6000]
    assert re.search(r"^ixgbe: link up$", out, re.M) or re.search(r"link up, queues", out), out[:6000]
    assert re.search(r"^ixgbe: attached to ip ", out, re.M), out[:6000]
    assert re.search(r"^ip: ixgbe: driver attached, mac 52:54:00:12:34:56, link (up|down), 4 queue pairs", out, re.M), \
        out[:6000]
    assert re.search(r"^ixgbe: attached to ip .*, 4 queue pairs$", out, re.M), out[:6000]
    for other, pci in (("e1000", "8086:100e"), ("virtio-net", "1af4:1041")):
        assert len(re.findall(r"^rs: %s: no PCI device %s \(optional: absent\)$" % (other, pci), out, re.M)) == 1, \
            out[:6000]
        assert not re.search(r"^rs: (started|restarting) %s" % other, out, re.M), out[:6000]


# The application checks of test_virtio_net.py, on this file's guest (its `apps` fixture).
from test_virtio_net import test_lighttpd_files_are_byte_exact, test_memcached_values_round_trip  # noqa: E402,F401


def test_udp_echo_from_the_host(apps):
    """udpecho answers 50 datagrams from the host, payload unchanged and checksum right on
    the wire (QEMU's filter-dump): test_virtio_net.py's check on this guest's capture."""
    saved = test_virtio_net.PCAP, test_virtio_net.UDP_PORT
    test_virtio_net.PCAP, test_virtio_net.UDP_PORT = PCAP, UDP_PORT
    try:
        test_virtio_net.test_udp_echo_from_the_host(apps)
    finally:
        test_virtio_net.PCAP, test_virtio_net.UDP_PORT = saved
    note("(the line above: ixgbe on the 82576, not virtio-net)")


def netstat_blocks(apps):
    """{service: {counter: value}} from one netstat (the driver's block and ip's)."""
    mark = apps.g.mark()
    apps.g.type("netstat\r")
    apps.g.wait_for(r"^(?:axolotl> )?ixgbe:$", timeout=30, start=mark)
    end = apps.g.wait_for(r"^ixgbe:\n(?:[ \t]+.*\n)*?[ \t]+link_up \d+$", timeout=30, start=mark)
    apps.g.wait_for(r"^ip:\n(?:[ \t]+.*\n)*?[ \t]+tcp_tx_csum_hw \d+$", timeout=30, start=mark)
    time.sleep(1)
    text = apps.g.output[mark:].replace("axolotl> ", "")
    blocks = {}
    for name in ("ixgbe", "ip"):
        m = re.search(r"^%s:\n((?:[ \t]+.*\n)*)" % name, text, re.M)
        assert m, (name, text[-3000:])
        blocks[name] = {k: int(v) for k, v in re.findall(r"^\s+([a-z_0-9]+) (\d+)$", m.group(1), re.M)}
    assert end
    return blocks


def test_driver_counters_and_offloads(apps):
    b = netstat_blocks(apps)
    c, ip = b["ixgbe"], b["ip"]
    assert c["rx_packets"] > 100 and c["tx_packets"] > 100, c
    assert c["rx_bytes"] > 4 << 20 or c["tx_bytes"] > 4 << 20, c
    # interrupt mode really took interrupts: MSI-X messages (no INTx line is bound)
    assert c["interrupts"] > 0 and c["msix_vectors"] == 5, c
    assert c["vector0_interrupts"] > 0, c  # queue 0's vector (the DHCP lease came there)
    # (one notification may carry several vectors' bits: "interrupts" counts notifications)
    assert sum(c["vector%d_interrupts" % v] for v in range(5)) >= c["interrupts"], c
    assert c["rx_bad_desc"] == 0 and c["bad_messages"] == 0 and c["link_up"] == 1 and c["crc_errors"] == 0, c
    assert c["queues"] == 4, c
    assert c["link_mbps"] == 1000, c  # STATUS.SPEED of QEMU's 82576 (the 82599's LINKS: model only)
    # RX checksum offload: the descriptors' status reached ip, which counted it
    assert c["rx_csum_ok"] > 100 and c["rx_csum_bad"] == 0, c
    assert ip["tcp_rx_csum_hw"] > 100, ip
    # TX checksum offload: ip asked for it (ND_RESET said so) and the device got contexts
    assert c["tx_csum_offloaded"] > 100 and c["tx_contexts"] >= 1, c
    assert ip["tcp_tx_csum_hw"] > 100, ip
    # RSS on: the frames carry their hash
    assert c["rx_rss_hashed"] > 100 and c["rx_last_rss_hash"] != 0, c
    assert c["rx_ipv4"] > 100, c
    note(f"ixgbe (82576) counters: {c}")


def test_rss_spreads_flows_over_the_queues_each_flow_on_one(apps):
    """64 HTTP connections from the host, each a flow of its own (another source port): the
    82576 spreads them by RSS over the 4 queue pairs ip runs with ixgbe, so every queue
    receives and sends frames and sees flows first, and no flow's frames arrive on a second
    queue (ip's flow table: `flows moved`, `rx_flow_moved`)."""
    for i in range(64):
        status, body = tcp_tools.http_get(HOST, apps.port[80], "/hello.txt", timeout=30)
        assert status == 200 and body, (i, status, body[:200])
    mark = apps.g.mark()
    apps.g.type("ifconfig\r")
    apps.g.wait_for(r"^\s*4 queues, flows moved \d+", timeout=30, start=mark)
    text = apps.g.output[mark:]
    queues = {int(q): (int(rx), int(tx), int(bufs), int(flows)) for q, rx, tx, bufs, flows in re.findall(
        r"^\s*queue (\d) rx (\d+) tx (\d+) rxbufs (\d+) flows (\d+)$", text, re.M)}
    assert sorted(queues) == [0, 1, 2, 3], text[-3000:]
    for q, (rx, tx, bufs, flows) in queues.items():
        assert rx > 0 and tx > 0 and flows > 0, (q, queues)
        assert 0 < bufs <= 64, (q, queues)  # each queue holds its share of ip's 256 RX buffers
    moved = int(re.search(r"^\s*4 queues, flows moved (\d+)", text, re.M).group(1))
    assert moved == 0, text[-3000:]
    b = netstat_blocks(apps)
    assert b["ip"]["rx_flow_moved"] == 0
    # per-queue MSI-X: queue q's causes go to vector q (IVAR), so each queue's frames brought
    # messages of its own vector
    vecs = [b["ixgbe"]["vector%d_interrupts" % v] for v in range(5)]
    assert all(n > 0 for n in vecs[:4]), vecs
    note(f"ixgbe RSS over 4 queues after 64 connections: (rx, tx, rx buffers, flows) per queue {queues}; "
         f"interrupts per MSI-X vector {vecs}")


def test_tcp_stream_survives_an_ixgbe_kill(apps):
    """A 16 MiB stream from tcphash; ixgbe killed once a fifth has come: rs restarts it, the
    new instance resets the device and attaches, ip resends what was not acknowledged, and
    the one connection carries every byte right. Then new connections are served."""
    mark, t0 = driver_killed_under_a_stream(apps, STREAM, 53, queues=4)
    note(f"ixgbe killed under a 16 MiB stream: {time.monotonic() - t0:.1f} s, one connection, every byte")


def test_ixgbe_live_update_under_a_stream(apps):
    """`service update ixgbe` under a checked 16 MiB stream: the new instance resets the
    device, takes the 4 queue pairs again and the stream arrives whole."""
    stall = driver_updated_under_a_stream(apps, STREAM, 57, queues=4)
    note(f"ixgbe live-updated under a 16 MiB stream: stall {stall:.1f} ms, every byte")


def test_a_deaf_driver_is_restarted_on_ips_word(apps):
    driver_fault_restarted_on_ips_word(apps, "deaf", *DEAF, 59, n=STREAM)


def test_a_refusing_driver_is_restarted_on_ips_word(apps):
    driver_fault_restarted_on_ips_word(apps, "refuse", *REFUSE, 61, n=STREAM)
    assert tcp_tools.tcphash_small(HOST, apps.port[7000], 6, timeout=60)
