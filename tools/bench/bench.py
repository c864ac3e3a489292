#!/usr/bin/env python3
"""`make bench`: Axolotl against a stock Debian Linux guest, the same application binaries in
the same virtual machine, in one run (docs/benchmarks.md).

  bench.py run [--full] [--reps N] [--systems A,B] [--net user|tap] [--no-icount] [--only RE]
               [--out FILE]
        boots each system in turn (alternating, N repetitions), runs every workload,
        writes a results file, prints the tables and plots the speeds
  bench.py table FILE       the tables of a results file (speed, and per-request accounting)
  bench.py accounting FILE  its per-request accounting table alone
  bench.py compare A B      two results files side by side; refused when their
                            configurations differ

The systems: Linux, and Axolotl in three configurations (SYSTEMS). All boot under one QEMU
command line apart from how the kernel is loaded (Axolotl's GRUB image with -cdrom,
Linux's -kernel/-initrd): TCG, one fixed -cpu model, the same vCPU count, memory and NIC;
QEMU user networking with restrict=on and forwards bound to 127.0.0.1, or (--net tap) a tap
device in a network namespace the suite makes and removes (netns.py). Every QEMU this
starts is killed by its PID, also on Ctrl-C or SIGTERM.
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
import netns  # noqa: E402
import sysconf_variants  # noqa: E402
from qemu_cmd import NIC_MODELS, nic_device, qemu_binary, qemu_command, qemu_version  # noqa: E402

B = os.path.join(ROOT, "build")
TCP_PORTS = (80, 11211, 5001, 7000)  # lighttpd, memcached, iperf, tcphash (rootfs/etc/rc)
UDP_PORTS = (5001,)  # iperf -u
GUEST_ADDR = "10.0.2.15"  # both guests, on either network

# Axolotl's configurations: how each changes boot/system.conf (tools/sysconf_variants.py).
VARIANTS = {
    "axolotl": ("the default image: every server on any core, the socket library on", ()),
    "axolotl-nolib": ("the socket library off (AXOLOTL_SOCK=0): every socket call a system call",
                      (sysconf_variants.without_library,)),
    "axolotl-dedicated": ("tcp on core 1 of its own (MWAIT), the library on; heartbeats 30 s",
                          (sysconf_variants.dedicated,)),
}
SYSTEMS = tuple(VARIANTS) + ("linux",)
NEEDS_SMP2 = ("axolotl-dedicated",)  # left out of the one-vCPU -icount boots
ICOUNT = "shift=0,sleep=off"  # one guest instruction = one TSC tick
# The instruction-counting boots have one vCPU: -icount runs the vCPUs round-robin on one
# thread, where a vCPU that polls holds the other off until the next timer (on Axolotl's
# two cores rs saw every server miss its heartbeats); with one, the count is all the work.
ICOUNT_SMP = 1
# The loads run again in the -icount boots for their guest instructions per unit of work
# (the short suite's, in a full run too).
ICOUNT_ACCOUNTED = ("iperf_tcp_host_to_guest", "iperf_tcp_guest_to_host", "http_20B_c1_k1", "http_20B_c16_k10",
                    "memcached_c8_1KiB")


# ---- the machines ----

def machine_config(full, net="user", systems=SYSTEMS, icount=True, nic="e1000"):
    """Everything that must be equal for two runs to be compared."""
    return {"accel": "tcg", "cpu": "qemu64", "smp": 2, "mem_mib": 1024, "nic": nic_device(nic),
            "net": "user,restrict=on" if net == "user" else "tap in a network namespace",
            "suite": "full" if full else "short", "systems": list(systems),
            "icount": f"{ICOUNT}, smp {ICOUNT_SMP}" if icount else "none"}


def axolotl_image(system, net):
    """The GRUB image of an Axolotl configuration: boot/system.conf changed as VARIANTS
    says (and given a fixed address on a tap device, which has no DHCP server), built by
    the Makefile's build/bench/axolotl-%.iso rule."""
    conf = sysconf_variants.default()
    for change in VARIANTS[system][1]:
        conf = change(conf)
    if net == "tap":
        conf = sysconf_variants.static_address(conf, GUEST_ADDR + "/24", netns.HOST_ADDR)
    name = ("default" if system == "axolotl" else system[len("axolotl-"):]) + "-" + net
    path = os.path.join(B, "bench", name + ".conf")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if not os.path.exists(path) or open(path).read() != conf:
        with open(path, "w") as f:
            f.write(conf)
    iso = os.path.join(B, "bench", f"axolotl-{name}.iso")
    subprocess.run(["make", "-s", "-C", ROOT, os.path.relpath(iso, ROOT)], check=True, stdout=subprocess.DEVNULL)
    return iso


def qemu_args(system, cfg, fwds, image=None, icount=False):
    """The QEMU command line for system: one builder for all (qemu_cmd.qemu_command, the
    one `make run` uses), only the kernel's loading differs. fwds: (proto, host port, guest
    port) for user networking. icount: single-threaded TCG counting instructions, on
    ICOUNT_SMP vCPUs."""
    if cfg["net"].startswith("user"):
        fw = "".join(f",hostfwd={p}:127.0.0.1:{h}-:{g}" for p, h, g in fwds)
        net = ["-netdev", "user,id=n0,restrict=on" + fw]
    else:
        net = ["-netdev", f"tap,id=n0,ifname={netns.TAP},script=no,downscript=no"]
    net += ["-device", f"{cfg['nic']},netdev=n0"]
    cmd = qemu_command(image or os.path.join(B, "axolotl.iso"), smp=cfg["smp"], mem=cfg["mem_mib"], cpu=cfg["cpu"],
                       accel=cfg["accel"], serial="stdio", net=net)
    if icount:
        cmd[cmd.index("tcg,thread=multi")] = "tcg,thread=single"  # icount needs one TCG thread
        cmd[cmd.index("-smp") + 1] = str(ICOUNT_SMP)
        cmd += ["-icount", ICOUNT]
    if system == "linux":
        i = cmd.index("-cdrom")
        del cmd[i:i + 4]  # -cdrom ISO -boot d
        g = os.path.join(B, "bench", "linux")
        cmd += ["-kernel", os.path.join(g, "vmlinuz"), "-initrd", os.path.join(g, "initramfs.cpio.gz"),
                "-append", "console=ttyS0 quiet"]
    return cmd


class Machine:
    """One booted guest: serial log collected, its applications reachable at addr(); killed
    by PID on close."""
    live = set()

    def __init__(self, system, cfg, log_path, image=None, icount=False, pcap=None):
        self.system = system
        self.tap = not cfg["net"].startswith("user")
        self.fwd = {} if self.tap else {(p, g): free_port(p) for p in ("tcp", "udp")
                                           for g in (TCP_PORTS if p == "tcp" else UDP_PORTS)}
        self.log_path = log_path
        self.cmd = qemu_args(system, cfg, [(p, h, g) for (p, g), h in self.fwd.items()], image, icount)
        if pcap:  # the NIC's frames both ways, headers only (tools/bench/pcapstat.py reads them)
            self.cmd += ["-object", f"filter-dump,id=cap0,netdev=n0,file={pcap},maxlen=128"]
        self._out = []
        self._cond = threading.Condition()
        self._micro = None
        self.proc = subprocess.Popen(self.cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT)
        Machine.live.add(self.proc)
        threading.Thread(target=self._reader, daemon=True).start()

    def addr(self, port, proto="tcp"):
        """Where the host reaches the guest's port."""
        return (GUEST_ADDR, port) if self.tap else ("127.0.0.1", self.fwd[(proto, port)])

    def _reader(self):
        for raw in iter(lambda: self.proc.stdout.read1(4096), b""):
            with self._cond:
                self._out.append(raw.decode("utf-8", "replace").replace("\r", ""))
                self._cond.notify_all()

    def output(self):
        with self._cond:
            return "".join(self._out)

    def wait_for(self, regex, timeout, start=0):
        """The first match of regex in the complete lines of the output from offset start
        (waits timeout s): a line still arriving could match a `$` too early."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                text = "".join(self._out)[start:]
                m = re.search(regex, text[:text.rfind("\n") + 1], re.M)
                if m:
                    return m
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise RuntimeError(f"{self.system}: {regex!r} not seen in {timeout} s; "
                                       f"log tail: {''.join(self._out)[-1500:]}")
                self._cond.wait(1)

    def shell(self, command, until, timeout):
        """Types command on the console's shell; the output from there to the first line
        matching until."""
        start = len(self.output())
        self.proc.stdin.write(command.encode() + b"\r")
        self.proc.stdin.flush()
        m = self.wait_for(until, timeout, start)
        return self.output()[start:start + m.end()]

    def counters(self):
        """The kernel's activity counters now, read on the console's shell: Axolotl's
        /proc/axolotl/kstat (loads.kstat_counters) and each process's runs from
        /proc/axolotl/threads (loads.threads_counters), Linux's /proc/stat
        (loads.linux_stat_counters)."""
        if self.system == "linux":
            return loads.linux_stat_counters(self.shell("cat /proc/stat; echo @@", r"^@@$", 60))
        text = self.shell("cat /proc/axolotl/kstat /proc/axolotl/threads; echo @@", r"^@@$", 60)
        return {**loads.kstat_counters(text), **loads.threads_counters(text)}

    def ready(self, timeout=300):
        """Up when /etc/rc says its applications listen and lighttpd answers."""
        self.wait_for(r"rc: started lighttpd", timeout)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                loads.http(self.addr(80), "/hello.txt", 1, 1, 0.1, timeout=10)
                return
            except (OSError, loads.LoadError):
                time.sleep(1)
        raise RuntimeError(f"{self.system}: lighttpd does not answer")

    def iperf_udp(self, offered_bps, seconds):
        """(bits/s received, loss in percent) of a UDP load from the host at offered_bps,
        as the guest's iperf server reports it in its log."""
        port = loads.iperf_udp_send(self.addr(5001, "udp"), offered_bps, seconds)
        for _ in range(3):  # the server writes its report when the last datagram is in
            report = loads.iperf_udp_server_report(self.shell("cat /tmp/iperf-udp.log; echo @@", r"^@@$", 60), port)
            if report:
                return report
            time.sleep(1)
        raise loads.LoadError(f"iperf -u: the guest's server has no report for port {port}")

    def micro(self, recv_n=20000, connect_n=300, timeout=600):
        """netmicro's results on this guest (run once, on the console's shell)."""
        if self._micro is None:
            out = self.shell(f"netmicro {recv_n} {connect_n}", r"^netmicro: (done|failed)$", timeout)
            self._micro = loads.netmicro_results(out)
        return self._micro

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()  # by its PID: the one we started
        self.proc.wait(30)
        Machine.live.discard(self.proc)
        with open(self.log_path, "w") as f:
            f.write(self.output())


def free_port(proto="tcp"):
    with socket.socket(type=socket.SOCK_STREAM if proto == "tcp" else socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def kill_all(*_):
    for p in list(Machine.live):
        if p.poll() is None:
            p.kill()
    raise KeyboardInterrupt


# ---- workloads ----

LOST = []  # connections QEMU's forward lost during the current workload (loads.Lost)


class W:
    """A workload: fn(machine) gives its number, or (number, {extra figures}). lower: a
    smaller number is better (cycles); its speed ratio is then Linux over Axolotl. work: the
    unit of work of its per-request accounting ("request", "op", "MiB"; None: not
    accounted), done at its rate over span seconds (None: the load's wall time). speed:
    False for a run kept for its accounting only."""

    def __init__(self, name, unit, fn, lower=False, work=None, span=None, speed=True):
        self.name, self.unit, self.fn, self.lower = name, unit, fn, lower
        self.work, self.span, self.speed = work, span, speed


def workloads(full):
    t = 10 if full else 4
    # (iperf's rate is over its own -t seconds; the wall time adds its start and its end)
    w = [W("iperf_tcp_host_to_guest", "Mbit/s", lambda m: loads.iperf(m.addr(5001), t) / 1e6, work="MiB", span=t),
         W("iperf_tcp_guest_to_host", "Mbit/s", lambda m: loads.iperf(m.addr(5001), t, reverse=True) / 1e6,
           work="MiB", span=t)]
    for mbit in ((1, 10, 50, 100, 200) if full else (10, 50)):
        def udp(m, mbit=mbit):
            rate, loss = m.iperf_udp(mbit * 1e6, t)
            return rate / 1e6, {"loss_pct": loss}
        w.append(W(f"iperf_udp_{mbit}M_offered", "Mbit/s", udp))
    for c in ((1, 8, 32, 128) if full else (1, 16)):
        for k in (1, 10):
            w.append(W(f"http_20B_c{c}_k{k}", "req/s",
                       lambda m, c=c, k=k: loads.http(m.addr(80), "/hello.txt", c, k, t, lost=LOST), work="request"))
    w.append(W("http_11KiB_c16_k10", "req/s", lambda m: loads.http(m.addr(80), "/11kib.bin", 16, 10, t, lost=LOST),
               work="request"))
    w.append(W("http_512KiB_c4_k1", "req/s", lambda m: loads.http(m.addr(80), "/512kib.bin", 4, 1, t, lost=LOST),
               work="request"))
    if full:
        w.append(W("http_4MiB_c4_k1", "req/s", lambda m: loads.http(m.addr(80), "/4mib.bin", 4, 1, t, lost=LOST),
                   work="request"))
    for c in ((8, 32, 128) if full else (8,)):
        for size in ((1024, 10240, 102400) if full else (1024, 102400)):
            w.append(W(f"memcached_c{c}_{size // 1024}KiB", "ops/s",
                       lambda m, c=c, size=size: loads.memcached(m.addr(11211), c, size, t, lost=LOST), work="op"))
    for name in ("recvfrom_empty", "connect_close"):
        w.append(W(f"micro_{name}", "cycles", lambda m, name=name: _micro(m, name), lower=True))
    return w


def icount_workloads():
    """Measured in a boot of their own under -icount (guest instructions, all vCPUs):
    netmicro, and the short suite's loads of ICOUNT_ACCOUNTED for their accounting only (a
    rate under -icount is no speed)."""
    micro = [W(f"micro_{n}_insns", "insns", lambda m, n=n: _micro(m, n, 5000, 100), lower=True)
             for n in ("recvfrom_empty", "connect_close")]
    return micro + [W(w.name, w.unit, w.fn, work=w.work, span=w.span, speed=False)
                    for w in workloads(False) if w.name in ICOUNT_ACCOUNTED]


def _micro(m, name, recv_n=20000, connect_n=300):
    """netmicro's TSC ticks per operation (guest instructions in an -icount boot)."""
    r = m.micro(recv_n, connect_n)[name]
    return r["cycles"], {"ns": r["ns"], "n": r["n"]}


# ---- the run ----

def versions():
    v = {"qemu": qemu_version(), "qemu_binary": qemu_binary(),
         "axolotl": subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"], capture_output=True,
                                   text=True).stdout.strip(),
         "host_iperf": subprocess.run(["iperf", "-v"], capture_output=True, text=True).stderr.strip()}
    gv = os.path.join(B, "bench", "linux", "versions.json")
    if os.path.exists(gv):
        v["linux_guest"] = json.load(open(gv))
    for app, p in (("lighttpd", "ports/out/lighttpd/lighttpd"), ("memcached", "ports/out/memcached/memcached"),
                   ("iperf", "ports/out/iperf/iperf"), ("netmicro", "user/netmicro")):
        p = os.path.join(B, p)
        if os.path.exists(p):
            v.setdefault("binaries", {})[app] = hashlib.sha256(open(p, "rb").read()).hexdigest()
    return v


def measure(res, m, wl, rep, icount=False):
    """Runs the workloads wl on the booted machine m, into res; those with a unit of work
    between two readings of the kernel's counters (account)."""
    for w in wl:
        LOST.clear()
        try:
            before = m.counters() if w.work else None
            t0 = time.monotonic()
            v = w.fn(m)
            took = time.monotonic() - t0
            v, extra = v if isinstance(v, tuple) else (v, None)
            if w.speed:
                res["results"][w.name][m.system].append(v)
                res["lost"][w.name][m.system] += len(LOST)
            if extra:
                res["extra"].setdefault(w.name, {}).setdefault(m.system, []).append(extra)
            note = f" ({len(LOST)} connections lost by QEMU's forward)" if LOST else ""
            note += "" if w.speed else " (for the accounting only)"
            more = "".join(f", {k} {x:.3g}" for k, x in (extra or {}).items())
            print(f"bench:   {w.name:28s} {v:12.1f} {w.unit}{more}{note}", flush=True)
            if w.work:
                account(res, m, w, before, m.counters(), v, took, icount)
        except (OSError, RuntimeError, loads.LoadError, subprocess.TimeoutExpired) as e:
            if LOST:
                e = f"{e} ({len(LOST)} lost)"
            res["failures"].append({"system": m.system, "rep": rep, "icount": icount, "workload": w.name,
                                   "error": str(e)[:500]})
            print(f"bench:   {w.name:28s} FAILED: {str(e)[:200]}", flush=True)


def account(res, m, w, before, after, value, took, icount):
    """Keeps the counters' growth over workload w per unit of work (loads.per_unit), the
    kernel calls made most, and in an -icount boot the guest instructions per unit, in
    res["accounting"] (res["accounting_icount"]) [workload][system]."""
    units = loads.work_units(w.work, value, w.span or took)
    if units <= 0:
        raise loads.LoadError(f"no {w.work} done: nothing to account")
    per = loads.per_unit(before, after, units)
    rec = {"unit": w.work, "units": units, "value": value, "seconds": took, "per_unit": per}
    if m.system != "linux":
        rec["top_kcalls"] = loads.top_kcalls(per)
        rec["top_runs"] = loads.top_runs(per)
        rec["top_notifies"] = loads.top_runs(per, what="notifies.")
        rec["top_lx"] = loads.top_lx_calls(per)
    if icount:
        insns = loads.guest_instructions(before, after)
        rec["insns"] = insns / units if insns is not None else None
    res["accounting_icount" if icount else "accounting"][w.name][m.system].append(rec)
    cells = [("insns", rec.get("insns"))] + [(c, account_column(rec, keys)) for c, keys in ACCOUNTING_COLUMNS]
    print(f"bench:     per {w.work}: " + ", ".join(f"{num(x)} {c}" for c, x in cells if x is not None), flush=True)


# `run --pcap`: each boot's frames go to build/bench/pcap/SYSTEM-REP.pcap.
PCAP_DIR = None


def boot(res, system, cfg, images, log, rep, wl, icount=False):
    pcap = None
    if PCAP_DIR:
        pcap = os.path.join(PCAP_DIR, f"{system}-{'icount' if icount else rep}.pcap")
    m = Machine(system, cfg, log, images.get(system), icount, pcap)
    try:
        t0 = time.monotonic()
        m.ready(600 if icount else 300)
        print(f"bench: {system}{' (icount)' if icount else ''} rep {rep + 1} up in {time.monotonic() - t0:.1f} s",
              flush=True)
        measure(res, m, wl, rep, icount)
    except RuntimeError as e:
        for w in wl:
            res["failures"].append({"system": system, "rep": rep, "icount": icount, "workload": w.name,
                                   "error": "boot: " + str(e)[:400]})
        print(f"bench: {system} did not come up: {str(e)[:300]}", flush=True)
    finally:
        m.close()


def run(args):
    systems = tuple(args.systems.split(",")) if args.systems else SYSTEMS
    bad = [s for s in systems if s not in SYSTEMS]
    if bad or "linux" not in systems:
        raise SystemExit(f"bench: systems are {', '.join(SYSTEMS)} (linux among them), not {args.systems}")
    cfg = machine_config(args.full, args.net, systems, not args.no_icount, args.nic)
    if args.only:
        cfg["only"] = args.only  # a partial run compares only with the same selection
    reps = args.reps or (5 if args.full else 2)
    wl = [w for w in workloads(args.full) if re.search(args.only or "", w.name)]
    iwl = [w for w in icount_workloads() if re.search(args.only or "", w.name)] if not args.no_icount else []
    # (not axolotl-dedicated: a core of its own needs a second one)
    isystems = [s for s in systems if s not in NEEDS_SMP2] if iwl else []
    sw = [w for w in wl + iwl if w.speed]  # the speed table's rows
    res = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "command": " ".join(sys.argv), "config": dict(cfg, reps=reps, workloads=[w.name for w in sw]),
           "systems": {s: VARIANTS[s][0] if s in VARIANTS else "Debian's kernel and busybox" for s in systems},
           "versions": versions(), "units": {w.name: w.unit for w in sw},
           "lower_is_better": [w.name for w in sw if w.lower],
           "results": {w.name: {s: [] for s in systems} for w in sw},
           "lost": {w.name: {s: 0 for s in systems} for w in sw}, "extra": {}, "failures": [],
           "accounting": {w.name: {s: [] for s in systems} for w in wl if w.work},
           "accounting_icount": {w.name: {s: [] for s in isystems} for w in iwl if w.work}}
    logs = os.path.join(B, "bench", "logs")
    os.makedirs(logs, exist_ok=True)
    global PCAP_DIR
    if args.pcap:
        PCAP_DIR = os.path.join(B, "bench", "pcap")
        os.makedirs(PCAP_DIR, exist_ok=True)
    signal.signal(signal.SIGTERM, kill_all)
    images = {s: axolotl_image(s, args.net) for s in systems if s in VARIANTS}
    for rep in range(reps):
        order = systems if rep % 2 == 0 else systems[::-1]  # alternate who goes first
        for system in order:
            boot(res, system, cfg, images, os.path.join(logs, f"{system}-{rep}.log"), rep, wl)
    for system in isystems:
        boot(res, system, cfg, images, os.path.join(logs, f"{system}-icount.log"), 0, iwl, icount=True)
    out = args.out or os.path.join(B, "bench", "results-%s.json" % res["date"].replace(":", ""))
    with open(out, "w") as f:
        json.dump(res, f, indent=1)
    print(f"bench: results in {os.path.relpath(out, ROOT)}")
    print(tables(res))
    plot(res, os.path.splitext(out)[0])
    return 1 if res["failures"] else 0


def speed(res, name, system):
    """system's speed relative to Linux (medians; > 1 faster), or None."""
    by = res["results"][name]
    if not by.get(system) or not by.get("linux"):
        return None
    a, lx = loads.stats(by[system])["median"], loads.stats(by["linux"])["median"]
    if name in res.get("lower_is_better", ()):
        a, lx = lx, a
    return a / lx if lx else None


def num(x):
    """x for the table: whole numbers from 100 up, three significant digits below."""
    return f"{x:.0f}" if abs(x) >= 100 else f"{x:.3g}"


def table(res):
    """The summary: per workload, each system's median [min-max], and each Axolotl
    configuration's speed relative to Linux (> 1: faster than Linux)."""
    systems = list(next(iter(res["results"].values())).keys()) if res["results"] else []
    ax = [s for s in systems if s != "linux"]
    short = {s: s.replace("axolotl-", "").replace("axolotl", "default") for s in ax}
    lines = ["speed relative to Linux: Axolotl/Linux of the medians (Linux/Axolotl where lower is better)",
             f"{'workload':28s} {'unit':7s}" + "".join(f" {s:>26s}" for s in systems) +
             "".join(f" {short[s] + '/lx':>12s}" for s in ax)]
    for name, by in res["results"].items():
        cells = []
        for s in systems:
            if by.get(s):
                st = loads.stats(by[s])
                cells.append(f"{num(st['median'])} [{num(st['min'])}-{num(st['max'])}]")
            else:
                cells.append("-")
        ratios = [speed(res, name, s) for s in ax]
        unit = res["units"][name] + ("↓" if name in res.get("lower_is_better", ()) else "")
        lines.append(f"{name:28s} {unit:7s}" + "".join(f" {c:>26s}" for c in cells) +
                     "".join(f" {r:12.2f}" if r is not None else f" {'-':>12s}" for r in ratios))
        for key in sorted({k for xs in res.get("extra", {}).get(name, {}).values() for x in xs for k in x}):
            if key != "loss_pct":
                continue  # the others (ns, n) are in the results file
            vals = [res["extra"][name].get(s, []) for s in systems]
            lines.append(f"{'  datagrams lost':28s} {'%':7s}" + "".join(
                f" {num(loads.stats([x[key] for x in v])['median']):>26s}" if v else f" {'-':>26s}" for v in vals))
    return "\n".join(lines)


# The accounting table's columns: each the sum of these counters per unit of work (Axolotl's
# kstat names; ctxt and intr are Linux's /proc/stat).
ACCOUNTING_COLUMNS = (("kcalls", ("kcalls",)), ("lx_calls", ("linux_calls",)), ("switches", ("switches",)),
                      ("as_sw", ("as_switches",)), ("ipis", ("ipi_resched", "ipi_call", "ipi_kick")),
                      ("blocks", ("blocks",)), ("wakes", ("wakes",)), ("klock_ct", ("klock_contended",)),
                      ("dev_irqs", ("device_irqs",)), ("ctxt", ("ctxt",)), ("intr", ("intr",)))


def account_column(rec, keys):
    """An accounting record's sum of the counters keys per unit, None if it lacks one."""
    per = rec["per_unit"]
    return sum(per[k] for k in keys) if all(k in per for k in keys) else None


def median_of(values):
    """The median of the values that are not None, or None."""
    v = [x for x in values if x is not None]
    return loads.stats(v)["median"] if v else None


def top_kcalls_median(recs, n=6):
    """The n kernel calls made most per unit over the records recs: [(name, median calls
    per unit)], from the names in their top_kcalls (a call missing from a record: 0)."""
    names = {c[0] for r in recs for c in r.get("top_kcalls", ())}
    med = [(k, median_of([r["per_unit"].get("kcall." + k, [0])[0] for r in recs])) for k in names]
    return sorted(med, key=lambda c: -c[1])[:n]


def top_lx_median(recs, n=6):
    """The n Linux calls made most per unit over the records recs: [(name, median calls per
    unit)] (a call missing from a record: 0; records from before the count: none)."""
    names = {c[0] for r in recs for c in r.get("top_lx", ())}
    med = [(k, median_of([r["per_unit"].get("lx." + k, 0) for r in recs])) for k in names]
    return sorted(med, key=lambda c: -c[1])[:n]


def top_runs_median(recs, n=8, what="runs"):
    """The n processes switched to most (what="notifies": that made the most KC_NOTIFYs) per
    unit over the records recs: [(name, median per unit)] (a process missing from a record:
    0; records from before the count: none)."""
    names = {c[0] for r in recs for c in r.get("top_" + what, ())}
    med = [(k, median_of([r["per_unit"].get(what + "." + k, 0) for r in recs])) for k in names]
    return sorted(med, key=lambda c: -c[1])[:n]


def accounting_table(res):
    """Per workload with a unit of work, per system: guest instructions per unit (its
    -icount boot, idle excluded) and the kernel's activity per unit (ACCOUNTING_COLUMNS),
    medians over the repetitions, with Axolotl's most made kernel calls below; "" when res
    has no accounting (a results file from before it)."""
    acct, iacct = res.get("accounting", {}), res.get("accounting_icount", {})
    if not any(recs for by in list(acct.values()) + list(iacct.values()) for recs in by.values()):
        return ""
    cols = ["insns"] + [c for c, _ in ACCOUNTING_COLUMNS]
    lines = ["per unit of work: medians over the repetitions; insns: guest instructions, idle excluded, "
             "in the -icount boot (one vCPU)",
             f"{'workload':24s} {'unit':8s} {'system':18s}" + "".join(f" {c:>{9 + 2 * (c == 'insns')}s}" for c in cols)]
    for name in list(acct) + [n for n in iacct if n not in acct]:
        by, iby = acct.get(name, {}), iacct.get(name, {})
        for s in list(by) + [s for s in iby if s not in by]:
            recs, irecs = by.get(s, []), iby.get(s, [])
            if not recs and not irecs:
                continue
            cells = [median_of([r.get("insns") for r in irecs])] + \
                [median_of([account_column(r, keys) for r in recs]) for _, keys in ACCOUNTING_COLUMNS]
            lines.append(f"{name:24s} {(recs or irecs)[0]['unit']:8s} {s:18s}" +
                         "".join(f" {num(x) if x is not None else '-':>{9 + 2 * (c == 'insns')}s}"
                                 for c, x in zip(cols, cells)))
            top = top_kcalls_median(recs)
            if top:
                lines.append(f"{'':36s}top kernel calls: " + ", ".join(f"{k} {num(x)}" for k, x in top))
            lx = top_lx_median(recs)
            if lx:
                lines.append(f"{'':36s}Linux calls: " + ", ".join(f"{k} {num(x)}" for k, x in lx))
            runs = top_runs_median(recs)
            if runs:
                lines.append(f"{'':36s}switched to: " + ", ".join(f"{k} {num(x)}" for k, x in runs))
            rings = top_runs_median(recs, what="notifies")
            if rings:
                lines.append(f"{'':36s}notifies by: " + ", ".join(f"{k} {num(x)}" for k, x in rings))
    return "\n".join(lines)


def tables(res):
    """The speed table, and the accounting table when res has accounting."""
    acct = accounting_table(res)
    return table(res) + ("\n\n" + acct if acct else "")


def plot(res, base):
    """PNGs (gnuplot, if installed): base.png, each Axolotl configuration's speed relative
    to Linux per workload; base-http.png, lighttpd's 20-byte requests per second against
    concurrent connections for every system (thesis figs. 5.5-5.10), when the run swept it."""
    if subprocess.run(["sh", "-c", "command -v gnuplot"], capture_output=True).returncode:
        print("bench: no plot (gnuplot missing)")
        return
    systems = list(next(iter(res["results"].values())).keys())
    ax = [s for s in systems if s != "linux"]
    with open(base + ".dat", "w") as f:
        f.write("workload " + " ".join(ax) + "\n")
        for name in res["results"]:
            r = [speed(res, name, s) for s in ax]
            if any(x is not None for x in r):
                f.write(f'"{name}" ' + " ".join(f"{x:.4f}" if x is not None else "?" for x in r) + "\n")
    title = (f'{res["date"]}, {res["config"]["suite"]} suite, {res["config"]["reps"]} repetitions, '
             f'network: {res["config"]["net"]}')
    cols = ", ".join(f'"{base}.dat" using {i + 2}{":xtic(1)" if i == 0 else ""} title columnheader({i + 2})'
                     for i in range(len(ax)))
    scripts = {base + ".png": (
        f'set terminal pngcairo size 1400,650 noenhanced; set output "{base}.png"; set datafile missing "?";'
        'set style data histograms; set style histogram clustered gap 1; set style fill solid border -1;'
        'set yrange [0:*]; set xtics rotate by -35; set bmargin 10; set rmargin 12; set grid ytics; set key top left;'
        f'set ylabel "speed relative to Linux (medians)"; set title "{title}";'
        f'plot {cols}, 1 with lines lw 2 lc rgb "black" title "Linux = 1"')}
    concs = sorted({int(m.group(1)) for n in res["results"] for m in [re.match(r"http_20B_c(\d+)_k1$", n)] if m})
    if len(concs) > 1:
        for k in (1, 10):
            with open(f"{base}-http-k{k}.dat", "w") as f:
                f.write("conns " + " ".join(systems) + "\n")
                for c in concs:
                    by = res["results"].get(f"http_20B_c{c}_k{k}", {})
                    f.write(f"{c} " + " ".join(f"{loads.stats(by[s])['median']:.1f}" if by.get(s) else "?"
                                               for s in systems) + "\n")
        plots = "".join(
            f'set title "lighttpd, 20 B, {k} request{"s" if k > 1 else ""} per connection";'
            'plot ' + ", ".join(f'"{base}-http-k{k}.dat" using 1:{i + 2} with linespoints lw 2 title columnheader({i + 2})'
                                for i in range(len(systems))) + ";" for k in (1, 10))
        scripts[base + "-http.png"] = (
            f'set terminal pngcairo size 1400,550 noenhanced; set output "{base}-http.png"; set datafile missing "?";'
            'set multiplot layout 1,2; set logscale x 2; set grid; set key top left; set yrange [0:*];'
            f'set xlabel "concurrent connections"; set ylabel "requests/s"; {plots} unset multiplot')
    for png, script in scripts.items():
        r = subprocess.run(["gnuplot", "-e", script], capture_output=True, text=True)
        print(f"bench: plot {os.path.relpath(png, ROOT)}" if r.returncode == 0 else f"bench: gnuplot: {r.stderr[-300:]}")


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
    qa, qb = a["versions"].get("qemu"), b["versions"].get("qemu")
    print(f"A: {args.a} ({a['date']}, {a['versions'].get('axolotl')}, {qa})\n{table(a)}\n")
    print(f"B: {args.b} ({b['date']}, {b['versions'].get('axolotl')}, {qb})\n{table(b)}")
    if qa != qb:
        # (QEMU 10 gave the Linux guest 15-25% less keep-alive HTTP than 7.2: docs/benchmarks.md)
        print(f"bench: note: A and B ran on different QEMUs ({qa} vs {qb})")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--full", action="store_true")
    r.add_argument("--reps", type=int)
    r.add_argument("--systems", help="comma-separated, of " + ", ".join(SYSTEMS))
    r.add_argument("--net", choices=("user", "tap"), default="user")
    r.add_argument("--nic", choices=tuple(NIC_MODELS), default="e1000",
                   help="the NIC both systems get (make bench NIC=virtio)")
    r.add_argument("--no-icount", action="store_true", help="skip the guest-instruction boots")
    r.add_argument("--only", help="run only the workloads whose names match this regular expression")
    r.add_argument("--out")
    r.add_argument("--pcap", action="store_true", help="record each boot's frames (QEMU's filter-dump) into "
                   "build/bench/pcap/ for tools/bench/pcapstat.py; the recording costs QEMU time: not for the speed table")
    r.add_argument("--in-netns", action="store_true", help=argparse.SUPPRESS)
    t = sub.add_parser("table")
    t.add_argument("file")
    a = sub.add_parser("accounting")
    a.add_argument("file")
    c = sub.add_parser("compare")
    c.add_argument("a")
    c.add_argument("b")
    args = ap.parse_args()
    if args.cmd == "run":
        if args.net == "tap" and not args.in_netns:
            # the whole run again inside a namespace of its own, removed afterwards
            return netns.run_inside([sys.executable, os.path.abspath(__file__)] + sys.argv[1:] + ["--in-netns"])
        return run(args)
    if args.cmd == "table":
        print(tables(json.load(open(args.file))))
        return 0
    if args.cmd == "accounting":
        print(accounting_table(json.load(open(args.file))) or "bench: no accounting in " + args.file)
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
