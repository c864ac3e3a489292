"""The application ports start under Axolotl (issue 5): memcached and lighttpd, built from
Debian sources with musl, start and sit in their event loops (the sockets they open have
no network behind them yet: servers/vfs/socket.c), and every call they make is served
(no ENOSYS); iperf 2, built with glibc, prints its version."""
import re

from conftest import boot
from test_rs import write_conf

CONF = """# the ports under pm; vfs takes pm messages from these managers
service vfs kcalls=vcopy args="pm=pmmc pm=pmhttp pm=pmiperf pm=pmclock"
service pmiperf binary=pm kcalls=vcopy args="run=/usr/bin/iperf -v" restart=never
service pmmc binary=pm kcalls=vcopy args="run=/usr/bin/memcached -u nobody -l 0.0.0.0 -m 64" restart=never
service pmhttp binary=pm kcalls=vcopy args="run=/usr/sbin/lighttpd -D -f /etc/lighttpd.conf" restart=never
service pmclock binary=pm kcalls=vcopy args="run=/bin/sleep 8" restart=never
"""


def test_memcached_and_lighttpd_sit_in_their_loops_iperf_prints_its_version():
    write_conf("apps.conf", CONF)
    r = boot("", smp=2, modules=("rs conf=apps.conf", "apps.conf", "vfs", "initrd.cpio", "pm", "lxstart"),
             timeout=240, until=r"pm: sleep \(pid \d+\) exited with status 0")
    out = r.output
    tail = out[-4000:]
    assert re.search(r"^iperf version 2\.1\.8 ", out, re.M), tail
    assert re.search(r"\(server\.c\.\d+\) server started \(lighttpd/1\.4\.69\)", out), tail
    assert re.search(r"^pm: started /usr/bin/memcached as pid \d+$", out, re.M), tail
    # still running when the 8-second clock ran out: in their event loops
    assert re.search(r"pm: sleep \(pid \d+\) exited with status 0", out), tail
    assert not re.search(r"pm: (memcached|lighttpd) \(pid \d+\) (exited|killed)", out), tail
    # nothing they call is unknown (iperf's glibc probes rseq, which Linux may lack too)
    assert not re.search(r"pm: (memcached|lighttpd): unsupported system call", out), tail
    assert "panic" not in out.lower(), tail
