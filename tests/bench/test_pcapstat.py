"""tools/bench/pcapstat.py on captures written here: the receiver's windows (scaled only when
both SYNs offered scaling), the sender's gaps, a new connection on the same ports counted
apart, and files that are not captures refused with a clear error."""
import os
import struct
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools", "bench"))
import pcapstat  # noqa: E402

HOST, GUEST = bytes([10, 0, 2, 2]), bytes([10, 0, 2, 15])
SYN, ACK, FIN = 0x02, 0x10, 0x01


def frame(src, sport, dst, dport, seq, ack, flags, win, payload=0, wscale=None):
    opts = b""
    if wscale is not None:
        opts = bytes([1, 3, 3, wscale])  # NOP, window scale
    tcp = struct.pack(">HHIIHHHH", sport, dport, seq, ack, ((20 + len(opts)) // 4) << 12 | flags, win, 0, 0)
    tcp += opts + bytes(payload)
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 0, 0, 64, 6, 0, src, dst) + tcp
    return bytes(6) + bytes(6) + b"\x08\x00" + ip


def capture(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for t, fr in frames:
            f.write(struct.pack("<IIII", int(t), int(round((t - int(t)) * 1e6)), len(fr), len(fr)) + fr)


def one_connection(t0, host_scale, guest_scale, wins, gap_at=None):
    """The host sends 10 segments of 1000 bytes to the guest, which ACKs each with the next of
    wins; the data stops for 50 ms before segment gap_at."""
    fr = [(t0, frame(HOST, 40000, GUEST, 5001, 0, 0, SYN, 65535, wscale=host_scale)),
          (t0 + 0.001, frame(GUEST, 5001, HOST, 40000, 0, 1, SYN | ACK, 65535, wscale=guest_scale))]
    t = t0 + 0.002
    for i in range(10):
        if i == gap_at:
            t += 0.05
        fr.append((t, frame(HOST, 40000, GUEST, 5001, 1 + 1000 * i, 1, ACK, 65535, 1000)))
        fr.append((t + 0.0001, frame(GUEST, 5001, HOST, 40000, 1, 1001 + 1000 * i, ACK, wins[i])))
        t += 0.0005
    return fr


def test_windows_gaps_and_a_second_connection_on_the_same_ports(tmp_path):
    path = tmp_path / "a.pcap"
    wins = [65535, 65535, 1295, 65535, 20000, 65535, 65535, 65535, 65535, 65535]
    fr = one_connection(100.0, None, 2, wins, gap_at=5)  # scaling offered by one side only
    fr += one_connection(200.0, 7, 2, [1000] * 10)  # both offered: windows scaled by 2
    capture(path, fr)
    fl = pcapstat.flows(pcapstat.packets(str(path)))
    first = fl[("10.0.2.2", 40000, "10.0.2.15", 5001, 1)]
    second = fl[("10.0.2.2", 40000, "10.0.2.15", 5001, 2)]
    assert first["bytes"] == second["bytes"] == 10000
    assert first["window_scaling"] is None and second["window_scaling"] == 2
    assert first["win_min"] == 1295 and first["small_win_share"] == pytest.approx(0.2)
    assert first["gaps_10ms"] == 1 and first["gaps_10ms_s"] == pytest.approx(0.0505, abs=1e-3)
    assert second["win_min"] == 4000 and second["small_win_share"] == 1.0 and second["gaps_1ms"] == 0
    # the guest's ACKs carry no data: no flow the other way
    assert not [d for d in fl if d[0] == "10.0.2.15"]


def test_not_a_capture_is_refused(tmp_path):
    bad = tmp_path / "bad.pcap"
    bad.write_bytes(b"GET / HTTP/1.1\r\n\r\nnot a capture at all")
    with pytest.raises(ValueError, match="not a pcap file"):
        list(pcapstat.packets(str(bad)))
    short = tmp_path / "short.pcap"
    short.write_bytes(b"\xd4\xc3")
    with pytest.raises(ValueError, match="too short"):
        list(pcapstat.packets(str(short)))


def test_a_truncated_last_frame_and_foreign_frames_are_skipped(tmp_path):
    path = tmp_path / "t.pcap"
    fr = one_connection(1.0, None, None, [65535] * 10)
    arp = bytes(12) + b"\x08\x06" + bytes(28)
    capture(path, [(0.5, arp)] + fr)
    with open(path, "ab") as f:  # a record header promising more than the file holds
        f.write(struct.pack("<IIII", 3, 0, 200, 200) + bytes(10))
    fl = pcapstat.flows(pcapstat.packets(str(path)))
    assert fl[("10.0.2.2", 40000, "10.0.2.15", 5001, 1)]["bytes"] == 10000
