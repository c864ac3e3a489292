"""Shared helpers for the system tests: build a test ISO for a kernel command line, boot it
in QEMU under TCG (or KVM where it really works), collect the serial log, and always kill
the QEMU we started, by its PID."""
import hashlib
import os
import queue
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import weakref

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from qemu_cmd import qemu_binary, qemu_command, qemu_version  # noqa: E402
from qprof import Monitor  # noqa: E402

KERNEL = os.path.join(ROOT, "build", "axolotl.elf")
ISO_DIR = os.path.join(ROOT, "build", "test-iso")
USER_DIR = os.path.join(ROOT, "build", "user")
ACCEL = os.environ.get("ACCEL", "auto")

# QEMU's isa-debug-exit status is (value << 1) | 1; see kernel/core/panic.c and main.c.
EXIT_TESTS_PASSED = (0x10 << 1) | 1
EXIT_TESTS_FAILED = (0x11 << 1) | 1
EXIT_PANIC = (3 << 1) | 1
EXIT_POWEROFF = (0x20 << 1) | 1  # init's `poweroff` after its programs finished
PROMPT_AT_LINE_START = re.compile(r"^axolotl> (?=\S)", re.M)  # the console monitor's prompt


def pytest_report_header(config):
    try:
        return f"qemu: {qemu_version()} ({qemu_binary()})"
    except SystemExit as e:  # build/qemu not fetched: every boot will say so
        return f"qemu: {e}"


def qemu_release():
    """(major, minor) of the QEMU the tests run (build/qemu's 10.0, or $QEMU's)."""
    m = re.search(r"version (\d+)\.(\d+)", qemu_version())
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def iso_for(cmdline, modules=()):
    """A bootable ISO whose GRUB entry passes cmdline and loads the given boot modules
    (each "PATH ARGS", PATH relative to build/user/); rebuilt when any input changes."""
    if not os.path.exists(KERNEL):
        subprocess.run(["make", "-s", "-C", ROOT, "kernel"], check=True)
    os.makedirs(ISO_DIR, exist_ok=True)
    key = " ".join([cmdline] + list(modules))
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", key)[:100] + "-" + hashlib.sha1(key.encode()).hexdigest()[:8]
    iso = os.path.join(ISO_DIR, name + ".iso")
    paths = [os.path.join(USER_DIR, m.split(" ", 1)[0]) for m in modules]
    for p in paths:
        if not os.path.exists(p):
            subprocess.run(["make", "-s", "-C", ROOT, "user"], check=True)
            break
    newest = max(os.path.getmtime(p) for p in [KERNEL] + paths)
    if not os.path.exists(iso) or os.path.getmtime(iso) < newest:
        args = [sys.executable, os.path.join(ROOT, "tools", "mkiso.py"), KERNEL, iso, "--cmdline", cmdline]
        for m, p in zip(modules, paths):
            rest = m.split(" ", 1)[1] if " " in m else ""
            args += ["--module", (p + " " + rest).rstrip()]
        subprocess.run(args, check=True)
    return iso


class Run:
    def __init__(self, output, returncode, elapsed):
        self.output = output
        self.returncode = returncode
        self.elapsed = elapsed

    def lines(self, prefix):
        return [l for l in self.output.splitlines() if l.startswith(prefix)]

    def ktests(self):
        """{name: (status, detail)} from the KTEST lines."""
        res = {}
        for m in re.finditer(r"^KTEST (PASS|FAIL|SKIP) (\w+)[: ]?(.*)$", self.output, re.M):
            res[m.group(2)] = (m.group(1), m.group(3).strip())
        return res


class _Typist:
    """Types a script into the serial port: steps of (regex, text), in order; the text of a
    step is written to QEMU's stdin once a complete line of output after the previous step's
    line matches its regex (re.search). A writer thread does the writing, so QEMU holding
    its stdin back (it takes bytes only while the UART's FIFO has room) never stalls the
    thread that reads the output. A regex starting with (?#partial) also matches the line
    being written (a shell prompt has no newline)."""

    def __init__(self, script, stdin):
        self.steps = list(script)
        self.partial = ""
        self.queue = queue.Queue()
        self.stdin = stdin
        self.thread = threading.Thread(target=self._write, daemon=True)
        self.thread.start()

    def feed(self, text):
        self.partial += text
        while self.steps and "\n" in self.partial:
            line, self.partial = self.partial.split("\n", 1)
            if re.search(self.steps[0][0], line):
                self._send()
        # A step whose regex starts with (?#partial) matches the unfinished line too (a
        # prompt); what it matched is used up.
        if self.steps and self.steps[0][0].startswith("(?#partial)") and re.search(self.steps[0][0], self.partial):
            self.partial = ""
            self._send()

    def _send(self):
        data = self.steps.pop(0)[1]
        self.queue.put(data if isinstance(data, bytes) else data.encode())

    def _write(self):
        while True:
            data = self.queue.get()
            if data is None:
                break
            try:
                self.stdin.write(data)
                self.stdin.flush()
            except (BrokenPipeError, ValueError, OSError):
                break  # QEMU is gone

    def close(self):
        self.queue.put(None)
        self.thread.join(5)


def save_log(name, text):
    """Keeps a run's serial log as build/test-logs/NAME.log."""
    log_dir = os.path.join(ROOT, "build", "test-logs")
    os.makedirs(log_dir, exist_ok=True)
    with open(os.path.join(log_dir, name + ".log"), "w") as f:
        f.write(text)


def assert_library_use(out, prog, linked, moved=True):
    """prog's closing counts of the user-space socket library (tests/linux/libcount.h): a
    build linked with it took sockets over (system calls of its own) and, when the run moved
    data (moved), answered calls from the buffers; the plain build prints none."""
    # (not anchored at the start: a console echo may begin the line)
    m = re.search(r"%s: socket library: (\d+) calls in user space, (\d+) system calls$" % prog, out, re.M)
    if linked:
        assert m and int(m.group(2)) > 0, ("the library made no take-over", out[-3000:])
        assert not moved or int(m.group(1)) > 0, ("no calls answered by the library", m.group(0))
    else:
        assert not m, m.group(0)


def boot(cmdline, smp=2, cpu="max", mem=512, timeout=180, until=None, uefi=False, modules=(),
         script=None, net=()):
    """Boots Axolotl, returns a Run once QEMU exits, `until` (a regex) appears in the serial
    log, or the timeout passes. QEMU is killed by PID in every case. `script`, a list of
    (regex, text), types text into the serial port as output lines match (see _Typist)."""
    iso = iso_for(cmdline, modules)
    cmd = qemu_command(iso, smp=smp, mem=mem, cpu=cpu, accel=ACCEL, serial="stdio", uefi=uefi, net=net)
    chunks = []
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE if script is not None else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    typist = _Typist(script, proc.stdin) if script is not None else None
    done = threading.Event()

    def reader():
        for raw in iter(lambda: proc.stdout.read1(4096), b""):
            chunks.append(raw.decode("utf-8", "replace").replace("\r", ""))
            if typist:
                typist.feed(chunks[-1])
            if until:
                text = "".join(chunks)
                # Only whole lines: a pattern must not stop QEMU in the middle of one.
                if re.search(until, text[:text.rfind("\n") + 1], re.M):
                    done.set()
        done.set()

    th = threading.Thread(target=reader, daemon=True)
    th.start()
    try:
        done.wait(timeout)
        if until is None:
            proc.wait(timeout=max(1, timeout - (time.monotonic() - t0)))
    except subprocess.TimeoutExpired:
        pass
    finally:
        elapsed = time.monotonic() - t0
        if proc.poll() is None:
            proc.kill()  # our own QEMU, by PID
        proc.wait()
        th.join(5)
        if typist:
            typist.close()
            try:
                proc.stdin.close()
            except OSError:
                pass
    out = "".join(chunks)
    save_log(re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{cmdline}-{'-'.join(modules)}-smp{smp}-{cpu}")[:150], out)
    return Run(out, proc.returncode, elapsed)


@pytest.fixture
def qemu_boot():
    return boot


def run_user_tests(program, tests, helpers=(), smp=2, cpu="max", timeout=240):
    """Boots init, which starts `program` with the named tests and powers off when it ends;
    `helpers` are further boot modules the program spawns. Returns the Run and the test
    results, {name: (PASS|FAIL|SKIP, rest of the line)}, from its UTEST lines."""
    mods = ("init start=%s poweroff" % program, " ".join([program] + list(tests))) + tuple(helpers)
    r = boot("qemu_exit", smp=smp, cpu=cpu, timeout=timeout, modules=mods)
    results = {m.group(2): (m.group(1), m.group(3))
               for m in re.finditer(r"^UTEST (PASS|FAIL|SKIP) (\w[\w-]*):? ?(.*)$", r.output, re.M)}
    return r, results


def free_port(kind=socket.SOCK_DGRAM):
    """A port on 127.0.0.1 that is free now (for a QEMU hostfwd)."""
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def user_net(model="e1000", fwds=()):
    """QEMU arguments for one NIC on user networking, restricted (no traffic leaves this
    machine) with host forwards bound to 127.0.0.1. fwds: (proto, host_port, guest_port)."""
    fw = "".join(f",hostfwd={p}:127.0.0.1:{h}-:{g}" for p, h, g in fwds)
    return ["-netdev", "user,id=n0,restrict=on" + fw, "-device", f"{model},netdev=n0"]


def tap_net(model="e1000", mac="52:54:00:12:34:56"):
    """QEMU arguments for one NIC on the tap0 device of the network namespace QEMU runs in
    (tools/net-ns.sh makes it; Guest(netns=...) runs QEMU there)."""
    return ["-netdev", "tap,id=n0,ifname=tap0,script=no,downscript=no", "-device", f"{model},netdev=n0,mac={mac}"]


LIVE_GUESTS = weakref.WeakSet()  # for the hang report after a failed test


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A test that failed while a guest runs (a client's timeout, not only wait_for's) gets
    that guest's hang report in the log and in its failure text."""
    outcome = yield
    rep = outcome.get_result()
    if rep.when == "call" and rep.failed:
        for g in list(LIVE_GUESTS):
            report = g.hang_report()
            if report:
                rep.sections.append((f"hang report of {g.name}", report))


class Guest:
    """A running Axolotl for tests that act on it while it runs (network clients, typing):
    wait_for(regex) blocks until the serial log matches, type(text) types into the serial
    port, output is the log so far. QEMU is killed by PID in close() (use `with`)."""

    def __init__(self, cmdline, modules=(), smp=2, cpu="max", mem=512, net=(), name=None, netns=None):
        iso = iso_for(cmdline, modules)
        # A monitor socket for the hang report (hang_report): our own, removed in close()
        self._monitor = os.path.join(tempfile.gettempdir(), f"axolotl-monitor-{os.getpid()}-{id(self)}.sock")
        cmd = qemu_command(iso, smp=smp, mem=mem, cpu=cpu, accel=ACCEL, serial="stdio", net=net,
                           extra=("-monitor", f"unix:{self._monitor},server,nowait"))
        self._reported = False
        if netns:  # QEMU inside a network namespace the test made (its NIC on tap_net())
            cmd = ["ip", "netns", "exec", netns] + cmd
        self.name = name or re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{cmdline}-{'-'.join(modules)}")[:150]
        self._chunks = []
        self._cond = threading.Condition()
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT)
        self._th = threading.Thread(target=self._reader, daemon=True)
        self._th.start()
        LIVE_GUESTS.add(self)

    def _reader(self):
        for raw in iter(lambda: self.proc.stdout.read1(4096), b""):
            with self._cond:
                self._chunks.append(raw.decode("utf-8", "replace").replace("\r", ""))
                self._cond.notify_all()
        with self._cond:
            self._chunks.append("")
            self._cond.notify_all()

    @property
    def output(self):
        with self._cond:
            return "".join(self._chunks)

    def wait_for(self, regex, timeout=60, start=0):
        """The first match of regex (multiline) in whole lines of the log after offset
        start; raises AssertionError with the log's tail on timeout or QEMU's exit."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                text = "".join(self._chunks)
                # The monitor's prompt shares a line with whatever a server prints next:
                # "axolotl> " at a line's start reads as a line of its own (same length, so
                # offsets and marks stay valid), and ^ matches the server's line after it.
                lines = PROMPT_AT_LINE_START.sub("axolotl>\n", text[:text.rfind("\n") + 1])
                m = re.compile(regex, re.M).search(lines, start)
                if m:
                    return m
                left = deadline - time.monotonic()
                if self.proc.poll() is not None:
                    raise AssertionError(f"{regex!r} not seen; log tail:\n{text[-3000:]}")
                if left <= 0:
                    break
                self._cond.wait(min(left, 0.5))
        report = self.hang_report()
        raise AssertionError(f"{regex!r} not seen; log tail:\n{text[-3000:]}\n{report}")

    def hang_report(self):
        """Once per boot, on the first wait that times out: an NMI through QEMU's monitor,
        which makes the kernel print what every CPU runs and every thread's state
        (kernel/core/hang_report.c), and that report, for the log and the failure."""
        if self._reported or self.proc.poll() is not None:
            return ""
        self._reported = True
        mark = self.mark()
        try:
            Monitor(self._monitor).cmd("nmi")
        except (OSError, SystemExit) as e:
            return f"(no hang report: {e})"
        deadline = time.monotonic() + 30
        with self._cond:
            while "hang-report: end" not in "".join(self._chunks)[mark:] and time.monotonic() < deadline:
                self._cond.wait(0.5)
            text = "".join(self._chunks)[mark:]
        lines = [ln for ln in text.splitlines() if "hang-report" in ln]
        return "hang report (NMI):\n" + "\n".join(lines[:400])

    def mark(self):
        """Offset of the end of the log now, for wait_for(start=...)."""
        return len(self.output)

    def type(self, text, delay=0.002):
        for ch in text.encode():
            self.proc.stdin.write(bytes([ch]))
            self.proc.stdin.flush()
            time.sleep(delay)

    def close(self):
        LIVE_GUESTS.discard(self)
        if self.proc.poll() is None:
            self.proc.kill()  # our own QEMU, by PID
        self.proc.wait()
        self._th.join(5)
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            os.unlink(self._monitor)
        except OSError:
            pass
        save_log(self.name, self.output)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
