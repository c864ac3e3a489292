"""The default image on a multiqueue virtio-net NIC (QEMU's virtio-net-pci, modern only, with
`mq=on` and its default 10 MSI-X vectors) behind a multiqueue tap device (`queues=4`,
vhost off) in a network namespace of its own (tools/net-ns.sh ... multi_queue), as QEMU's
user networking cannot give a NIC more than one queue. drivers/virtio-net negotiates
VIRTIO_NET_F_MQ and the control queue, sets up 4 queue pairs and tells the device to use
them (VQ_PAIRS_SET); the host kernel's tap spreads the flows it sends over the 4 queues by
its own hash and sends each flow's answers back on the queue the guest transmitted them on.
The guest has a fixed address (no DHCP server behind a tap); this test process joins the
namespace (setns, its own threads only) to reach it, and removes the namespace at the end.
One guest for the file (a module fixture), the tests in this order:
- the boot: the driver's line (4 pairs of 4, 5 MSI-X vectors: one per pair, one for the
  configuration), attached with 4 queue pairs, ip runs 4;
- 64 HTTP GETs to lighttpd on fresh connections (64 source ports): ip's `ifconfig` shows
  4 queues, each of which received and sent frames and saw flows first, and no flow moved
  between queues; the driver's counters: 4 queues, no device or control-queue errors, and
  each pair's own MSI-X vector took interrupts over them;
- virtio-net killed under a checked 16 MiB TCP stream: rs restarts it, the new instance
  runs 4 pairs again, the one connection carries every byte, and 64 new connections are
  served after the restart, again over the 4 queues, none moving.
Every load is bounded in bytes and time; nothing pings from the guest's console."""
import contextlib
import ctypes
import os
import re
import shutil
import subprocess
import time

import pytest

import sysconf_variants
import tcp_tools
import test_tcp_apps
from conftest import ROOT, Guest
from test_rs import write_conf
from test_tcp_apps import MODULES, WWW, Apps, note, wait_until
from test_virtio_net import driver_counters

NS = "axolotl-vnetmq"
HOST_ADDR, GUEST_ADDR = "10.0.2.2", "10.0.2.15"
GUEST_MAC = "52:54:00:12:34:56"
QUEUES = 4
NIC = f"virtio-net-pci,disable-legacy=on,mq=on,netdev=n0,mac={GUEST_MAC}"
NET = ["-netdev", f"tap,id=n0,ifname=tap0,script=no,downscript=no,queues={QUEUES},vhost=off", "-device", NIC]
STREAM = 16 << 20
CONF = "vnetmq.conf"
NET_NS = os.path.join(ROOT, "tools", "net-ns.sh")

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("ip") or not os.path.exists("/dev/net/tun"),
                                reason="needs root, iproute2 and /dev/net/tun for a namespace with a tap device")

_libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNET = 0x40000000


def _setns(fd):
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


@contextlib.contextmanager
def in_netns(ns):
    """This thread (and the threads it starts) in network namespace ns, back afterwards."""
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    target = os.open(f"/var/run/netns/{ns}", os.O_RDONLY)
    try:
        _setns(target)
        try:
            yield
        finally:
            _setns(own)
    finally:
        os.close(own)
        os.close(target)


def conf():
    """The default configuration with ip on virtio-net alone (a fixed address goes to ip's
    first interface) at GUEST_ADDR."""
    text, n = re.subn(r'^(service ip .*args="if=)[^ "]*', r"\1virtio-net", sysconf_variants.default(), count=1,
                      flags=re.M)
    assert n == 1, "boot/system.conf has no `service ip ... args=\"if=...` line"
    return sysconf_variants.static_address(text, f"{GUEST_ADDR}/24", HOST_ADDR)


@pytest.fixture(scope="module")
def apps():
    subprocess.run(["make", "-s", "-C", ROOT, os.path.relpath(WWW, ROOT)], check=True)
    write_conf(CONF, conf())
    write_conf("pf.conf", open(os.path.join(ROOT, "boot", "pf.conf")).read())
    modules = (f"rs conf={CONF}", CONF) + tuple(m for m in MODULES if "tcpapps.conf" not in m)
    subprocess.run([NET_NS, "down", NS], check=False)
    subprocess.run([NET_NS, "up", NS, f"{HOST_ADDR}/24", "multi_queue"], check=True)
    saved = test_tcp_apps.HOST
    try:
        with in_netns(NS), Guest("", modules=modules, mem=1024, net=NET, netns=NS, name="virtio-net-mq") as g:
            test_tcp_apps.HOST = GUEST_ADDR  # (its CheckedStream connects to HOST)
            g.wait_for(r"rc: started lighttpd", timeout=240)
            g.wait_for(r"^ip: virtio-net: driver attached", timeout=180)
            ports = {p: p for p in (80, 11211, 5001, 7000, 6379)}
            wait_until("tcphash", lambda: tcp_tools.tcphash_small(GUEST_ADDR, 7000, 1, timeout=10), 180)
            wait_until("lighttpd", lambda: tcp_tools.http_get(GUEST_ADDR, 80, "/hello.txt", timeout=10)[0] == 200, 60)
            g.type("\x1d")  # the console's monitor, for service, ifconfig and netstat
            g.wait_for(r"console: monitor", timeout=30)
            time.sleep(0.5)
            yield Apps(g, ports, "virtio-net")
    finally:
        test_tcp_apps.HOST = saved
        subprocess.run([NET_NS, "down", NS], check=False)


def queue_lines(apps):
    """ip's `ifconfig`: {queue: (rx, tx, rx buffers, flows)} and the flows that moved."""
    mark = apps.g.mark()
    apps.g.type("ifconfig\r")
    m = apps.g.wait_for(r"^\s*(\d+) queues, flows moved (\d+)", timeout=30, start=mark)
    text = apps.g.output[mark:m.end()]
    queues = {int(q): (int(rx), int(tx), int(bufs), int(flows)) for q, rx, tx, bufs, flows in re.findall(
        r"^\s*queue (\d) rx (\d+) tx (\d+) rxbufs (\d+) flows (\d+)$", text, re.M)}
    assert int(m.group(1)) == len(queues), text[-3000:]
    return queues, int(m.group(2))


def spread(apps, n, what):
    """n HTTP GETs, each on a fresh connection (its own source port, so its own flow): over
    them every queue received and sent frames and saw new flows first, and no flow moved
    between queues (ip's counters before and after: they count since ip started)."""
    before, moved0 = queue_lines(apps)
    for i in range(n):
        status, body = tcp_tools.http_get(GUEST_ADDR, 80, "/hello.txt", timeout=60)
        assert status == 200 and len(body) == 20, (i, status, body[:200])
    after, moved = queue_lines(apps)
    assert sorted(after) == list(range(QUEUES)), after
    delta = {q: tuple(a - b for a, b in zip(after[q], before.get(q, (0, 0, 0, 0)))) for q in after}
    for q, (rx, tx, _, flows) in delta.items():
        assert rx > 0 and tx > 0 and flows > 0, (q, delta, after)
        assert 0 < after[q][2] <= 256 // QUEUES, (q, after)  # each queue holds its share of ip's RX buffers
    assert moved == moved0, (moved0, moved, after)
    note(f"virtio-net multiqueue (tap, {QUEUES} pairs) {what}: (rx, tx, rx buffers, flows) per queue {after}, "
         f"over the {n} connections (rx, tx, -, flows) {delta}, flows moved {moved}")
    return moved


def test_the_driver_runs_four_queue_pairs(apps):
    out = apps.out()
    m = re.search(r"^virtio-net: at 00:[0-9a-f]{2}\.0, MAC 52:54:00:12:34:56, IRQ \d+, interrupt mode \(MSI-X, 5 vectors\), link up, "
                  r"queues \d+/\d+, features (0x[0-9a-f]+) of 0x[0-9a-f]+, checksum offload \w+, pairs (\d+) of (\d+)",
                  out, re.M)
    assert m and int(m.group(2)) == QUEUES and int(m.group(3)) == QUEUES, out[:8000]
    assert int(m.group(1), 16) & (1 << 22) and int(m.group(1), 16) & (1 << 17), m.group(0)  # MQ, CTRL_VQ
    assert re.search(r"^virtio-net: attached to ip .*, 4 queue pairs$", out, re.M), out[:8000]
    assert re.search(r"^ip: virtio-net: driver attached, mac 52:54:00:12:34:56, link up, 4 queue pairs", out, re.M), \
        out[:8000]
    assert not re.search(r"virtio-net: the device (did not take|refuses)", out), out[:8000]
    # QEMU gives a 4-pair virtio-net 2 * 4 + 2 table entries; the driver takes a vector per
    # pair and one for the configuration and control queue
    assert re.search(r"^(?:axolotl> )?virtio-net: MSI-X: 5 of 10 vectors \(CPU vector 0x[0-9a-f]+\.\.\.\)", out, re.M), \
        out[:8000]
    assert not re.search(r"virtio-net: (no MSI-X|the device refused MSI-X)", out), out[:8000]


def test_flows_spread_over_the_four_queues_each_on_one(apps):
    """64 connections from the namespace: the tap spreads them over the 4 receive queues,
    ip answers each flow on the queue it came on, so none moves."""
    c0 = driver_counters(apps)
    assert spread(apps, 64, "64 connections") == 0
    c = driver_counters(apps)
    # pair q's queues interrupt on vector q: each pair's frames brought its own vector's messages
    vecs = [c["vector%d_interrupts" % v] - c0["vector%d_interrupts" % v] for v in range(QUEUES + 1)]
    assert c["msix_vectors"] == QUEUES + 1 and all(n > 0 for n in vecs[:QUEUES]), (vecs, c)
    assert c["queues"] == QUEUES and c["device_errors"] == 0 and c["ctrl_errors"] == 0, c
    assert c["rx_packets"] > 64 * 3 and c["tx_packets"] > 64 * 2 and c["bad_messages"] == 0, c
    # the tap passes the host's frames with their TCP checksums partial (NEEDS_CSUM): good
    assert c["rx_csum_ok"] > 64, c
    assert c["interrupts"] > 0 and c["link_up"] == 1, c
    assert c["features"] & (1 << 22), c
    note(f"virtio-net multiqueue counters: {c}; interrupts per MSI-X vector over the 64 connections {vecs}")


def test_tcp_stream_survives_a_virtio_net_kill_on_four_queues(apps):
    """A 16 MiB stream from tcphash; virtio-net killed once a fifth has come: rs restarts it,
    the new instance resets the device, sets up 4 pairs and says so again, ip resends what
    was not acknowledged, and the one connection carries every byte right. Then new
    connections are served, spread over the 4 queues again. (The stream's own flow may
    move once: ip forgets its flows at the driver's reset, and the tap's entry for it ages
    out while no driver runs, so its frames may come back on another queue.)"""
    mark, t0 = test_tcp_apps.driver_killed_under_a_stream(apps, STREAM, 67, queues=4)
    spread(apps, 64, "after a kill, 64 more connections")
    out = apps.out()[mark:]
    assert not re.search(r"virtio-net: the device (did not take|refuses)", out), out[-3000:]
    note(f"virtio-net (4 queue pairs) killed under a 16 MiB stream: {time.monotonic() - t0:.1f} s, one connection, "
         "every byte")
