"""The default image on a virtio-net NIC (QEMU's virtio-net-pci, modern only:
disable-legacy=on) on restricted user networking, as `make run NIC=virtio` boots it: rs
finds 1af4:1041 and starts drivers/virtio-net, e1000 (optional, no 82540EM in this machine)
is absent, ip takes the interface of the driver that is there. One guest for the file (a
module fixture, test_tcp_apps.boot_apps), the tests in this order:
- the boot: the driver's device line (MSI-X: a vector for the pair and one for the
  configuration, each read back from the device), e1000 absent (logged once, never
  started), the lease;
- lighttpd's files byte-exact, memcached's values exact, through forwards of 127.0.0.1;
- UDP: udpecho (started from the shell) answers 50 datagrams from the host, each exact on
  the wire;
- the driver's counters (netstat): frames both ways, interrupts taken on the pair's vector,
  no device errors;
- the link taken down and up at QEMU's monitor: the configuration's vector brings it;
- virtio-net killed under a checked 16 MiB TCP stream: rs restarts it, the one connection
  carries every byte, and a new connection is served after the restart;
- virtio-net deaf to ip, then refusing every frame (`service inject`): ip tells rs, which
  restarts it, each under a checked stream (test_tcp_apps.driver_fault_restarted_on_ips_word);
- a configuration vector the device refuses (`service inject virtio-net badvector`: one past
  its table): the driver says so, falls back to the INTx line and serves on (interrupts
  counted, no vectors).
Every load is bounded in bytes and time; nothing pings from the guest's console."""
import hashlib
import os
import re
import socket
import struct
import time

import pytest

import sysconf_variants
import tcp_tools
from conftest import ROOT, free_port
from qprof import Monitor
from test_tcp_apps import (DEAF, HOST, REFUSE, WWW, boot_apps, driver_fault_restarted_on_ips_word,
                           driver_killed_under_a_stream, driver_updated_under_a_stream, note, shell)

NIC = "virtio-net-pci,disable-legacy=on"
STREAM = 16 << 20  # bytes of each checked stream a fault meets (its fifth has come by then)
UDP_PORT = free_port()
PCAP = os.path.join(ROOT, "build", "test-logs", "virtio-net.pcap")  # the NIC's frames (filter-dump)


@pytest.fixture(scope="module")
def apps():
    os.makedirs(os.path.dirname(PCAP), exist_ok=True)
    if os.path.exists(PCAP):
        os.remove(PCAP)
    yield from boot_apps(sysconf_variants.default(), "virtio-net", nic=NIC, driver="virtio-net",
                         extra_fwds=[("udp", UDP_PORT, 7)],
                         net_extra=["-object", f"filter-dump,id=dump0,netdev=n0,file={PCAP}"])
    os.remove(PCAP)  # (tens of MiB of TCP streams)


def test_rs_starts_the_driver_of_the_nic_that_is_there(apps):
    out = apps.out()
    m = re.search(r"^rs: virtio-net: PCI 1af4:1041 is 00:[0-9a-f]{2}\.0, (\d+) memory BARs, \d+ I/O BARs, IRQ (\d+)$",
                  out, re.M)
    assert m and int(m.group(1)) >= 1 and 1 <= int(m.group(2)) <= 15, out[:6000]
    assert re.search(r"^virtio-net: at 00:[0-9a-f]{2}\.0, MAC 52:54:00:12:34:56, IRQ \d+, interrupt mode \(MSI-X, 2 vectors\), "
                     r"link up, queues \d+/\d+, features 0x[0-9a-f]+ of 0x[0-9a-f]+", out, re.M), out[:6000]
    # lib/netdrv took 2 vectors (one pair, and the configuration) of the 4 entries QEMU gives a
    # one-queue virtio-net (2 * queues + 2); the device read back what the driver wrote
    m = re.search(r"^(?:axolotl> )?virtio-net: MSI-X: 2 of (\d+) vectors \(CPU vector (0x[0-9a-f]+)\.\.\.\), "
                  r"table at BAR (\d) \+ (?:0x[0-9a-f]+|0)$", out, re.M)
    assert m and int(m.group(1)) == 4 and 0x50 <= int(m.group(2), 16) < 0x70, out[:6000]
    assert not re.search(r"virtio-net: (no MSI-X|the device refused MSI-X)", out), out[:6000]
    assert re.search(r"^virtio-net: attached to ip ", out, re.M), out[:6000]
    assert re.search(r"^ip: virtio-net: driver attached, mac 52:54:00:12:34:56, link up", out, re.M), out[:6000]
    # the other driver's NIC is not in this machine: absent, said once, never started
    assert len(re.findall(r"^rs: e1000: no PCI device 8086:100e \(optional: absent\)$", out, re.M)) == 1, out[:6000]
    assert not re.search(r"^rs: (started|restarting) e1000", out, re.M), out[:6000]
    m = apps.monitor("service list", r"^(?:axolotl> )?e1000\s+(\S+)")
    assert m.group(1) == "absent", m.group(0)


@pytest.mark.parametrize("path", ["/hello.txt", "/4mib.bin"])
def test_lighttpd_files_are_byte_exact(apps, path):
    want = open(os.path.join(ROOT, "rootfs", "srv", "www", "hello.txt") if path == "/hello.txt" else WWW, "rb").read()
    for _ in range(3):
        status, body = tcp_tools.http_get(HOST, apps.port[80], path, timeout=120)
        assert status == 200 and hashlib.sha256(body).digest() == hashlib.sha256(want).digest(), (status, len(body))


def test_memcached_values_round_trip(apps):
    mc = tcp_tools.Memcached(HOST, apps.port[11211], timeout=60)
    try:
        items = {f"vk{i}": bytes((i * 31 + j) & 0xff for j in range(1 + (i * 997) % 20000)) for i in range(300)}
        assert mc.set_many(list(items.items())) == len(items)
        keys, got = list(items), {}
        for i in range(0, len(keys), 50):
            got.update(mc.get_many(keys[i:i + 50]))
        assert got == items, sorted(k for k in items if got.get(k) != items[k])[:10]
    finally:
        mc.close()


def udp_frames(path, off=24):
    """The UDP datagrams in a pcap file QEMU's filter-dump wrote, from byte off (past the
    file's header): [(src, sport, dst, dport, payload, checksum right)], and where the next
    call goes on."""
    def fold(b):
        b += b"\0" * (len(b) % 2)
        s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
        while s >> 16:
            s = (s & 0xffff) + (s >> 16)
        return s
    with open(path, "rb") as fh:
        fh.seek(off)
        data, out, base, off = fh.read(), [], off, 0
    while off + 16 <= len(data):
        caplen = struct.unpack("<I", data[off + 8:off + 12])[0]
        if off + 16 + caplen > len(data):
            break  # (being written)
        f, off = data[off + 16:off + 16 + caplen], off + 16 + caplen
        if len(f) < 42 or f[12:14] != b"\x08\x00" or f[23] != 17:
            continue
        ihl = (f[14] & 15) * 4
        ip, udp = f[14:14 + ihl], f[14 + ihl:14 + struct.unpack("!H", f[16:18])[0]]
        ok = udp[6:8] == b"\0\0" or fold(ip[12:20] + b"\0\x11" + struct.pack("!H", len(udp)) + udp) == 0xffff
        out.append((socket.inet_ntoa(ip[12:16]), struct.unpack("!H", udp[0:2])[0], socket.inet_ntoa(ip[16:20]),
                    struct.unpack("!H", udp[2:4])[0], udp[8:], ok))
    return out, base + off


def test_udp_echo_from_the_host(apps):
    """udpecho (started from the shell) gets 50 datagrams from the host through the forward
    and answers each from port 7 to its sender, payload unchanged, checksum right: seen in
    the frames the NIC sent (QEMU's filter-dump). QEMU 7.2's user networking with restrict=on
    does not pass these answers on to the host's socket (with e1000 the same), so the wire
    is where they are checked; an answer that does arrive is checked too."""
    shell(apps, "udpecho 7 &", r"udpecho: listening on 7", timeout=60)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(0.2)
    answered, came_back, at, answers = 0, 0, 24, {}
    try:
        for seq in range(50):
            # 64..1436 bytes: one frame each (the check reads whole datagrams, not fragments)
            payload = seq.to_bytes(4, "big") + bytes((seq * 7 + i) & 0xff for i in range(60 + seq * 28))
            deadline = time.monotonic() + 60
            while True:  # sent again every 5 s until its answer is on the wire
                s.sendto(payload, (HOST, UDP_PORT))
                sent = time.monotonic()
                seen = None
                while seen is None and time.monotonic() - sent < 5:
                    try:
                        got = s.recv(65536)
                        came_back += got == payload
                    except socket.timeout:
                        pass
                    frames, at = udp_frames(PCAP, at)
                    answers.update((f[4][:4], f) for f in frames if f[0] == "10.0.2.15" and f[1] == 7)
                    seen = answers.get(payload[:4])
                if seen or time.monotonic() > deadline:
                    break
            assert seen, f"no answer to datagram {seq} within 60 s"
            assert seen[4] == payload and seen[5], (seq, len(seen[4]), seen[5])
            answered += 1
    finally:
        s.close()
    assert answered == 50
    note(f"virtio-net: udpecho answered 50 datagrams from the host ({came_back} reached its socket)")


def driver_counters(apps):
    mark = apps.g.mark()
    apps.g.type("netstat\r")
    apps.g.wait_for(r"^(?:axolotl> )?virtio-net:$", timeout=30, start=mark)
    end = apps.g.wait_for(r"^\s+link_up \d+$", timeout=30, start=mark)
    text = apps.g.output[mark:end.end()].replace("axolotl> ", "")
    block = text[text.rindex("virtio-net:"):]
    return {k: int(v) for k, v in re.findall(r"^\s+([a-z_0-9]+) (\d+)$", block, re.M)}


def test_driver_counters(apps):
    c = driver_counters(apps)
    assert c["rx_packets"] > 100 and c["tx_packets"] > 100, c
    assert c["rx_bytes"] > 4 << 20 or c["tx_bytes"] > 4 << 20, c
    assert c["interrupts"] > 0, c  # interrupt mode really took interrupts
    # MSI-X messages: the pair's vector (0) carried the queues' interrupts
    assert c["msix_vectors"] == 2 and c["vector0_interrupts"] > 0, c
    assert c["device_errors"] == 0 and c["bad_messages"] == 0 and c["link_up"] == 1, c
    assert c["features"] & (1 << 32), c  # VIRTIO_F_VERSION_1


def qemu_monitor(apps, line):
    return Monitor(apps.g._monitor).cmd(line)


def test_link_changes_come_on_the_configuration_vector(apps):
    """QEMU's `set_link n0 off` then `on`: the device changes its status and interrupts on the
    configuration's vector (1), which the driver took for a link event (the ISR status is
    not read with MSI-X): the link goes down and up in the log and at ip."""
    before = driver_counters(apps)
    mark = apps.g.mark()
    qemu_monitor(apps, "set_link n0 off")
    apps.g.wait_for(r"^(?:axolotl> )?virtio-net: link down$", timeout=30, start=mark)
    mark = apps.g.mark()
    qemu_monitor(apps, "set_link n0 on")
    apps.g.wait_for(r"^(?:axolotl> )?virtio-net: link up$", timeout=30, start=mark)
    after = driver_counters(apps)
    assert after["vector1_interrupts"] >= before["vector1_interrupts"] + 2, (before, after)
    assert after["link_up"] == 1, after
    assert tcp_tools.tcphash_small(HOST, apps.port[7000], 5, timeout=60)


def test_tcp_stream_survives_a_virtio_net_kill(apps):
    """A 16 MiB stream from tcphash; virtio-net killed once a fifth has come: rs restarts it,
    the new instance resets the device and attaches, ip resends what was not acknowledged,
    and the one connection carries every byte right. Then a new connection is served."""
    mark, t0 = driver_killed_under_a_stream(apps, STREAM, 41)
    note(f"virtio-net killed under a 16 MiB stream: {time.monotonic() - t0:.1f} s, one connection, every byte")


def test_virtio_net_live_update_under_a_stream(apps):
    """`service update virtio-net` under a checked 16 MiB stream: the new instance resets the
    device, attaches again and the stream arrives whole."""
    stall = driver_updated_under_a_stream(apps, STREAM, 45)
    note(f"virtio-net live-updated under a 16 MiB stream: stall {stall:.1f} ms, every byte")


def test_a_deaf_driver_is_restarted_on_ips_word(apps):
    driver_fault_restarted_on_ips_word(apps, "deaf", *DEAF, 43, n=STREAM)


def test_a_refusing_driver_is_restarted_on_ips_word(apps):
    driver_fault_restarted_on_ips_word(apps, "refuse", *REFUSE, 47, n=STREAM)
    # a new connection after the restart
    assert tcp_tools.tcphash_small(HOST, apps.port[7000], 6, timeout=60)


def test_a_refused_vector_falls_back_to_intx(apps):
    """`service inject virtio-net badvector`: the driver resets the device and gives its
    configuration a vector past the MSI-X table, which the device reads back as
    VIRTIO_MSI_NO_VECTOR; lib/netdrv turns MSI-X off, frees the vectors and binds the INTx
    line, the set-up runs again, and the driver serves on with interrupts from the line (the
    ISR status read again)."""
    mark = apps.g.mark()
    apps.monitor("service inject virtio-net badvector",
                 r"^(?:axolotl> )?virtio-net: the device refused MSI-X \(the configuration vector 65534 read back "
                 r"as 0xffff\): the INTx line$")
    apps.g.wait_for(r"^(?:axolotl> )?virtio-net: attached to ip ", timeout=30, start=mark)
    before = driver_counters(apps)
    assert before["msix_vectors"] == 0 and "vector0_interrupts" not in before, before
    assert tcp_tools.tcphash_small(HOST, apps.port[7000], 6, timeout=60)
    status, body = tcp_tools.http_get(HOST, apps.port[80], "/4mib.bin", timeout=120)
    assert status == 200 and len(body) == 4 << 20, (status, len(body))
    after = driver_counters(apps)
    assert after["interrupts"] > before["interrupts"] and after["device_errors"] == 0, (before, after)
    assert not re.search(r"^rs: virtio-net (crashed|hung|exited)", apps.g.output[mark:], re.M)
