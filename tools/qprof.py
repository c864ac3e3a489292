#!/usr/bin/env python3
"""qprof: where a running guest's vCPUs are, sampled through QEMU's monitor.

Start QEMU with a monitor socket (`make run MONITOR=/tmp/ax.sock`, or `-monitor
unix:PATH,server,nowait`), put the load on, then:

    python3 tools/qprof.py /tmp/ax.sock --seconds 5

Every few milliseconds it asks `info registers -a` and keeps each vCPU's RIP and CR3. It
prints, per vCPU, the functions seen most (kernel addresses resolved with nm against
build/axolotl.elf; user addresses by address space: `user cr3=... rip=...`, or with
`--threads FILE`, a saved /proc/axolotl/threads, by process and function), then a timeline
of the top three per bin. Sampling stops the vCPUs briefly each time (a few per cent under
TCG), so it shows where time goes, not how fast things are: that is `make bench`'s job.
It found the 300 ms stall behind the first UDP load's losses (docs/decisions.md, PROT_NONE).
"""
import argparse
import bisect
import collections
import os
import re
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNEL_BASE = 0xffff800000000000
IDLE = ("sched_idle_loop",)  # where a halted vCPU's RIP is
SAMPLE = re.compile(r"CPU#(\d+).*?RIP=([0-9a-f]{16}).*?CR3=([0-9a-f]{16})", re.S)


def parse_registers(text):
    """(cpu, rip, cr3) for every vCPU in an `info registers -a` answer."""
    return [(int(c), int(r, 16), int(c3, 16)) for c, r, c3 in SAMPLE.findall(text)]


def symbols(elf):
    """Sorted (address, name) of the ELF's functions."""
    out = subprocess.run(["nm", "-n", "--defined-only", elf], capture_output=True, text=True,
                         check=True).stdout
    syms = []
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "tTwW":
            syms.append((int(f[0], 16), f[2]))
    return syms


def address_spaces(threads_text):
    """{cr3: process name} from the text of /proc/axolotl/threads (or the console's
    `threads`): the columns endpoint, cpu, state, runs, cpu_ms, kcalls, notifies, as, name."""
    spaces = {}
    for line in threads_text.splitlines():
        f = line.split()
        if len(f) >= 9 and f[3].isdigit() and f[6].isdigit() and re.fullmatch(r"[0-9a-f]+", f[7]) and int(f[7], 16):
            spaces[int(f[7], 16)] = f[8]
    return spaces


class Resolver:
    """Names a sample: a kernel function; for a user address space named by `spaces`
    ({cr3: name}) the process and, when `user_syms` has symbols for that name, its function."""

    def __init__(self, syms, spaces=None, user_syms=None):
        self.syms = syms
        self.addrs = [a for a, _ in syms]
        self.spaces = spaces or {}
        self.user = {n: (ss, [a for a, _ in ss]) for n, ss in (user_syms or {}).items()}

    def where(self, rip, cr3):
        if rip < KERNEL_BASE:
            name = self.spaces.get(cr3 & ~0xfff)
            if not name:
                return f"user cr3={cr3:x} rip={rip:x}"
            if name in self.user:
                ss, addrs = self.user[name]
                i = bisect.bisect_right(addrs, rip) - 1
                if i >= 0:
                    return f"{name}:{ss[i][1]}"
            return f"{name} rip={rip:x}"
        i = bisect.bisect_right(self.addrs, rip) - 1
        return self.syms[i][1] if i >= 0 else f"kernel {rip:x}"


def report(samples, resolve, top=15, bin_s=0.05, bins=40):
    """The text qprof prints for samples [(t, cpu, rip, cr3)] (t from the first sample)."""
    if not samples:
        return "no samples\n"
    t0 = samples[0][0]
    per_cpu = collections.defaultdict(collections.Counter)
    timeline = collections.defaultdict(collections.Counter)
    for t, cpu, rip, cr3 in samples:
        w = resolve.where(rip, cr3)
        per_cpu[cpu][w] += 1
        timeline[(int((t - t0) / bin_s + 1e-9), cpu)][w.split(" rip=")[0]] += 1
    lines = []
    # where the time goes across all vCPUs: idle, the kernel, each address space
    spaces = collections.Counter()
    for t, cpu, rip, cr3 in samples:
        w = resolve.where(rip, cr3)
        spaces["idle" if w in IDLE else "kernel" if rip >= KERNEL_BASE else w.split(" rip=")[0].split(":")[0]] += 1
    lines.append(f"all vCPUs: {len(samples)} samples")
    for w, k in spaces.most_common():
        lines.append(f"  {100 * k / len(samples):5.1f}%  {w}")
    for cpu in sorted(per_cpu):
        n = sum(per_cpu[cpu].values())
        lines.append(f"cpu{cpu}: {n} samples")
        for w, k in per_cpu[cpu].most_common(top):
            lines.append(f"  {100 * k / n:5.1f}%  {w}")
    cpus = sorted(per_cpu)
    last = max(b for b, _ in timeline)
    lines.append(f"timeline ({bin_s * 1000:.0f} ms bins; top three per vCPU)")
    for b in range(min(last + 1, bins)):
        cells = [", ".join(f"{w}:{k}" for w, k in timeline[(b, c)].most_common(3)) or "-" for c in cpus]
        lines.append(f"{b * bin_s * 1000:6.0f} ms  " + " | ".join(cells))
    return "\n".join(lines) + "\n"


class Monitor:
    """QEMU's human monitor on a unix socket."""

    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX)
        self.s.settimeout(5)
        self.s.connect(path)
        self.buf = b""
        self._prompt()  # the banner and the first prompt (sending anything first would leave
        # a second prompt behind, which the next command would take for its own answer)

    def cmd(self, line):
        self.s.sendall(line.encode() + b"\n")
        return self._prompt()

    def _prompt(self):
        while b"(qemu)" not in self.buf:
            chunk = self.s.recv(65536)
            if not chunk:
                raise SystemExit("qprof: the monitor closed (QEMU ended?)")
            self.buf += chunk
        out, _, self.buf = self.buf.partition(b"(qemu)")
        return out.decode(errors="replace")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("socket", help="QEMU monitor socket (-monitor unix:PATH,server,nowait)")
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--interval-ms", type=float, default=3)
    ap.add_argument("--elf", default=os.path.join(ROOT, "build", "axolotl.elf"))
    ap.add_argument("--bin-ms", type=float, default=50)
    ap.add_argument("--top", type=int, default=15, help="entries per vCPU")
    ap.add_argument("--threads", help="a saved /proc/axolotl/threads: names each address space, "
                    "and resolves its samples against build/user/NAME when that exists")
    a = ap.parse_args()
    spaces, user_syms = {}, {}
    if a.threads:
        spaces = address_spaces(open(a.threads).read())
        for name in set(spaces.values()):
            elf = os.path.join(ROOT, "build", "user", name)
            if os.path.isfile(elf):
                user_syms[name] = symbols(elf)
    resolve = Resolver(symbols(a.elf), spaces, user_syms)
    mon = Monitor(a.socket)
    samples = []
    end = time.monotonic() + a.seconds
    while time.monotonic() < end:
        t = time.monotonic()
        samples += [(t, c, r, c3) for c, r, c3 in parse_registers(mon.cmd("info registers -a"))]
        time.sleep(a.interval_ms / 1000)
    sys.stdout.write(report(samples, resolve, top=a.top, bin_s=a.bin_ms / 1000))


if __name__ == "__main__":
    main()
