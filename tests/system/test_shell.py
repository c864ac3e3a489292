"""The default image (boot/system.conf, what `make run` boots): rs starts ds, the console,
vfs, the network stack and pm, and pm starts busybox's ash on the serial terminal. The test
types at the prompt like a user: ls, cat, a pipeline, a background job and kill, ^C of a
foreground program, and the monitor behind Ctrl-], where it pings QEMU's gateway and
looks at the interface (restricted user networking, as `make run`)."""
import time
import os
import re

from conftest import ROOT, Guest, boot, user_net
from test_rs import write_conf

MODULES = ("rs conf=system.conf", "system.conf", "ds", "console", "vfs", "initrd.cpio", "pm", "lxstart",
           "e1000", "ip", "pf", "udp", "tcp", "syscall", "pf.conf")
PROMPT = r"(?#partial)/ # $"


def test_busybox_shell_on_the_serial_console():
    write_conf("system.conf", open(os.path.join(ROOT, "boot", "system.conf")).read())
    script = [
        (PROMPT, "ls /\r"),
        (PROMPT, "cat /etc/passwd\r"),
        (PROMPT, "echo hi | cat | wc -c\r"),
        (PROMPT, "sleep 30 &\r"),
        (PROMPT, "kill %1; wait; echo killed=$?\r"),
        # a signal right after fork is not lost (the child of an interactive shell restores
        # SIGTERM's default a few calls after fork): issue 22's acceptance line, 20 times
        (PROMPT, "for i in $(seq 20); do sleep 30 & kill $!; wait $!; echo kill$i=$?; done\r"),
        # ^C once the foreground program runs (it says so itself: ash has made its group
        # the terminal's foreground one before it runs a word of it)
        (PROMPT, "sh -c 'echo started; exec sleep 40'\r"),
        (r"^started$", "\x03"),
        (PROMPT, "echo back $?\r"),
        (r"^back \d+$", "\x1d"),
        (r"console: monitor", "service list\r"),
        (r"^pm +running", "\x1d"),
        (r"console: terminal", "echo done\r"),
    ]
    write_conf("pf.conf", open(os.path.join(ROOT, "boot", "pf.conf")).read())
    r = boot("", smp=2, modules=MODULES, timeout=300, script=script, until=r"(?m)^done$", net=user_net("e1000"))
    out = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", r.output.replace("\r", ""))  # ls colours
    tail = out[-4000:]
    listing = out[out.index("/ # ls /"):out.index("/ # cat /etc/passwd")].split()
    assert {"bin", "dev", "etc", "proc", "tmp", "usr"} <= set(listing), tail
    assert re.search(r"^root:x:0:0:", out, re.M), tail
    assert re.search(r"^3$", out, re.M), tail  # "hi\n" through two pipes
    # the background job ended by kill: ash reports it
    assert re.search(r"^\[1\]\+ +Terminated +sleep 30$", out, re.M), tail
    kills = re.findall(r"^kill(\d+)=(\d+)$", out, re.M)
    assert kills == [(str(i), "143") for i in range(1, 21)], kills
    # ^C ended the foreground program, not the shell: 128 + SIGINT
    assert re.search(r"^back 130$", out, re.M), tail
    assert re.search(r"^done$", out, re.M), tail
    assert re.search(r"^pm +running ", out, re.M), tail  # the monitor's service list

    assert "panic" not in out.lower(), tail


def test_default_image_gets_a_lease_and_pings_the_gateway():
    """The default image's network (restricted user networking, as `make run`): DHCP gives
    10.0.2.15, the console's ping gets every echo from QEMU's gateway, ifconfig shows the
    address."""
    write_conf("system.conf", open(os.path.join(ROOT, "boot", "system.conf")).read())
    write_conf("pf.conf", open(os.path.join(ROOT, "boot", "pf.conf")).read())
    with Guest("", modules=MODULES, net=user_net("e1000"), name="default-image-network") as g:
        # (not anchored: the shell's prompt may share the line with a log line)
        g.wait_for(r"ip: e1000: dhcp lease 10\.0\.2\.15/24", timeout=180)
        g.wait_for(r"console: terminal attached", timeout=60)
        g.type("\x1d")  # the monitor
        g.wait_for(r"console: monitor", timeout=30)
        time.sleep(0.5)
        mark = g.mark()
        g.type("ping -c 3 10.0.2.2\r")
        m = g.wait_for(r"(\d+) packets transmitted, (\d+) received", timeout=60, start=mark)
        assert m.group(1) == "3" and m.group(2) == "3", g.output[-3000:]
        assert re.search(r"64 bytes from 10\.0\.2\.2: icmp_seq=3 ttl=\d+ time=", g.output[mark:])
        mark = g.mark()
        g.type("ifconfig\r")
        g.wait_for(r"e1000 10\.0\.2\.15/24 52:54:00:12:34:56 mtu 1500 up dhcp", timeout=30, start=mark)
