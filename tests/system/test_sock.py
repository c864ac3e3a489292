"""The user-space socket library's first slice (lib/sock, docs/sockets.md): tests/sock/
sockbench.c under Axolotl with syscall and the real udp engine (its loopback): a library-
owned socket's non-blocking receive on an empty buffer makes no system call (the kernel's
count of the process's Linux calls does not move) and its cycles are printed next to the
system call's; datagrams both ways through the library, checked; syscall refuses data calls
on a library-owned socket (EBADFD) and serves them again once it is given back."""
import re

from conftest import boot, save_log
from test_rs import write_conf
from test_udp import engine_conf, engine_modules


def test_library_owned_udp_socket_without_system_calls():
    name = "sockbench.conf"
    write_conf(name, engine_conf("udp", "/bin/sockbench"))
    r = boot("", smp=2, modules=engine_modules("udp", name), timeout=300,
             until=r"^sockbench: \d+ passed, \d+ failed$")
    out = r.output.replace("axolotl> ", "")
    tail = out[-4000:]
    res = dict((n, s) for s, n in re.findall(r"^SOCKBENCH (PASS|FAIL) (\S+)$", out, re.M))
    assert res and all(v == "PASS" for v in res.values()), ({k: v for k, v in res.items() if v != "PASS"}, tail)
    m = re.search(r"^sockbench: (\d+) passed, (\d+) failed$", out, re.M)
    assert m and int(m.group(2)) == 0 and int(m.group(1)) >= 10, tail
    cycles = re.search(r"^sockbench: nonblocking recvfrom on an empty socket: .*$", out, re.M)
    assert cycles, tail
    save_log("sockbench-results", cycles.group(0) + "\n")
    print(cycles.group(0))
