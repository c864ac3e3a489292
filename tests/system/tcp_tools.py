"""Host-side clients for the TCP application tests (test_tcp_apps.py): tcphash's client
end (tests/linux/tcphash.c), a memcached text-protocol client, raw HTTP requests and the
parsing of iperf 2's report. Plain sockets, bounded by timeouts; no third-party modules.

Run as a script it checks itself against servers on this host:
    python3 tests/system/tcp_tools.py tcphash PORT      (a `tcphash server PORT` runs)
    python3 tests/system/tcp_tools.py memcached PORT    (a memcached runs)
"""
import math
import os
import re
import socket
import sys
import time
import zlib

# iperf 2's summary line, parsed where the benchmark suite parses it (one parser for both)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "bench"))
from loads import iperf_rate  # noqa: E402,F401

BLOCK = 65536
MASK = (1 << 64) - 1


def base_block(seed):
    """tcphash's base block of SEED: 64 KiB of xorshift64 output, little-endian words."""
    x = seed ^ 0x9E3779B97F4A7C15
    words = []
    for _ in range(BLOCK // 8):
        x ^= (x << 13) & MASK
        x ^= x >> 7
        x ^= (x << 17) & MASK
        words.append(x.to_bytes(8, "little"))
    return b"".join(words)


def stream(n, seed):
    """The stream of SEED, n bytes, as 64 KiB chunks (block k starts with k)."""
    base = base_block(seed)
    rest = base[8:]
    k = 0
    while n > 0:
        blk = k.to_bytes(8, "little") + rest
        yield blk[:n] if n < BLOCK else blk
        n -= BLOCK
        k += 1


def _connect(host, port, timeout):
    s = socket.create_connection((host, port), timeout=timeout)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    return s


def tcphash_send(host, port, n, seed=1, progress=None, timeout=60):
    """Sends n bytes of the stream of seed to tcphash on one connection; returns (ok,
    crc it answered, crc of what was sent). progress(done) is called every 64 KiB."""
    crc = 0
    done = 0
    with _connect(host, port, timeout) as s:
        s.sendall(b"send %d\n" % n)
        for chunk in stream(n, seed):
            s.sendall(chunk)
            crc = zlib.crc32(chunk, crc)
            done += len(chunk)
            if progress:
                progress(done)
        answer = b""
        while not answer.endswith(b"\n"):
            got = s.recv(64)
            if not got:
                break
            answer += got
    want = "%08x" % crc
    got = answer.decode(errors="replace").strip()
    return got == want, got, want


def tcphash_recv(host, port, n, seed=1, progress=None, timeout=60):
    """Receives n bytes of the stream of seed from tcphash on one connection and compares
    them byte for byte; then closes first (half-close, and a check that nothing follows).
    Returns (ok, bytes received, offset of the first piece that differs, or None)."""
    want = stream(n, seed)
    pending = b""
    got = 0
    first_bad = None
    buf = bytearray(BLOCK * 4)
    with _connect(host, port, timeout) as s:
        s.sendall(b"recv %d %d\n" % (n, seed))
        while True:
            if got == n:
                s.shutdown(socket.SHUT_WR)  # our end first: TIME_WAIT stays here
            r = s.recv_into(buf)
            if r == 0:
                break
            data = memoryview(buf)[:r]
            pos = 0
            while pos < r and first_bad is None:
                if not pending:
                    pending = next(want, b"")
                    if not pending:  # more than n bytes came
                        first_bad = got + pos
                        break
                take = min(len(pending), r - pos)
                if data[pos:pos + take] != pending[:take]:
                    first_bad = got + pos
                pending = pending[take:]
                pos += take
            got += r
            if progress:
                progress(got)
    return got == n and first_bad is None, got, first_bad


def tcphash_small(host, port, seed, timeout=30):
    """One short request (16 bytes back): True if they are right."""
    ok, got, _ = tcphash_recv(host, port, 16, seed, timeout=timeout)
    return ok


class Memcached:
    """A memcached text-protocol client on one connection: set, get, delete, stats."""

    def __init__(self, host, port, timeout=30):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.buf = b""

    def close(self):
        self.sock.close()

    def _line(self):
        while b"\r\n" not in self.buf:
            got = self.sock.recv(65536)
            if not got:
                raise ConnectionError("memcached closed the connection")
            self.buf += got
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n:
            got = self.sock.recv(max(65536, n - len(self.buf)))
            if not got:
                raise ConnectionError("memcached closed the connection")
            self.buf += got
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def set(self, key, value, flags=0, exptime=0):
        self.sock.sendall(b"set %s %d %d %d\r\n%s\r\n" % (key.encode(), flags, exptime, len(value), value))
        return self._line() == b"STORED"

    def get(self, key):
        """The value, or None if there is none."""
        self.sock.sendall(b"get %s\r\n" % key.encode())
        line = self._line()
        if line == b"END":
            return None
        parts = line.split()
        if len(parts) != 4 or parts[0] != b"VALUE" or parts[1] != key.encode():
            raise ValueError("memcached: unexpected answer %r" % line[:80])
        value = self._exact(int(parts[3]) + 2)[:-2]
        if self._line() != b"END":
            raise ValueError("memcached: no END after the value")
        return value

    def set_many(self, items):
        """Pipelined sets of (key, value) pairs: how many were STORED."""
        self.sock.sendall(b"".join(b"set %s 0 0 %d\r\n%s\r\n" % (k.encode(), len(v), v) for k, v in items))
        return sum(self._line() == b"STORED" for _ in items)

    def get_many(self, keys):
        """One multi-get: {key: value} of the keys memcached has."""
        self.sock.sendall(b"get %s\r\n" % b" ".join(k.encode() for k in keys))
        out = {}
        while True:
            line = self._line()
            if line == b"END":
                return out
            parts = line.split()
            if len(parts) != 4 or parts[0] != b"VALUE":
                raise ValueError("memcached: unexpected answer %r" % line[:80])
            out[parts[1].decode()] = self._exact(int(parts[3]) + 2)[:-2]

    def delete(self, key):
        self.sock.sendall(b"delete %s\r\n" % key.encode())
        return self._line() == b"DELETED"

    def stats(self):
        self.sock.sendall(b"stats\r\n")
        out = {}
        while True:
            line = self._line()
            if line == b"END":
                return out
            parts = line.decode().split()
            if len(parts) == 3 and parts[0] == "STAT":
                out[parts[1]] = parts[2]


def mc_size(i):
    """Key i's value size, 1 B to 100 KiB: every 100th key 100 KiB, every 100th (+1) 1 B, every
    100th (+50) spread evenly up to 100 KiB, the rest spread log-uniformly up to 8 KiB (about 20 MB
    for 10000 keys: enough for memcached's default 64 MB and for TCG's speed)."""
    if i % 100 == 0:
        return 102400
    if i % 100 == 1:
        return 1
    u = ((i * 2654435761) & 0xFFFFFFFF) / 2.0 ** 32
    if i % 100 == 50:
        return 1 + int(u * 102399)
    return max(1, int(math.exp(u * math.log(8192))))


def mc_value(i):
    """Key i's value: mc_size(i) bytes whose contents differ by key."""
    size = mc_size(i)
    pat = b"%08d:" % i
    return (pat * (size // len(pat) + 1))[:size]


def memcached_roundtrip(host, port, count=10000, batch=50, timeout=60):
    """Sets count keys (pipelined, batch at a time), then gets them all back (multi-get):
    (stored, matched, total bytes) where matched counts values that came back exact."""
    mc = Memcached(host, port, timeout)
    try:
        keys = ["axk%05d" % i for i in range(count)]
        stored = 0
        for b in range(0, count, batch):
            stored += mc.set_many([(keys[i], mc_value(i)) for i in range(b, min(count, b + batch))])
        matched = 0
        for b in range(0, count, batch):
            got = mc.get_many(keys[b:b + batch])
            matched += sum(got.get(keys[i]) == mc_value(i) for i in range(b, min(count, b + batch)))
        return stored, matched, sum(mc_size(i) for i in range(count))
    finally:
        mc.close()


def http_get(host, port, path, timeout=30):
    """One HTTP/1.0 GET on a fresh connection: (status, body)."""
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.sendall(b"GET %s HTTP/1.0\r\nHost: axolotl\r\n\r\n" % path.encode())
        data = b""
        while True:
            got = s.recv(65536)
            if not got:
                break
            data += got
    head, _, body = data.partition(b"\r\n\r\n")
    m = re.match(rb"HTTP/1\.[01] (\d+)", head)
    return (int(m.group(1)) if m else 0), body


def _selftest(kind, port):
    host = "127.0.0.1"
    t0 = time.monotonic()
    if kind == "tcphash":
        n = 200 << 20
        ok, got, want = tcphash_send(host, port, n, seed=5)
        print("send %d: %s (%s vs %s) %.1f s" % (n, ok, got, want, time.monotonic() - t0))
        t0 = time.monotonic()
        ok, got, bad = tcphash_recv(host, port, n, seed=6)
        print("recv %d: %s (%d bytes, first bad %s) %.1f s" % (n, ok, got, bad, time.monotonic() - t0))
        print("small:", all(tcphash_small(host, port, i) for i in range(100)))
    elif kind == "memcached":
        stored, matched, size = memcached_roundtrip(host, port)
        mc = Memcached(host, port)
        print("memcached: 10000 keys, %d bytes, %d stored, %d matched, %.1f s, evictions %s"
              % (size, stored, matched, time.monotonic() - t0, mc.stats().get("evictions")))
        mc.close()


if __name__ == "__main__":
    _selftest(sys.argv[1], int(sys.argv[2]))
