"""The serial console as a terminal for Linux programs: the console server forwards typed
bytes to vfs's terminal (line discipline in servers/vfs/ldisc.c), and lxtty, an unmodified
musl program under pm, checks what its reads return while this test types into QEMU's
serial port: edited lines with echo, end of file, raw single bytes without echo, VTIME,
the window size, and the signal characters, which vfs sends to pm as PM_SIGNAL (a stand-in
pm, upmsig, logs them: the real pm delivering signals is tested with pm). Then Ctrl-] goes
to the console's monitor and back."""
import re

from conftest import boot
from test_rs import write_conf

CONF = """# the terminal: vfs owns it, the console feeds it, lxtty reads it
service ds heartbeat=1000
service vfs kcalls=vcopy
service console ioports=0x3f8-0x3ff irq=4 control keep heartbeat=1000
service pm binary=upmsig
service lxpm binary=pm kcalls=vcopy args="run=lxtty" restart=never
"""
MODULES = ("rs conf=tty.conf", "tty.conf", "ds", "vfs", "initrd.cpio", "console", "upmsig", "pm", "lxtty")


def test_linux_program_reads_the_serial_terminal():
    write_conf("tty.conf", CONF)
    script = [
        (r"LXTTY READY sync$", "sync\r"),
        (r"LXTTY READY edit$", "hellx\x7fo wrld\b\b\borld\r"),
        (r"LXTTY READY kill$", "garbage\x15kept\r"),
        (r"LXTTY READY werase$", "one two\x17three\r"),
        (r"LXTTY READY literal$", "a\x16\x03b\r"),
        (r"LXTTY READY eof$", "partial\x04\x04"),
        (r"LXTTY READY fionread$", "abc\r"),
        (r"LXTTY READY raw$", "xyz"),
        (r"LXTTY READY vmin2$", "pq"),
        (r"LXTTY READY interbyte$", "ab"),
        (r"LXTTY READY signals$", "lost\x03"),
        (r"upmsig: PM_SIGNAL to -\d+ signal 2$", "\x1c"),
        (r"upmsig: PM_SIGNAL to -\d+ signal 3$", "\x1a"),
        (r"upmsig: PM_SIGNAL to -\d+ signal 20$", "after\r"),
        # killed from its own monitor, the console comes back in the monitor (kept state)
        (r"LXTTY READY restart$", "\x1dservice kill console\r"),
        (r"console: terminal attached; typing stays in the monitor", "service list\r"),
        (r"^lxpm ", "\x1d"),
        (r"console: terminal \(Ctrl-\] for the monitor\)$", "again\r"),
        (r"LXTTY DONE", "\x1d"),
        (r"console: monitor \(Ctrl-\] returns to the terminal\)$", "service list\r"),
        (r"^lxpm ", "\x1d"),
    ]
    r = boot("", smp=2, modules=MODULES, timeout=300, script=script,
             until=r"(?s)LXTTY DONE.*console: terminal \(Ctrl-\] for the monitor\)$")
    out = r.output
    tail = out[-4000:]
    assert "console: terminal attached: typing goes to it" in out, tail
    results = dict((name, status) for status, name in re.findall(r"^LXTTY (PASS|FAIL) (\w+)$", out, re.M))
    assert len(results) == 38 and set(results.values()) == {"PASS"}, results
    assert "LXTTY DONE 0 failures" in out, tail

    # the echo on the serial line: erasing with BS SP BS, ^U erasing the line, ^W the word,
    # ^V showing a caret, and end of file not echoed
    assert "hellx\b \bo wrld\b \b\b \b\b \borld\n" in out, tail
    assert "garbage" + "\b \b" * 7 + "kept\n" in out, tail
    assert "one two" + "\b \b" * 3 + "three\n" in out, tail
    assert "a^\b^Cb\n" in out, tail
    assert "partialLXTTY GOT eof1 7:" in out, tail

    # raw mode: single bytes, no echo
    raw = out[out.index("LXTTY READY raw"):out.index("LXTTY GOT raw")]
    assert "xyz" not in raw and "x" not in raw.split("\n", 1)[1], raw
    assert "LXTTY GOT raw 3: 78 79 7a" in out, tail

    # the signal characters: echoed as ^C ^\ ^Z, and sent to the foreground group via pm
    group = re.search(r"^LXTTY foreground group (\d+)$", out, re.M).group(1)
    sigs = re.findall(r"upmsig: PM_SIGNAL to (-?\d+) signal (\d+)$", out, re.M)
    assert sigs == [("-" + group, "2"), ("-" + group, "3"), ("-" + group, "20")], sigs
    after = out[out.index("LXTTY READY signals"):]
    for echo in ("^C", "^\\", "^Z"):
        assert echo in after, after

    # the console killed from its own monitor comes back in the monitor (it keeps where
    # typing went), attaches to the terminal again, and Ctrl-] reaches the terminal
    restart = out[out.index("LXTTY READY restart"):]
    assert re.search(r"rs: started console as \S+ \(restarts 1\b", restart), restart
    assert "console: restarted (generation 2): typing goes to the monitor, as before" in restart, restart
    assert restart.count("console: terminal attached") == 1, restart
    back = restart[restart.index("typing stays in the monitor"):restart.index("LXTTY DONE")]
    assert re.search(r"^lxpm +running", back, re.M), back

    # Ctrl-] reaches the monitor, which still runs commands, and returns
    mon = out[out.index("console: monitor (Ctrl-]"):]
    assert re.search(r"^vfs +running", mon, re.M) and re.search(r"^lxpm +running", mon, re.M), mon
    assert "crashed" not in out and "panic" not in out.lower(), tail
