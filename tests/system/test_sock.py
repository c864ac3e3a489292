"""The user-space socket library's first slice (lib/sock, docs/sockets.md): tests/sock/
sockbench.c under Axolotl with syscall and the real udp and tcp engines (their loopbacks):
a library-owned socket's non-blocking receive on an empty buffer makes no system call (the
kernel's count of the process's Linux calls does not move) and its cycles are printed next
to the system call's; datagrams both ways through the library, checked; syscall refuses
data calls on a library-owned socket (EBADFD) and serves them again once it is given back;
a TCP connection's accepted end moved by the library: 1 MiB each way, partial reads, a
give-back in the middle of a piece, the peer's shutdown as end of stream."""
import re

from conftest import boot, save_log
from test_rs import write_conf
from test_udp import BASE_MODULES, engine_conf
import sysconf_variants


def run_program(prog, tag, at_least, conf=None, dedicated_server=None):
    """Boots syscall, udp and tcp with pm running /bin/PROG (dedicated_server, if given, on
    core 1 of its own); its TAG PASS|FAIL lines all PASS and at least at_least of them.
    Returns the output."""
    name = conf or prog + ".conf"
    text = engine_conf("udp", "/bin/" + prog) + "service tcp dma heartbeat=2000 backoff=20\n"
    if dedicated_server:
        text = sysconf_variants.dedicated(text, dedicated_server)
    write_conf(name, text)
    r = boot("", smp=2, modules=("rs conf=" + name, name) + BASE_MODULES + ("udp", "tcp"), timeout=300,
             until=r"^%s: \d+ passed, \d+ failed$" % prog)
    out = r.output.replace("axolotl> ", "")
    tail = out[-4000:]
    res = dict((n, s) for s, n in re.findall(r"^%s (PASS|FAIL) (\S+)$" % tag, out, re.M))
    assert res and all(v == "PASS" for v in res.values()), ({k: v for k, v in res.items() if v != "PASS"}, tail)
    m = re.search(r"^%s: (\d+) passed, (\d+) failed$" % prog, out, re.M)
    assert m and int(m.group(2)) == 0 and int(m.group(1)) >= at_least, tail
    return out


def test_library_owned_sockets_without_system_calls():
    out = run_program("sockbench", "SOCKBENCH", 18)
    cycles = re.search(r"^sockbench: nonblocking recvfrom on an empty socket: .*$", out, re.M)
    assert cycles, out[-4000:]
    save_log("sockbench-results", cycles.group(0) + "\n")
    print(cycles.group(0))


def test_an_application_that_lies_in_its_socket_buffers_hurts_only_itself():
    """tests/sock/sockevil.c: garbage descriptors, an impossible TX head, an RX `released`
    past what was produced and a scribbled header in a UDP and a TCP socket it took over,
    and its activity page overwritten (every bit of both engines, the words, the engines'
    sleeping flags, the header) again and again; honest sockets on the system-call path keep working before, during and after, the
    abused ones report errors, and neither udp nor tcp is restarted."""
    out = run_program("sockevil", "SOCKEVIL", 7)
    for server in ("udp", "tcp", "syscall", "vfs"):
        assert not re.search(r"^rs: %s (exited|hung)" % server, out, re.M), out[-4000:]
    assert "panic" not in out.lower() and "lwip: assertion" not in out.lower(), out[-4000:]


def test_accepts_taken_over_wake_ups_and_status_from_the_stack():
    """tests/sock/sockwake.c: a connection taken over by syscall during the accept
    (AX_ACCEPT_TAKE) is adopted from the activity page without a system call and moves
    256 KiB each way; a library that counts itself as waiting and blocks on its wake
    socket is woken by data arriving on its socket (and one that did not count itself in
    is not); a sleeping tcp is woken by the library's own notify, and through syscall's
    AX_KICK when the page names a dead endpoint; a 1-byte read leaves a sleeping tcp asleep
    (below the mark tcp set beside `released`) and an 8 KiB read wakes it; a reset shows in
    the socket's status in the page."""
    out = run_program("sockwake", "SOCKWAKE", 18)
    for server in ("tcp", "syscall", "vfs"):
        assert not re.search(r"^rs: %s (exited|hung)" % server, out, re.M), out[-4000:]


def test_an_engine_on_a_dedicated_mwait_core_is_woken_by_a_store():
    """sockwake again with tcp on a core of its own (`cpu=1 dedicated`): tcp sleeps in
    KC_WAIT's MWAIT path watching its line of the bell, so the library wakes it with a store
    (`rings`) and never with a system call (`kicks` 0); everything still works. Under TCG
    MWAIT returns at once, so tcp polls: the store is still what the library does."""
    out = run_program("sockwake", "SOCKWAKE", 15, conf="sockwake_mwait.conf", dedicated_server="tcp")
    m = re.search(r"^sockwake: (\d+) calls moved data, (\d+) kicks, (\d+) bell rings$", out, re.M)
    assert m, out[-4000:]
    moved, kicks, rings = map(int, m.groups())
    assert moved > 0 and kicks == 0, m.group(0)


def test_an_unmodified_program_uses_the_library_through_ld_wrap():
    """tests/sock/sockposix.c, linked with lib/sock by ld --wrap (no axsock_* call):
    read/write/readv/writev/send/recv/sendmsg/recvmsg on a TCP connection and datagrams,
    poll/select/epoll over a socket and a pipe, FIONREAD, O_NONBLOCK, MSG_PEEK, shutdown;
    the counters show receives, polls, selects and epoll_waits answered in user space (and
    1000 empty receives with the kernel's count of Linux calls unchanged); then the same
    program with AXOLOTL_SOCK=0 passes the same checks with every counter at 0."""
    out = run_program("sockposix", "SOCKPOSIX", 60)
    assert re.search(r"^SOCKPOSIX PASS off_udp_empty_eagain$", out, re.M), out[-4000:]
    assert re.search(r"^SOCKPOSIX PASS off_without_library_counters_zero$", out, re.M), out[-4000:]
    calls = re.search(r"^sockposix: calls \(user/sys\):.*$", out, re.M)
    assert calls, out[-4000:]
    save_log("sockposix-counters", calls.group(0) + "\n")
    print(calls.group(0))


def test_pread_of_files_from_views_without_vfs():
    """tests/sock/fileview.c, linked with lib/sock by ld --wrap: preads of a regular file
    past the second come from vfs's file view with no Linux call, every byte compared;
    writes, truncations and growth through another descriptor and by a forked child are
    seen by the next pread; EOF, EINVAL, EFAULT, EBADF, EISDIR, ESPIPE as the system call;
    dup2 onto a descriptor with a view; 40 files round-robin (views taken back); a 5 MiB
    file through vfs; then the same checks with AXOLOTL_SOCK=0 and no view used."""
    out = run_program("fileview", "FILEVIEW", 29)
    assert re.search(r"^FILEVIEW PASS off_preads_are_linux_calls$", out, re.M), out[-4000:]
    m = re.search(r"^fileview: preads from views (\d+), to vfs (\d+), views mapped (\d+)$", out, re.M)
    assert m and int(m.group(1)) >= 100 and int(m.group(3)) >= 1, out[-4000:]
    print(m.group(0))


def test_udp_on_a_dedicated_mwait_core_is_woken_by_a_store():
    """sockbench with udp on a core of its own (`cpu=1 dedicated`): the library's datagram
    sends wake udp with a store to the bell when it sleeps, never with a system call
    (kicks 0), and every check passes as on shared cores."""
    out = run_program("sockbench", "SOCKBENCH", 18, conf="sockbench_udp_mwait.conf", dedicated_server="udp")
    m = re.search(r"^sockbench: datagram sends: (\d+) moved data, (\d+) kicks, (\d+) bell rings$", out, re.M)
    assert m, out[-4000:]
    moved, kicks, rings = map(int, m.groups())
    print(m.group(0))
    assert moved >= 100 and kicks == 0, m.group(0)
