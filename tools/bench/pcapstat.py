#!/usr/bin/env python3
"""pcapstat: what a capture of the guest's wire says about its TCP flows.

`bench.py run --pcap` records every boot's frames with QEMU's `filter-dump` (the netdev's
traffic both ways, headers only) into build/bench/pcap/. This reads such a file (classic
pcap, Ethernet, IPv4) with no other tool and prints, per direction of each TCP flow that
carried data:

- the windows the receiver announced: smallest, median, and the share of its ACKs below
  32 KiB (a window the sender may have waited for: docs/benchmarks.md, session 33);
- the gaps in the sender's data: how many were over 1 ms and over 10 ms and how long they
  lasted in all (time nothing was sent while the flow was open);
- bytes and the rate over the flow's life.

    python3 tools/bench/pcapstat.py build/bench/pcap/axolotl-0.pcap [--port 5001]
"""
import argparse
import statistics
import struct
import sys

SMALL_WINDOW = 32768


def packets(path):
    """(time s, src ip, src port, dst ip, dst port, seq, ack, flags, window, payload bytes,
    window scale option or None) for each IPv4 TCP frame of a classic pcap file."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        raise ValueError(f"{path}: not a pcap file (too short)")
    magic = struct.unpack("<I", data[:4])[0]
    if magic in (0xa1b2c3d4, 0xa1b23c4d):
        e = "<"
    elif magic in (0xd4c3b2a1, 0x4d3cb2a1):
        e = ">"
    else:
        raise ValueError(f"{path}: not a pcap file (magic {magic:#x})")
    nano = magic in (0xa1b23c4d, 0x4d3cb2a1)
    linktype = struct.unpack(e + "I", data[20:24])[0]
    if linktype != 1:
        raise ValueError(f"{path}: link type {linktype}, not Ethernet")
    off = 24
    while off + 16 <= len(data):
        sec, frac, incl, _orig = struct.unpack(e + "IIII", data[off:off + 16])
        frame = data[off + 16:off + 16 + incl]
        off += 16 + incl
        t = sec + frac / (1e9 if nano else 1e6)
        if len(frame) < 14 + 20 or frame[12:14] != b"\x08\x00":
            continue
        ip = frame[14:]
        ihl = (ip[0] & 15) * 4
        if ip[0] >> 4 != 4 or ihl < 20 or ip[9] != 6 or len(ip) < ihl + 20:
            continue
        total = struct.unpack(">H", ip[2:4])[0]
        tcp = ip[ihl:]
        sport, dport, seq, ack, doff_flags, win = struct.unpack(">HHIIHH", tcp[:16])
        doff = (doff_flags >> 12) * 4
        scale = None
        opts = tcp[20:doff]
        i = 0
        while i < len(opts):
            kind = opts[i]
            if kind == 0:
                break
            if kind == 1:
                i += 1
                continue
            if i + 1 >= len(opts) or opts[i + 1] < 2:
                break
            if kind == 3 and opts[i + 1] == 3 and i + 2 < len(opts):
                scale = opts[i + 2]
            i += opts[i + 1]
        src = ".".join(str(b) for b in ip[12:16])
        dst = ".".join(str(b) for b in ip[16:20])
        yield (t, src, sport, dst, dport, seq, ack, doff_flags & 0x3f, win, max(0, total - ihl - doff), scale)


def flows(pkts):
    """Per direction (src, sport, dst, dport, n: the how-manyth connection between those
    ends) that sent data: its numbers (see the module's
    text). The receiver's windows are scaled by what both SYNs said (RFC 7323: only when
    both offered the option)."""
    offered, sent, acks, conn = {}, {}, {}, {}
    for p in pkts:
        t, src, sport, dst, dport, seq, ack, flags, win, length, scale = p
        ends = frozenset(((src, sport), (dst, dport)))
        if flags & 0x12 == 0x02:  # a SYN: a new connection between these ends
            conn[ends] = conn.get(ends, 0) + 1
        d = (src, sport, dst, dport, conn.get(ends, 0))
        if flags & 0x02:
            offered[d] = scale
        if length:
            sent.setdefault(d, []).append((t, length))
        if flags & 0x10 and not flags & 0x02:
            acks.setdefault(d, []).append(win)
    out = {}
    for d, data in sent.items():
        back = (d[2], d[3], d[0], d[1], d[4])
        ws = offered.get(back) if offered.get(d) is not None and offered.get(back) is not None else 0
        wins = [w << ws for w in acks.get(back, [])]
        times = [t for t, _ in data]
        gaps = [b - a for a, b in zip(times, times[1:])]
        life = times[-1] - times[0]
        out[d] = {
            "bytes": sum(n for _, n in data), "seconds": life,
            "mbit_s": sum(n for _, n in data) * 8 / life / 1e6 if life > 0 else None,
            "win_min": min(wins) if wins else None,
            "win_median": statistics.median(wins) if wins else None,
            "small_win_share": sum(1 for w in wins if w < SMALL_WINDOW) / len(wins) if wins else None,
            "gaps_1ms": sum(1 for g in gaps if g > 0.001), "gaps_1ms_s": sum(g for g in gaps if g > 0.001),
            "gaps_10ms": sum(1 for g in gaps if g > 0.01), "gaps_10ms_s": sum(g for g in gaps if g > 0.01),
            "window_scaling": ws if offered.get(d) is not None and offered.get(back) is not None else None,
        }
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("pcap")
    ap.add_argument("--port", type=int, help="only flows with this port at either end")
    ap.add_argument("--min-bytes", type=int, default=65536, help="only directions that sent at least this much")
    a = ap.parse_args()
    try:
        fl = flows(packets(a.pcap))
    except (OSError, ValueError) as e:
        sys.exit(f"pcapstat: {e}")
    shown = 0
    for (src, sp, dst, dp, _), s in sorted(fl.items(), key=lambda kv: -kv[1]["bytes"]):
        if s["bytes"] < a.min_bytes or (a.port and a.port not in (sp, dp)):
            continue
        shown += 1
        rate = f"{s['mbit_s']:.0f} Mbit/s" if s["mbit_s"] else "-"
        print(f"{src}:{sp} -> {dst}:{dp}: {s['bytes']} bytes in {s['seconds']:.2f} s ({rate}); "
              f"window scaling {'off' if s['window_scaling'] is None else s['window_scaling']}")
        if s["win_min"] is not None:
            print(f"  receiver's window: min {s['win_min']}, median {s['win_median']:.0f}, "
                  f"{100 * s['small_win_share']:.1f}% of its ACKs under {SMALL_WINDOW}")
        print(f"  sender's gaps: {s['gaps_1ms']} over 1 ms ({s['gaps_1ms_s']:.2f} s), "
              f"{s['gaps_10ms']} over 10 ms ({s['gaps_10ms_s']:.2f} s)")
    if not shown:
        print("pcapstat: no TCP flow carried that much data")


if __name__ == "__main__":
    main()
