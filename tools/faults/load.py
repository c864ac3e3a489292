"""The fault campaign's load (tools/faults/campaign.py): three checked loads against the
default image's applications, each in a thread, each bounded in time and count, every
byte that comes back compared with what it must be.

- Stream: one long tcphash connection from the guest (tcphash_recv's protocol, the stream
  of tcp_tools.stream), received at a modest rate and compared byte by byte.
- HttpLoop: GETs of /hello.txt and /index.html on fresh connections, each body compared
  with the file in rootfs/srv/www.
- MemcachedLoop: sets and gets on one connection (a new one when it breaks), every value
  read back compared, earlier keys read again at random.

Each records: wrong (a wrong byte: silent corruption, with what and where), broke (an
established connection that broke), failed (a request or a new connection that failed),
ok (successful requests) and the times of successful new connections (recovery time)."""
import os
import random
import socket
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "system"))
import tcp_tools  # noqa: E402

HOST = "127.0.0.1"
WWW = os.path.join(ROOT, "rootfs", "srv", "www")
MAX_ERRORS = 20


class Load:
    """Counters shared by the loads; a thread each, stopped by stop()."""

    def __init__(self, name):
        self.name = name
        self.wrong, self.broke, self.failed, self.ok = [], [], [], 0
        self.connects = []  # monotonic times of successful new connections
        self.stopping = threading.Event()
        self.t0 = time.monotonic()  # errors are timed from here (the campaign sets the injection's time)
        self.th = threading.Thread(target=self._guard, daemon=True, name=name)

    def start(self):
        self.th.start()
        return self

    def stop(self, timeout):
        self.stopping.set()
        self.th.join(timeout)
        return not self.th.is_alive()

    def _note(self, lst, text):
        if len(lst) < MAX_ERRORS:
            lst.append(f"{time.monotonic() - self.t0:+.1f}s {self.name}: {text}")
        elif len(lst) == MAX_ERRORS:
            lst.append(f"{self.name}: (more left out)")

    def _guard(self):
        try:
            self.run()
        except Exception as e:  # a bug of the load itself: recorded, never silent
            self._note(self.failed, f"load error {e!r}")

    def summary(self):
        return {"ok": self.ok, "wrong": self.wrong, "broke": self.broke, "failed": self.failed}


class Stream(Load):
    """One tcphash connection sending n bytes of the stream of seed, at most rate bytes/s,
    compared byte by byte. Ends when all came (then a new stream starts, while not stopped),
    when it breaks, or at stop()."""

    def __init__(self, port, n, seed, rate, timeout):
        super().__init__("stream")
        self.port, self.n, self.seed, self.rate, self.timeout = port, n, seed, rate, timeout
        self.received = 0
        self.last_progress = time.monotonic()
        self.streams = 0

    def run(self):
        while not self.stopping.is_set():
            self.streams += 1
            if not self._one(self.seed + self.streams - 1):
                return  # broken or wrong: the verdict has what it needs

    def _one(self, seed):
        want = tcp_tools.stream(self.n, seed)
        pending = b""
        got = 0
        buf = bytearray(1 << 16)
        t0 = time.monotonic()
        try:
            s = socket.create_connection((HOST, self.port), timeout=self.timeout)
        except OSError as e:
            self._note(self.failed, f"connect: {e!r}")
            return False
        self.connects.append(time.monotonic())
        self.last_progress = time.monotonic()
        try:
            s.settimeout(1.0)  # short: stop() is seen at once; a stall is timed below
            s.sendall(b"recv %d %d\n" % (self.n, seed))
            while not self.stopping.is_set():
                if got == self.n:
                    s.shutdown(socket.SHUT_WR)
                try:
                    r = s.recv_into(buf)
                except socket.timeout:
                    if time.monotonic() - self.last_progress > self.timeout:
                        self._note(self.broke, f"stream {seed} stalled: no byte for {self.timeout} s after {got}")
                        return False
                    continue
                if r == 0:
                    if got == self.n:
                        self.ok += 1
                        return True
                    self._note(self.broke, f"stream {seed} closed after {got} of {self.n} bytes")
                    return False
                data = memoryview(buf)[:r]
                pos = 0
                while pos < r:
                    if not pending:
                        pending = next(want, b"")
                        if not pending:
                            self._note(self.wrong, f"stream {seed}: bytes beyond its {self.n} at {got + pos}")
                            return False
                    take = min(len(pending), r - pos)
                    if data[pos:pos + take] != pending[:take]:
                        k = next(i for i in range(take) if data[pos + i] != pending[i])
                        self._note(self.wrong, f"stream {seed}: wrong byte at offset {got + pos + k} "
                                               f"(got {data[pos + k]:#04x}, want {pending[k]:#04x})")
                        return False
                    pending = pending[take:]
                    pos += take
                got += r
                self.received += r
                self.last_progress = time.monotonic()
                ahead = got / self.rate - (time.monotonic() - t0)
                if ahead > 0:
                    self.stopping.wait(min(ahead, 1.0))
            return True  # stopped by us with every byte so far right
        except (OSError, ValueError) as e:
            self._note(self.broke, f"stream {seed} broke after {got} bytes: {e!r}")
            return False
        finally:
            s.close()


class HttpLoop(Load):
    """GETs of checked files on fresh connections, one every `period` seconds."""

    FILES = ("/hello.txt", "/index.html")

    def __init__(self, port, period, timeout):
        super().__init__("http")
        self.port, self.period, self.timeout = port, period, timeout
        self.want = {p: open(os.path.join(WWW, p[1:]), "rb").read() for p in self.FILES}

    def run(self):
        k = 0
        while not self.stopping.is_set():
            path = self.FILES[k % len(self.FILES)]
            k += 1
            try:
                status, body = tcp_tools.http_get(HOST, self.port, path, timeout=self.timeout)
            except OSError as e:
                self._note(self.failed, f"GET {path}: {e!r}")
            else:
                if status == 200 and body == self.want[path]:
                    self.ok += 1
                    self.connects.append(time.monotonic())
                elif status == 200 and len(body) < len(self.want[path]) and self.want[path].startswith(body):
                    self._note(self.broke, f"GET {path}: cut short at {len(body)} of {len(self.want[path])} bytes")
                elif status == 200 or (status == 0 and body):
                    self._note(self.wrong, f"GET {path}: status {status}, body {body[:80]!r} "
                                           f"({len(body)} bytes, want {len(self.want[path])})")
                else:
                    self._note(self.failed, f"GET {path}: status {status}")
            self.stopping.wait(self.period)


class MemcachedLoop(Load):
    """set KEY VALUE then get KEY on one connection, and a get of an earlier key at random;
    every value compared. A broken connection is replaced by a new one."""

    def __init__(self, port, run, period, timeout, seed):
        super().__init__("memcached")
        self.port, self.run_id, self.period, self.timeout = port, run, period, timeout
        self.rng = random.Random(seed)
        self.stored = []  # keys memcached answered STORED for

    def value(self, i):
        size = 1 + (i * 7919) % 3000
        pat = b"r%d-k%d:" % (self.run_id, i)
        return (pat * (size // len(pat) + 1))[:size]

    def key(self, i):
        return "fault%d-%d" % (self.run_id, i)

    def check(self, mc, i):
        got = mc.get(self.key(i))
        if got != self.value(i):
            self._note(self.wrong, f"get {self.key(i)}: {'missing' if got is None else repr(got[:40])} "
                                   f"({'-' if got is None else len(got)} bytes, want {len(self.value(i))})")
            return False
        return True

    def run(self):
        mc = None
        i = 0
        while not self.stopping.is_set():
            if mc is None:
                try:
                    mc = tcp_tools.Memcached(HOST, self.port, timeout=self.timeout)
                    self.connects.append(time.monotonic())
                except OSError as e:
                    self._note(self.failed, f"connect: {e!r}")
                    self.stopping.wait(self.period)
                    continue
            try:
                if mc.set(self.key(i), self.value(i)):
                    self.stored.append(i)
                    ok = self.check(mc, i)
                    if ok and len(self.stored) > 1:
                        ok = self.check(mc, self.rng.choice(self.stored[:-1]))
                    self.ok += ok
                else:
                    self._note(self.failed, f"set {self.key(i)} not stored")
                i += 1
            except (OSError, ConnectionError) as e:
                # (a timeout: no answer for `timeout` seconds, longer than the stream's stall)
                self._note(self.broke, f"connection broke: {e!r}")
                mc.close()
                mc = None
            except ValueError as e:  # an answer that is not memcached's protocol
                self._note(self.wrong, f"{e}")
                mc.close()
                mc = None
            self.stopping.wait(self.period)
        if mc:
            mc.close()


def healthy(ports, seed, timeout=10):
    """New connections work: (True, "") or (False, what failed). Wrong bytes are
    reported as such (they are corruption, not unavailability)."""
    want = open(os.path.join(WWW, "hello.txt"), "rb").read()
    try:
        status, body = tcp_tools.http_get(HOST, ports[80], "/hello.txt", timeout=timeout)
        if status != 200 or body != want:
            return False, f"GET /hello.txt: status {status}, {len(body)} bytes" + \
                (" WRONG" if status == 200 and body and not want.startswith(body) else "")
        mc = tcp_tools.Memcached(HOST, ports[11211], timeout=timeout)
        try:
            v = b"health-%d" % seed
            if not mc.set("health%d" % seed, v):
                return False, "memcached set not stored"
            got = mc.get("health%d" % seed)
            if got != v:
                return False, f"memcached get: {got!r} WRONG"
        finally:
            mc.close()
        ok, got, bad = tcp_tools.tcphash_recv(HOST, ports[7000], 16, seed, timeout=timeout)
        if not ok:
            return False, f"tcphash: {got} of 16 bytes" + (f", WRONG at {bad}" if bad is not None else "")
        return True, ""
    except (OSError, ValueError) as e:
        return False, repr(e)
