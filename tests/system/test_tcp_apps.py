"""The applications serve the host over TCP (issue 7's acceptance): the default image
(boot/system.conf, /etc/rc starts lighttpd, memcached, iperf and tcphash) on QEMU's
restricted user networking, each application reached through a hostfwd on a free port of
127.0.0.1, as `make run` does. lighttpd, memcached and iperf carry the user-space socket
library (lib/sock, ld --wrap) and use it (the default); test_tcp_apps_nolib.py runs the core
checks again with AXOLOTL_SOCK=0.

One guest for the whole file (a module fixture), the tests in this order:
- curl fetches the 20-byte and the 4 MiB file 50 times each (25 on one keep-alive
  connection, 25 on fresh ones), each byte-exact by SHA-256;
- a memcached client (tcp_tools.Memcached, text protocol) sets 10000 keys of 1 B to
  100 KiB and gets every value back exact;
- host `iperf -c` runs 5 s against the guest's iperf server, and reversed (-R): each
  report has a positive throughput (written to build/test-logs/tcp-apps-results.txt);
- tcphash: a 200 MiB stream each way, checked (CRC-32 one way, bytes the other);
- 1000 connections serially (tcphash) and 1000 with 128 at a time (lighttpd), after a
  warm-up round: the kernel's free frames and memory objects (console `mem`) and tcp's
  counters (`netstat`, where tcp has them) come back to where they were;
- crash tests: e1000, ip and pf killed one after another during a 200 MiB transfer, which
  completes on its one connection; tcp killed: lighttpd (never restarted) still listens
  and the next curl succeeds.
"""
import hashlib
import importlib.util
import os
import random
import re
from collections import Counter
import socket
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

import sysconf_variants
import tcp_tools
from conftest import ROOT, Guest, free_port, save_log, user_net
from test_rs import write_conf

MODULES = ("rs conf=tcpapps.conf", "tcpapps.conf", "ds", "console", "vfs", "initrd.cpio", "pm", "lxstart",
           "e1000", "virtio-net", "ixgbe", "ip", "pf", "udp", "tcp", "syscall", "pf.conf")
# each server of the configuration, built again as version 2 (Makefile UPDATE_V2)
UPDATABLE = ("e1000", "ip", "pf", "udp", "tcp", "syscall", "ds", "pm", "vfs")
MODULES += tuple(n + ".v2" for n in UPDATABLE) + ("vfs.layout2", "tcp.layout2")
UPDATE_ROUNDS = int(os.environ.get("AX_UPDATE_ROUNDS", "1"))  # each: to v2 one by one, back with update all
# kills of syscall, pm and rs in their tests, and hangs (half as many, at least one); the
# issue's acceptance run: AX_RESTART_ROUNDS=10
RESTART_ROUNDS = int(os.environ.get("AX_RESTART_ROUNDS", "1"))
HANG_ROUNDS = max(1, RESTART_ROUNDS // 2)
# Faults at least this far apart: an instance that dies within 1 s of its start counts as a
# crash loop and rs backs off (100 ms doubling to 10 s), longer than lighttpd keeps an idle
# keep-alive connection. Repeated rounds space their faults like a fault campaign does.
FAULT_SPACING = 1.5
HOST = "127.0.0.1"
BIG = 200 << 20
WWW = os.path.join(ROOT, "build", "www", "4mib.bin")
RESULTS = os.path.join(ROOT, "build", "test-logs", "tcp-apps-results.txt")


def note(text):
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    with open(RESULTS, "a") as f:
        f.write(text + "\n")
    print(text)


class Apps:
    """The running guest, its forwarded ports and its console's monitor; driver: the NIC
    driver's service (netstat lists it last)."""

    def __init__(self, guest, ports, driver="e1000"):
        self.g = guest
        self.port = ports  # guest port -> host port
        self.driver = driver

    def monitor(self, command, until, timeout=60):
        """Runs a console command in the monitor; the match of `until` in what follows."""
        mark = self.g.mark()
        self.g.type(command + "\r")
        return self.g.wait_for(until, timeout=timeout, start=mark)

    def mem(self):
        m = self.monitor("mem", r"mem: free_frames (\d+) \(\d+ KiB\) memobjs (\d+) threads (\d+)")
        return {"free_frames": int(m.group(1)), "memobjs": int(m.group(2)), "threads": int(m.group(3))}

    def settled_mem(self, timeout=60):
        """mem once three readings 2 s apart agree (closes finish asynchronously)."""
        deadline = time.monotonic() + timeout
        seen = [self.mem()]
        while time.monotonic() < deadline and not (len(seen) >= 3 and seen[-1] == seen[-2] == seen[-3]):
            time.sleep(2)
            seen.append(self.mem())
        return seen[-1]

    def tcp_counters(self):
        """tcp's counters from netstat ({} if it shows none)."""
        mark = self.g.mark()
        self.g.type("netstat\r")
        self.g.wait_for(r"^(?:axolotl> )?%s:$|netstat: no network" % self.driver, timeout=30, start=mark)
        time.sleep(1)
        text = self.g.output[mark:].replace("axolotl> ", "")
        m = re.search(r"^tcp:\n((?:[ \t]+.*\n)*)", text, re.M)
        if not m:
            return {}
        c = {k: int(v) for k, v in re.findall(r"^\s+([a-z_]+) (-?\d+)$", m.group(1), re.M)}
        # the socket table's rows with a socket (slot and id numbers; "-" for a connection
        # that has none any more, as in TIME_WAIT)
        c["sockets"] = len(re.findall(r"^\s+\d+ \d+ \S+ ", m.group(1), re.M))
        # connections no socket has any more, by state and local port (for failure messages)
        c["orphans"] = dict(Counter((st, lp) for st, lp in
                                    re.findall(r"^\s+- - (\S+) [\d.]+:(\d+) ", m.group(1), re.M)))
        return c

    def out(self):
        return self.g.output.replace("axolotl> ", "")


def wait_until(what, probe, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if probe():
                return
        except OSError:
            pass
        time.sleep(1)
    raise AssertionError(f"{what} did not answer within {timeout} s")


def boot_apps(conf, name, library=True, smp=2, extra_fwds=(), nic="e1000", driver="e1000", net_extra=()):
    """Boots conf (with /etc/rc's applications) and yields Apps once they answer.
    extra_fwds: more (proto, host port, guest port) forwards from 127.0.0.1; nic: QEMU's
    device model, driver: the service that drives it (ip's interface); net_extra: more
    QEMU arguments for the network (a filter-dump of netdev n0)."""
    subprocess.run(["make", "-s", "-C", ROOT, os.path.relpath(WWW, ROOT)], check=True)
    write_conf("tcpapps.conf", conf)
    write_conf("pf.conf", open(os.path.join(ROOT, "boot", "pf.conf")).read())
    ports = {g: free_port(socket.SOCK_STREAM) for g in (80, 11211, 5001, 7000, 6379)}
    fwds = [("tcp", h, g) for g, h in ports.items()] + list(extra_fwds)
    # 1 GiB, as `make run` boots it: memcached's cache, and 128 connections of lighttpd hold
    # 128 socket buffers of 560 KiB each (their pages are all allocated up front)
    with Guest("", modules=MODULES, mem=1024, net=user_net(nic, fwds) + list(net_extra), name=name, smp=smp) as g:
        g.wait_for(r"rc: started lighttpd", timeout=240)
        # the shell /etc/rc runs has the applications' environment: the library's switch
        mark = g.mark()
        g.type("echo axolotl_sock=${AXOLOTL_SOCK:-unset}\r")
        g.wait_for(r"axolotl_sock=%s\b" % ("unset" if library else "0"), timeout=60, start=mark)
        g.wait_for(r"ip: %s: dhcp lease 10\.0\.2\.15/24" % driver, timeout=180)
        a = Apps(g, ports, driver)
        wait_until("tcphash", lambda: tcp_tools.tcphash_small(HOST, ports[7000], 1, timeout=10), 120)
        wait_until("lighttpd", lambda: tcp_tools.http_get(HOST, ports[80], "/hello.txt", timeout=10)[0] == 200, 60)
        g.type("\x1d")  # the console's monitor, for service, mem and netstat
        g.wait_for(r"console: monitor", timeout=30)
        time.sleep(0.5)
        yield a


@pytest.fixture(scope="module")
def apps():
    yield from boot_apps(sysconf_variants.default(), "tcp-apps")


def sha(data):
    return hashlib.sha256(data).hexdigest()


def curl(args, timeout=600):
    r = subprocess.run(["curl", "-sS", "--fail", "--max-time", "300"] + args, capture_output=True,
                       text=True, timeout=timeout)
    assert r.returncode == 0, (args[:6], r.stderr[-2000:])
    return r.stdout


@pytest.mark.parametrize("path", ["/hello.txt", "/4mib.bin"])
def test_curl_fetches_files_byte_exact(apps, path, tmp_path):
    want = sha(open(os.path.join(ROOT, "rootfs", "srv", "www", "hello.txt"), "rb").read()
               if path == "/hello.txt" else open(WWW, "rb").read())
    url = f"http://{HOST}:{apps.port[80]}{path}"
    fmt = "%{http_code} %{num_connects} %{size_download}\n"
    t0 = time.monotonic()
    # 25 on one keep-alive connection (one curl, one connect), 25 on fresh connections
    keep = []
    for i in range(25):
        keep += ["-o", str(tmp_path / f"keep{i}"), url]
    stats = curl(["-w", fmt] + keep).split("\n")[:25]
    fresh = []
    for i in range(25):
        fresh += ["-o", str(tmp_path / f"fresh{i}"), url]
    stats_fresh = curl(["-w", fmt, "-H", "Connection: close"] + fresh).split("\n")[:25]
    elapsed = time.monotonic() - t0
    assert all(s.split()[0] == "200" for s in stats + stats_fresh), (stats, stats_fresh)
    assert sum(int(s.split()[1]) for s in stats) == 1, stats  # one connection reused 25 times
    assert all(s.split()[1] == "1" for s in stats_fresh), stats_fresh  # each a new one
    for i in range(25):
        assert sha((tmp_path / f"keep{i}").read_bytes()) == want, f"keep-alive fetch {i} of {path}"
        assert sha((tmp_path / f"fresh{i}").read_bytes()) == want, f"fresh fetch {i} of {path}"
    size = os.path.getsize(tmp_path / "keep0")
    note(f"curl {path}: 50 fetches of {size} bytes in {elapsed:.1f} s ({50 * size / elapsed / 1e6:.2f} MB/s)")


def test_memcached_10000_keys_round_trip(apps):
    t0 = time.monotonic()
    stored, matched, size = tcp_tools.memcached_roundtrip(HOST, apps.port[11211], 10000)
    elapsed = time.monotonic() - t0
    assert stored == 10000 and matched == 10000, (stored, matched)
    mc = tcp_tools.Memcached(HOST, apps.port[11211])
    try:
        # the smallest and the largest values, once more one by one
        assert mc.get("axk00001") == tcp_tools.mc_value(1) and len(mc.get("axk00001")) == 1
        assert mc.get("axk00000") == tcp_tools.mc_value(0) and len(mc.get("axk00000")) == 102400
        assert mc.get("no-such-key") is None
        evictions = mc.stats().get("evictions")
    finally:
        mc.close()
    assert evictions == "0", evictions
    note(f"memcached: 10000 keys, {size} bytes set and got in {elapsed:.1f} s")


@pytest.mark.parametrize("reverse", [False, True], ids=["client-sends", "reverse"])
def test_iperf_reports_a_throughput(apps, reverse):
    cmd = ["iperf", "-c", HOST, "-p", str(apps.port[5001]), "-t", "5", "-f", "m"] + (["-R"] if reverse else [])
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=90)
    rate = tcp_tools.iperf_rate(r.stdout)
    assert r.returncode == 0 and rate and rate > 0, (r.stdout[-2000:], r.stderr[-2000:])
    note(f"iperf {'-R (guest sends)' if reverse else '(host sends)'}: {rate / 1e6:.2f} Mbit/s")


def test_tcphash_200mib_each_way(apps):
    before = apps.tcp_counters()
    t0 = time.monotonic()
    ok, got, want = tcp_tools.tcphash_send(HOST, apps.port[7000], BIG, seed=11)
    t1 = time.monotonic()
    assert ok, f"host -> guest: the guest's CRC {got}, the host's {want}"
    # tcp's receive offload merged the stream's segments (the CRC above says the bytes are
    # right): a 200 MiB stream comes in batches of many packets, each batch merged.
    after = apps.tcp_counters()
    merges, merged = (after[k] - before[k] for k in ("rx_merges", "rx_merged"))
    assert merges > 100 and merged >= 2 * merges, (merges, merged)
    ok, n, bad = tcp_tools.tcphash_recv(HOST, apps.port[7000], BIG, seed=12)
    t2 = time.monotonic()
    assert ok, f"guest -> host: {n} of {BIG} bytes, first difference at {bad}"
    note(f"tcphash 200 MiB: host->guest {t1 - t0:.1f} s ({BIG / (t1 - t0) / 1e6:.2f} MB/s), "
         f"guest->host {t2 - t1:.1f} s ({BIG / (t2 - t1) / 1e6:.2f} MB/s)")


class NoAnswer(Exception):
    """Not a byte came back on a connection QEMU's forward accepted."""


def http_keepalive_get(port, path="/hello.txt", timeout=60):
    """One HTTP/1.1 request on a fresh connection that we close first (after the body)."""
    with socket.create_connection((HOST, port), timeout=timeout) as s:
        s.sendall(b"GET %s HTTP/1.1\r\nHost: axolotl\r\n\r\n" % path.encode())
        data = b""
        while b"\r\n\r\n" not in data:
            try:
                got = s.recv(4096)
            except TimeoutError:
                if not data:
                    raise NoAnswer()
                raise
            if not got:
                return False
            data += got
        head, _, body = data.partition(b"\r\n\r\n")
        m = re.search(rb"Content-Length: (\d+)", head, re.I)
        n = int(m.group(1)) if m else -1
        while len(body) < n:
            got = s.recv(65536)
            if not got:
                break
            body += got
        return head.startswith(b"HTTP/1.1 200") and len(body) == n


def forwarded_get(port, lost):
    """http_keepalive_get through QEMU's forward, again on a new connection when the first
    got no answer at all. QEMU's user networking listens with a backlog of 1 (`ss -ltn`);
    under 128 simultaneous connects a few host connections it has completed wait in its
    accept queue for longer than the 20 s we give them, and the guest sees them late or
    never (its NIC gets no SYN; tcp's `accepts` counter shows it: the test checks that).
    Such attempts are counted in `lost`."""
    for _ in range(4):
        try:
            return http_keepalive_get(port, timeout=20)
        except NoAnswer:
            lost.append(1)
    return False


def connection_rounds(apps, n, lost):
    """n connections one after another to tcphash, then n to lighttpd, 128 at a time:
    how many of each went right."""
    serial = sum(tcp_tools.tcphash_small(HOST, apps.port[7000], i) for i in range(n))
    with ThreadPoolExecutor(max_workers=128) as ex:
        concurrent = sum(ex.map(lambda _: forwarded_get(apps.port[80], lost), range(n)))
    return serial, concurrent


def live_pcbs(c):
    """tcp's pcbs less those in TIME_WAIT (which end by themselves)."""
    return c["pcbs"] - sum(n for (state, _), n in c["orphans"].items() if state == "time_wait")


def steady(a, b):
    """Memory after round b is where round a left it (a little slack for the kernel heap)."""
    return (b["free_frames"] >= a["free_frames"] - 64 and b["memobjs"] <= a["memobjs"] + 4 and
            b["threads"] <= a["threads"] + 2)


def test_1000_connections_leak_nothing(apps):
    """Rounds of 1000 connections serially and 1000 with 128 at a time, until memory after a
    round is where the round before left it: the first rounds bring pools, caches and the
    applications' heaps (lighttpd keeps chunks after a burst) to their working size; a leak
    per connection would lower it round after round. tcp's sockets, pcbs and heap must be
    back where they were after every round."""
    lost_before = []  # every round's: QEMU may open a lost one to the guest rounds later
    assert connection_rounds(apps, 1000, lost_before) == (1000, 1000)
    ends = [(apps.settled_mem(), apps.tcp_counters())]
    # (settling was seen to take three rounds and more: the count of memory objects climbs to
    # a plateau, 364 in this image, as syscall parks closed sockets' buffers for reuse)
    for rnd in range(5):
        t0 = time.monotonic()
        lost = []
        serial, concurrent = connection_rounds(apps, 1000, lost)
        elapsed = time.monotonic() - t0
        assert (serial, concurrent) == (1000, 1000)
        mem1, tcp1 = apps.settled_mem(), apps.tcp_counters()  # the last closes finish
        mem0, tcp0 = ends[-1]
        ends.append((mem1, tcp1))
        note(f"2000 connections in {elapsed:.1f} s ({len(lost)} lost by QEMU's forward and made again); "
             f"mem {mem0} -> {mem1}; tcp pcbs {tcp0['pcbs']} -> {tcp1['pcbs']}, heap_used "
             f"{tcp0['heap_used']} -> {tcp1['heap_used']}, sockets {tcp1['sockets']}")
        # the guest accepted each completed connection once; a lost one it saw at all only
        # after the host had given up on it (QEMU opens it to the guest late, or never)
        lost_before += lost
        assert 2000 <= tcp1["accepts"] - tcp0["accepts"] <= 2000 + len(lost_before), \
            (tcp0["accepts"], tcp1["accepts"], len(lost_before))
        assert len(lost) <= 100, len(lost)  # seen: 0 to 40
        # pcbs in TIME_WAIT are not leaked: where lighttpd's FIN left before the host's, the
        # connection waits 2 MSL (120 s) in lwIP, fewer or more by how fast the rounds ran
        # (seen: 32 -> 82 on port 80); lwIP reuses the oldest when it runs out
        live0, live1 = live_pcbs(tcp0), live_pcbs(tcp1)
        assert live1 <= live0 + 4, (live0, live1, tcp0["orphans"], tcp1["orphans"])
        assert tcp1["pcbs"] - live1 <= 1000, tcp1["orphans"]  # MEMP_NUM_TCP_PCB's TIME_WAIT share
        assert tcp1["heap_used"] <= tcp0["heap_used"] + 65536, (tcp0, tcp1)
        assert tcp1["sockets"] <= 4 + 4, tcp1["sockets"]  # the four listeners, a few closing
        if steady(mem0, mem1):
            return
    assert False, ("memory went down after every round", [e[0] for e in ends])


def keepalive_connection(port, requests=10, path="/hello.txt", timeout=60):
    """requests HTTP/1.1 requests one after another on one connection (each answer read
    whole by its Content-Length), then we close: the number answered 200 in full."""
    ok = 0
    with socket.create_connection((HOST, port), timeout=timeout) as s:
        data = b""
        for _ in range(requests):
            s.sendall(b"GET %s HTTP/1.1\r\nHost: axolotl\r\n\r\n" % path.encode())
            while b"\r\n\r\n" not in data:
                got = s.recv(65536)
                if not got:
                    return ok
                data += got
            head, _, data = data.partition(b"\r\n\r\n")
            m = re.search(rb"Content-Length: (\d+)", head, re.I)
            n = int(m.group(1)) if m else 0
            while len(data) < n:
                got = s.recv(65536)
                if not got:
                    return ok
                data += got
            data = data[n:]
            ok += head.startswith(b"HTTP/1.1 200") and m is not None
    return ok


def socklib(apps):
    """The console's socklib: {(process, call): (user, sys)}."""
    mark = apps.g.mark()
    apps.g.type("socklib\r")
    apps.g.wait_for(r"user space \d+ of \d+ calls", timeout=30, start=mark)
    text = apps.g.output[mark:].replace("axolotl> ", "")
    table = {(p, c): (int(u), int(y)) for p, c, u, y in
             re.findall(r"^\s*([0-9a-f]+)\s+([a-z_]+)\s+(\d+)\s+(\d+)\s*$", text, re.M)}
    m = re.search(r"^spare buffers: (\d+) parked, (\d+) reused, (\d+) destroyed$", text, re.M)
    assert m, text[-2000:]
    table["spares"] = tuple(int(x) for x in m.groups())
    return table


def keepalive_load(apps, label):
    """Thesis table 5.2's measure: lighttpd under a host keep-alive load (128 connections,
    16 at a time, 10 requests each), its socket calls from the console's socklib (the
    process whose counts moved: only lighttpd serves during the load). Returns
    {call: (user, sys)} and the share answered in user space; no application may die."""
    before = socklib(apps)
    mark = apps.g.mark()
    t0 = time.monotonic()
    with ThreadPoolExecutor(16) as ex:
        counts = list(ex.map(lambda _: keepalive_connection(apps.port[80]), range(128)))
    took = time.monotonic() - t0
    # on failure: which connections ended early, and what rs saw meanwhile
    assert sum(counts) == 1280, (sum(counts), sorted(c for c in counts if c < 10), took,
                                 re.findall(r"^rs: .*$", apps.g.output[mark:], re.M)[-20:])
    after = socklib(apps)
    parked, reused, destroyed = (a - b for a, b in zip(after.pop("spares"), before.pop("spares")))
    delta = {}
    for key, (u, y) in after.items():
        u0, y0 = before.get(key, (0, 0))
        delta.setdefault(key[0], {})[key[1]] = (u - u0, y - y0)
    proc, calls = max(delta.items(), key=lambda kv: sum(u + y for u, y in kv[1].values()))
    user = sum(u for u, _ in calls.values())
    total = sum(u + y for u, y in calls.values())
    table = " ".join(f"{c} {u}/{y}" for c, (u, y) in sorted(calls.items()) if u or y)
    note(f"lighttpd keep-alive, {label} (128 connections x 10 requests, 16 at a time, {took:.1f} s): "
         f"{user} of {total} socket calls in user space ({100.0 * user / max(total, 1):.1f}%); "
         f"process {proc}: {table}; spare buffers {parked} parked, {reused} reused by accepts, "
         f"{destroyed} destroyed")
    assert total >= 1280 * 2, (proc, calls)
    # lazy closing: accepts reused no more buffers than were parked during the load and the
    # 32 spares a process may hold before it. How many depends on how the connections
    # overlapped (seen 0 to 50: a slow CI host ran them nearly one by one, and spares that
    # outnumber open sockets are given back); tests/sock/sockwake.c checks the reuse itself.
    assert reused <= parked + 32 and destroyed <= parked + 32, (parked, reused, destroyed)
    # no application died on the way (rc would start it again, hiding it from the load)
    assert not re.search(r"killed by signal|rc: \w+ ended", apps.out()), apps.out()[-3000:]
    return calls, user / total


def test_lighttpd_keepalive_socket_calls_in_user_space(apps):
    """The keep-alive load with the stack co-located on shared cores (the default image):
    epoll_ctl, shutdown and the draining recv never need the kernel, and epoll_waits are
    answered from the rings when something is ready (else they block in the kernel, how
    often depends on timing). tcp may sleep between lighttpd's calls here, and then a read
    or write that moved data wakes it with one system call (AX_KICK), so the share varies
    (seen 40-81%). test_tcp_apps_dedicated.py measures the stack on a dedicated core."""
    calls, share = keepalive_load(apps, "tcp co-located")
    for c in ("epoll_ctl", "shutdown", "recv"):
        assert calls[c][0] > 0 and calls[c][1] == 0, (c, calls)
    assert calls["epoll_wait"][0] > 0 and calls["read"][0] > 0, calls


class CheckedStream:
    """tcphash streams n bytes of seed's stream to us on one connection, from a thread, every
    byte compared; `progress` is how many arrived so far."""

    def __init__(self, apps, n, seed):
        self.n, self.progress, self.result = n, 0, {}
        self.th = threading.Thread(target=self._run, args=(apps.port[7000], seed), daemon=True)
        self.th.start()

    def _run(self, port, seed):
        try:
            self.result["r"] = tcp_tools.tcphash_recv(HOST, port, self.n, seed=seed, timeout=120,
                                                      progress=lambda k: setattr(self, "progress", k))
        except OSError as e:
            self.result["error"] = repr(e)

    def reach(self, k):
        """Until k bytes arrived (or the stream ended)."""
        while self.progress < k and self.th.is_alive():
            time.sleep(0.05)

    def check(self, timeout):
        """It ends within timeout seconds with every byte right."""
        self.th.join(timeout)
        assert not self.th.is_alive(), f"the transfer did not finish within {timeout} s"
        assert "r" in self.result, self.result
        ok, got, bad = self.result["r"]
        assert ok, f"{got} of {self.n} bytes, first difference at {bad}"


def stream_then(apps, n, seed, command):
    """A checked stream of n bytes from tcphash; once a fifth has come (it still runs),
    command is typed at the monitor. The stream and the log's mark before the command."""
    stream = CheckedStream(apps, n, seed)
    stream.reach(n // 5)
    assert stream.th.is_alive(), stream.result
    mark = apps.g.mark()
    apps.g.type(command + "\r")
    return stream, mark


def driver_killed_under_a_stream(apps, n, seed, queues=None):
    """`service kill DRIVER` once a fifth of a checked n-byte stream from tcphash has come
    (apps.driver: virtio-net, ixgbe): rs restarts it, the new instance resets the device and
    attaches (with `queues` queue pairs, if given), ip resends what was not acknowledged, and
    the one connection carries every byte right; neither ip, tcp nor pf suffered; then new
    connections are served (tcphash, an HTTP GET). The log's mark before the kill and when
    it was typed (time.monotonic)."""
    drv, t0 = apps.driver, time.monotonic()
    stream, mark = stream_then(apps, n, seed, f"service kill {drv}")
    pairs = r".*, %d queue pairs" % queues if queues else ""
    apps.g.wait_for(r"^rs: %s exited with status" % drv, timeout=60, start=mark)
    apps.g.wait_for(r"^rs: started %s as \S+ \(restarts 1\)" % drv, timeout=120, start=mark)
    apps.g.wait_for(r"^%s: attached to ip %s" % (drv, pairs), timeout=60, start=mark)
    apps.g.wait_for(r"^ip: %s: driver reset, %s.* \d+ frames to resend" % (drv, pairs), timeout=60, start=mark)
    stream.check(600)
    assert tcp_tools.tcphash_small(HOST, apps.port[7000], seed + 1, timeout=60)
    status, body = tcp_tools.http_get(HOST, apps.port[80], "/hello.txt", timeout=60)
    assert status == 200 and len(body) == 20, (status, body)
    out = apps.out()[mark:]
    assert not re.search(r"^rs: (ip|tcp|pf) (stuck|hung|exited)", out, re.M), out[-3000:]
    return mark, t0


def driver_updated_under_a_stream(apps, n, seed, queues=None):
    """`service update DRIVER DRIVER` (its own binary: a driver updates as it restarts) once a fifth
    of a checked n-byte stream has come: the update commits, the new instance says it took
    over and attaches (with `queues` queue pairs, if given), and the connection carries every
    byte right. The stall rs measured, in ms."""
    drv = apps.driver
    stream, mark = stream_then(apps, n, seed, f"service update {drv} {drv}")
    m = apps.g.wait_for(r"^rs: %s updated to %s: \S+ replaced it as on a restart \(stall ([\d.]+) ms\)$" % (drv, drv),
                        timeout=120, start=mark)
    apps.g.wait_for(r"^%s: took over \(live update\)" % drv, timeout=60, start=mark)
    apps.g.wait_for(r"^%s: attached to ip %s" % (drv, r".*, %d queue pairs" % queues if queues else ""), timeout=60,
                    start=mark)
    stream.check(600)
    out = apps.out()[mark:]
    assert not re.search(r"^rs: (ip|tcp|pf) (stuck|hung|exited)|rolled back", out, re.M), out[-3000:]
    return float(m.group(1))


def test_transfer_survives_e1000_ip_pf_restarts(apps):
    """A 200 MiB stream from the guest; e1000, ip and pf are killed one after another while
    it runs (each once the previous one is back). The one connection carries it all."""
    t0 = time.monotonic()
    stream = CheckedStream(apps, BIG, 21)
    for victim, at in (("e1000", 0.2), ("ip", 0.45), ("pf", 0.7)):
        stream.reach(at * BIG)
        assert stream.th.is_alive(), (f"the transfer ended before {victim} was killed", stream.result)
        restarts = len(re.findall(r"^rs: started %s as" % victim, apps.out(), re.M))
        apps.g.type(f"service kill {victim}\r")
        deadline = time.monotonic() + 120
        while len(re.findall(r"^rs: started %s as" % victim, apps.out(), re.M)) <= restarts:
            assert time.monotonic() < deadline, f"{victim} was not restarted: {apps.out()[-3000:]}"
            time.sleep(0.2)
    stream.check(600)
    out = apps.out()
    for victim in ("e1000", "ip", "pf"):
        assert re.search(r"^rs: %s exited with status" % victim, out, re.M), out[-3000:]
    note(f"200 MiB with e1000, ip, pf killed: {time.monotonic() - t0:.1f} s, one connection")


def ip_counters(apps):
    """ip's counters from netstat."""
    mark = apps.g.mark()
    apps.g.type("netstat\r")
    apps.g.wait_for(r"^(?:axolotl> )?%s:$|netstat: no network" % apps.driver, timeout=30, start=mark)
    text = apps.g.output[mark:].replace("axolotl> ", "")
    m = re.search(r"^ip:\n((?:[ \t]+.*\n)*)", text, re.M)
    return {k: int(v) for k, v in re.findall(r"^\s+([a-z_0-9]+) (-?\d+)$", m.group(1), re.M)} if m else {}


def test_new_ip_drops_what_tcp_queued_for_its_predecessor(apps):
    """ip stops reading tcp/out while the guest streams to us (`service inject ip deaf`): its
    loop and heartbeat run on, so only tcp sees it, by its channel standing still with
    messages queued; tcp tells rs, which restarts ip by itself (lib/chan/watch.h). tcp, which
    stopped reading ip's channel because its own output stood still first, is not blamed.
    The new ip drops what tcp queued for its predecessor, up to tcp's hello that names it,
    and tcp frees the packets it gave the old ip when it hears the new one: no packet is sent
    from memory tcp freed, none is answered (tcp counts no stale TX_DONE), and the one
    connection carries every byte right."""
    before = apps.tcp_counters()
    stream, mark = stream_then(apps, 48 << 20, 23, "service inject ip deaf")
    apps.g.wait_for(r"^ip: injected fault: the transports' channels are no longer read", timeout=60, start=mark)
    apps.g.wait_for(r"^rs: ip stuck: no progress on tcp's channel tcp/out for \d+ ms", timeout=120, start=mark)
    m = apps.g.wait_for(r"^ip: tcp/out: (\d+) messages for the previous ip dropped", timeout=120, start=mark)
    assert int(m.group(1)) > 0, m.group(0)
    apps.g.wait_for(r"^tcp: \d+ packets in flight to the previous ip forgotten", timeout=60, start=mark)
    stream.check(600)
    out = apps.out()[mark:]
    assert not re.search(r"^rs: tcp stuck", out, re.M), out[-3000:]
    assert not re.search(r"^rs: started tcp as", out, re.M), out[-3000:]
    after = apps.tcp_counters()
    assert after.get("stale_tx_done") == before.get("stale_tx_done"), (before, after)
    assert ip_counters(apps).get("tcp_stale_msg") == int(m.group(1))
    note(f"ip deaf to tcp under a 48 MiB stream: rs restarted it on tcp's word; the new ip dropped "
         f"{m.group(1)} messages for its predecessor")


def driver_fault_restarted_on_ips_word(apps, word, injected, evidence, seed, n=32 << 20):
    """A checked stream of n bytes (32 MiB) from the guest; `service inject DRIVER WORD` once a fifth has
    come (apps.driver: e1000, or virtio-net in test_virtio_net.py); the injected line, then
    each of evidence (regexes, in order), then rs restarting the driver; the stream ends
    with every byte right, and neither ip nor tcp was blamed."""
    drv = apps.driver
    stream, mark = stream_then(apps, n, seed, f"service inject {drv} {word}")
    apps.g.wait_for(injected.replace("DRV", drv), timeout=60, start=mark)
    for regex in evidence:
        apps.g.wait_for(regex.replace("DRV", drv), timeout=120, start=mark)
    apps.g.wait_for(r"^rs: started %s as" % drv, timeout=120, start=mark)
    stream.check(600)
    out = apps.out()[mark:]
    assert not re.search(r"^rs: (ip|tcp) stuck", out, re.M), out[-3000:]
    note(f"{drv} {word} under a {n >> 20} MiB stream: restarted by rs on ip's word, every byte right")


# (DRV: the driver's name) what the driver says when the fault is injected; what follows
DEAF = (r"^DRV: injected fault: ip's channel and the device are no longer served",
        [r"^rs: DRV stuck: no progress on ip's channel ip/\S+\.(?:down|d\d|tx) for \d+ ms"])  # (dN: queue N)
REFUSE = (r"^DRV: injected fault: every frame from ip is refused",
          [r"^ip: \S+ refused the last \d+ frames", r"^rs: DRV stuck: no progress on ip's channel \S+\.tx for \d+ ms"])


def test_a_driver_that_stops_serving_is_restarted_on_ips_word(apps):
    """e1000 alive but no longer serving ip's channel or the device (`service inject e1000
    deaf`, what code faults in its poll loop did in the fault campaign, each needing a manual
    restart): ip sees its down channel stand still with frames queued, or the frames the
    driver holds unanswered for 3 s, and tells rs, which restarts e1000."""
    driver_fault_restarted_on_ips_word(apps, "deaf", *DEAF, 29)


def test_a_driver_that_refuses_every_frame_is_restarted_on_ips_word(apps):
    """e1000 alive and reading ip's channel but answering every frame as bad (`service inject
    e1000 refuse`, what a branch fault in its segment check did in the fault campaign: a
    manual restart each time): the channel moves, so ip counts the refusals; with the link
    up, 3 s of nothing but refusals is told to rs, which restarts e1000."""
    driver_fault_restarted_on_ips_word(apps, "refuse", *REFUSE, 37)


def test_an_impossible_answer_becomes_eio_not_a_wrong_byte(apps):
    """The fault campaign's one corruption (run 19): a pointer fault in syscall's answer()
    replied from the wrong stack slot; tcphash, told its write() moved more than it asked,
    went on past its buffer and sent what lay there: a wrong byte at the host. The kernel
    now checks answers against the call (no read or write moves more than its count): with
    syscall claiming 1 MiB more (`service inject syscall overcount`) tcphash's reads and
    writes fail with EIO, the host sees the stream end early with no wrong byte, and after
    a restart of syscall streams are whole again."""
    mark = apps.g.mark()
    apps.monitor("service inject syscall overcount", r"syscall: injected fault: answers to reads and writes claim")
    ok, got, bad = tcp_tools.tcphash_recv(HOST, apps.port[7000], 4 << 20, seed=31, timeout=120)
    assert not ok and bad is None and got < 4 << 20, (ok, got, bad)
    # (tcphash reads its request a byte at a time: the first read is the first wrong answer)
    apps.g.wait_for(r"linux: call [01] for at most \d+ bytes answered \d+ \(by server 0x[0-9a-f]+ or one it "
                    r"passed the call to\): EIO instead", timeout=60, start=mark)
    apps.monitor("service restart syscall", r"^rs: started syscall as", timeout=90)
    wait_until("a whole stream after syscall's restart",
               lambda: tcp_tools.tcphash_recv(HOST, apps.port[7000], 1 << 20, seed=32, timeout=60)[0], 90)
    note(f"syscall claiming 1 MiB more per read and write: tcphash got EIO, {got} bytes came, all right")


def test_held_calls_are_served_without_the_event_that_should_wake_them(apps):
    """The fault campaign's run 98: an off-by-one in syscall's calls_retry left blocked calls
    (accept, read, a write waiting for room) held for ever, though their sockets were ready;
    new connections hung and rs saw nothing. syscall now serves a held call again after a
    second whatever the events say. With events ignored (`service inject syscall noretry`)
    tcphash's blocking accept, read and writes still complete and the stream is whole;
    then syscall is restarted clean."""
    apps.monitor("service inject syscall noretry", r"syscall: injected fault: held calls are no longer served on events")
    t0 = time.monotonic()
    ok, got, bad = tcp_tools.tcphash_recv(HOST, apps.port[7000], 256 << 10, seed=33, timeout=120)
    took = time.monotonic() - t0
    assert ok, (got, bad)
    apps.monitor("service restart syscall", r"^rs: started syscall as", timeout=90)
    wait_until("a whole stream after syscall's restart",
               lambda: tcp_tools.tcphash_recv(HOST, apps.port[7000], 1 << 20, seed=34, timeout=60)[0], 90)
    note(f"held calls never retried on events: a 256 KiB stream still whole, in {took:.1f} s (sweeps)")


def test_tcp_restart_keeps_lighttpd_listening(apps, tmp_path):
    """A killed tcp comes back afresh (its kept state was not left at rest: half-changed
    state is never adopted, only a live update's), with its listeners from ds and what its
    predecessor held let go."""
    before = len(re.findall(r"^rs: started tcp as", apps.out(), re.M))
    mark = apps.g.mark()
    apps.g.type("service kill tcp\r")
    apps.g.wait_for(r"^tcp: the kept state was not left at rest \(the last instance ended at work\): starting afresh$",
                    timeout=120, start=mark)
    apps.g.wait_for(r"^tcp: let go of [1-9]\d* of the last instance's objects and \d+ of its grants$", timeout=60,
                    start=mark)
    deadline = time.monotonic() + 120
    while len(re.findall(r"^rs: started tcp as", apps.out(), re.M)) <= before:
        assert time.monotonic() < deadline, "tcp was not restarted: " + apps.out()[-3000:]
        time.sleep(0.2)
    # the listener is back from ds: the next fetch succeeds (a few tries while tcp settles)
    want = sha(open(os.path.join(ROOT, "rootfs", "srv", "www", "hello.txt"), "rb").read())
    url = f"http://{HOST}:{apps.port[80]}/hello.txt"
    ok = False
    for _ in range(10):
        r = subprocess.run(["curl", "-sS", "--fail", "--max-time", "10", "-o", str(tmp_path / "after"), url],
                           capture_output=True, timeout=30)
        if r.returncode == 0 and sha((tmp_path / "after").read_bytes()) == want:
            ok = True
            break
        time.sleep(1)
    assert ok, apps.out()[-3000:]
    big = subprocess.run(["curl", "-sS", "--fail", "--max-time", "300", url.replace("hello.txt", "4mib.bin")],
                         capture_output=True, timeout=320)
    assert big.returncode == 0 and sha(big.stdout) == sha(open(WWW, "rb").read())
    out = apps.out()
    assert "rc: lighttpd ended" not in out, out[-3000:]  # the same lighttpd throughout
    assert "panic" not in out.lower() and "lwip: assertion" not in out.lower(), out[-3000:]


def keepalive_request(s, path=b"/hello.txt"):
    """One request on an open HTTP/1.1 connection s: True if a 200 came back whole."""
    s.sendall(b"GET %s HTTP/1.1\r\nHost: axolotl\r\n\r\n" % path)
    data = b""
    while b"\r\n\r\n" not in data:
        got = s.recv(65536)
        if not got:
            return False
        data += got
    head, _, body = data.partition(b"\r\n\r\n")
    n = int(re.search(rb"Content-Length: (\d+)", head, re.I).group(1))
    while len(body) < n:
        got = s.recv(65536)
        if not got:
            return False
        body += got
    return head.startswith(b"HTTP/1.1 200") and len(body) == n


class KeepAlivePinger:
    """One HTTP/1.1 connection to lighttpd asked for /hello.txt every 0.3 s from a thread (more
    often than lighttpd's 5 s keep-alive idle limit) until stop(): every answer must come."""

    def __init__(self, port, guest=None):
        self.guest = guest  # (to say where in its log a failure happened)
        self.s = socket.create_connection((HOST, port), timeout=60)
        self.ok, self.failed, self.stopping = 0, None, False
        self.th = threading.Thread(target=self._run, daemon=True)
        self.th.start()

    def _run(self):
        while not self.stopping and self.failed is None:
            try:
                if keepalive_request(self.s):
                    self.ok += 1
                else:
                    self.failed = f"connection closed after {self.ok} answers"
            except OSError as e:
                self.failed = f"{e!r} after {self.ok} answers"
            if self.failed and self.guest:
                self.failed += ", at: " + self.guest.output[-1500:]
            time.sleep(0.3)

    def stop(self):
        self.stopping = True
        self.th.join(120)
        self.s.close()
        return self.ok, self.failed


def test_syscall_restart_keeps_every_socket(apps):
    """syscall is killed while a keep-alive connection to lighttpd is open, a memcached
    connection holds keys and tcphash streams 40 MiB: rs gives the new syscall the old one's
    memory (KC_LEGACY), which takes the socket table over. The same connections go on, the
    stream arrives whole, new connections are accepted, and no application restarts."""
    ka = KeepAlivePinger(apps.port[80], apps.g)
    mc = tcp_tools.Memcached(HOST, apps.port[11211], timeout=60)
    try:
        assert mc.set("restart-key", b"kept through a syscall restart")
        stream = CheckedStream(apps, 40 << 20, 33)
        stream.reach(stream.n // 4)
        for i in range(RESTART_ROUNDS):
            time.sleep(FAULT_SPACING if i else 0)
            mark = apps.g.mark()
            apps.g.type("service kill syscall\r")
            apps.g.wait_for(r"^syscall: restarted \(generation \d+\): [1-9]\d* sockets taken over",
                            timeout=120, start=mark)
            assert mc.get("restart-key") == b"kept through a syscall restart"
        out = apps.out()
        m = re.findall(r"^rs: started syscall as \S+ \(restarts \d+, (\d+) kept handles\)", out, re.M)
        assert m and int(m[-1]) > 4, out[-3000:]
        # the connections made before the restart carry on
        assert mc.get("restart-key") == b"kept through a syscall restart"
        stream.check(300)
        # and new ones are accepted by the same applications
        assert tcp_tools.http_get(HOST, apps.port[80], "/hello.txt", timeout=30)[0] == 200
        assert tcp_tools.tcphash_small(HOST, apps.port[7000], 5)
        # a hang: rs sees no heartbeat (3 s), kills it, and the next instance takes over too
        for _ in range(HANG_ROUNDS):
            mark = apps.g.mark()
            apps.g.type("service inject syscall hang\r")
            apps.g.wait_for(r"^rs: syscall hung: no heartbeat for \d+ ms", timeout=120, start=mark)
            apps.g.wait_for(r"^syscall: restarted \(generation \d+\): [1-9]\d* sockets taken over", timeout=60,
                            start=mark)
            assert mc.get("restart-key") == b"kept through a syscall restart"
            assert tcp_tools.http_get(HOST, apps.port[80], "/hello.txt", timeout=30)[0] == 200
    finally:
        answered, failed = ka.stop()
        mc.close()
    assert failed is None and answered > 0, (answered, failed, apps.out()[-3000:])
    out = apps.out()
    assert not re.search(r"rc: \w+ ended|killed by signal", out), out[-3000:]
    assert "syscall: socket" not in out or "buffers are lost" not in out, out[-3000:]
    note(f"syscall killed {RESTART_ROUNDS}x under keep-alive HTTP, memcached and a 40 MiB stream, then hung "
         f"{HANG_ROUNDS}x: every connection kept ({answered} keep-alive requests answered)")


def test_rs_killed_and_crashed_comes_back_and_adopts_every_service(apps):
    """rs is killed, then crashes: the kernel starts it again with its table (kept memory)
    and its children; the new rs restarts a service killed after it, answers the service
    command, keeps its event log, and the applications serve throughout."""
    ka = KeepAlivePinger(apps.port[80], apps.g)
    try:
        hows = ["service kill rs", "service inject rs crash"] * max(1, RESTART_ROUNDS // 2)
        for gen, how in enumerate(hows, start=2):
            mark = apps.g.mark()
            apps.g.type(how + "\r")
            apps.g.wait_for(r"rs died: started again as \S+ \(restart %d\), \d+ handles and its children handed over"
                            % (gen - 1), timeout=60, start=mark)
            m = apps.g.wait_for(r"^rs: restarted \(generation %d\): (\d+) services adopted, 0 had ended" % gen,
                                timeout=60, start=mark)
            assert int(m.group(1)) == 10, m.group(0)
            # the new rs is the parent: it hears of a crash and restarts the service (an ip
            # killed again within a second of its start would be a crash loop to rs, whose
            # back-off then keeps it down for seconds: spaced like every repeated fault)
            time.sleep(FAULT_SPACING if gen > 2 else 0)
            mark = apps.g.mark()
            apps.g.type("service kill ip\r")
            apps.g.wait_for(r"^rs: restarting ip in \d+ ms", timeout=60, start=mark)
            apps.g.wait_for(r"^ip: e1000: restored 10\.0\.2\.15/24", timeout=60, start=mark)
            assert "rs: killed by the service command: ending" in apps.out()
            builds = service_builds(apps)
            assert {"ds", "ip", "tcp", "syscall", "vfs", "pm"} <= set(builds), builds
        mark = apps.g.mark()
        apps.g.type("service log\r")
        apps.g.wait_for(r"restarted \(generation %d\)" % (len(hows) + 1), timeout=30, start=mark)
        log = apps.g.output[mark:]
        assert "started ds as" in log or "updating" in log or "restarted (generation 2)" in log, log[-2000:]
        assert tcp_tools.http_get(HOST, apps.port[80], "/hello.txt", timeout=30)[0] == 200
        assert tcp_tools.tcphash_small(HOST, apps.port[7000], 9)
    finally:
        answered, failed = ka.stop()
    assert failed is None and answered > 0, (answered, failed)
    out = apps.out()
    assert not re.search(r"rc: \w+ ended|killed by signal", out), out[-3000:]


def shell(apps, command, expect, timeout=60):
    """Runs command in busybox's shell (the terminal, then back to the monitor): the match."""
    mark = apps.g.mark()
    apps.g.type("\x1d")
    apps.g.wait_for(r"^console: terminal", timeout=30, start=mark)
    apps.g.type(command + "\r")
    m = apps.g.wait_for(expect, timeout=timeout, start=mark)
    apps.g.type("\x1d")
    apps.g.wait_for(r"^console: monitor", timeout=30, start=mark)
    return m


def test_vfs_restart_keeps_unix_sockets_system_v_ipc_and_shared_mappings(apps):
    """vfs killed while a process holds AF_UNIX sockets (a pair with unread bytes, a
    listener with a connection not yet accepted), System V objects (a queued message, a
    semaphore's value, an attached shared memory segment) and a shared mapping of a file:
    after the restart every one works on (the file's bytes in the new vfs are the mapping's) (tests/linux/lxproc.c ipckeep; it waits for /tmp/ipckeep-go, made after the
    restart)."""
    shell(apps, "lxproc ipckeep > /tmp/ipckeep.out 2>&1 & echo started-ipckeep", r"^started-ipckeep")
    wait_until("ipckeep ready", lambda: shell(apps, "echo ipc=$(grep -c 'ipckeep: ready' /tmp/ipckeep.out)",
                                              r"^ipc=(\d+)").group(1) == "1", 120)
    mark = apps.g.mark()
    apps.g.type("service kill vfs\r")
    apps.g.wait_for(r"^rs: vfs exited with status -9", timeout=120, start=mark)
    apps.g.wait_for(r"^vfs: took over the file system", timeout=60, start=mark)
    apps.g.wait_for(r"^console: the terminal is back \(a new vfs\)", timeout=60, start=mark)
    shell(apps, "touch /tmp/ipckeep-go; echo go", r"^go")
    wait_until("ipckeep done", lambda: shell(apps, "echo ipc=$(grep -c 'ipckeep: done' /tmp/ipckeep.out)",
                                             r"^ipc=(\d+)").group(1) == "1", 120)
    out = shell(apps, "cat /tmp/ipckeep.out; echo end-of-ipckeep", r"(?s)^LXTEST \w+ ipckeep_made.*?^end-of-ipckeep").group(0)
    results = dict((name, status) for status, name in re.findall(r"^LXTEST (PASS|FAIL) (\w+)$", out, re.M))
    assert len(results) == 8 and set(results.values()) == {"PASS"}, (results, out[-2000:])
    assert "ipckeep: done, 0 failed" in out, out[-2000:]


class Resp:
    """A Redis client speaking RESP over one connection (for the redis test)."""

    def __init__(self, port, timeout=60):
        self.s = socket.create_connection((HOST, port), timeout=timeout)
        self.f = self.s.makefile("rb")

    def send(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.s.sendall(out)

    def reply(self):
        line = self.f.readline()
        if not line:
            raise ConnectionError("redis closed the connection")
        kind, rest = line[:1], line[1:-2]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            raise AssertionError("redis error: " + rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self.f.read(n + 2)[:-2]
        if kind == b"*":
            return [self.reply() for _ in range(int(rest))]
        raise AssertionError("not RESP: %r" % line)

    def call(self, *args):
        self.send(*args)
        return self.reply()

    def close(self):
        self.f.close()
        self.s.close()


def redis_up(port):
    try:
        r = Resp(port, timeout=10)
        try:
            return r.call("PING") == "PONG"
        finally:
            r.close()
    except (OSError, AssertionError, ConnectionError):
        return False


def test_redis_serves_saves_from_a_forked_child_and_loads_its_dump(apps):
    """Redis 7 from Debian's source (apps/ports/redis, linked with lib/sock), unmodified:
    2000 keys of 1 KiB set in pipelines from the host and read back byte for byte, a
    counter and a list; BGSAVE (a forked child writes the dump while the server serves on,
    then renames it into place); SHUTDOWN without saving, a new redis-server that loads the
    dump, and every key there again."""
    start = ("cd /tmp && rm -f dump.rdb && (redis-server --port 6379 --bind 0.0.0.0 --protected-mode no "
             "--dir /tmp --save '' --appendonly no > /tmp/redis.log 2>&1 &); echo started-redis")
    shell(apps, start, r"^started-redis")
    wait_until("redis", lambda: redis_up(apps.port[6379]), 120)
    rng = random.Random(6379)
    values = {("key:%d" % i).encode(): bytes(rng.getrandbits(8) for _ in range(1024)) for i in range(2000)}
    r = Resp(apps.port[6379])
    try:
        items = list(values.items())
        for at in range(0, len(items), 100):  # pipelines of 100
            for k, v in items[at:at + 100]:
                r.send("SET", k, v)
            assert all(r.reply() == "OK" for _ in items[at:at + 100])
        assert r.call("INCRBY", "counter", 42) == 42 and r.call("RPUSH", "list", "a", "b", "c") == 3
        for at in range(0, len(items), 100):
            keys = [k for k, _ in items[at:at + 100]]
            assert r.call("MGET", *keys) == [values[k] for k in keys]
        assert r.call("BGSAVE") == "Background saving started"
        # the server answers while its child saves; then the save is reported done
        wait_until("bgsave", lambda: b"rdb_bgsave_in_progress:0" in r.call("INFO", "persistence") and
                   r.call("GET", "key:7") == values[b"key:7"], 120)
        info = r.call("INFO", "persistence")
        assert b"rdb_last_bgsave_status:ok" in info, info
        r.send("SHUTDOWN", "NOSAVE")
        with pytest.raises(ConnectionError):
            r.reply()  # it ends without answering
    finally:
        r.close()
    wait_until("redis gone", lambda: not redis_up(apps.port[6379]), 60)
    shell(apps, start.replace("rm -f dump.rdb && ", ""), r"^started-redis")
    wait_until("redis again", lambda: redis_up(apps.port[6379]), 120)
    r = Resp(apps.port[6379])
    try:
        assert r.call("DBSIZE") == 2002
        sample = [("key:%d" % i).encode() for i in range(0, 2000, 37)]
        assert r.call("MGET", *sample) == [values[k] for k in sample]
        assert r.call("GET", "counter") == b"42" and r.call("LRANGE", "list", 0, -1) == [b"a", b"b", b"c"]
        r.send("SHUTDOWN", "NOSAVE")
        with pytest.raises(ConnectionError):
            r.reply()
    finally:
        r.close()
    wait_until("redis gone", lambda: not redis_up(apps.port[6379]), 60)
    shell(apps, "rm -f /tmp/dump.rdb; echo cleaned-redis", r"^cleaned-redis")


def test_pm_killed_and_hung_keeps_every_process(apps):
    """pm (the process manager) is killed, then hangs: rs restarts it with its process table
    (kept memory) and the kernel makes the new pm the parent and the server of every Linux
    process. The applications serve on (a keep-alive connection through the kill; a hang
    stalls lighttpd's own calls to pm until rs notices, 3 s, longer than lighttpd keeps an
    idle connection, so new connections are checked after it), the shell forks and execs,
    and a process that ends afterwards is reaped by its parent."""
    ka = KeepAlivePinger(apps.port[80], apps.g)
    try:
        for i, (how, seen) in enumerate([("service kill pm", r"^rs: pm exited with status -9")] * RESTART_ROUNDS +
                                        [("service inject pm hang", r"^rs: pm hung: no heartbeat")] * HANG_ROUNDS):
            time.sleep(FAULT_SPACING if i else 0)
            if "hang" in how and not ka.stopping:
                answered, failed = ka.stop()
                assert failed is None and answered > 0, (answered, failed)
            mark = apps.g.mark()
            apps.g.type(how + "\r")
            apps.g.wait_for(seen, timeout=120, start=mark)
            m = apps.g.wait_for(r"^pm: restarted \(generation \d+\): (\d+) processes taken over, 0 had ended",
                                timeout=60, start=mark)
            assert int(m.group(1)) >= 5, m.group(0)  # rc, the shell, lighttpd, memcached, iperf, tcphash
            # fork, exec, exit and wait through the new pm: the shell's child runs and is reaped
            shell(apps, "ls /srv/www; echo pm-ok-$((6*7))", r"^pm-ok-42")
            assert tcp_tools.tcphash_small(HOST, apps.port[7000], 11)
            mc = tcp_tools.Memcached(HOST, apps.port[11211], timeout=30)
            assert mc.set("pm-key", b"v") and mc.get("pm-key") == b"v"
            mc.close()
            assert tcp_tools.http_get(HOST, apps.port[80], "/hello.txt", timeout=30)[0] == 200
    finally:
        ka.stop()
    out = apps.out()
    assert not re.search(r"rc: \w+ ended|killed by signal", out), out[-3000:]


def test_vfs_killed_and_hung_keeps_every_file(apps):
    """vfs (files, pipes, terminals, epoll) is killed, then hangs: rs restarts it and the new
    instance takes over its whole state (the kept section and heap, lib/axrt/keep.h). A file
    written before is there after, byte for byte; a shell pipeline started before (a writer
    through a pipe into a file) goes on writing, numbers in order; lighttpd's epoll set and
    its keep-alive connection serve on; the terminal takes typing again; memcached and
    tcphash answer."""
    shell(apps, "echo kept-$((6*7)) > /tmp/vfs-kept; (i=0; while [ $i -lt 100000 ]; do echo $i; i=$((i+1)); "
                "sleep 0.2; done) | cat > /tmp/vfs-ticks & echo started-ticks", r"^started-ticks")
    ka = KeepAlivePinger(apps.port[80], apps.g)

    def ticks():
        # (a copy: the pipeline appends meanwhile)
        m = shell(apps, "cp /tmp/vfs-ticks /tmp/vfs-snap; echo ticks=$(wc -l < /tmp/vfs-snap),"
                        "$(sort -u /tmp/vfs-snap | wc -l),$(tail -n 1 /tmp/vfs-snap)", r"^ticks=(\d+),(\d+),(\d+)")
        lines, unique, last = int(m.group(1)), int(m.group(2)), int(m.group(3))
        assert unique == lines and last == lines - 1, (lines, unique, last)  # 0..last, each once
        return lines

    try:
        before = ticks()
        for i, (how, seen) in enumerate([("service kill vfs", r"^rs: vfs exited with status -9")] * RESTART_ROUNDS +
                                        [("service inject vfs hang", r"^rs: vfs hung: no heartbeat")] * HANG_ROUNDS):
            time.sleep(FAULT_SPACING if i else 0)
            if "hang" in how and not ka.stopping:
                answered, failed = ka.stop()  # a hang stalls lighttpd's calls longer than its idle limit
                assert failed is None and answered > 0, (answered, failed)
            mark = apps.g.mark()
            apps.g.type(how + "\r")
            apps.g.wait_for(seen, timeout=120, start=mark)
            apps.g.wait_for(r"^vfs: took over the file system \(\d+ nodes, \d+ bytes\) and every open file",
                            timeout=60, start=mark)
            apps.g.wait_for(r"^console: the terminal is back \(a new vfs\)", timeout=60, start=mark)
            shell(apps, "cat /tmp/vfs-kept", r"^kept-42")
            after = ticks()
            assert after > before, (before, after)
            before = after
            assert tcp_tools.tcphash_small(HOST, apps.port[7000], 12)
            mc = tcp_tools.Memcached(HOST, apps.port[11211], timeout=30)
            assert mc.set("vfs-key", b"v") and mc.get("vfs-key") == b"v"
            mc.close()
            assert tcp_tools.http_get(HOST, apps.port[80], "/hello.txt", timeout=30)[0] == 200
        # the pipeline still runs: more numbers come, in order
        deadline = time.monotonic() + 60
        while ticks() <= before + 2:
            assert time.monotonic() < deadline, "the pipeline stopped after vfs came back"
            time.sleep(1)
    finally:
        ka.stop()
    out = apps.out()
    assert not re.search(r"rc: \w+ ended|killed by signal", out), out[-3000:]


def test_vfs_update_to_another_state_layout_is_refused_and_rolled_back(apps):
    """vfs.layout2 keeps its state in another layout (VFS_STATE_VERSION 2) and has no
    transfer function: the update is refused with a clear message, the old binary comes back
    and takes its own state over again, and nothing is lost (a file written before)."""
    shell(apps, "echo before-refusal > /tmp/vfs-refusal; echo wrote-$((40+2))", r"^wrote-42")
    mark = apps.g.mark()
    apps.g.type("service update vfs vfs.layout2\r")
    apps.g.wait_for(r"^vfs\.layout2: the kept state does not match this build \(no transfer function\): "
                    r"refusing the update", timeout=60, start=mark)
    apps.g.wait_for(r"^rs: update of vfs to vfs\.layout2 failed \(the new instance ended\)", timeout=60, start=mark)
    apps.g.wait_for(r"^vfs: took over the file system \(\d+ nodes, \d+ bytes\) and every open file", timeout=60,
                    start=mark)
    apps.g.wait_for(r"^console: the terminal is back", timeout=60, start=mark)
    shell(apps, "cat /tmp/vfs-refusal", r"^before-refusal")
    assert tcp_tools.http_get(HOST, apps.port[80], "/hello.txt", timeout=30)[0] == 200
    assert not re.search(r"^vfs\.layout2: took over", apps.g.output[mark:], re.M)


def test_tcp_update_to_another_state_layout_is_refused_and_keeps_every_connection(apps):
    """tcp.layout2 keeps its state in another layout (TCP_STATE_VERSION 4): the update is
    refused, and the old binary comes back and takes over the state its predecessor left at
    rest, lwIP's connections included: a keep-alive connection and a checked stream carry on."""
    ka = KeepAlivePinger(apps.port[80], apps.g)
    try:
        stream = CheckedStream(apps, 40 << 20, 46)
        stream.reach(stream.n // 8)
        mark = apps.g.mark()
        apps.g.type("service update tcp tcp.layout2\r")
        apps.g.wait_for(r"^tcp\.layout2: the kept state does not match this build \(no transfer function\): "
                        r"refusing the update", timeout=60, start=mark)
        apps.g.wait_for(r"^rs: update of tcp to tcp\.layout2 failed \(the new instance ended\)", timeout=60,
                        start=mark)
        apps.g.wait_for(r"^tcp: took over \d+ sockets and \d+ connections and listeners of lwIP", timeout=60,
                        start=mark)
        stream.check(300)
        assert tcp_tools.http_get(HOST, apps.port[80], "/hello.txt", timeout=30)[0] == 200
    finally:
        answered, failed = ka.stop()
    assert failed is None and answered > 0, (answered, failed, apps.out()[-3000:])
    assert not re.search(r"^tcp\.layout2: took over|^tcp: .*starting afresh", apps.g.output[mark:], re.M)


def service_builds(apps):
    """{name: build id} from `service list`."""
    mark = apps.g.mark()
    apps.g.type("service list\r")
    apps.g.wait_for(r"^tcp +running ", timeout=30, start=mark)
    time.sleep(0.5)
    text = apps.g.output[mark:].replace("axolotl> ", "")
    return dict(re.findall(r"^(\S+) +\S+ +0x[0-9a-f]+ +\S+ +\d+ +\S+ +([0-9a-f]{8})$", text, re.M))


def test_live_update_of_every_server_under_load(apps):
    """Every server is updated to its version 2 and back while tcphash streams 60 MiB and a
    keep-alive connection and a memcached connection stay open: each update commits (rs
    prints its stall), the new build says so and shows in `service list`, the stream arrives
    whole and the connections carry on, tcp's updates included (its new instance takes over
    lwIP's connections with the kept state)."""
    builds0 = service_builds(apps)
    ka = KeepAlivePinger(apps.port[80], apps.g)
    mc = tcp_tools.Memcached(HOST, apps.port[11211], timeout=60)
    stalls = {}
    try:
        assert mc.set("update-key", b"kept through live updates")
        stream = CheckedStream(apps, 60 << 20, 44)
        stream.reach(stream.n // 8)
        for _ in range(UPDATE_ROUNDS):  # (AX_UPDATE_ROUNDS=10 for the acceptance run)
            for binary in [v + ".v2" for v in UPDATABLE]:
                name = binary.split(".")[0]
                mark = apps.g.mark()
                apps.g.type(f"service update {name} {binary}\r")
                m = apps.g.wait_for(r"^rs: %s updated to %s: \S+ replaced it as on a restart \(stall ([\d.]+) ms\)$"
                                    % (name, re.escape(binary)), timeout=120, start=mark)
                stalls.setdefault(name, []).append(float(m.group(1)))
                apps.g.wait_for(r"^%s: took over \(live update\) \(build %s\)$"
                                % (re.escape(binary), "v2" if "." in binary else "v1"), timeout=60, start=mark)
                apps.g.wait_for(r"^service: %s updated to %s$" % (name, re.escape(binary)), timeout=60, start=mark)
                builds = service_builds(apps)
                assert builds[name] != builds0[name], (name, builds, builds0)
            # and back, all at once
            mark = apps.g.mark()
            apps.g.type("service update all\r")
            apps.g.wait_for(r"^service: update all: %d updated, 0 skipped, 0 failed$" % len(UPDATABLE), timeout=300,
                            start=mark)
            for name in UPDATABLE:
                m = re.search(r"^rs: %s updated to %s: \S+ replaced it as on a restart \(stall ([\d.]+) ms\)$"
                              % (name, name), apps.g.output[mark:].replace("axolotl> ", ""), re.M)
                assert m, apps.out()[-3000:]
                stalls[name].append(float(m.group(1)))
            # ds went first: ip, after it, still finds its lease there (each server puts its
            # keys again into a restarted ds; ip has dozens), else its address is gone and tcp
            # drops connections
            assert re.search(r"^ip: e1000: restored 10\.0\.2\.15/24 .* from ds$", apps.g.output[mark:], re.M), \
                apps.g.output[mark:][-6000:]
        assert not re.search(r"^tcp: .*was not reattached", apps.g.output, re.M)
        assert mc.get("update-key") == b"kept through live updates"
        stream.check(300)
        assert tcp_tools.http_get(HOST, apps.port[80], "/hello.txt", timeout=30)[0] == 200
    finally:
        answered, failed = ka.stop()
        mc.close()
    assert failed is None and answered > 0, (answered, failed, apps.out()[-3000:])
    assert service_builds(apps) == builds0  # back on version 1 everywhere
    out = apps.out()
    assert not re.search(r"rc: \w+ ended|killed by signal|rolled back|crashed", out.split("service update e1000")[-1]), \
        out[-3000:]
    note("live update of %s to v2 and back (%d rounds) under a 60 MiB stream, keep-alive HTTP (%d requests "
         "answered) and memcached: stalls %s ms" % (", ".join(UPDATABLE), UPDATE_ROUNDS, answered,
                                      "; ".join(f"{k} {' '.join(f'{v:.1f}' for v in vs)}" for k, vs in stalls.items())))


def perf(apps):
    """The console's perf: ({counter: growth since the last perf}, {kernel call: calls})."""
    mark = apps.g.mark()
    apps.g.type("perf\r")
    apps.g.wait_for(r"\(wait and hold in TSC cycles", timeout=30, start=mark)
    text = apps.g.output[mark:].replace("axolotl> ", "")
    counters = {k: int(v) for k, v, _ in re.findall(r"^  ([a-z_]+) +(\d+) +(\d+)$", text, re.M)}
    calls = {k: int(n) for k, n in re.findall(r"^  ([a-z_]+) +(\d+) +\d+ +\d+ +\d+$", text, re.M)}
    return counters, calls


def test_perf_and_proc_kstat_count_the_kernels_work(apps):
    """The kernel's activity counters (console perf, /proc/axolotl/kstat, /proc/stat): a
    keep-alive load shows up as switches, wake-ups, device interrupts and kernel calls, and
    the servers read the clock without a kernel call (KC_TIME was 110 calls per request)."""
    perf(apps)
    with ThreadPoolExecutor(4) as ex:
        answered = sum(ex.map(lambda _: keepalive_connection(apps.port[80]), range(10)))
    assert answered == 100
    counters, calls = perf(apps)
    for k in ("kcalls", "switches", "as_switches", "wakes", "blocks", "device_irqs", "wait_calls"):
        assert counters.get(k, 0) > 0, (k, counters)
    assert counters["wakes"] >= counters["blocks"] // 2, counters
    assert calls.get("wait", 0) > 0 and calls.get("receive", 0) > 0, calls
    assert calls.get("time", 0) < answered, calls  # one every few requests at most
    # the same counters as a file, for programs (make bench reads it around each load)
    mark = apps.g.mark()
    shell(apps, "cat /proc/axolotl/kstat /proc/stat /proc/axolotl/threads; echo kstat-done", r"^kstat-done")
    text = apps.g.output[mark:]
    kst = dict(re.findall(r"^([a-z_]+) (\d+)$", text, re.M))
    for k in ("kcalls", "switches", "ipi_resched", "klock_contended", "idle_cycles", "tsc", "ctxt", "intr"):
        assert k in kst, (k, text[-3000:])
    assert int(kst["ctxt"]) >= int(kst["switches"]), kst  # /proc/stat was read after
    assert re.search(r"^kcall\.wait \d+ \d+ \d+$", text, re.M), text[-3000:]
    # the Linux calls by number: read (0) by cat at least, futex (202) by lighttpd's library
    # sleeping on its wake word; together no more than every Linux call counted before
    lx = {int(n): int(v) for n, v in re.findall(r"^lx\.(\d+) (\d+)$", text, re.M)}
    assert lx.get(0, 0) > 0 and lx.get(202, 0) > 0, lx
    assert sum(lx.values()) <= int(kst["linux_calls"]) + 1000, (lx, kst["linux_calls"])
    # the lock's hold is the time it was held: within the CPUs' time since boot (the TSC
    # summed over them), which counting a blocked call's sleep as its hold overran many times
    assert 0 < int(kst["klock_hold_cycles"]) <= int(kst["tsc"]), kst
    holds = re.findall(r"^kcall\.[a-z_]+ \d+ \d+ (\d+)$", text, re.M)
    assert sum(int(h) for h in holds) <= int(kst["klock_hold_cycles"]), (holds, kst)
    # every thread, with how often it ran and its kernel calls and notifies: the servers on
    # the requests' path ran and rang their peers, and each process's address space is named
    rows = re.findall(r"^([0-9a-f]+) +(\d+)p? +([a-z]+) +(\d+) +(\d+) +(\d+) +(\d+) +([0-9a-f]+) +(\S+)$",
                      text, re.M)
    by = {}
    for ep, cpu, state, runs, ms, kcalls, notifies, space, name in rows:
        by.setdefault(name, []).append((int(runs), state, int(space, 16)))
        assert int(notifies) <= int(kcalls), (name, kcalls, notifies)
    for name in ("e1000", "ip", "tcp", "syscall", "vfs", "lighttpd"):
        assert name in by and max(r for r, _, _ in by[name]) >= 10, (name, rows)
    rang = {name: sum(int(r[6]) for r in rows if r[8] == name) for name in ("e1000", "ip", "tcp")}
    assert all(v > 0 for v in rang.values()), rang  # the stack's servers kick each other
    assert all(space for v in by.values() for _, _, space in v), rows
    assert len({by[n][0][2] for n in ("ip", "tcp", "vfs")}) == 3, by  # one address space each
    assert by["vfs"][0][1] == "run", by["vfs"]  # vfs made the text: it ran then
    mark = apps.g.mark()
    apps.g.type("threads\r")
    m = apps.g.wait_for(r"^[0-9a-f]+ +\d+p? +run +\d+ +\d+ +\d+ +\d+ +[0-9a-f]+ +console$", timeout=30, start=mark)
    assert m, "the console's threads lists itself running"


def test_the_switch_trace_says_who_ran_after_whom_and_who_woke_it(apps):
    """/proc/axolotl/switches (the kernel's switch trace, KI_SWTRACE) after HTTP requests on
    connections of their own: each CPU's switches chain (the process switched to is the
    next one switched from), sequence numbers and each CPU's TSC grow, lighttpd gives the
    CPU up in accept4 (Linux call 288), the stack's servers are woken by their peers and
    the NIC's driver by its interrupt; tools/bench/switches.py counts them per request."""
    for _ in range(5):
        status, body = tcp_tools.http_get(HOST, apps.port[80], "/hello.txt", timeout=60)
        assert status == 200, status
    mark = apps.g.mark()
    shell(apps, "cat /proc/axolotl/switches; echo switches-done", r"^switches-done")
    text = apps.g.output[mark:]
    spec = importlib.util.spec_from_file_location("switches", os.path.join(ROOT, "tools", "bench", "switches.py"))
    sw = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sw)
    evs = sw.parse(text)
    assert len(evs) >= 200, text[-3000:]
    last = {}
    for i, (seq, tsc, cpu, frm, to, why, waker) in enumerate(evs):
        if i:
            assert seq == evs[i - 1][0] + 1, evs[i - 1:i + 1]
        if cpu in last:
            assert frm == last[cpu][1] and tsc >= last[cpu][0], (last[cpu], evs[i])
        last[cpu] = (tsc, to)
    whys = Counter((e[3], e[5]) for e in evs)
    assert whys[("lighttpd", "lx.288")] >= 1, whys
    woke = Counter((e[4], e[6]) for e in evs)
    assert woke[("ip", "e1000")] + woke[("ip", "tcp")] >= 5, woke
    assert woke[("tcp", "ip")] >= 5 and woke[("e1000", "irq")] >= 1, woke
    units, to, _, _ = sw.summarize(evs, "lighttpd:lx.288")
    assert units >= 1 and to["ip"] / units >= 2, (units, to)


def netstat_counter(apps, service, name):
    """One counter of one network service, from the console's netstat."""
    mark = apps.g.mark()
    apps.g.type("netstat\r")
    apps.g.wait_for(r"^(?:axolotl> )?%s:$|netstat: no network" % apps.driver, timeout=30, start=mark)
    m = apps.g.wait_for(r"^%s:\n(?:[ \t]+.*\n)*?[ \t]+%s (\d+)$" % (service, name), timeout=30, start=mark)
    return int(m.group(1))


def test_pf_flow_table_passes_known_flows_and_obeys_rule_changes(apps):
    """ip passes the packets of a flow pf has passed without asking it again (pf's flow
    table, lib/net/pf_flow.h), and a rule change takes effect at once on such a flow: a
    block on port 80 stops a keep-alive connection's next request at pf, and a flush lets
    TCP's retransmission through. The connection's FIN passes at once too, pf told by a note.
    A new connection's SYN-ACK passes without asking: pf judged it with the SYN."""
    def request(s):
        s.sendall(b"GET /hello.txt HTTP/1.1\r\nHost: axolotl\r\n\r\n")
        data = b""
        while b"hello" not in data.lower():
            got = s.recv(65536)
            assert got, "connection closed"
            data += got
        return data

    with socket.create_connection((HOST, apps.port[80]), timeout=120) as s:
        request(s)
        fast = netstat_counter(apps, "ip", "pf_fast")
        for _ in range(20):
            request(s)
        assert netstat_counter(apps, "ip", "pf_fast") >= fast + 20  # at least one packet a request
        blocked = netstat_counter(apps, "pf", "blocked_in")
        apps.monitor("pf add block in proto tcp to any port 80", r"^pf: rule \d+ added$")
        try:
            s.sendall(b"GET /hello.txt HTTP/1.1\r\nHost: axolotl\r\n\r\n")
            wait_until("pf blocking the request", lambda: netstat_counter(apps, "pf", "blocked_in") > blocked, 60)
        finally:
            apps.monitor("pf flush", r"^pf: rules flushed")
        data = b""
        while b"hello" not in data.lower():  # TCP sends the request again; now it passes
            got = s.recv(65536)
            assert got, "connection closed"
            data += got
        request(s)
        noted, notes = netstat_counter(apps, "ip", "pf_noted"), netstat_counter(apps, "pf", "notes")
    # our FIN (and lighttpd's answer) close a flow pf passed a moment ago: ip passes them at
    # once and tells pf with a note, which pf counts without answering
    wait_until("ip passing the closing FIN by a note to pf",
               lambda: netstat_counter(apps, "ip", "pf_noted") > noted, 60)
    synack = netstat_counter(apps, "ip", "pf_synack")
    for _ in range(3):
        with socket.create_connection((HOST, apps.port[80]), timeout=120) as s:
            request(s)  # new connections are served as before; their SYN has pf read the notes
    wait_until("pf hearing the note", lambda: netstat_counter(apps, "pf", "notes") > notes, 60)
    # pf judged each SYN's answer with it (no rules here: it passes), so ip passed the SYN-ACKs
    # without asking (a TTL of 1 s: on a slow host one may have had to ask)
    assert netstat_counter(apps, "ip", "pf_synack") >= synack + 2


def test_loopback_connection_with_both_windows_full_leaves_tcp_asleep(apps):
    """`tcptest stall`: both directions of a connection over 127.0.0.1 filled and left
    unread, so both receive windows close and both ends probe. lwIP would answer each of the
    other's ACKs with its own for ever (the ACK war that held a CPU in tcptest's bulk test);
    tcp lets one such ACK through per 500 ms per connection and drops the rest (its oow_acks
    counter), so while the windows stay closed tcp sends a few segments a second, not
    thousands. Then everything is read, every byte checked."""
    shell(apps, "rm -f /tmp/tcptest.go; tcptest stall > /tmp/stall.out 2>&1 & P=$!; echo started $P", r"^started \d+")
    shell(apps, "while ! grep -q 'both directions full' /tmp/stall.out; do sleep 1; done; cat /tmp/stall.out",
          r"^tcptest: both directions full", timeout=180)
    try:
        wait_until("tcp dropping an ACK war's ACKs (oow_acks >= 2)",
                   lambda: apps.tcp_counters().get("oow_acks", 0) >= 2, 120)
        first = apps.tcp_counters()
        time.sleep(5)
        second = apps.tcp_counters()
        sent = (second["seg_out"] - first["seg_out"]) % 65536  # (lwIP's counters are 16 bits)
        # persist probes (backing off), their answers, one war ACK per 500 ms each way:
        # tens. The war itself: thousands a second, even under TCG.
        assert sent < 400, (sent, first, second)
        assert second["oow_acks"] > first["oow_acks"], (first, second)
    finally:
        shell(apps, "touch /tmp/tcptest.go; wait $P; cat /tmp/stall.out", r"^tcptest: \d+ passed, \d+ failed", timeout=180)
    out = apps.out()
    assert re.search(r"^TCPTEST PASS stalled_both_ways_delivered$", out, re.M), out[-3000:]


def test_more_vcpus_than_host_cores_still_serve():
    """Four vCPUs (on CI's two cores, more than the host has): the kernel lock's waiters
    halt instead of spinning behind a descheduled vCPU, so the applications serve as with
    two (a ticket lock moved 6 Mbit/s here). Correctness only: make bench measures speed."""
    for a in boot_apps(sysconf_variants.default(), "tcp-apps-smp4", smp=4):
        with ThreadPoolExecutor(8) as ex:
            answered = sum(ex.map(lambda _: keepalive_connection(a.port[80]), range(32)))
        assert answered == 320
        r = subprocess.run(["iperf", "-c", HOST, "-p", str(a.port[5001]), "-t", "3", "-f", "m"],
                           capture_output=True, text=True, timeout=90)
        rate = tcp_tools.iperf_rate(r.stdout)
        assert r.returncode == 0 and rate and rate > 0, (r.stdout[-2000:], r.stderr[-2000:])
        note(f"iperf with 4 vCPUs: {rate / 1e6:.2f} Mbit/s")
        assert not re.search(r"killed by signal|rc: \w+ ended", a.out()), a.out()[-3000:]


def service_rows(apps):
    """{name: (state, endpoint, restarts)} of every configured service, from `service list`."""
    names = re.findall(r"^service (\S+)", sysconf_variants.default(), re.M)
    mark = apps.g.mark()
    apps.g.type("service list\r")
    rows = {}
    for name in names:
        m = apps.g.wait_for(r"^%s +(\S+) +(\S+) +\S+ +(\d+) " % re.escape(name), timeout=60, start=mark)
        rows[name] = (m.group(1), m.group(2), int(m.group(3)))
    return rows


def test_rs_hang_is_noticed_by_the_kernel_and_rs_restarted(apps):
    """rs hangs (`service inject rs hang`: it spins and stops beating): the kernel's watchdog
    on the root (KC_ALIVE, kernel/proc/root.c) sees no beat for 5 s while rs had the CPU,
    logs it, kills rs and starts it again, and the new rs adopts every service as after a
    crash. A checked stream runs through the hang; the spinning rs holds a vCPU at the top
    priority until then, and what waits behind it there can stall past lighttpd's 5 s
    keep-alive idle limit, so (as for pm's hang) the keep-alive connection is checked up to
    the hang and new ones after it. `service list` answers and no service restarted."""
    before = service_rows(apps)
    # every service runs, but a NIC driver whose device this machine lacks (optional: absent)
    running = [name for name, (state, _, _) in before.items() if state == "running"]
    assert all(state in ("running", "absent") for state, _, _ in before.values()), before
    ka = KeepAlivePinger(apps.port[80], apps.g)
    try:
        stream = CheckedStream(apps, 80 << 20, 35)
        stream.reach(stream.n // 8)
        answered, failed = ka.stop()
        assert failed is None and answered > 0, (answered, failed)
        for _ in range(HANG_ROUNDS):
            mark = apps.g.mark()
            apps.g.type("service inject rs hang\r")
            apps.g.wait_for(r"^rs: injected fault: hanging until the kernel's watchdog ends us", timeout=60,
                            start=mark)
            m = apps.g.wait_for(r"rs hung \(no heartbeat for (\d+) ms\): restarting it", timeout=120, start=mark)
            assert int(m.group(1)) >= 5000, m.group(0)
            apps.g.wait_for(r"rs died: started again as \S+ \(restart \d+\), \d+ handles and its children handed over",
                            timeout=60, start=mark)
            m = apps.g.wait_for(r"^rs: restarted \(generation \d+\): (\d+) services adopted, 0 had ended",
                                timeout=60, start=mark)
            assert int(m.group(1)) == len(running), m.group(0)
        stream.check(300)
        assert keepalive_connection(apps.port[80]) == 10
        assert tcp_tools.tcphash_small(HOST, apps.port[7000], 13)
        mc = tcp_tools.Memcached(HOST, apps.port[11211], timeout=30)
        assert mc.set("rs-hang-key", b"v") and mc.get("rs-hang-key") == b"v"
        mc.close()
        # the same instances run on: the new rs adopted them, nobody was restarted
        assert service_rows(apps) == before
    finally:
        ka.stop()
    out = apps.out()
    assert not re.search(r"rc: \w+ ended|killed by signal", out), out[-3000:]
    note(f"rs hung {HANG_ROUNDS}x under an 80 MiB stream: the kernel's watchdog restarted it, every "
         f"service adopted, none restarted")


def test_a_transport_that_stops_reading_leaves_ips_rx_pool_to_the_others():
    """udp alive but no longer reading ip's channel (`service inject udp deaf`, what a code
    fault did in the fault campaign): 2000 datagrams from the host, more than ip's 512 RX
    buffers, must not take the pool. ip holds at most a quarter of it for one transport and
    drops the rest (udp_rx_full); TCP segments still reach tcp and new connections are
    served (they once were not: the applications waited behind the spinning udp while the
    other CPU slept). udp's heartbeat beats on, so only ip sees it: its channel stands still
    with datagrams queued, ip tells rs, and rs restarts udp by itself (it once took a manual
    restart); the restart gives the buffers back and new connections work."""
    udp_port = free_port(socket.SOCK_DGRAM)
    gen = boot_apps(sysconf_variants.default(), "udp-deaf", extra_fwds=[("udp", udp_port, 9999)])
    a = next(gen)
    try:
        mark = a.g.mark()
        a.monitor("service inject udp deaf", r"udp: injected fault: ip's channel is no longer read")
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            for i in range(2000):
                s.sendto(b"%06d" % i + b"x" * 58, (HOST, udp_port))
                if i % 100 == 99:
                    time.sleep(0.05)  # slirp queues a bounded amount; let the guest take it
        # new connections are served meanwhile: the deaf udp spins on its unread channel, and
        # the applications queued behind it on its CPU are taken by the other (steal)
        wait_until("tcphash while udp is deaf", lambda: tcp_tools.tcphash_small(HOST, a.port[7000], 1, timeout=10), 90)
        a.g.wait_for(r"^rs: udp stuck: no progress on ip's channel ip/udp\.in for \d+ ms", timeout=120, start=mark)
        a.g.wait_for(r"^rs: started udp as", timeout=120, start=mark)
        a.g.wait_for(r"ip: attached to udp \(pool", timeout=120, start=mark)
        after = {}
        for _ in range(10):  # (a line of the restart's may cut into netstat's table: read it again)
            after = ip_counters(a)
            if "udp_rx_full" in after:
                break
        assert after.get("udp_rx_full", 0) > 0, after
        out = a.out()[mark:]
        assert not re.search(r"^rs: (ip|tcp) stuck", out, re.M), out[-3000:]
        wait_until("tcphash after udp's restart",
                   lambda: tcp_tools.tcphash_small(HOST, a.port[7000], 1, timeout=10), 60)
        wait_until("lighttpd after udp's restart",
                   lambda: tcp_tools.http_get(HOST, a.port[80], "/hello.txt", timeout=10)[0] == 200, 60)
    finally:
        gen.close()
