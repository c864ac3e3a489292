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


def test_table_ratio_and_missing_systems():
    res = {"units": {"w": "req/s", "x": "ops/s"},
           "results": {"w": {"axolotl": [50, 70, 60], "linux": [100, 120, 110]}, "x": {"axolotl": [1], "linux": []}}}
    text = bench.table(res)
    assert "0.55" in text.splitlines()[1]  # 60 / 110
    assert text.splitlines()[2].rstrip().endswith("-")  # no Linux figure: no ratio


def test_unlike_runs_are_refused():
    a = {"config": bench.machine_config(False)}
    b = {"config": dict(bench.machine_config(False), cpu="max")}
    assert bench.differences(a, a) == []
    assert bench.differences(a, b) == ["cpu"]
    assert bench.differences(a, {"config": bench.machine_config(True)}) == ["suite"]


def test_both_systems_share_one_command_line_but_the_kernel():
    cfg = bench.machine_config(False)
    fwds = {80: 1080}
    ax, lx = bench.qemu_args("axolotl", cfg, fwds), bench.qemu_args("linux", cfg, fwds)
    assert "-cdrom" in ax and "-kernel" in lx and "-cdrom" not in lx
    common = [a for a in ax if a not in ("-cdrom", "-boot", "d") and not a.endswith(".iso")]
    assert lx[:len(common)] == common, (ax, lx)
    assert "user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:1080-:80" in lx


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
        rate = loads.http(ls.getsockname()[1], "/x", 2, 3, 1.0, lost=lost, first_timeout=0.3)
        assert rate > 0 and len(lost) == 1 and len(held) == 1, (rate, lost)
    finally:
        ls.close()


def test_http_load_fails_when_many_connections_are_lost():
    ls, _ = _server(hold_nth=1)
    try:
        lost = []
        try:
            loads.http(ls.getsockname()[1], "/x", 1, 1, 0.2, lost=lost, first_timeout=0.3)
        except loads.LoadError as e:
            assert "lost" in str(e)
        else:
            raise AssertionError("one lost connection of few must fail the load")
    finally:
        ls.close()
