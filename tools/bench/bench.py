#!/usr/bin/env python3
"""`make bench`: Axolotl against a stock Debian Linux guest, the same application binaries in
the same virtual machine, in one run (docs/benchmarks.md).

  bench.py run [--full] [--reps N] [--out FILE]   boots each system in turn (alternating,
                                                   N repetitions), runs every workload,
                                                   writes a results file, prints the table
  bench.py table FILE                             the ratio table of a results file
  bench.py compare A B                            two results files side by side; refused
                                                   when their configurations differ

Both guests run under one QEMU command line apart from how the kernel is loaded (Axolotl's
GRUB image with -cdrom, Linux's -kernel/-initrd): TCG, one fixed -cpu model, the same vCPU
count, memory and NIC, QEMU user networking with restrict=on and forwards bound to
127.0.0.1. Every QEMU this starts is killed by its PID, also on Ctrl-C or SIGTERM.
"""
import argparse
import datetime
import hashlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tools"))
import loads  # noqa: E402
from qemu_cmd import qemu_command  # noqa: E402

B = os.path.join(ROOT, "build")
GUEST_PORTS = (80, 11211, 5001, 7000)
SYSTEMS = ("axolotl", "linux")


# ---- the two machines ----

def machine_config(full):
    """Everything that must be equal for two runs to be compared."""
    return {"accel": "tcg", "cpu": "qemu64", "smp": 2, "mem_mib": 1024, "nic": "e1000",
            "net": "user,restrict=on", "suite": "full" if full else "short"}


def qemu_args(system, cfg, fwds):
    """The QEMU command line for system: one builder for both (qemu_cmd.qemu_command, the
    one `make run` uses), only the kernel's loading differs."""
    fw = "".join(f",hostfwd=tcp:127.0.0.1:{h}-:{g}" for g, h in fwds.items())
    net = ["-netdev", "user,id=n0,restrict=on" + fw, "-device", f"{cfg['nic']},netdev=n0"]
    iso = os.path.join(B, "axolotl.iso")
    cmd = qemu_command(iso, smp=cfg["smp"], mem=cfg["mem_mib"], cpu=cfg["cpu"], accel=cfg["accel"],
                       serial="stdio", net=net)
    if system == "linux":
        i = cmd.index("-cdrom")
        del cmd[i:i + 4]  # -cdrom ISO -boot d
        g = os.path.join(B, "bench", "linux")
        cmd += ["-kernel", os.path.join(g, "vmlinuz"), "-initrd", os.path.join(g, "initramfs.cpio.gz"),
                "-append", "console=ttyS0 quiet"]
    return cmd


class Machine:
    """One booted guest: serial log collected, its applications forwarded to free host
    ports; killed by PID on close."""
    live = set()

    def __init__(self, system, cfg, log_path):
        self.system = system
        self.port = {g: free_port() for g in GUEST_PORTS}
        self.log_path = log_path
        self.cmd = qemu_args(system, cfg, self.port)
        self._out = []
        self._cond = threading.Condition()
        self.proc = subprocess.Popen(self.cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT)
        Machine.live.add(self.proc)
        threading.Thread(target=self._reader, daemon=True).start()

    def _reader(self):
        for raw in iter(lambda: self.proc.stdout.read1(4096), b""):
            with self._cond:
                self._out.append(raw.decode("utf-8", "replace").replace("\r", ""))
                self._cond.notify_all()

    def output(self):
        with self._cond:
            return "".join(self._out)

    def wait_for(self, regex, timeout):
        deadline = time.monotonic() + timeout
        with self._cond:
            while not re.search(regex, "".join(self._out), re.M):
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise RuntimeError(f"{self.system}: {regex!r} not seen in {timeout} s; "
                                       f"log tail: {''.join(self._out)[-1500:]}")
                self._cond.wait(1)

    def ready(self, timeout=300):
        """Up when /etc/rc says its applications listen and lighttpd answers through the
        forward."""
        self.wait_for(r"rc: started lighttpd", timeout)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                loads.http(self.port[80], "/hello.txt", 1, 1, 0.1, timeout=10)
                return
            except (OSError, loads.LoadError):
                time.sleep(1)
        raise RuntimeError(f"{self.system}: lighttpd does not answer")

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()  # by its PID: the one we started
        self.proc.wait(30)
        Machine.live.discard(self.proc)
        with open(self.log_path, "w") as f:
            f.write(self.output())


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def kill_all(*_):
    for p in list(Machine.live):
        if p.poll() is None:
            p.kill()
    raise KeyboardInterrupt


# ---- workloads ----

LOST = []  # connections QEMU's forward lost during the current workload (loads.Lost)


def workloads(full):
    """(name, unit, function of a Machine returning a number; bigger is better)."""
    t = 10 if full else 4
    w = [
        ("iperf_tcp_host_to_guest", "Mbit/s", lambda m: loads.iperf(m.port[5001], t) / 1e6),
        ("iperf_tcp_guest_to_host", "Mbit/s", lambda m: loads.iperf(m.port[5001], t, reverse=True) / 1e6),
    ]
    conc = (1, 8, 32, 128) if full else (1, 16)
    for c in conc:
        for k in (1, 10):
            w.append((f"http_20B_c{c}_k{k}", "req/s", lambda m, c=c, k=k: loads.http(m.port[80], "/hello.txt", c, k, t, lost=LOST)))
    w.append(("http_4MiB_c4_k1", "req/s", lambda m: loads.http(m.port[80], "/4mib.bin", 4, 1, t, lost=LOST)))
    for c in ((8, 32, 128) if full else (8,)):
        for size in ((1024, 10240, 102400) if full else (1024,)):
            w.append((f"memcached_c{c}_{size // 1024}KiB", "ops/s",
                      lambda m, c=c, size=size: loads.memcached(m.port[11211], c, size, t, lost=LOST)))
    return w


# ---- the run ----

def versions(cfg):
    v = {"qemu": subprocess.run(["qemu-system-x86_64", "--version"], capture_output=True, text=True).stdout.split("\n")[0],
         "axolotl": subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"], capture_output=True,
                                   text=True).stdout.strip()}
    gv = os.path.join(B, "bench", "linux", "versions.json")
    if os.path.exists(gv):
        v["linux_guest"] = json.load(open(gv))
    for app in ("lighttpd", "memcached", "iperf"):
        p = os.path.join(B, "ports", "out", app, app)
        if os.path.exists(p):
            v.setdefault("binaries", {})[app] = hashlib.sha256(open(p, "rb").read()).hexdigest()
    return v


def run(args):
    cfg = machine_config(args.full)
    reps = args.reps or (5 if args.full else 2)
    wl = workloads(args.full)
    res = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "command": " ".join(sys.argv), "config": dict(cfg, reps=reps, workloads=[w[0] for w in wl]),
           "versions": versions(cfg), "units": {w[0]: w[1] for w in wl},
           "results": {w[0]: {s: [] for s in SYSTEMS} for w in wl}, "lost": {w[0]: {s: 0 for s in SYSTEMS} for w in wl},
           "failures": []}
    logs = os.path.join(B, "bench", "logs")
    os.makedirs(logs, exist_ok=True)
    signal.signal(signal.SIGTERM, kill_all)
    for rep in range(reps):
        order = SYSTEMS if rep % 2 == 0 else SYSTEMS[::-1]  # alternate who goes first
        for system in order:
            m = Machine(system, cfg, os.path.join(logs, f"{system}-{rep}.log"))
            try:
                t0 = time.monotonic()
                m.ready()
                print(f"bench: {system} rep {rep + 1}/{reps} up in {time.monotonic() - t0:.1f} s", flush=True)
                for name, unit, fn in wl:
                    LOST.clear()
                    try:
                        v = fn(m)
                        res["results"][name][system].append(v)
                        res["lost"][name][system] += len(LOST)
                        note = f" ({len(LOST)} connections lost by QEMU's forward)" if LOST else ""
                        print(f"bench:   {name:28s} {v:12.1f} {unit}{note}", flush=True)
                    except (OSError, loads.LoadError, subprocess.TimeoutExpired) as e:
                        if LOST:
                            e = f"{e} ({len(LOST)} lost)"
                        res["failures"].append({"system": system, "rep": rep, "workload": name, "error": str(e)[:500]})
                        print(f"bench:   {name:28s} FAILED: {str(e)[:200]}", flush=True)
            finally:
                m.close()
    out = args.out or os.path.join(B, "bench", "results-%s.json" % res["date"].replace(":", ""))
    with open(out, "w") as f:
        json.dump(res, f, indent=1)
    print(f"bench: results in {os.path.relpath(out, ROOT)}")
    print(table(res))
    plot(res, os.path.splitext(out)[0])
    return 1 if res["failures"] else 0


def table(res):
    """The summary: per workload, each system's median (min-max) and Axolotl/Linux."""
    lines = [f"{'workload':30s} {'unit':7s} {'axolotl':>24s} {'linux':>24s} {'ratio':>6s}"]
    for name, by in res["results"].items():
        cells, med = [], {}
        for s in SYSTEMS:
            if by.get(s):
                st = loads.stats(by[s])
                med[s] = st["median"]
                cells.append(f"{st['median']:9.1f} ({st['min']:.1f}-{st['max']:.1f})")
            else:
                cells.append("-")
        ratio = f"{med['axolotl'] / med['linux']:.2f}" if len(med) == 2 and med["linux"] else "-"
        lines.append(f"{name:30s} {res['units'][name]:7s} {cells[0]:>24s} {cells[1]:>24s} {ratio:>6s}")
    return "\n".join(lines)


def plot(res, base):
    """A PNG of the medians' ratios (gnuplot, if installed): base.png."""
    rows = []
    for name, by in res["results"].items():
        if by.get("axolotl") and by.get("linux"):
            lm = loads.stats(by["linux"])["median"]
            if lm:
                rows.append((name, loads.stats(by["axolotl"])["median"] / lm))
    if not rows or subprocess.run(["sh", "-c", "command -v gnuplot"], capture_output=True).returncode:
        print("bench: no plot (gnuplot missing or nothing to plot)")
        return
    with open(base + ".dat", "w") as f:
        for name, r in rows:
            f.write(f'"{name}" {r:.4f}\n')
    script = (f'set terminal pngcairo size 1200,600 noenhanced; set output "{base}.png";'
              'set style fill solid; set boxwidth 0.7; set yrange [0:*]; set offsets 0.5,0.5,0.3,0;'
              'set xtics rotate by -30; set bmargin 9; set ylabel "Axolotl / Linux (medians)"; set grid ytics;'
              f'set title "{res["date"]}, {res["config"]["suite"]} suite, {res["config"]["reps"]} repetitions";'
              f'plot "{base}.dat" using 0:2:xtic(1) with boxes notitle, 1 with lines lw 2 title "Linux = 1"')
    r = subprocess.run(["gnuplot", "-e", script], capture_output=True, text=True)
    print(f"bench: plot {os.path.relpath(base, ROOT)}.png" if r.returncode == 0 else f"bench: gnuplot: {r.stderr[-300:]}")


def differences(a, b):
    """The configuration keys whose values differ between results a and b."""
    ca, cb = a["config"], b["config"]
    return sorted(k for k in set(ca) | set(cb) if ca.get(k) != cb.get(k))


def compare(args):
    a, b = (json.load(open(p)) for p in (args.a, args.b))
    diff = differences(a, b)
    if diff:
        print("bench: refusing to compare: the configurations differ in " +
              ", ".join(f"{k} ({a['config'].get(k)!r} vs {b['config'].get(k)!r})" for k in diff))
        return 2
    print(f"A: {args.a} ({a['date']}, {a['versions'].get('axolotl')})\n{table(a)}\n")
    print(f"B: {args.b} ({b['date']}, {b['versions'].get('axolotl')})\n{table(b)}")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--full", action="store_true")
    r.add_argument("--reps", type=int)
    r.add_argument("--out")
    t = sub.add_parser("table")
    t.add_argument("file")
    c = sub.add_parser("compare")
    c.add_argument("a")
    c.add_argument("b")
    args = ap.parse_args()
    if args.cmd == "run":
        return run(args)
    if args.cmd == "table":
        print(table(json.load(open(args.file))))
        return 0
    return compare(args)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        for p in list(Machine.live):
            if p.poll() is None:
                p.kill()
        sys.exit(130)
