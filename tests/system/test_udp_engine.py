"""The udp server alone (servers/udp/README.md), driven by stand-ins for ip and syscall
(tests/user/udpstand.c, two services of one binary): a socket bound to port 7 echoes 3000
datagrams of 4 to 8000 bytes, each checked byte by byte with its IP and UDP checksums. ip is
killed after 1000 echoes: udp imports the new ip's channel and pools (the new ip stand-in
starts counting again). Then udp is killed after 1000 more and restarted by rs: it restores
its sockets from ds, syscall reattaches them and the echo goes on on the same socket; malformed packets are dropped and counted, a
datagram to a port nobody has is answered IPX_UNREACH_PORT, an ephemeral bind lands in
49152-65535, and broadcast needs SO_BROADCAST."""
import re

from conftest import boot
from test_rs import write_conf

COUNT = 3000
CONF = f"""# udp engine test: ip and syscall are stand-ins
service ds heartbeat=2000
service console ioports=0x3f8-0x3ff irq=4 control
service ip binary=udpstand args="role=ip count={COUNT}"
service syscall binary=udpstand args="role=sys"
service udp heartbeat=2000 backoff=20
"""
MODULES = ("rs conf=udp_engine.conf", "udp_engine.conf", "ds", "console", "udp", "udpstand")


def test_udp_echo_survives_a_restart_of_udp():
    write_conf("udp_engine.conf", CONF)
    script = [(r"udpstand-ip: 1000 echoed", "service kill ip\r"),
              (r"udpstand-ip: HELLO from udp incarnation 0", ""),
              (r"udpstand-ip: 1000 echoed", "service kill udp\r")]
    r = boot("", smp=4, modules=MODULES, timeout=300, script=script,
             until=r"^udpstand-ip: udp socket: 1 2 ")
    out = r.output.replace("axolotl> ", "")
    tail = out[-4000:]
    m = re.search(r"udpstand-ip: done: sent (\d+), echoed (\d+), corrupt (\d+), lost (\d+), duplicates (\d+), "
                  r"unreachable (\d+), broadcasts (\d+), other (\d+)$", out, re.M)
    assert m, tail
    sent, echoed, corrupt, lost, dup, unreach, bcast, other = map(int, m.groups())
    assert sent == COUNT and corrupt == 0 and other == 0, tail
    # the kill loses at most what was in flight (a window of 8 and what udp held)
    assert echoed + lost == COUNT and lost <= 16, tail
    assert unreach == 1, tail
    assert re.search(r"^udpstand-ip: broadcast from port \d+ to port 9$", out, re.M), tail
    # ip was killed: udp found the new one's names in ds and attached to it
    assert re.search(r"rs: ip exited with status", out, re.M), tail
    assert "udp: ip changed (restarted): importing its channel and pools again" in out, tail
    # udp was killed, restarted, restored the two sockets, syscall reattached them
    assert re.search(r"rs: udp exited with status", out, re.M), tail
    assert re.search(r"^udp: restored 2 sockets from ds \(2 slots\)$", out, re.M), tail
    assert "udpstand-sys: reattaching sockets 1 and 2" in out, tail
    assert "udp: started (restart 1)" in out, tail
    assert re.search(r"udpstand-sys: socket 2 bound to ephemeral port \d+ \(in range\)$", out, re.M), tail
    assert re.search(r"udpstand-sys: socket 2 error -13$", out, re.M), tail
    # malformed packets: bad checksum, bad UDP length, a fragment, truncated; one to port 9
    c = re.search(r"udpstand-ip: udp counters: (.*)$", out, re.M)
    assert c, tail
    counters = dict(kv.split() for kv in c.group(1).strip(", ").split(", "))
    assert counters["no_port"] == "1" and counters["csum_err"] == "1" and counters["malformed"] == "3", c.group(1)
    assert counters["bad_desc"] == "0", c.group(1)
    # the socket table after the restart: both sockets up, socket 1 on port 7
    assert re.search(r"^udpstand-ip: udp socket: 0 1 0\.0\.0\.0:7 \*:\* up$", out, re.M), tail
    assert re.search(r"^udpstand-ip: udp socket: 1 2 0\.0\.0\.0:\d+ \*:\* up bc$", out, re.M), tail
    assert "udp crashed" not in out and "lwip assert" not in out.lower(), tail
