"""The console server: line editing on the serial port, and the service command driving rs
(list, kill, stop, start, errors). Input is typed into QEMU's serial port by boot(script=)."""
import re

from conftest import boot
from test_rs import write_conf

CONF = """# console test configuration
service console ioports=0x3f8-0x3ff irq=4 control
service echo1 binary=uecho args="echo" restart=always
service once binary=uecho args="exit 3" restart=never
"""
MODULES = ("rs conf=contest.conf", "contest.conf", "console", "uecho")
HELP_END = r"^keys: "


def run(script, until, conf=CONF, timeout=120):
    write_conf("contest.conf", conf)
    return boot("", smp=2, modules=MODULES, timeout=timeout, until=until, script=script)


def listings(out):
    """The tables `service list` printed, in order: [{name: (state, endpoint, cpu, restarts,
    uptime, build)}], checking every row's layout on the way."""
    tables = []
    header = "%-16s %-9s %-10s %-5s %-9s %-8s %s" % ("NAME", "STATE", "ENDPOINT", "CPU", "RESTARTS", "UPTIME",
                                                    "BUILD")
    for line in out.splitlines():
        if line.endswith(header):  # the typed command may precede it on a line of its own
            tables.append({})
            continue
        m = re.match(r"^(\S+) +(\S+) +(\S+) +(\S+) +(\S+) +(\S+) +(\S+)$", line)
        if tables and m and m.group(1) in ("console", "echo1", "once"):
            name, state, ep, cpu, restarts, up, build = m.groups()
            assert line == "%-16s %-9s %-10s %-5s %-9s %-8s %s" % m.groups(), line
            assert build == "-" if ep == "-" else re.match(r"^[0-9a-f]{8}$", build), line
            tables[-1][name] = (state, ep, cpu, int(restarts), up, build)
    return tables


def test_console_line_editing():
    script = [
        (r"^console: ready$", "help\r"),
        (HELP_END, "frobnicate now\r"),
        (r"console: unknown command: frobnicate$", "hepl\x7f\x7flp\r"),   # DEL erases
        (HELP_END, "servixe\x15hx\bel\x08lp\r\n"),                   # Ctrl-U, BS, CRLF
        (HELP_END, "kill all\x03"),                                       # Ctrl-C
        (r"\^C$", "\x1b[A\x1b[1;5Dhe\x1bOBlp\r"),                         # escapes dropped
        (HELP_END, "x" * 250 + "\r"),
        (r"console: line too long", "service\r"),
        (r"^usage: service", "service kill\r"),
        (r"^usage: service kill NAME$", "service kill " + "n" * 24 + "\r"),
        (r"name too long", "done-marker\r"),
    ]
    r = run(script, until=r"console: unknown command: done-marker$")
    out = r.output
    assert "console: ready" in out, out[-3000:]
    assert re.search(r"^axolotl> help$", out, re.M), out[-3000:]
    # help four times: typed, edited with DEL, after Ctrl-U and BS, after escape sequences
    assert len(re.findall(HELP_END, out, re.M)) == 4, out[-4000:]
    assert len(re.findall(r"^  service list ", out, re.M)) == 4
    assert "console: unknown command: frobnicate" in out
    # nothing edited away, cancelled or refused ever ran
    for word in ("hepl", "servixe", "kill", "xxxx", "[A", "OB"):
        assert "unknown command: " + word not in out, (word, out[-3000:])
    assert re.search(r"^axolotl> kill all\^C$", out, re.M), out[-3000:]
    assert "console: line too long (at most 200 characters), ignored" in out
    assert re.search(r"^usage: service list \| ", out, re.M), out[-3000:]
    assert re.search(r"^usage: service kill NAME$", out, re.M)
    assert "service: name too long (at most 23 characters): " + "n" * 24 in out
    # the LF of a CRLF is not a second, empty command line
    assert "axolotl> \n" not in out, out[-3000:]


def test_service_command_lists_kills_stops_and_starts_services():
    started = r"rs: started echo1 as 0x[0-9a-f]+ \(restarts %d\)"
    script = [
        (r"rs: once stays down", "service list\r"),
        (r"^once ", "service kill echo1\r"),
        (started % 1, "service list\r"),
        (r"^once ", "service stop echo1\r"),
        (r"rs: echo1 stays down \(stopped\)", "service list\r"),
        (r"^once ", "service start echo1\r"),
        (started.replace("%d", r"\d+"), "service list\r"),
        (r"^once ", "service kill nosuch\r"),
        (r"service: nosuch:", "service inject echo1 crash\r"),
        (started % 2, "service restart echo1\r"),
        (started.replace("%d", r"\d+"), "service update echo1 uecho\r"),
        (r"^service: echo1", "service update echo1 nosuchbinary\r"),
        (r"^service: echo1", "service inject echo1 abcdefghijklmnop\r"),
        (r"too long", "service update console console\r"),
        (r"^console: took over \(live update\) \(build v1\)$", "service start echo1\r"),
    ]
    r = run(script, until=r"service: echo1: busy$")
    out = r.output
    t = listings(out)
    assert len(t) == 4, out[-4000:]
    assert set(t[0]) == {"console", "echo1", "once"}, t[0]
    # first: both services with their states; endpoints, CPU and uptimes as rs reports them
    assert t[0]["echo1"][0] == "running" and t[0]["echo1"][3] == 0, t[0]
    assert re.fullmatch(r"0x[0-9a-f]+", t[0]["echo1"][1]) and t[0]["echo1"][2] == "any"
    assert re.fullmatch(r"\d+\.\ds", t[0]["echo1"][4]), t[0]
    assert t[0]["once"] == ("stopped", "-", "any", 0, "-", "-"), t[0]
    assert t[0]["console"][0] == "running"
    # kill: restarted by rs per its policy, with a new endpoint and one restart counted
    assert "service: echo1 OK" in out
    assert re.search(r"rs: restarting echo1 in \d+ ms", out), out[-4000:]
    assert t[1]["echo1"][0] == "running" and t[1]["echo1"][3] == 1, t[1]
    assert t[1]["echo1"][1] != t[0]["echo1"][1]
    # stop: down and kept down; start: running again
    assert t[2]["echo1"] == ("stopped", "-", "any", 1, "-", "-"), t[2]
    # the build id is the running binary's: the same for every echo1 instance
    assert t[0]["echo1"][5] == t[1]["echo1"][5] == t[3]["echo1"][5] != t[0]["console"][5], t
    assert t[3]["echo1"][0] == "running", t[3]
    # a fault injected through rs crashes it; restart is immediate
    assert "rs: injecting crash into echo1" in out and re.search(r"rs: echo1 crashed: vector 14 ", out), out[-4000:]
    assert re.search(r"rs: restarting echo1 in 0 ms", out), out[-4000:]
    assert len(re.findall(r"^service: echo1 OK$", out, re.M)) == 5, out[-4000:]  # kill stop start inject restart
    # errors are named: unknown service, a live update the service cannot do, a binary that
    # is not there, a busy service, an over-long argument
    assert "service: nosuch: no such service" in out
    assert "service: echo1: not supported" in out, out[-4000:]
    assert "service: echo1: invalid argument" in out
    assert "service: echo1: busy" in out
    # the console updates itself: rs answers at once (it must get back to its loop to
    # quiesce), replaces it, and the new console serves the next command
    assert "service: console: updating to console (the new console says when it took over)" in out, out[-3000:]
    assert re.search(r"rs: console updated to console: \S+ replaced it as on a restart \(stall [\d.]+ ms\)$",
                     out, re.M), out[-3000:]
    assert "service: fault word too long (at most 15 characters): abcdefghijklmnop" in out


def test_console_polls_without_its_irq_and_needs_control():
    """Without irq=4 the console polls the UART; without `control` rs refuses its calls."""
    conf = CONF.replace(" irq=4 control", "")
    script = [
        (r"^console: ready$", "hepl\bx\x7f\x7flp\r"),
        (HELP_END, "service list\r"),
        (r"^service: list:", "service kill echo1\r"),
    ]
    r = run(script, until=r"^service: echo1: ", conf=conf)
    out = r.output
    assert re.search(r"^console: IRQ 4 not available \(error -1\), polling every 20 ms$", out, re.M), out[-3000:]
    assert len(re.findall(HELP_END, out, re.M)) == 1, out[-3000:]
    assert re.search(r"^service: list: not allowed$", out, re.M), out[-3000:]
    assert not listings(out)  # no table header for a refused list
    assert re.search(r"^service: echo1: not allowed$", out, re.M)
    assert "rs: echo1 exited" not in out
