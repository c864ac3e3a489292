#!/usr/bin/env python3
"""Crafted frames for tests/system/test_ip.py, sent on a tap device inside a test's network
namespace (run with `ip netns exec NS`): malformed IPv4 packets ip must drop and count, then
ICMP echo requests (8000 bytes, fragmented) whose replies must come back.
    net-send.py IFACE GUEST_MAC HOST_IP GUEST_IP
Prints `net-send: sent N malformed frames` and `net-send: echo replies R of E`; exits 0 if
every echo was answered."""
import os
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def iphdr(src, dst, payload_len, proto=1, ident=1, frag=0, ttl=64, ver_ihl=0x45, tot=None, fix=True):
    tot = 20 + payload_len if tot is None else tot
    h = struct.pack("!BBHHHBBH4s4s", ver_ihl, 0, tot, ident, frag, ttl, proto, 0,
                    socket.inet_aton(src), socket.inet_aton(dst))
    if fix:
        h = h[:10] + struct.pack("!H", csum(h)) + h[12:]
    return h


def echo(ident, seq, size):
    data = bytes((i + seq) & 0xff for i in range(size))
    h = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
    c = csum(h + data)
    return struct.pack("!BBHHH", 8, 0, c, ident, seq) + data


def main():
    ifname, guest_mac, host_ip, guest_ip = sys.argv[1:5]
    gmac = bytes.fromhex(guest_mac.replace(":", ""))
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((ifname, 0))
    hmac = s.getsockname()[4][:6]
    eth = gmac + hmac + b"\x08\x00"

    def send_ip(pkt):
        frame = eth + pkt
        s.send(frame + b"\0" * max(0, 60 - len(frame)))

    bad = []
    icmp = echo(0x77, 0, 32)
    bad.append(iphdr(host_ip, guest_ip, len(icmp))[:10])                       # truncated header
    bad.append(iphdr(host_ip, guest_ip, len(icmp), ver_ihl=0x65) + icmp)       # version 6
    bad.append(iphdr(host_ip, guest_ip, len(icmp), ver_ihl=0x43) + icmp)       # header length 12
    bad.append(iphdr(host_ip, guest_ip, len(icmp), ver_ihl=0x4f) + icmp[:8])   # 60-byte header, 28 bytes there
    bad.append(iphdr(host_ip, guest_ip, len(icmp), tot=400) + icmp)            # longer than the frame
    bad.append(iphdr(host_ip, guest_ip, len(icmp), tot=12) + icmp)             # shorter than its header
    h = bytearray(iphdr(host_ip, guest_ip, len(icmp)))
    h[10] ^= 0x5a
    bad.append(bytes(h) + icmp)                                                 # bad checksum
    # ping of death: a last fragment ending past 65535
    bad.append(iphdr(host_ip, guest_ip, 1000, ident=0x4444, frag=65000 // 8) + b"\xaa" * 1000)
    # overlapping fragments of one echo
    big = echo(0x78, 1, 3000)
    bad.append(iphdr(host_ip, guest_ip, 1480, ident=0x5555, frag=0x2000) + big[:1480])
    bad.append(iphdr(host_ip, guest_ip, 1480, ident=0x5555, frag=0x2000 | (1000 // 8)) + big[1000:2480])
    bad.append(iphdr(host_ip, guest_ip, len(big) - 2480, ident=0x5555, frag=2480 // 8) + big[2480:])
    # runt: an Ethernet header and nothing else (padded by us to 60, zeros: version 0)
    for p in bad:
        send_ip(p)
    s.send(gmac + hmac + b"\x08\x06" + b"\x00\x01\x08")                        # truncated ARP
    print(f"net-send: sent {len(bad) + 1} malformed frames", flush=True)

    # 8000-byte echoes in fragments of 1480 bytes; the guest answers after ARP for us
    s.settimeout(0.2)
    expect, got = 5, set()
    for seq in range(expect):
        pkt = echo(0x99, seq, 8000)
        ident = 0x6000 + seq
        for off in range(0, len(pkt), 1480):
            part = pkt[off:off + 1480]
            more = 0x2000 if off + 1480 < len(pkt) else 0
            send_ip(iphdr(host_ip, guest_ip, len(part), ident=ident, frag=more | (off // 8)) + part)
        deadline = time.monotonic() + 3
        frags = {}
        while time.monotonic() < deadline and seq not in got:
            try:
                f = s.recv(65535)
            except socket.timeout:
                continue
            if f[12:14] == b"\x08\x06" and f[20:22] == b"\x00\x01":   # ARP request: answer
                tpa = f[38:42]
                if tpa == socket.inet_aton(host_ip):
                    rep = f[6:12] + hmac + b"\x08\x06" + b"\x00\x01\x08\x00\x06\x04\x00\x02" + hmac + tpa + f[22:28] + f[28:32]
                    s.send(rep)
                continue
            if f[12:14] != b"\x08\x00" or f[6:12] == hmac:
                continue
            ip = f[14:]
            if ip[9] != 1:
                continue
            hl = (ip[0] & 15) * 4
            tot = struct.unpack("!H", ip[2:4])[0]
            fo = struct.unpack("!H", ip[6:8])[0]
            key = struct.unpack("!H", ip[4:6])[0]
            frags.setdefault(key, {})[(fo & 0x1fff) * 8] = (ip[hl:tot], bool(fo & 0x2000))
            parts = frags[key]
            # reassemble when complete
            data, off = b"", 0
            while off in parts:
                chunk, more = parts[off]
                data += chunk
                off += len(chunk)
                if not more:
                    if data[0] == 0 and struct.unpack("!H", data[4:6])[0] == 0x99:
                        rseq = struct.unpack("!H", data[6:8])[0]
                        if data[8:] == pkt[8:] and rseq == seq:
                            got.add(seq)
                    break
    print(f"net-send: echo replies {len(got)} of {expect}", flush=True)
    return 0 if len(got) == expect else 1


if __name__ == "__main__":
    sys.exit(main())
