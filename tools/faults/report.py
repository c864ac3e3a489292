"""The fault campaign's outputs from its runs: tables.md (the thesis's tables 2.3 and 2.4)
and faults.png (verdicts per server, stacked bars; gnuplot if installed, else a plain PNG
drawn here without labels)."""
import os
import statistics
import struct
import subprocess
import tempfile
import zlib

VERDICTS = ("transparent", "reachable", "broke-tcp", "manual", "reboot", "corrupt")
DETECTIONS = ("crash", "hang", "stuck", "none", "system")
COLOURS = {"transparent": (46, 160, 67), "reachable": (140, 200, 80), "broke-tcp": (240, 200, 40),
           "manual": (240, 130, 30), "reboot": (200, 40, 40), "corrupt": (120, 0, 140)}


def _pct(n, total):
    return f"{n} ({100.0 * n / total:.0f}%)" if total else "0"


def _detection_table(runs, key, title):
    keys = sorted({str(r.get(key)) for r in runs})
    dets = [d for d in DETECTIONS if d != "system" or any(r["detection"] == "system" for r in runs)]
    lines = [f"| {title} | runs | " + " | ".join(dets) + " |", "|---" * (len(dets) + 2) + "|"]
    for k in keys:
        rs = [r for r in runs if str(r.get(key)) == k]
        lines.append(f"| {k} | {len(rs)} | " + " | ".join(str(sum(r["detection"] == d for r in rs)) for d in dets) + " |")
    lines.append(f"| **all** | {len(runs)} | " + " | ".join(str(sum(r["detection"] == d for r in runs)) for d in dets) + " |")
    return "\n".join(lines)


def tables(runs, meta):
    out = ["# Fault-injection campaign", "",
           f"- date: {meta['date']}", f"- commit: {meta['commit']}", f"- command: `{meta['command']}`",
           f"- campaign seed: {meta['seed']}; servers: {','.join(meta['servers'])}; "
           f"window: {meta['window_s']} s after each injection; runs: {len(runs)}; boots: {meta.get('boots')}; "
           f"elapsed: {meta.get('elapsed_s')} s"] + \
          [f"- sitting from run {x['from']}: {x['date']}, commit {x['commit']}" for x in meta.get("sittings", [])] + \
          ["", "## What the faults did (table 2.3): crash, hang (rs saw no heartbeat), stuck (a peer saw it stop making progress), nothing detected", "",
           "By server:", "", _detection_table(runs, "server", "server"), "",
           "By fault type:", "", _detection_table(runs, "type", "fault type"), "",
           "## Verdicts (table 2.4)", ""]
    servers = list(dict.fromkeys(meta["servers"] + [r["server"] for r in runs]))
    out.append("| server | runs | " + " | ".join(VERDICTS) + " | recovery median s | recovery max s |")
    out.append("|---" * (len(VERDICTS) + 4) + "|")
    for s in servers + ["**all**"]:
        rs = runs if s == "**all**" else [r for r in runs if r["server"] == s]
        rec = [r["recovery_s"] for r in rs if r.get("recovery_s") is not None]
        med = f"{statistics.median(rec):.1f}" if rec else "-"
        mx = f"{max(rec):.1f}" if rec else "-"
        out.append(f"| {s} | {len(rs)} | " + " | ".join(_pct(sum(r["verdict"] == v for r in rs), len(rs))
                                                       for v in VERDICTS) + f" | {med} | {mx} |")
    out += ["", "## Runs", "", "| # | server | seed | type | at | function | detected | verdict | recovery s | reason |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        reason = (r.get("reason") or "").replace("|", "/")[:120]
        out.append(f"| {r['index']} | {r['server']} | {r['seed']} | {r.get('type')} | {r.get('address')} | "
                   f"{r.get('function')} | {r['detection']} | {r['verdict']} | "
                   f"{'-' if r.get('recovery_s') is None else r['recovery_s']} | {reason} |")
    return "\n".join(out) + "\n"


def plot(runs, servers, path):
    servers = list(dict.fromkeys(servers + [r["server"] for r in runs]))
    counts = {s: [sum(r["server"] == s and r["verdict"] == v for r in runs) for v in VERDICTS] for s in servers}
    if subprocess.run(["sh", "-c", "command -v gnuplot"], capture_output=True).returncode == 0:
        with tempfile.NamedTemporaryFile("w", suffix=".dat", delete=False) as f:
            f.write("# server " + " ".join(VERDICTS) + "\n")
            for s in servers:
                f.write(s + " " + " ".join(map(str, counts[s])) + "\n")
            dat = f.name
        cols = ", ".join(f"'{dat}' using {i + 2}:xtic(1) title '{v}' lc rgb '#%02x%02x%02x'" % COLOURS[v]
                         for i, v in enumerate(VERDICTS))
        script = (f"set terminal pngcairo size 900,500; set output '{path}'; "
                  "set style data histograms; set style histogram rowstacked; set style fill solid border -1; "
                  "set boxwidth 0.6; set key outside right; set ylabel 'runs'; set yrange [0:*]; "
                  "set title 'Fault injection: verdict per server'; "
                  + ("set ytics 1; " if max([sum(c) for c in counts.values()] + [0]) <= 10 else "")
                  + 
                  f"plot {cols}")
        r = subprocess.run(["gnuplot", "-e", script], capture_output=True, text=True)
        if r.returncode != 0:  # no pngcairo: the plain png terminal
            r = subprocess.run(["gnuplot", "-e", script.replace("pngcairo", "png")], capture_output=True, text=True)
        os.unlink(dat)
        if r.returncode == 0 and os.path.exists(path) and os.path.getsize(path) > 0:
            return
    _plain_png(counts, servers, path)


def _plain_png(counts, servers, path):
    """Stacked bars without text (the colours of COLOURS), written as a PNG by hand."""
    w, h, bar, gap = 60 + 80 * len(servers), 300, 40, 40
    top = max([sum(c) for c in counts.values()] + [1])
    px = [[(255, 255, 255)] * w for _ in range(h)]
    for i, s in enumerate(servers):
        x0 = gap + i * 80
        y = h - 10
        for v, n in zip(VERDICTS, counts[s]):
            hh = int(n * (h - 30) / top)
            for yy in range(y - hh, y):
                for xx in range(x0, x0 + bar):
                    px[yy][xx] = COLOURS[v]
            y -= hh
    raw = b"".join(b"\0" + bytes(c for p in row for c in p) for row in px)

    def chunk(tag, data):
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
