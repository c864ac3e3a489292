"""The host-side loads of the benchmark suite (bench.py) and the parsers of their outputs.

Each load runs against an address (host, port): 127.0.0.1 and a forwarded port with QEMU's
restricted user networking, the guest's own address on a tap device in the suite's network
namespace. It is bounded in time and count, and returns one number (bigger is better) or
raises LoadError. The parsers are pure functions, checked by tests/bench/test_parsers.py.
"""
import re
import socket
import subprocess
import threading
import time


class LoadError(Exception):
    pass


# ---- parsers ----

# iperf 2's rate on a report line (`... sec  12.5 MBytes  20.9 Mbits/sec`): value, unit prefix
IPERF_RATE = r"sec\s+[\d.]+\s+\w?Bytes\s+([\d.]+)\s+([KMG]?)bits/sec"
_PREFIX = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9}


def iperf_rate(text):
    """The throughput iperf 2 reports last, in bits per second: its summary line
    `[  1] 0.0000-5.0100 sec  12.5 MBytes  20.9 Mbits/sec` (None if there is none)."""
    rates = re.findall(IPERF_RATE, text)
    if not rates:
        return None
    value, unit = rates[-1]
    return float(value) * _PREFIX[unit]


def iperf_udp_server_report(log, client_port):
    """(bits/s received, datagrams lost in percent) from the guest's iperf 2 UDP server log:
    the report after the last `connected with ADDR port CLIENT_PORT`, a line like
    `[  1] 0.00-4.00 sec  21.2 MBytes  44.4 Mbits/sec   0.121 ms 1893/17007 (11%)`; None if
    that connection has no report (yet)."""
    starts = [m.end() for m in re.finditer(r"connected with \S+ port %d\b" % client_port, log)]
    if not starts:
        return None
    m = re.search(IPERF_RATE + r"\s+[\d.]+\s+ms\s+(\d+)/\s*(\d+)", log[starts[-1]:])
    if not m:
        return None
    lost, total = int(m.group(3)), int(m.group(4))
    if not total:
        return None
    return float(m.group(1)) * _PREFIX[m.group(2)], 100.0 * lost / total


def netmicro_results(text):
    """{name: {"n", "cycles", "ns"}} from netmicro's lines (tools/bench/netmicro.c); raises
    LoadError when it says FAILED or did not finish."""
    if re.search(r"^netmicro: FAILED", text, re.M) or not re.search(r"^netmicro: done$", text, re.M):
        raise LoadError("netmicro failed: " + " | ".join(re.findall(r"^netmicro: .*$", text, re.M))[-500:])
    return {m[0]: {"n": int(m[1]), "cycles": int(m[2]), "ns": int(m[3])}
            for m in re.findall(r"^netmicro: (\w+) n=(\d+) cycles=(\d+) ns=(\d+)$", text, re.M)}


def http_response_length(head):
    """A response head's Content-Length (bytes), or None when it has none or is not an
    HTTP/1.x 200."""
    if not re.match(rb"HTTP/1\.[01] 200 ", head):
        return None
    m = re.search(rb"^content-length:\s*(\d+)\s*$", head, re.I | re.M)
    return int(m.group(1)) if m else None


def memcached_reply_ok(kind, data):
    """Whether data is a complete memcached text-protocol reply to a `set` (STORED) or a
    `get` (VALUE ... END with the announced byte count), and for a get the value."""
    if kind == "set":
        return data == b"STORED\r\n", None
    m = re.match(rb"VALUE \S+ \d+ (\d+)\r\n", data)
    if not m:
        return False, None
    n, start = int(m.group(1)), m.end()
    ok = len(data) == start + n + 7 and data[start + n:] == b"\r\nEND\r\n"
    return ok, data[start:start + n] if ok else None


# a counter line of /proc/axolotl/kstat (`switches 1234`), and a kernel call's
# (`kcall.send CALLS WAIT_CYCLES HOLD_CYCLES`); the lines around them (the shell's echo of
# the command, its prompt, log lines) match neither
KSTAT_LINE = r"^([a-z_][a-z0-9_]*) (\d+)$"
KCALL_LINE = r"^(kcall\.[a-z0-9_]+) (\d+) (\d+) (\d+)$"
LXCALL_LINE = r"^lx\.(\d+) (\d+)$"  # Linux calls by number (`lx.232 50`)
# where the host's C headers name the x86-64 Linux calls (for `lx.NAME`; else the number)
UNISTD_64 = "/usr/include/x86_64-linux-gnu/asm/unistd_64.h"
# the `cpu ` line of Linux's /proc/stat in USER_HZ ticks: user nice system idle iowait irq
# softirq steal (guest and guest_nice, already in user and nice, follow)
LINUX_CPU_BUSY = (0, 1, 2, 5, 6, 7)
LINUX_CPU_IDLE = (3, 4)
# Linux's ticks in guest instructions under -icount shift=0: USER_HZ 100, one tick is
# 10 ms of the guest's clock, which advances 1 ns per instruction
LINUX_TICK_INSNS = 10 ** 7


def linux_call_names(path=UNISTD_64):
    """{number: name} of the x86-64 Linux calls from the host's headers ({} without them)."""
    try:
        with open(path) as f:
            return {int(n): name for name, n in re.findall(r"^#define __NR_(\w+) (\d+)$", f.read(), re.M)}
    except OSError:
        return {}


_LX_NAMES = None


def kstat_counters(text):
    """{name: total} from `cat /proc/axolotl/kstat` (lib/axrt/kstat_text.c): every
    `NAME VALUE` line, (calls, wait cycles, hold cycles) for each `kcall.NAME ...` line, and
    `lx.NAME` (the call's name from the host's headers, else its number) for each Linux
    call's `lx.NR COUNT` line; raises LoadError when there is no counter at all."""
    global _LX_NAMES
    if _LX_NAMES is None:
        _LX_NAMES = linux_call_names()
    c = {m[0]: int(m[1]) for m in re.findall(KSTAT_LINE, text, re.M)}
    c.update({m[0]: (int(m[1]), int(m[2]), int(m[3])) for m in re.findall(KCALL_LINE, text, re.M)})
    c.update({"lx." + _LX_NAMES.get(int(m[0]), m[0]): int(m[1]) for m in re.findall(LXCALL_LINE, text, re.M)})
    if not c:
        raise LoadError("no kernel counters in: " + text[-300:])
    return c


THREAD_LINE = r"^[0-9a-f]+ +\d+p? +[a-z]+ +(\d+) +\d+ +(\d+) +(\d+) +[0-9a-f]+ +(\S+)$"


def threads_counters(text):
    """{"runs.NAME": times switched to, "kcalls.NAME": kernel calls made, "notifies.NAME":
    KC_NOTIFYs made} from `cat /proc/axolotl/threads` (lib/axrt/kstat_text.c), summed over
    each process name's threads (the four memcached workers are one line); {} when the text
    has no thread line."""
    c = {}
    for runs, kcalls, notifies, name in re.findall(THREAD_LINE, text, re.M):
        for k, v in (("runs.", runs), ("kcalls.", kcalls), ("notifies.", notifies)):
            c[k + name] = c.get(k + name, 0) + int(v)
    return c


def top_runs(unit_counts, n=8, what="runs."):
    """The n processes with the most of `what` per unit of work (runs: switched to;
    notifies: KC_NOTIFYs made): [[name, count], ...] from per_unit's `WHAT.NAME` entries."""
    runs = [[k[len(what):], v] for k, v in unit_counts.items() if k.startswith(what) and v > 0]
    return sorted(runs, key=lambda c: -c[1])[:n]


def linux_stat_counters(text):
    """{ctxt, intr, busy_ticks, idle_ticks} from Linux's `cat /proc/stat`: context switches,
    interrupts (intr's first number, their total), and the `cpu ` line's ticks (USER_HZ)
    busy (user, nice, system, irq, softirq, steal) and idle (idle, iowait); raises LoadError
    when a line is missing."""
    ctxt = re.search(r"^ctxt (\d+)$", text, re.M)
    intr = re.search(r"^intr (\d+)", text, re.M)
    cpu = re.search(r"^cpu +(\d+(?: \d+){7,})$", text, re.M)
    if not (ctxt and intr and cpu):
        raise LoadError("no ctxt, intr or cpu line in: " + text[-300:])
    ticks = [int(x) for x in cpu.group(1).split()]
    return {"ctxt": int(ctxt.group(1)), "intr": int(intr.group(1)),
            "busy_ticks": sum(ticks[i] for i in LINUX_CPU_BUSY), "idle_ticks": sum(ticks[i] for i in LINUX_CPU_IDLE)}


def work_units(work, value, seconds):
    """How many units of work ("request", "op" or "MiB") a load did: its rate value (req/s,
    ops/s, or Mbit/s for MiB) over seconds."""
    return value * 1e6 / 8 / 2 ** 20 * seconds if work == "MiB" else value * seconds


def per_unit(before, after, units):
    """Every counter's growth from the reading before to the one after, per unit of work:
    {name: delta / units}, a list for a kernel call's (calls, wait, hold). A counter
    missing from either reading (a log line cut through it) is left out."""
    def d(a, b):
        return (a - b) / units
    return {k: [d(a, b) for a, b in zip(after[k], before[k])] if isinstance(after[k], tuple) else d(after[k], before[k])
            for k in after if k in before}


def top_kcalls(unit_counts, n=6):
    """The n kernel calls made most per unit of work: [[name, calls], ...] from per_unit's
    `kcall.NAME` entries (`linux` is all Linux system calls together)."""
    calls = [[k[len("kcall."):], v[0]] for k, v in unit_counts.items() if k.startswith("kcall.")]
    return sorted(calls, key=lambda c: -c[1])[:n]


def top_lx_calls(unit_counts, n=6):
    """The n Linux calls that entered the kernel most per unit of work: [[name, calls], ...]
    from per_unit's `lx.NAME` entries."""
    calls = [[k[len("lx."):], v] for k, v in unit_counts.items() if k.startswith("lx.") and v > 0]
    return sorted(calls, key=lambda c: -c[1])[:n]


def guest_instructions(before, after):
    """Guest instructions between two readings of an -icount boot (shift=0: one TSC tick or
    one nanosecond per instruction), idle excluded; None without the counters. Axolotl's
    (one vCPU): TSC cycles less idle cycles; Linux's: busy ticks, 10^7 instructions each."""
    if all(k in r for r in (before, after) for k in ("tsc", "idle_cycles")):
        return (after["tsc"] - before["tsc"]) - (after["idle_cycles"] - before["idle_cycles"])
    if all("busy_ticks" in r for r in (before, after)):
        return (after["busy_ticks"] - before["busy_ticks"]) * LINUX_TICK_INSNS
    return None


def stats(values):
    """median, min, max of a non-empty list."""
    v = sorted(values)
    n = len(v)
    med = v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2
    return {"median": med, "min": v[0], "max": v[-1], "n": n}


# ---- loads ----

def _iperf_client(addr, seconds, *more):
    """Host iperf 2's client against the guest's server at addr for `seconds` (more: its
    other options): the finished process, output captured."""
    cmd = ["iperf", "-c", addr[0], "-p", str(addr[1]), "-t", str(seconds), "-f", "m"] + list(more)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 60)


def iperf(addr, seconds, reverse=False):
    """Host iperf 2 against the guest's TCP server for `seconds`: bits/s."""
    r = _iperf_client(addr, seconds, *(["-R"] if reverse else []))
    rate = iperf_rate(r.stdout)
    if r.returncode != 0 or rate is None:
        raise LoadError(f"iperf{' -R' if reverse else ''}: exit {r.returncode}: {(r.stdout + r.stderr)[-500:]}")
    return rate


def iperf_udp_send(addr, offered_bps, seconds):
    """Host iperf 2 sending UDP to the guest's UDP server at offered_bps for `seconds`: the
    client's local port, by which iperf_udp_server_report finds the server's report. (The
    report is read from the guest's log: with restrict=on QEMU's user networking drops
    every UDP datagram from the guest, the server's acknowledgement too.)"""
    r = _iperf_client(addr, seconds, "-u", "-b", str(int(offered_bps)))
    m = re.search(r"local \S+ port (\d+) connected", r.stdout)
    if r.returncode != 0 or not m or not re.search(r"Sent \d+ datagrams", r.stdout):
        raise LoadError(f"iperf -u: exit {r.returncode}: {(r.stdout + r.stderr)[-500:]}")
    return int(m.group(1))


def _recv_response(s, buf):
    """One HTTP response from s (buf: bytes already read): (body length, rest)."""
    while b"\r\n\r\n" not in buf:
        got = s.recv(65536)
        if not got:
            raise LoadError("connection closed before the response head")
        buf += got
    head, _, buf = buf.partition(b"\r\n\r\n")
    n = http_response_length(head)
    if n is None:
        raise LoadError("bad response: %r" % head[:80])
    while len(buf) < n:
        got = s.recv(65536)
        if not got:
            raise LoadError("connection closed in a body")
        buf += got
    return n, buf[n:]


class Lost(Exception):
    """A connection QEMU's forward accepted on the host but never opened to the guest (its
    user networking listens with a backlog of 1; a busy guest leaves its main loop little
    host CPU): no byte came back. Counted, not a failure (tests/system/test_tcp_apps.py
    sees the same)."""


def _clients(what, conns, seconds, timeout, first_timeout, lost, connection):
    """`conns` client threads, each calling connection(i, deadline, done, opened) again and
    again until `seconds` have passed (the one in progress finishes): completed operations
    (done) per second. A connection that raises Lost is counted in `lost` and made again;
    any other failure fails the load, and so do lost connections beyond a tenth of all
    made. what: the load's name in errors."""
    deadline = time.monotonic() + seconds
    done = [0] * conns
    opened = [0] * conns
    errors = []
    lost = [] if lost is None else lost

    def client(i):
        # many clients start over a second rather than at once: QEMU's forward accepts one
        # connection at a time (its listen backlog is 1), and a burst of 128 connects waits
        # there for SYN retransmissions on either guest
        if conns > 16:
            time.sleep(i / conns)
        try:
            while time.monotonic() < deadline:
                try:
                    connection(i, deadline, done, opened)
                except Lost as e:
                    lost.append(str(e))
        except (OSError, LoadError) as e:
            errors.append(repr(e))

    t0 = time.monotonic()
    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(conns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(seconds + timeout * 2 + first_timeout)
    took = time.monotonic() - t0
    if errors:
        raise LoadError(f"{what}: {len(errors)} clients failed: {errors[0]}")
    if len(lost) * 10 > max(sum(opened), 1):
        raise LoadError(f"{what}: {len(lost)} of {sum(opened)} connections lost")
    return sum(done) / took


def http(addr, path, conns, per_conn, seconds, timeout=30, lost=None, first_timeout=10):
    """`conns` clients, each opening connections that carry `per_conn` HTTP/1.1 GETs of
    path, for `seconds` (the connection in progress finishes): completed requests per
    second. A connection that answers nothing within first_timeout is lost (appended to
    `lost`); any other failed request fails the load, and so do lost connections beyond
    a tenth of all."""
    def connection(i, deadline, done, opened):
        with socket.create_connection(addr, timeout=first_timeout) as s:
            opened[i] += 1
            buf = b""
            for k in range(per_conn):
                close = k == per_conn - 1
                s.sendall(b"GET %s HTTP/1.1\r\nHost: bench\r\n%s\r\n" %
                          (path.encode(), b"Connection: close\r\n" if close else b""))
                try:
                    _, buf = _recv_response(s, buf)
                except (OSError, LoadError) as e:
                    if k == 0 and not buf:
                        raise Lost(repr(e))
                    raise
                if k == 0:
                    s.settimeout(timeout)
                done[i] += 1

    return _clients(f"http {path} c={conns} k={per_conn}", conns, seconds, timeout, first_timeout, lost, connection)


def memcached(addr, conns, value_bytes, seconds, timeout=30, lost=None, first_timeout=10):
    """`conns` clients each setting and getting keys of value_bytes for `seconds`: completed
    operations (a set or a get, the get's value checked) per second. A connection whose
    first set gets no answer within first_timeout is lost (as in http) and made again.
    Each client cycles through its own keys, as many as keep all clients' values within
    32 MiB (at most 64): half of memcached's default cache, so sets are never refused for
    memory (128 clients of 100 KiB over 64 keys each were, on Linux too)."""
    keys = max(1, min(64, (32 << 20) // (conns * value_bytes)))
    def connection(i, deadline, done, opened):
        with socket.create_connection(addr, timeout=first_timeout) as s:
            opened[i] += 1
            k = 0
            while time.monotonic() < deadline:
                key = b"b%d_%d" % (i, k % keys)
                value = bytes([(i + k) & 0xff]) * value_bytes
                s.sendall(b"set %s 0 0 %d\r\n%s\r\n" % (key, value_bytes, value))
                try:
                    stored = _read_reply(s, "set")
                except OSError as e:
                    if k == 0:
                        raise Lost(repr(e))
                    raise
                if stored is None:
                    if k == 0:
                        raise Lost("closed before the first answer")
                    raise LoadError("set refused")
                if k == 0:
                    s.settimeout(timeout)
                s.sendall(b"get %s\r\n" % key)
                if _read_reply(s, "get") != value:
                    raise LoadError("get returned another value")
                done[i] += 2
                k += 1

    return _clients(f"memcached c={conns} {value_bytes} B", conns, seconds, timeout, first_timeout, lost,
                    connection)


def _read_reply(s, kind):
    data = b""
    while True:
        got = s.recv(65536)
        if not got:
            return None
        data += got
        ok, value = memcached_reply_ok(kind, data)
        if ok:
            return value if kind == "get" else b""
        if kind == "set" and data.endswith(b"\r\n"):
            return None
        if len(data) > (1 << 22):
            return None
