"""The benchmark suite's parsers and its refusal to compare unlike runs (tools/bench,
docs/benchmarks.md): pure functions on recorded outputs, no guest."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools", "bench"))
import bench  # noqa: E402
import loads  # noqa: E402

IPERF = """------------------------------------------------------------
Client connecting to 127.0.0.1, TCP port 40123
TCP window size: 2.50 MByte (default)
------------------------------------------------------------
[  1] local 127.0.0.1 port 51234 connected with 127.0.0.1 port 40123
[ ID] Interval       Transfer     Bandwidth
[  1] 0.0000-5.0123 sec   205 MBytes   343 Mbits/sec
"""


def test_iperf_summary_line():
    assert loads.iperf_rate(IPERF) == 343e6
    assert loads.iperf_rate(IPERF.replace("343 Mbits", "1.25 Gbits")) == 1.25e9
    assert loads.iperf_rate("connect failed: Connection refused") is None


def test_http_heads():
    ok = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 20\r\nServer: lighttpd"
    assert loads.http_response_length(ok) == 20
    assert loads.http_response_length(ok.replace(b"Content-Length", b"content-length")) == 20
    assert loads.http_response_length(b"HTTP/1.1 404 Not Found\r\nContent-Length: 345") is None
    assert loads.http_response_length(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked") is None


def test_memcached_replies():
    assert loads.memcached_reply_ok("set", b"STORED\r\n") == (True, None)
    assert loads.memcached_reply_ok("set", b"NOT_STORED\r\n")[0] is False
    assert loads.memcached_reply_ok("get", b"VALUE k 0 3\r\nabc\r\nEND\r\n") == (True, b"abc")
    assert loads.memcached_reply_ok("get", b"VALUE k 0 3\r\nab")[0] is False  # not all there yet
    assert loads.memcached_reply_ok("get", b"END\r\n")[0] is False  # a miss


def test_stats_median_and_spread():
    assert loads.stats([3, 1, 2]) == {"median": 2, "min": 1, "max": 3, "n": 3}
    assert loads.stats([4, 1, 3, 2])["median"] == 2.5


def test_udp_rate_and_loss_from_the_guests_server_log():
    log = ("Server listening on UDP port 5001\n"
           "[  1] local 10.0.2.15 port 5001 connected with 10.0.2.2 port 40000\n"
           "[ ID] Interval       Transfer     Bandwidth        Jitter   Lost/Total Datagrams\n"
           "[  1] 0.00-4.00 sec  4.77 MBytes  10.0 Mbits/sec   0.033 ms 0/3404 (0%)\n"
           "[  1] local 10.0.2.15 port 5001 connected with 10.0.2.2 port 40002\n"
           "[ ID] Interval       Transfer     Bandwidth        Jitter   Lost/Total Datagrams\n"
           "[  1] 0.00-4.01 sec  21.2 MBytes  44.4 Mbits/sec   0.121 ms 1893/17007 (11%)\n"
           "[  1] local 10.0.2.15 port 5001 connected with 10.0.2.2 port 40004\n")
    assert loads.iperf_udp_server_report(log, 40000) == (10.0e6, 0.0)
    assert loads.iperf_udp_server_report(log, 40002) == (44.4e6, 100.0 * 1893 / 17007)
    assert loads.iperf_udp_server_report(log, 40004) is None  # no report yet
    assert loads.iperf_udp_server_report(log, 4000) is None  # another port


def test_netmicro_lines():
    out = ("netmicro 2000 20\nnetmicro: recvfrom_empty n=2000 cycles=396 ns=180\n"
           "netmicro: connect_close n=20 cycles=80000 ns=30000\nnetmicro: socket library: 1 calls\nnetmicro: done\n")
    r = loads.netmicro_results(out)
    assert r == {"recvfrom_empty": {"n": 2000, "cycles": 396, "ns": 180},
                 "connect_close": {"n": 20, "cycles": 80000, "ns": 30000}}
    for bad in (out.replace("done", "failed") + "netmicro: FAILED connect: Connection refused\n",
                out.replace("netmicro: done\n", "")):
        try:
            loads.netmicro_results(bad)
        except loads.LoadError:
            continue
        raise AssertionError("a failed or unfinished netmicro must raise")


def test_table_speed_ratios_and_missing_systems():
    res = {"units": {"w": "req/s", "x": "ops/s", "c": "cycles"}, "lower_is_better": ["c"],
           "results": {"w": {"axolotl": [50, 70, 60], "axolotl-nolib": [30], "linux": [100, 120, 110]},
                       "x": {"axolotl": [1], "axolotl-nolib": [], "linux": []},
                       "c": {"axolotl": [400], "axolotl-nolib": [2000], "linux": [1000]}}}
    lines = bench.table(res).splitlines()
    w = lines[2].split()
    assert w[-2:] == ["0.55", "0.27"], lines  # 60 / 110, 30 / 110
    assert lines[3].split()[-2:] == ["-", "-"]  # no Linux figure: no ratio
    assert lines[4].split()[-2:] == ["2.50", "0.50"]  # cycles: Linux / Axolotl


def test_unlike_runs_are_refused():
    a = {"config": bench.machine_config(False)}
    b = {"config": dict(bench.machine_config(False), cpu="max")}
    assert bench.differences(a, a) == []
    assert bench.differences(a, b) == ["cpu"]
    assert bench.differences(a, {"config": bench.machine_config(True)}) == ["suite"]
    assert bench.differences(a, {"config": bench.machine_config(False, net="tap")}) == ["net"]
    assert bench.differences(a, {"config": bench.machine_config(False, systems=("axolotl", "linux"))}) == ["systems"]


def test_all_systems_share_one_command_line_but_the_kernel():
    cfg = bench.machine_config(False)
    fwds = [("tcp", 1080, 80), ("udp", 1081, 5001)]
    ax, lx = bench.qemu_args("axolotl", cfg, fwds), bench.qemu_args("linux", cfg, fwds)
    assert "-cdrom" in ax and "-kernel" in lx and "-cdrom" not in lx
    common = [a for a in ax if a not in ("-cdrom", "-boot", "d") and not a.endswith(".iso")]
    assert lx[:len(common)] == common, (ax, lx)
    assert "user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:1080-:80,hostfwd=udp:127.0.0.1:1081-:5001" in lx
    # the instruction-counting boots: the same, on one TCG thread with -icount
    ai, li = bench.qemu_args("axolotl", cfg, fwds, icount=True), bench.qemu_args("linux", cfg, fwds, icount=True)
    assert ai[-2:] == ["-icount", bench.ICOUNT] and "tcg,thread=single" in ai and "tcg,thread=multi" not in ai
    assert li[li.index("-smp") + 1] == str(bench.ICOUNT_SMP)
    assert [a for a in li if a not in ("-icount", bench.ICOUNT, "tcg,thread=single", str(bench.ICOUNT_SMP))] == \
        [a for a in lx if a not in ("tcg,thread=multi", str(cfg["smp"]))]
    # the tap network: QEMU opens the namespace's tap device, no user networking at all
    tap = bench.qemu_args("linux", bench.machine_config(False, net="tap"), [])
    assert f"tap,id=n0,ifname={bench.netns.TAP},script=no,downscript=no" in tap
    assert not any("user" in a for a in tap), tap


def test_axolotl_configurations_change_only_their_lines():
    import sysconf_variants as v
    base = v.default()
    nolib, ded = v.without_library(base), v.dedicated(base)
    diff = [(a, b) for a, b in zip(base.splitlines(), nolib.splitlines()) if a != b]
    assert len(diff) == 1 and "AXOLOTL_SOCK=0" in diff[0][1], diff
    assert "service tcp dma cpu=1 dedicated" in ded and "heartbeat=3000 " not in ded
    static = v.static_address(base, "10.0.2.15/24", "10.0.2.2")
    assert 'args="if=e1000 addr=10.0.2.15/24 gw=10.0.2.2 pf=pf"' in static and "dhcp" not in static.split("service ip")[1].split("\n")[0]
    try:
        v.dedicated("service ds\n")
    except ValueError:
        pass
    else:
        raise AssertionError("a configuration without the line must be refused")


def _server(hold_nth):
    """A tiny HTTP/1.1 server on 127.0.0.1 that answers every request with 5 bytes, except
    that its hold_nth-th connection gets nothing (as one QEMU's forward never opens)."""
    import socket
    import threading
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(64)
    held = []

    def serve(c):
        buf = b""
        with c:
            while True:
                got = c.recv(4096)
                if not got:
                    return
                buf += got
                while b"\r\n\r\n" in buf:
                    req, _, buf = buf.partition(b"\r\n\r\n")
                    c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
                    if b"Connection: close" in req:
                        return

    def accept():
        n = 0
        while True:
            try:
                c, _ = ls.accept()
            except OSError:
                return
            n += 1
            if n == hold_nth:
                held.append(c)  # never answered
            else:
                threading.Thread(target=serve, args=(c,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return ls, held


def test_http_load_counts_a_lost_connection_and_goes_on():
    ls, held = _server(hold_nth=2)
    try:
        lost = []
        rate = loads.http(ls.getsockname(), "/x", 2, 3, 1.0, lost=lost, first_timeout=0.3)
        assert rate > 0 and len(lost) == 1 and len(held) == 1, (rate, lost)
    finally:
        ls.close()


def test_http_load_fails_when_many_connections_are_lost():
    ls, _ = _server(hold_nth=1)
    try:
        lost = []
        try:
            loads.http(ls.getsockname(), "/x", 1, 1, 0.2, lost=lost, first_timeout=0.3)
        except loads.LoadError as e:
            assert "lost" in str(e)
        else:
            raise AssertionError("one lost connection of few must fail the load")
    finally:
        ls.close()
