"""`make debug`'s gdb support (tools/gdb/axolotl.gdb and axolotl.py) against a real boot:
QEMU starts stopped with its gdb stub on 127.0.0.1, gdb runs the script (kernel symbols, run
to kmain), then breaks in one server's function only while that server runs (every process
has code at the same addresses), names the process, and lists the kernel's threads."""
import os
import re
import shutil
import socket
import subprocess

import pytest

from conftest import ACCEL, ROOT, free_port, iso_for, save_log
from qemu_cmd import gdb_args, qemu_command


@pytest.mark.skipif(shutil.which("gdb") is None, reason="gdb is not installed (make deps installs it)")
def test_gdb_stops_at_kmain_and_breaks_in_one_server():
    # utest's ds test sends requests to ds, which it spawns: ds's on_message runs then
    iso = iso_for("qemu_exit", ("init start=utest poweroff", "utest hello ds", "uecho", "ds"))
    port = free_port(socket.SOCK_STREAM)
    serial = os.path.join(ROOT, "build", "test-logs", "debug-serial.log")
    os.makedirs(os.path.dirname(serial), exist_ok=True)
    cmd = qemu_command(iso, smp=2, cpu="max", accel=ACCEL, serial=f"file:{serial}", extra=gdb_args(port))
    qemu = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        gdb = subprocess.run(
            ["gdb", "-nx", "-batch", "-x", "tools/gdb/axolotl.gdb",
             "-ex", "bt 1",
             "-ex", "ax-break ds on_message",
             "-ex", "continue",
             "-ex", "python print('STOPPED IN ' + gdb.parse_and_eval('$ax_proc()').string())",
             "-ex", "bt 1",
             "-ex", "ax-threads",
             "-ex", "kill"],
            cwd=ROOT, env=dict(os.environ, GDBPORT=str(port)), capture_output=True, text=True, timeout=600)
    finally:
        if qemu.poll() is None:
            qemu.kill()  # our own QEMU, by PID
        qemu.wait()
    out = gdb.stdout + gdb.stderr
    save_log("debug-gdb", out)
    # the script ran to the kernel's C entry
    assert re.search(r"Breakpoint 1, kmain \(", out), out[-3000:]
    assert re.search(r"^#0 +kmain \(", out, re.M), out[-3000:]
    # the conditional breakpoint stopped in ds (not in init or utest, whose code sits at
    # the same addresses), with ds's symbols loaded
    assert re.search(r"Breakpoint 2(, | at).*on_message", out), out[-3000:]
    assert "STOPPED IN ds" in out, out[-3000:]
    assert re.search(r"^#0 +(0x[0-9a-f]+ in )?on_message \(.*servers/ds/", out, re.M), out[-3000:]
    # the thread table: ds runs, utest waits for its answer
    rows = {m.group(2): m.group(3) for m in re.finditer(r"^(\d+) +(\S+) +(T_\w+)", out, re.M)}
    assert rows.get("ds") == "T_RUNNING", rows
    assert rows.get("utest") in ("T_BLOCKED", "T_READY"), rows
    assert "init" in rows, rows


def test_nmi_hang_report_lists_every_cpu_and_thread_and_the_system_goes_on():
    """The harness's hang report (Guest.hang_report, sent when a wait times out): an NMI
    from QEMU's monitor makes each CPU name what it runs and one list every thread
    (kernel/core/hang_report.c); afterwards the system runs on as before."""
    from conftest import Guest
    from test_console import CONF, MODULES
    from test_rs import write_conf
    write_conf("contest.conf", CONF)
    with Guest("", modules=MODULES, smp=2, name="hang-report") as g:
        g.wait_for(r"^console: ready$", timeout=120)
        report = g.hang_report()
        assert g.hang_report() == "", "a second report in the same boot"
        for cpu in (0, 1):
            assert re.search(r"^hang-report cpu%d: .* at (user|kernel) 0x[0-9a-f]+ " % cpu, report, re.M), report
        assert re.search(r"^hang-report: 2 of 2 CPUs answered", report, re.M), report
        threads = re.findall(r"^hang-report thread \d+ (\S+): (\w+)", report, re.M)
        names = {n for n, _ in threads}
        assert {"rs", "console", "uecho"} <= names, threads
        assert all(s in ("ready", "running", "blocked", "dead") for _, s in threads), threads
        # and the console still answers
        mark = g.mark()
        g.type("service list\r")
        g.wait_for(r"^echo1 +running ", timeout=60, start=mark)
