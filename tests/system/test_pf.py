"""pf, the packet filter (servers/pf/README.md), with pftest standing in for ip
(tests/user/pftest.c: rs runs it as the service `ip`; it owns ip/pf.req and ip/pf.ans and
checks pf's verdicts). One boot: verdicts for a pf.conf that blocks a UDP port and keeps
state, garbage requests blocked and counted, the console's pf, netstat, ifconfig, route,
arp and ping commands, a rule added at run time, pf killed while requests stream in (the
restarted pf takes its rules from ds, the added one included, and answers every pending
request), then rule deletion, a bad rule, flush and reload, ip restarted (pf imports its new
channels), and a corrupted request channel (pf detaches and keeps serving until ip exports anew)."""
import os
import re

from conftest import USER_DIR, Guest
from test_rs import write_conf

CONF = """# pf test: pftest stands in for ip
service ds heartbeat=2000
service console ioports=0x3f8-0x3ff irq=4 control
service ip binary=pftest heartbeat=2000
service udp binary=pftest args="udp"
service pf heartbeat=1000 backoff=50
"""
PF_CONF = """# pf.conf of the pf test
block in proto udp to any port 7777
block in proto udp from 10.0.2.9
pass out proto udp to 10.0.2.9 keep state
"""
MODULES = ("rs conf=pftest.conf", "pftest.conf", "ds", "console", "pftest", "pf", "pftest-conf/pf.conf")


def counters(text):
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^\s*(\w+) (\d+)$", text, re.M)}


def test_pf_verdicts_console_and_restart():
    write_conf("pftest.conf", CONF)
    os.makedirs(os.path.join(USER_DIR, "pftest-conf"), exist_ok=True)
    write_conf("pftest-conf/pf.conf", PF_CONF)
    with Guest("", modules=MODULES, smp=2, name="test_pf") as g:
        g.wait_for(r"^(?:axolotl> )?pf: 3 rules from pf\.conf$", 90)
        g.wait_for(r"^(?:axolotl> )?PFTEST check 1: PASS \(12 verdicts\)$", 60)

        def cmd(line, until, timeout=30):
            """Types a command, waits for a line matching until (the prompt may precede it
            on its line); returns the log from there, prompts removed."""
            start = g.mark()
            g.type(line + "\r")
            g.wait_for(until.replace("^", "^(?:axolotl> )?", 1) if until.startswith("^") else until, timeout, start)
            return g.output[start:].replace("axolotl> ", "")

        g.wait_for(r"^console: ready", 30)
        g.wait_for(r"^(?:axolotl> )?pf: attached to ip/pf\.req and ip/pf\.ans \(ip 0x[0-9a-f]+, import 1\)$", 30)
        out = cmd("pf rules", r"^\s+3 pass out")
        assert re.search(r"^3 rules \[matches\]; last match wins; default pass$", out, re.M), out
        assert re.search(r"^\s+1 block in proto udp to any port 7777 \[[1-9]\d*\]$", out, re.M), out
        assert re.search(r"^\s+2 block in proto udp from 10\.0\.2\.9 \[3\]$", out, re.M), out
        out = cmd("pf states", r"^udp 10\.0\.2\.15:40001 10\.0\.2\.9:5000 est \d+s$")
        out = cmd("netstat", r"^  sockets 1$")
        c = counters(out.split("pf:")[1])
        assert c["bad_requests"] == 3 and c["blocked_in"] == 4 and c["states"] == 1, out
        assert re.search(r"^ip:\n  pf_requests \d+\n  pf_answers \d+$", out, re.M), out
        assert re.search(r"^udp:\n  sockets 1$", out, re.M), out
        # the console's ip commands, against pftest's answers
        out = cmd("ifconfig", r"^  rx 10 packets")
        assert "0 e1000 10.0.2.15/24 mac 52:54:00:12:34:56 mtu 1500 up" in out
        cmd("route", r"^10\.0\.2\.0/24 if 0$")
        cmd("arp", r"^10\.0\.2\.2 52:55:0a:00:02:02 if 0$")
        out = cmd("ping -c 3 -s 100 -i 200 10.0.2.2", r"^rtt min/avg/max = ")
        assert re.search(r"^PING 10\.0\.2\.2 \(10\.0\.2\.2\) 100\(128\) bytes of data\.$", out, re.M), out
        for seq in (1, 2, 3):
            assert re.search(rf"^108 bytes from 10\.0\.2\.2: icmp_seq={seq} ttl=255 time=0\.512 ms$", out, re.M), out
        assert re.search(r"^3 packets transmitted, 3 received, 0% packet loss$", out, re.M), out
        out = cmd("ping -c 2 -i 100 10.0.2.99", r"packet loss$")
        assert re.search(r"^2 packets transmitted, 0 received, 100% packet loss$", out, re.M), out
        cmd("ping -c 0 10.0.2.2", r"^usage: ping")
        cmd("ping 10.0.2", r"^ping: not an IPv4 address: 10\.0\.2$")
        cmd("route extra", r"^usage: route$")
        # a rule at run time, then pf killed while pftest keeps requests in flight
        cmd("pf add block in proto udp to any port 9999", r"^pf: rule 4 added$")
        cmd("pf add block in frm any", r"^pf: unknown word 'frm'$")
        cmd("pf add block in proto udp to any port 9999 keep state now", r"^pf: rule too long for pf add")
        cmd("service kill pf", r"^PFTEST restart: \d+ pending answered$", 60)
        log = g.output.replace("axolotl> ", "")
        assert re.search(r"^pf: 4 rules from ds \(restart 1\)$", log, re.M), log[-3000:]
        assert re.search(r"^pf: 1 connection-table entries from udp's and tcp's sockets$", log, re.M), log[-3000:]
        assert re.search(r"^PFTEST pf attached \(2\): resubmitting \d+ pending$", log, re.M), log[-3000:]
        cmd("service inject ip check", r"^PFTEST check 2: (PASS|FAIL)")
        log = g.output.replace("axolotl> ", "")
        assert re.search(r"^PFTEST check 2: PASS \(12 verdicts\)$", log, re.M), log[-3000:]
        out = cmd("pf rules", r"^\s+4 block in proto udp to any port 9999 \[1\]$")
        assert re.search(r"^4 rules ", out, re.M), out
        # pf hangs: rs notices the silence, kills and restarts it; what ip sent meanwhile is
        # pending, resubmitted to the new pf and answered
        cmd("service inject pf hang", r"^PFTEST restart: \d+ pending answered$", 60)
        log = g.output.replace("axolotl> ", "")
        assert re.search(r"^rs: pf hung: no heartbeat for 1000 ms", log, re.M), log[-3000:]
        assert re.search(r"^pf: 4 rules from ds \(restart 2\)$", log, re.M), log[-3000:]
        m = re.search(r"^PFTEST pf attached \(3\): resubmitting (\d+) pending$", log, re.M)
        assert m and int(m.group(1)) >= 3, log[-3000:]
        assert re.search(rf"^PFTEST restart: {m.group(1)} pending answered$", log, re.M), log[-3000:]
        out = cmd("service inject ip stats", r"^PFTEST stats:")
        m = re.search(r"stats: \d+ requests, \d+ answers, \d+ unknown ids, (\d+) stream blocked, (\d+) pending", out)
        assert m and m.group(1) == "0" and int(m.group(2)) <= 3, out
        # only the console may change the rules
        cmd("service inject ip perm", r"^PFTEST perm: call 0, reply type -1, w6 -1$")
        cmd("pf rules", r"^4 rules ")
        # deletion, errors, flush and reload
        cmd("pf del 4", r"^pf: rule 4 deleted$")
        cmd("pf del 9", r"^pf: no such rule$")
        cmd("pf flush", r"^pf: rules flushed: everything passes$")
        cmd("pf rules", r"^0 rules: everything passes$")
        cmd("pf reload", r"^pf: 3 rules from pf\.conf$")
        cmd("pf bogus", r"^usage: pf rules")
        # ip restarted: it exports new channels, pf hears of it through ds and imports them
        cmd("service kill ip", r"^pf: attached to ip/pf\.req and ip/pf\.ans \(ip 0x[0-9a-f]+, import 2\)$", 60)
        g.wait_for(r"^(?:axolotl> )?PFTEST check 1: PASS \(12 verdicts\)$", 30, g.output.find("service kill ip"))
        # a corrupt channel: pf detaches from it and keeps serving; a new ip brings it back
        cmd("service inject ip corrupt", r"^pf: ip/pf\.req is corrupt \(impossible index\): detached until ip exports anew$")
        cmd("pf rules", r"^3 rules ")
        cmd("service kill ip", r"^pf: attached to ip/pf\.req and ip/pf\.ans \(ip 0x[0-9a-f]+, import 3\)$", 60)
        g.wait_for(r"^(?:axolotl> )?PFTEST check 1: PASS \(12 verdicts\)$", 30, g.output.rfind("service kill ip"))
        cmd("service stop pf", r"^service: pf OK$")
        cmd("pf rules", r"^pf: pf is not running$")
        out = cmd("netstat", r"^  sockets 1$")
        assert "pf:" not in out.split("netstat", 1)[1]
        cmd("service stop ip", r"^service: ip OK$")
        cmd("service stop udp", r"^service: udp OK$")
        cmd("ifconfig", r"^ifconfig: ip is not running$")
        cmd("netstat", r"^netstat: no network service is running$")
        log = g.output.replace("axolotl> ", "")
        assert "rs: pf crashed" not in log and "rs: ip crashed" not in log
        assert len(re.findall(r"^rs: \w+ hung", log, re.M)) == 1, log  # the injected hang alone
