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
    assert bench.differences(a, {"config": bench.machine_config(False, nic="virtio")}) == ["nic"]


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
    # make bench NIC=virtio: both systems get the modern virtio-net device
    vcfg = bench.machine_config(False, nic="virtio")
    for system in ("axolotl", "linux"):
        v = bench.qemu_args(system, vcfg, fwds)
        assert v[v.index("-device", v.index("-netdev")) + 1] == "virtio-net-pci,disable-legacy=on,netdev=n0", v


def test_axolotl_configurations_change_only_their_lines():
    import sysconf_variants as v
    base = v.default()
    nolib, ded = v.without_library(base), v.dedicated(base)
    diff = [(a, b) for a, b in zip(base.splitlines(), nolib.splitlines()) if a != b]
    assert len(diff) == 1 and "AXOLOTL_SOCK=0" in diff[0][1], diff
    assert "service tcp dma cpu=1 dedicated" in ded and "heartbeat=3000 " not in ded
    static = v.static_address(base, "10.0.2.15/24", "10.0.2.2")
    assert 'args="if=e1000,virtio-net,ixgbe addr=10.0.2.15/24 gw=10.0.2.2 pf=pf"' in static and "dhcp" not in static.split("service ip")[1].split("\n")[0]
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


# ---- per-request accounting ----

# `cat /proc/axolotl/kstat` on Axolotl's console as Machine.shell returns it: the last
# prompt, the shell's echo of the command, a log line with a counter cut through by another,
# a prompt sharing a line with a log line; the ESC[6n busybox's ash sends on Linux too.
KSTAT = """/ # \x1b[6ncat /proc/axolotl/kstat; echo @@
kcalls 1000
linux_calls 400
switches 300
as_switches 200
ipi_resched 10
ipi_call 2
ipi_kick 1
blocks 150
wakes 15rs: tcp answered its heartbeat late
0
device_irqs 50
klock_contended 7
idle_cycles 6000000
tsc 10000000
/ # kcalls 99
kcall.send 120 30 400
kcall.time 80 0 50
kcall.linux 400 1000 90000
lx.0 25
lx.232 70
@@
"""

PROC_STAT = """/ # \x1b[6ncat /proc/stat; echo @@
cpu  120 3 340 98000 5 0 12 0 0 0
cpu0 60 3 170 49000 2 0 6 0 0 0
cpu1 60 0 170 49000 3 0 6 0 0 0
intr 51234 9 0 0 0 0 0 0 0 1 0
ctxt 80000
btime 1764100000
processes 210
procs_running 1
procs_blocked 0
softirq 40000 0 2000 0 3000 0 0 10 0 0 35000
@@
"""


def test_kstat_lines_and_the_noise_around_them():
    c = loads.kstat_counters(KSTAT)
    assert c["kcalls"] == 1000 and c["tsc"] == 10000000 and c["ipi_kick"] == 1
    assert "wakes" not in c  # cut by a log line: left out, not misread
    assert c["kcall.send"] == (120, 30, 400) and c["kcall.linux"] == (400, 1000, 90000)
    assert len(c) == 17, c  # 12 counters, 3 kernel calls, 2 Linux calls: no prompt, echo or log line
    names = loads.linux_call_names()
    assert c["lx." + names.get(0, "0")] == 25 and c["lx." + names.get(232, "232")] == 70
    if names:  # the host's headers name them
        assert names[0] == "read" and names[232] == "epoll_wait"
    assert loads.top_lx_calls({"lx.read": 2.5, "lx.futex": 0.5, "lx.close": 0, "kcalls": 9}) == \
        [["read", 2.5], ["futex", 0.5]]
    try:
        loads.kstat_counters("/ # cat /proc/axolotl/kstat; echo @@\ncat: can't open\n@@\n")
    except loads.LoadError:
        pass
    else:
        raise AssertionError("a reading without counters must raise")


def test_linux_proc_stat():
    assert loads.linux_stat_counters(PROC_STAT) == {"ctxt": 80000, "intr": 51234, "busy_ticks": 120 + 3 + 340 + 12,
                                                    "idle_ticks": 98005}
    try:
        loads.linux_stat_counters(PROC_STAT.replace("ctxt", "ctx"))
    except loads.LoadError:
        pass
    else:
        raise AssertionError("a /proc/stat without ctxt must raise")


def _grown(counters, by):
    """counters with every total grown by `by` times itself (kernel calls too)."""
    return {k: tuple(x * (1 + by) for x in v) if isinstance(v, tuple) else v * (1 + by) for k, v in counters.items()}


def test_per_unit_arithmetic():
    before = loads.kstat_counters(KSTAT)
    after = dict(_grown(before, 1), wakes=99)  # wakes only in the later reading
    per = loads.per_unit(before, after, 100)
    assert per["kcalls"] == 10 and per["switches"] == 3 and "wakes" not in per
    assert per["kcall.send"] == [1.2, 0.3, 4.0]
    assert loads.top_kcalls(per, 2) == [["linux", 4.0], ["send", 1.2]]
    # 100 Mbit/s for 4 s: 400 Mbit, 47.68 MiB; 250 req/s for 4 s: 1000 requests
    assert abs(loads.work_units("MiB", 100, 4) - 400e6 / 8 / 2 ** 20) < 1e-9
    assert loads.work_units("request", 250, 4) == 1000 and loads.work_units("op", 0.5, 4) == 2
    # guest instructions, idle excluded: Axolotl's TSC less idle cycles; Linux's busy ticks
    assert loads.guest_instructions(before, after) == 10000000 - 6000000
    lx = loads.linux_stat_counters(PROC_STAT)
    assert loads.guest_instructions(lx, dict(lx, busy_ticks=lx["busy_ticks"] + 3)) == 3 * 10 ** 7
    assert loads.guest_instructions({"ctxt": 1}, {"ctxt": 2}) is None


class FakeMachine:
    """A booted system as measure() sees it: counters read from a script of readings."""

    def __init__(self, system, readings):
        self.system, self.readings = system, list(readings)

    def counters(self):
        return self.readings.pop(0)


def _results(systems, names):
    """An empty results dict as bench.run makes it, workloads names on systems."""
    return {"results": {n: {s: [] for s in systems} for n in names},
            "lost": {n: {s: 0 for s in systems} for n in names}, "extra": {}, "failures": [], "units": {n: "req/s" for n in names}, "lower_is_better": [],
            "accounting": {n: {s: [] for s in systems} for n in names},
            "accounting_icount": {n: {s: [] for s in systems} for n in names}}


def test_measure_accounts_per_request_and_keeps_icount_rates_out_of_the_speeds():
    ax0 = loads.kstat_counters(KSTAT)
    lx0 = loads.linux_stat_counters(PROC_STAT)
    res = _results(("axolotl", "linux"), ["w"])
    w = bench.W("w", "req/s", lambda m: 250.0, work="request", span=4)
    bench.measure(res, FakeMachine("axolotl", [ax0, _grown(ax0, 1)]), [w], 0)
    bench.measure(res, FakeMachine("linux", [lx0, _grown(lx0, 1)]), [w], 0)
    assert res["results"]["w"] == {"axolotl": [250.0], "linux": [250.0]} and not res["failures"]
    rec = res["accounting"]["w"]["axolotl"][0]
    assert rec["units"] == 1000 and rec["per_unit"]["kcalls"] == 1.0 and "insns" not in rec
    assert rec["top_kcalls"][0] == ["linux", 0.4]
    assert res["accounting"]["w"]["linux"][0]["per_unit"]["ctxt"] == 80.0
    # the -icount boot: its rate is no speed; its accounting has guest instructions
    iw = bench.W("w", "req/s", lambda m: 100.0, work="request", span=4, speed=False)
    bench.measure(res, FakeMachine("linux", [lx0, _grown(lx0, 1)]), [iw], 0, icount=True)
    assert res["results"]["w"]["linux"] == [250.0]
    assert res["accounting_icount"]["w"]["linux"][0]["insns"] == 475 * 10 ** 7 / 400


def test_icount_accounting_loads_exist_and_are_no_speed():
    acct = [w for w in bench.icount_workloads() if w.work]
    assert sorted(w.name for w in acct) == sorted(bench.ICOUNT_ACCOUNTED) and not any(w.speed for w in acct)
    assert {w.work for w in bench.workloads(False)} == {None, "MiB", "request", "op"}
    assert not any(w.work for w in bench.workloads(False) if "udp" in w.name or "micro" in w.name)


def test_tables_with_and_without_accounting():
    ax0, lx0 = loads.kstat_counters(KSTAT), loads.linux_stat_counters(PROC_STAT)
    res = _results(("axolotl", "linux"), ["w"])
    old = {k: res[k] for k in ("results", "units", "lower_is_better")}  # a results file from before
    assert bench.tables(old) == bench.table(old) and bench.accounting_table(old) == ""
    assert bench.accounting_table(res) == ""  # accounting keys, but every load failed
    w = bench.W("w", "req/s", lambda m: 250.0, work="request", span=4)
    for rep, by in enumerate((1, 3)):  # two repetitions: the medians are their means
        bench.measure(res, FakeMachine("axolotl", [ax0, _grown(ax0, by)]), [w], rep)
    bench.measure(res, FakeMachine("linux", [lx0, _grown(lx0, 1)]), [w], 0)
    bench.measure(res, FakeMachine("axolotl", [ax0, _grown(ax0, 1)]), [w], 0, icount=True)
    lines = bench.accounting_table(res).splitlines()
    head = lines[1].split()
    ax = dict(zip(head[3:], lines[2].split()[3:]))
    assert lines[2].split()[:3] == ["w", "request", "axolotl"]
    assert ax["insns"] == "4000" and ax["kcalls"] == "2" and ax["ipis"] == "0.026" and ax["ctxt"] == "-"
    assert lines[3].split(": ")[1:] == ["linux 0.8, send 0.24, time 0.16"], lines[3]
    names = loads.linux_call_names()
    assert lines[4].split(": ")[1:] == [f"{names.get(232, '232')} 0.14, {names.get(0, '0')} 0.05"], lines[4]
    lx = dict(zip(head[3:], lines[5].split()[3:]))
    assert lines[5].split()[2] == "linux" and lx["ctxt"] == "80" and lx["kcalls"] == "-" and lx["insns"] == "-"
    assert bench.tables(res).startswith(bench.table(res) + "\n\n")


THREADS = """/ # cat /proc/axolotl/threads
endpoint   cpu  state          runs     cpu_ms     kcalls   notifies as         name
10001      0    receive          40          6        300          2 3fc1000    rs
10004      1    receive        1200        116       5000        700 3fca3000   vfs
10020      0p   wait            300         40        900        100 3e000000   memcached
10021      1    futex           100         41        100         10 3e000000   memcached
[  12.345678] a log line 10022 0 run 5 5 1 1 0 x
@@
"""


def test_threads_runs_per_process_and_in_the_accounting_table():
    c = loads.threads_counters(THREADS)
    assert {k: v for k, v in c.items() if k.startswith("runs.")} == {"runs.rs": 40, "runs.vfs": 1200,
                                                                    "runs.memcached": 400}, c
    assert c["notifies.vfs"] == 700 and c["notifies.memcached"] == 110 and c["kcalls.memcached"] == 1000, c
    assert loads.threads_counters("/ # cat /proc/axolotl/threads\n@@\n") == {}
    per = loads.per_unit(c, _grown(c, 1), 100)
    assert loads.top_runs(per, 2) == [["vfs", 12.0], ["memcached", 4.0]]
    res = _results(("axolotl",), ["w"])
    w = bench.W("w", "req/s", lambda m: 250.0, work="request", span=4)
    ax0 = {**loads.kstat_counters(KSTAT), **c}
    bench.measure(res, FakeMachine("axolotl", [ax0, _grown(ax0, 1)]), [w], 0)
    assert res["accounting"]["w"]["axolotl"][0]["top_runs"][0] == ["vfs", 1.2]
    lines = bench.accounting_table(res).splitlines()
    assert lines[5].split(": ")[1:] == ["vfs 1.2, memcached 0.4, rs 0.04"], lines
    assert lines[6].split(": ") == [" " * 36 + "notifies by", "vfs 0.7, memcached 0.11, rs 0.002"], lines
