#!/usr/bin/env python3
"""The fault-injection campaign (the MINIX 3 thesis's §2.6.2, tables 2.3 and 2.4), driven
from the host: `make faults`, or

    python3 tools/faults/campaign.py --runs N --servers e1000,ip,pf,udp,tcp,syscall
                                     [--seed S] [--out DIR] [--quick]
    python3 tools/faults/campaign.py --replay build/faults/runs.json:INDEX

Boots the default image (QEMU user networking, restrict=on, forwards on 127.0.0.1 only:
nothing leaves this machine) and, per run: checks new connections work, starts the checked
load (tools/faults/load.py), injects one random fault (`service inject SERVER random 1
seed=X`, or with --faults the clean deaths kill, crash, hang) into a server drawn from --servers, watches rs and the load for a window, then
decides the run's verdict (see tools/faults/README.md). The guest is reused while healthy
and booted anew after a run that needs it. Writes runs.json, tables.md and faults.png."""
import argparse
import datetime
import json
import os
import random
import re
import shlex
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, os.path.join(ROOT, "tests", "system"))
import load  # noqa: E402
import report  # noqa: E402
import sysconf_variants  # noqa: E402
from test_tcp_apps import boot_apps  # noqa: E402

VERDICTS = report.VERDICTS
ACTIVE = []  # the run's loads, stopped whatever happens
FAULT_LINE = (r"^rs: swifi (\w+) #(\d+) seed=(\d+) (\w+) at=(0x[0-9a-f]+) \(([\w.]*)\+(0x[0-9a-f]+|0)\): "
              r"((?:[0-9a-f]{2} )+)-> ((?:[0-9a-f]{2} )+)")
EVENTS = [("crash", r"^rs: (\w+) crashed: (.*)$"), ("exit", r"^rs: (\w+) exited with status (-?\d+)"),
          ("hung", r"^rs: (\w+) hung: (.*)$"), ("stuck", r"^rs: (\w+) stuck: (.*)$"), ("started", r"^rs: started (\w+) as (0x[0-9a-f]+)"),
          ("down", r"^rs: (\w+) stays down \((.*)\)"), ("panic", r"^()(KERNEL PANIC.*)$")]


def elf_code_at(path, name):
    """(address of function `name`, a reader of the bytes at an address) from an ELF file."""
    nm = subprocess.run(["nm", "--defined-only", path], capture_output=True, text=True, check=True).stdout
    addr = next((int(a, 16) for a, _, n in (ln.split(maxsplit=2) for ln in nm.splitlines() if ln.count(" ") >= 2)
                 if n == name), None)
    data = open(path, "rb").read()
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    loads = []
    for i in range(phnum):
        ptype, _, off, vaddr, _, filesz = struct.unpack_from("<IIQQQQ", data, phoff + i * phentsize)
        if ptype == 1:
            loads.append((vaddr, off, filesz))

    def read(a, n):
        for vaddr, off, filesz in loads:
            if vaddr <= a and a + n <= vaddr + filesz:
                return data[off + a - vaddr:off + a - vaddr + n]
        return b""
    return addr, read


def replay_address(rec):
    """Where run rec's fault goes in today's binary: its function plus offset, if the bytes
    there are still the ones it changed (a rebuilt server moves its functions); else the
    recorded address, when the binary is the same, or an error saying the code changed."""
    old = bytes.fromhex(rec.get("old") or "")
    binary = os.path.join(ROOT, "build", "user", rec["server"])
    if rec.get("function") and rec.get("offset") is not None and old and os.path.exists(binary):
        base, read = elf_code_at(binary, rec["function"])
        if base is not None:
            a = base + int(rec["offset"], 16)
            if read(a, len(old)) == old:
                return hex(a)
        a = int(rec["address"], 16)
        if read(a, len(old)) == old:
            return rec["address"]
        raise SystemExit(f"campaign: {rec['function']}+{rec['offset']} of {rec['server']} no longer holds "
                         f"{rec['old']}: the code changed since run {rec['index']}")
    return rec["address"]


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


class Config:
    def __init__(self, quick):
        self.quick = quick
        self.window = 20 if quick else 60      # observation after the injection, s
        self.pre = 2 if quick else 3           # load before the injection, s
        self.stream_bytes = (16 if quick else 64) << 20
        self.stream_rate = (512 if quick else 1024) << 10   # bytes/s
        self.stall = 15 if quick else 20       # the stream without a byte this long: broken
        self.probe = 20 if quick else 30       # new connections retried this long at the end
        self.manual = 60                       # after `service restart`: until they work
        self.req_timeout = 10
        self.http_period = 0.5
        self.mc_period = 0.3


class System:
    """The booted guest (tests/system/test_tcp_apps.boot_apps), booted anew on demand."""

    def __init__(self, out):
        self.out, self.gen, self.apps, self.boots = out, None, None, 0

    def boot(self):
        self.close()
        for attempt in range(3):
            self.boots += 1
            log(f"booting the default image (boot {self.boots})")
            t0 = time.monotonic()
            self.gen = boot_apps(sysconf_variants.default(), f"faults-boot{self.boots}")
            try:
                self.apps = next(self.gen)
                log(f"booted in {time.monotonic() - t0:.0f} s; ports {self.apps.port}")
                return
            except (AssertionError, StopIteration, OSError) as e:
                log(f"boot failed: {str(e)[:300]}")
                self.close()
        raise SystemExit("campaign: the default image does not boot; giving up")

    def close(self):
        if self.gen is not None:
            out = self.apps.g.output if self.apps else ""
            try:
                self.gen.close()  # leaves the Guest's `with`: QEMU killed by its PID
            except Exception as e:
                log(f"closing the guest: {e!r}")
            if out:
                with open(os.path.join(self.out, f"guest-{self.boots}.log"), "w") as f:
                    f.write(out)
        self.gen, self.apps = None, None

    def alive(self):
        return self.apps is not None and self.apps.g.proc.poll() is None

    def text(self, mark):
        return self.apps.g.output[mark:].replace("axolotl> ", "axolotl>\n")

    def type(self, line):
        try:
            self.apps.g.type(line + "\r")
            return True
        except (BrokenPipeError, OSError, ValueError):
            return False


def events_since(system, mark, seen, t_now, times):
    """rs's events after mark, each with the monotonic time it was first seen."""
    text = system.text(mark)
    found = []
    for kind, rx in EVENTS:
        for m in re.finditer(rx, text, re.M):
            key = (kind, m.start())
            if key not in times:
                times[key] = t_now
            found.append({"kind": kind, "server": m.group(1), "detail": m.group(2), "pos": m.start(),
                          "t": times[key]})
    found.sort(key=lambda e: e["pos"])
    return found


def probe(system, ports, seed, seconds, wrong):
    """New connections tried until they work or seconds pass: (ok, time it worked, last failure)."""
    deadline = time.monotonic() + seconds
    why = ""
    k = 0
    while True:
        if not system.alive():
            return False, None, "QEMU exited"
        ok, why = load.healthy(ports, seed * 100 + k)
        k += 1
        if "WRONG" in why:
            wrong.append("health check: " + why)
        if ok:
            return True, time.monotonic(), ""
        if time.monotonic() >= deadline:
            return False, None, why
        time.sleep(1)


def restart_service(system, server, timeout=90):
    """`service restart SERVER`: True once rs started it again."""
    mark = system.apps.g.mark()
    if not system.type(f"service restart {server}"):
        return False
    try:
        system.apps.g.wait_for(r"^rs: started %s as" % server, timeout=timeout, start=mark)
    except AssertionError:
        return False
    time.sleep(2)  # rs counts a fault within 1 s of a start as a crash loop
    return True


def console_answers(system, timeout=30):
    """The console's monitor runs a command (`mem`): the operator can still type."""
    if not system.alive():
        return False
    try:
        system.apps.monitor("mem", r"mem: free_frames \d+", timeout=timeout)
        return True
    except (AssertionError, BrokenPipeError, OSError, ValueError):
        return False


CLEAN_DEATHS = ("kill", "crash", "hang")  # the faults a user types: no code changed


def inject(system, server, word, seed, at=None):
    """Types the injection; (fault dict or None, the console's answer)."""
    g = system.apps.g
    mark = g.mark()
    if word in CLEAN_DEATHS:
        cmd = f"service kill {server}" if word == "kill" else f"service inject {server} {word}"
    else:
        cmd = f"service inject {server} {word}" + ("" if at else " 1") + f" seed={seed}" + (f" at={at}" if at else "")
    if not system.type(cmd):
        return None, "QEMU gone", cmd
    try:
        m = g.wait_for(r"^service: %s:? (.*)$" % server, timeout=60, start=mark)
        answer = m.group(1)
    except AssertionError:
        # a fault in the console itself may stop it before it prints rs's answer: rs's own
        # line says whether something was injected
        answer = "no answer from the console"
        if word not in CLEAN_DEATHS:
            try:
                g.wait_for(FAULT_LINE, timeout=5, start=mark)
                answer += " (rs injected)"
            except AssertionError:
                return None, answer, cmd
        elif word != "kill":
            return None, answer, cmd
    fault = None
    if word in CLEAN_DEATHS and (answer == "OK" or answer.startswith("no answer")):
        fault = {"type": word, "address": None, "function": None, "line": cmd}
    elif "injected" in answer:  # also "no answer from the console (rs injected)"
        try:
            f = g.wait_for(FAULT_LINE, timeout=10, start=mark)
            fault = {"type": f.group(4), "address": f.group(5), "function": f.group(6), "offset": f.group(7),
                     "old": f.group(8).strip(), "new": f.group(9).strip(), "line": f.group(0)}
        except AssertionError:
            fault = {"type": word if word != "random" else None, "address": at, "function": None,
                     "line": "(rs's fault line not seen)"}
    return fault, answer, cmd


def one_run(system, cfg, index, server, seed, word="random", at=None):
    rec = {"index": index, "server": server, "seed": seed, "type": None, "address": None, "function": None,
           "detection": None, "verdict": None, "reason": "", "recovery_s": None, "errors": [], "events": [],
           "rs_restarted": False, "manual_restart": False, "boot": None}
    if not system.alive():
        system.boot()
    ports = system.apps.port
    ok, _, why = probe(system, ports, seed, 30, [])
    if ok and not console_answers(system):
        ok, why = False, "the console does not answer"
    if not ok:
        rec["rebooted_before"] = why
        log(f"run {index}: unhealthy before the fault ({why}): booting anew")
        system.boot()
        ports = system.apps.port
        ok, _, why = probe(system, ports, seed, 60, [])
        if not ok:
            raise SystemExit(f"campaign: a fresh boot is not healthy: {why}")
    rec["boot"] = system.boots
    g = system.apps.g
    stream = load.Stream(ports[7000], cfg.stream_bytes, seed & 0xFFFFFF, cfg.stream_rate, cfg.stall).start()
    http = load.HttpLoop(ports[80], cfg.http_period, cfg.req_timeout).start()
    # memcached's one connection waits as long as the stream does before it counts as
    # broken: an answer held up by a restart and TCP's retransmission is late, not lost
    mc = load.MemcachedLoop(ports[11211], index, cfg.mc_period, cfg.stall, seed).start()
    loads = (stream, http, mc)
    ACTIVE[:] = loads
    time.sleep(cfg.pre)
    mark = g.mark()
    t_inj = time.monotonic()
    for ld in loads:
        ld.t0 = t_inj
    fault, answer, cmd = inject(system, server, word, seed, at)
    if not fault and answer == "no answer from the console":
        # not this run's fault: the console checked healthy just before. Say so and stop
        # rather than count a run that injected nothing.
        raise SystemExit(f"campaign: run {index}: the console did not answer `{cmd}`")
    rec["command"] = cmd
    rec["answer"] = answer
    if fault:
        rec.update({k: fault.get(k) for k in ("type", "address", "function", "offset", "old", "new")})
        rec["fault_line"] = fault["line"]
        log(f"run {index}: {fault['line']}")
    else:
        log(f"run {index}: no fault injected: {answer}")
    times = {}
    deadline = t_inj + cfg.window
    while time.monotonic() < deadline and system.alive():
        time.sleep(0.25)
        events_since(system, mark, {}, time.monotonic(), times)
    alive = system.alive()
    for ld in loads:
        if not ld.stop(max(cfg.req_timeout, cfg.stall) + 5):
            ld._note(ld.failed, "did not stop in time")
    wrong = [w for ld in loads for w in ld.wrong]
    broke = [b for ld in loads for b in ld.broke]
    failed = [f for ld in loads for f in ld.failed]
    evs = events_since(system, mark, {}, time.monotonic(), times) if system.apps else []
    mine = [e for e in evs if e["server"] == server]
    t_restart = next((e["t"] for e in mine if e["kind"] == "started"), None)
    rec["rs_restarted"] = t_restart is not None
    rec["detection"] = ("hang" if any(e["kind"] == "hung" for e in mine) else
                        "stuck" if any(e["kind"] == "stuck" for e in mine) else
                        "crash" if any(e["kind"] in ("crash", "exit") for e in mine) else "none")
    # verdict, in the thesis's order of importance
    if not fault:
        rec["verdict"], rec["reason"] = ("reboot", f"QEMU exited: {answer}") if not alive else \
            ("transparent", f"nothing injected: {answer}")
    elif not alive or any(e["kind"] == "panic" for e in evs):
        rec["verdict"] = "reboot"
        panic = any(e["kind"] == "panic" for e in evs)
        rec["reason"] = ("kernel panic; " if panic else "") + \
            ("QEMU exited (status %s)" % g.proc.returncode if not alive else "QEMU still runs")
        rec["log_tail"] = g.output[-3000:]
        if panic:
            rec["system_bug"] = "kernel panic"
        rec["detection"] = "system" if rec["detection"] == "none" else rec["detection"]
    else:
        ok, t_ok, why = probe(system, ports, seed, cfg.probe, wrong)
        if wrong:
            pass
        elif ok:
            if t_restart is not None:
                after = [t for ld in loads for t in ld.connects if t >= t_restart] + [t_ok]
                rec["recovery_s"] = round(min(after) - t_inj, 2)
            if broke:
                rec["verdict"], rec["reason"] = "broke-tcp", broke[0]
            elif failed:
                rec["verdict"], rec["reason"] = "reachable", failed[0]
            else:
                rec["verdict"] = "transparent"
        else:
            rec["reason"] = f"new connections failed at the end of the window: {why}"
            log(f"run {index}: {rec['reason']}; `service restart {server}`")
            t_man = time.monotonic()
            if restart_service(system, server):
                rec["manual_restart"] = True
                ok, t_ok, why = probe(system, ports, seed + 1, cfg.manual, wrong)
            else:
                ok, why = False, f"`service restart {server}` did not start it"
            if wrong:
                pass
            elif ok:
                rec["verdict"] = "manual"
                rec["recovery_s"] = round(t_ok - t_inj, 2)
                rec["manual_restart_s"] = round(t_ok - t_man, 2)
            else:
                rec["verdict"] = "reboot"
                rec["reason"] += f"; after a manual restart: {why}"
    if wrong:
        rec["verdict"], rec["reason"] = "corrupt", wrong[0]
    elif rec["verdict"] not in ("reboot", "corrupt") and not console_answers(system):
        # the network recovered, but the operator's console did not: only a reboot brings
        # it back (no command can be typed, not even a manual restart)
        rec["verdict"] = "reboot"
        rec["reason"] = ("the console does not answer after the run; " + rec["reason"]).rstrip("; ")
    rec["errors"] = sorted(wrong + broke + failed, key=lambda e: float(e.split("s ", 1)[0]) if e[:1] in "+-" else 1e9)
    rec["load"] = {ld.name: {"ok": ld.ok, "wrong": len(ld.wrong), "broke": len(ld.broke), "failed": len(ld.failed)}
                   for ld in loads}
    rec["load"]["stream"]["bytes"] = stream.received
    rec["events"] = [f"+{e['t'] - t_inj:.1f}s {e['kind']} {e['server']} {e['detail']}" for e in evs]
    if rec.get("type") and rec.get("address"):
        rec["replay"] = f"service inject {server} {rec['type']} seed={seed} at={rec['address']}"
    why = f" ({rec['reason'][:160]})" if rec["reason"] else ""
    rt = "" if rec["recovery_s"] is None else f", recovery {rec['recovery_s']} s"
    log(f"run {index}: {server} {rec['type']} {rec['function']}: detected {rec['detection']}, "
        f"verdict {rec['verdict']}{why}{rt}")
    # the next run starts clean: a fault rs never saw is still in the server's text
    if rec["verdict"] in ("reboot", "corrupt"):
        system.close()  # corrupt: who knows what else is wrong; a fresh boot
    elif not rec["rs_restarted"] and not rec["manual_restart"] and fault:
        if not restart_service(system, server):
            rec["after"] = f"the clean-up restart of {server} failed: booting anew"
            system.close()
    elif rec["rs_restarted"]:
        time.sleep(2)
    return rec


def git_head():
    r = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return r.stdout.strip() or "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=None)
    ap.add_argument("--servers", default="e1000,ip,pf,udp,tcp,syscall")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--faults", default="random",
                    help="comma-separated, one drawn per run: random, a swifi type, or kill, crash, hang")
    ap.add_argument("--out", default=None)
    ap.add_argument("--quick", action="store_true", help="short windows (and 3 runs unless --runs)")
    ap.add_argument("--replay", metavar="RUNS.JSON:INDEX", help="run that one fault again (same type, seed, address)")
    ap.add_argument("--resume", metavar="DIR", help="continue the campaign in DIR (its seed, servers, faults, window) "
                    "up to --runs in all: a long campaign over several sittings")
    args = ap.parse_args()
    before = None
    if args.resume:
        before = json.load(open(os.path.join(args.resume, "runs.json")))
        m0 = before["meta"]
        args.out, args.seed, args.quick = args.resume, m0["seed"], m0["quick"]
        args.servers, args.faults = ",".join(m0["servers"]), ",".join(m0.get("faults", ["random"]))
    cfg = Config(args.quick)
    replay = None
    if args.replay:
        path, _, idx = args.replay.rpartition(":")
        runs = json.load(open(path))["runs"]
        replay = next(r for r in runs if r["index"] == int(idx))
        if not (replay.get("type") and replay.get("address")):
            raise SystemExit(f"campaign: run {idx} has no fault to replay")
        replay = dict(replay, address=replay_address(replay))
    out = args.out or os.path.join(ROOT, "build", "faults", "replay" if replay else "")
    os.makedirs(out, exist_ok=True)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1, 1 << 31)
    rng = random.Random(seed)
    servers = [replay["server"]] if replay else [s for s in args.servers.split(",") if s]
    words = [w for w in args.faults.split(",") if w]
    nruns = 1 if replay else (args.runs if args.runs is not None else (3 if args.quick else 100))
    meta = {"date": datetime.datetime.now().isoformat(timespec="seconds"), "commit": git_head(),
            "command": " ".join(shlex.quote(a) for a in sys.argv), "seed": seed, "servers": servers,
            "quick": args.quick, "window_s": cfg.window, "faults": words}
    runs = []
    elapsed0 = boots0 = 0
    if before:
        # the same draws as the first sitting: the runs already done are skipped
        runs, elapsed0 = before["runs"], before["meta"].get("elapsed_s", 0)
        boots0 = before["meta"].get("boots") or 0
        meta = dict(before["meta"], sittings=before["meta"].get("sittings", [
            {"from": 0, "date": before["meta"]["date"], "commit": before["meta"]["commit"]}]))
        if len(runs) < nruns:
            meta["sittings"].append({"from": len(runs), "date": datetime.datetime.now().isoformat(timespec="seconds"),
                                     "commit": git_head()})
    log(f"campaign: {nruns} runs, servers {','.join(servers)}, seed {seed}, out {out}" +
        (f", resuming at run {len(runs)}" if before else ""))
    system = System(out)
    t0 = time.monotonic()

    def save():
        meta["elapsed_s"] = elapsed0 + round(time.monotonic() - t0)
        meta["boots"] = boots0 + system.boots
        with open(os.path.join(out, "runs.json"), "w") as f:
            json.dump({"meta": meta, "runs": runs}, f, indent=1)

    try:
        for i in range(nruns):
            if replay:
                server, rseed = replay["server"], replay["seed"]
            else:
                server, rseed = rng.choice(servers), rng.randrange(1, 1 << 31)
                word = words[0] if len(words) == 1 else rng.choice(words)
                if i < len(runs):
                    continue  # done in an earlier sitting
            try:
                if replay:
                    rec = one_run(system, cfg, replay["index"], server, rseed, replay["type"], replay["address"])
                else:
                    rec = one_run(system, cfg, i, server, rseed, word)
            except (AssertionError, OSError, ValueError, RuntimeError) as e:
                # the campaign lost the guest in a way one_run did not handle: recorded, booted anew
                log(f"run {i}: campaign error {e!r}: booting anew")
                rec = {"index": i, "server": server, "seed": rseed, "type": None, "address": None,
                       "function": None, "detection": "system", "verdict": "reboot",
                       "reason": f"campaign error: {e!r}"[:500], "recovery_s": None, "errors": [], "events": []}
                for ld in ACTIVE:
                    ld.stop(1)
                system.close()
            runs.append(rec)
            save()
    except KeyboardInterrupt:
        log("campaign: interrupted; the runs so far are kept")
    finally:
        for ld in ACTIVE:
            ld.stop(1)
        system.close()
    save()
    text = report.tables(runs, meta)
    with open(os.path.join(out, "tables.md"), "w") as f:
        f.write(text)
    report.plot(runs, servers, os.path.join(out, "faults.png"))
    print(text)
    c = {v: sum(r["verdict"] == v for r in runs) for v in VERDICTS}
    print(f"campaign: {len(runs)} runs, {c['transparent']} transparent, {c['reachable']} reachable, "
          f"{c['broke-tcp']} broke-tcp, {c['manual']} manual, {c['reboot']} reboot, {c['corrupt']} corrupt")
    for r in runs:
        if r["verdict"] in ("corrupt", "reboot") and r.get("replay"):
            print(f"  run {r['index']} {r['verdict']}: {r['reason'][:200]}\n    replay: "
                  f"python3 tools/faults/campaign.py --replay {os.path.join(out, 'runs.json')}:{r['index']}"
                  f"  ({r['replay']})")
    log(f"campaign: {time.monotonic() - t0:.0f} s, {system.boots} boots")


if __name__ == "__main__":
    main()
