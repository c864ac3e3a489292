#!/usr/bin/env python3
"""One TCP connection's bitrate over time while a server is crashed or live-updated (the
thesis's figures 2.4 and 2.5), for the servers of the network stack.

    python3 tools/recovery_plot.py [--servers ip,pf,e1000,tcp] [--modes crash,update]
                                   [--seconds 10] [--at 3] [--out docs/img/recovery]

Boots the default image once (the tests' boot: tests/system/test_tcp_apps.py), and for each
server and mode streams tcphash's checked bytes from Axolotl to the host for --seconds,
sampling the bytes received every 20 ms; at --at seconds it types `service kill NAME`
(crash) or `service update NAME NAME` (update: the same build, replaced at a quiesce). A
connection that breaks (tcp's crash resets them) is counted and a new one is opened at once.
Writes build/recovery/NAME-MODE.dat (time, Mbit/s per 100 ms) and, with gnuplot,
OUT-NAME-MODE.png with the event marked; prints per run the bitrate before, the longest gap without a byte, the
stall rs logged and whether every byte was right. Every load stays on this machine (QEMU's
user networking, forwards bound to 127.0.0.1)."""
import argparse
import os
import re
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "system"))
import tcp_tools  # noqa: E402
import sysconf_variants  # noqa: E402
from test_tcp_apps import HOST, boot_apps  # noqa: E402

BIN_S = 0.1


class Stream:
    """tcphash streams to us from a thread; samples (t, total bytes) every 20 ms."""

    def __init__(self, port):
        self.port, self.total, self.base = port, 0, 0
        self.samples, self.breaks, self.bad, self.stop = [], 0, 0, False
        self.th = threading.Thread(target=self._run, daemon=True)
        self.sampler = threading.Thread(target=self._sample, daemon=True)

    def _progress(self, n):
        self.total = self.base + n
        if self.stop:
            raise InterruptedError  # ends the stream: enough seen

    def _run(self):
        seed = 1
        while not self.stop:
            try:
                ok, got, bad = tcp_tools.tcphash_recv(HOST, self.port, 1 << 40, seed=seed, progress=self._progress,
                                                      timeout=30)
                self.bad += bad is not None
                self.breaks += 1  # (it ended before its 1 TiB: the connection was closed on us)
            except InterruptedError:
                return
            except OSError:
                self.breaks += 1  # a connection that broke: a new one at once
            self.base = self.total
            seed += 1

    def _sample(self):
        t0 = time.monotonic()
        while not self.stop:
            self.samples.append((time.monotonic() - t0, self.total))
            time.sleep(0.02)

    def start(self):
        self.th.start()
        self.sampler.start()

    def finish(self):
        self.stop = True
        self.th.join(60)
        self.sampler.join(5)


def bins(samples):
    """[(t, Mbit/s)] per BIN_S from (t, bytes) samples."""
    out, k = [], 0
    end = samples[-1][0] if samples else 0
    t = 0.0
    while t + BIN_S <= end:
        while k + 1 < len(samples) and samples[k + 1][0] <= t:
            k += 1
        j = k
        while j + 1 < len(samples) and samples[j + 1][0] <= t + BIN_S:
            j += 1
        out.append((t + BIN_S / 2, (samples[j][1] - samples[k][1]) * 8 / BIN_S / 1e6))
        t += BIN_S
    return out


def longest_gap(samples, after):
    """The longest time without a new byte, from `after` on."""
    gap, last_t, last_b = 0.0, None, None
    for t, b in samples:
        if t < after:
            continue
        if last_b is None or b != last_b:
            last_t, last_b = t, b
        gap = max(gap, t - last_t)
    return gap


def plot(dat, png, title, at):
    script = (f'set terminal pngcairo size 900,380 noenhanced; set output "{png}"; set title "{title}"; '
              f'set xlabel "seconds"; set ylabel "Mbit/s"; set yrange [0:*]; set grid; '
              f'set arrow from {at},graph 0 to {at},graph 1 nohead lc rgb "red" lw 2; '
              f'plot "{dat}" using 1:2 with lines lw 2 lc rgb "#2060c0" title "one connection, 100 ms bins"')
    subprocess.run(["gnuplot", "-e", script], check=True)


def run_one(apps, name, mode, seconds, at, out):
    s = Stream(apps.port[7000])
    mark = apps.g.mark()
    s.start()
    time.sleep(at)
    event_t = s.samples[-1][0] if s.samples else at
    apps.g.type(f"service kill {name}\r" if mode == "crash" else f"service update {name} {name}\r")
    time.sleep(max(0.0, seconds - at))
    s.finish()
    log = apps.g.output[mark:]
    stall = re.search(r"^rs: %s updated to \S+: .*\(stall ([\d.]+) ms\)" % name, log, re.M)
    refused = re.search(r"^service: %s: (not supported|try again)" % name, log, re.M)
    data = bins(s.samples)
    base = f"{out}-{name}-{mode}"
    dat = os.path.join(ROOT, "build", "recovery", os.path.basename(base) + ".dat")
    os.makedirs(os.path.dirname(dat), exist_ok=True)
    with open(dat, "w") as f:
        f.write(f"# {name} {mode} at {event_t:.2f} s: seconds, Mbit/s (100 ms bins)\n")
        f.writelines(f"{t:.2f} {v:.1f}\n" for t, v in data)
    before = [v for t, v in data if t < event_t]
    what = "crashed" if mode == "crash" else "live-updated" if not refused else "update refused"
    have_gnuplot = subprocess.run(["sh", "-c", "command -v gnuplot"], capture_output=True).returncode == 0
    if have_gnuplot and data:
        plot(dat, base + ".png", f"{name} {what} at {event_t:.1f} s", event_t)
    print(f"{name:6} {mode:6}: {sum(before) / max(len(before), 1):7.1f} Mbit/s before, longest gap "
          f"{longest_gap(s.samples, event_t) * 1000:6.0f} ms, {s.breaks} connection(s) broken, "
          f"{'every byte right' if not s.bad else f'{s.bad} stream(s) with wrong bytes'}"
          f"{f', rs stall {stall.group(1)} ms' if stall else ''}{f', {refused.group(1)}' if refused else ''}"
          f"{', ' + base + '.png' if have_gnuplot else ''}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--servers", default="ip,pf,e1000,tcp")
    ap.add_argument("--modes", default="crash,update")
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--at", type=float, default=3)
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "img", "recovery"))
    a = ap.parse_args()
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    gen = boot_apps(sysconf_variants.default(), "recovery-plot")
    apps = next(gen)
    try:
        for name in a.servers.split(","):
            for mode in a.modes.split(","):
                run_one(apps, name, mode, a.seconds, a.at, a.out)
                time.sleep(2)  # the server settles (a restarted tcp's listeners)
    finally:
        gen.close()


if __name__ == "__main__":
    main()
