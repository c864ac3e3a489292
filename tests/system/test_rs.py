"""rs, the reincarnation server: services from a configuration module, started with exactly
their privileges, restarted per policy with back-off."""
import os
import re

from conftest import USER_DIR, boot

CONF = """# rs test configuration
service crasher binary=uecho args="crash" restart=on-failure backoff=50
service quitter binary=uecho args="exit 0" restart=on-failure
service failer binary=uecho args="exit 3" restart=never
service porty binary=uecho args="inb 128" ioports=0x80 restart=never
service noporty binary=uecho args="inb 128" restart=never
service hanger binary=uecho args="hang" heartbeat=200 restart=always backoff=50
service healthy binary=uecho args="echo" heartbeat=150
service rogue binary=uecho args="rskill healthy" restart=never
"""


def write_conf(name, text):
    os.makedirs(USER_DIR, exist_ok=True)
    path = os.path.join(USER_DIR, name)
    if not os.path.exists(path) or open(path).read() != text:
        with open(path, "w") as f:
            f.write(text)


def test_rs_starts_services_with_their_privileges_and_restarts_crashes():
    write_conf("rstest.conf", CONF)
    r = boot("", smp=2, modules=("rs conf=rstest.conf", "rstest.conf", "uecho"), timeout=120,
             until=r"^rs: started hanger as 0x[0-9a-f]+ \(restarts 1\)$")
    out = r.output
    assert "rs: 8 services in rstest.conf" in out, out[-3000:]
    for name in ("crasher", "quitter", "failer", "porty", "noporty", "hanger", "healthy", "rogue"):
        assert re.search(r"^rs: started %s as 0x[0-9a-f]+ \(restarts 0\)$" % name, out, re.M), (name, out[-3000:])
    # policies: exit 0 with on-failure and anything with never stay down
    assert "rs: quitter exited with status 0" in out and "rs: quitter stays down" in out
    assert "rs: failer exited with status 3" in out and "rs: failer stays down" in out
    # privileges: the port holder reads it; the other faults with #GP and is reported
    assert "rs: porty exited with status 5" in out, out[-3000:]
    assert re.search(r"^rs: noporty crashed: vector 13 ", out, re.M), out[-3000:]
    # a crash loop is restarted with a doubling delay, and told it is a restart
    delays = [int(d) for d in re.findall(r"^rs: restarting crasher in (\d+) ms$", out, re.M)]
    assert delays[:3] == [50, 100, 200], delays
    assert re.search(r"^rs: started crasher as 0x[0-9a-f]+ \(restarts 2\)$", out, re.M)
    assert re.search(r"^rs: crasher crashed: vector 14 ", out, re.M)
    # a service that stops beating is declared hung, killed and restarted; one whose event
    # loop answers rs's pings never is
    assert "rs: hanger hung: no heartbeat for 200 ms" in out, out[-3000:]
    assert "rs: healthy hung" not in out and "rs: healthy exited" not in out
    # rs's control calls are only for services configured with `control`
    assert "uecho: rs answered -1 to kill healthy" in out, out[-3000:]
    assert "rs: rogue exited with status 0" in out


STARVE_CONF = """# a service starved of CPU is not hung (servers/rs/rs_hang.c)
service hog binary=uecho args="hog 2500" cpu=1 priority=1 restart=never
service meek binary=uecho args="echo" cpu=1 heartbeat=200
"""


def test_rs_spares_a_service_starved_of_cpu():
    """hog spins for 2.5 s at a higher priority on the CPU meek is pinned to, so meek, ready
    but never run, misses a dozen heartbeat periods: rs says it is starved, kills nothing,
    and meek beats again once hog is gone. (A service that spins itself, `hanger` above,
    is still declared hung.)"""
    write_conf("rsstarve.conf", STARVE_CONF)
    r = boot("", smp=2, modules=("rs conf=rsstarve.conf", "rsstarve.conf", "uecho"), timeout=120,
             until=r"^rs: meek beats again after \d+ starved periods$")
    out = r.output
    assert re.search(r"^rs: meek starved: no heartbeat for 200 ms, but no CPU either; not killed$", out, re.M), \
        out[-3000:]
    assert re.search(r"^rs: meek is ready on cpu 1, last in the kernel from 0x[0-9a-f]+$", out, re.M), out[-3000:]
    assert "rs: hog exited with status 0" in out, out[-3000:]
    # the kernel tells a thread's state to its parent (rs) and itself, not to a child:
    # hog's own state is running (2) on CPU 1
    assert "uecho: state of the parent -1, own %d" % (2 | 1 << 16) in out, out[-3000:]
    assert out.index("rs: hog exited") < out.index("rs: meek beats again"), out[-3000:]
    assert not re.search(r"^rs: meek (hung|exited)", out, re.M), out[-3000:]
    periods = int(re.search(r"^rs: meek beats again after (\d+) starved periods$", out, re.M).group(1))
    assert periods >= 3, periods


WAIT_CONF = """# a service waiting in a call is not hung (rs_hang.c)
service slow binary=uecho args="busy 1500" heartbeat=200 restart=never
service caller binary=uecho args="callto slow" heartbeat=200 restart=never
"""


def test_rs_follows_a_wait_to_its_end():
    """caller calls slow, which spins for 1.5 s before it receives anything: caller misses
    several heartbeat periods blocked in the call, and rs, following the call to slow (on a
    CPU), says it waits and kills nothing (killing a caller for its peer's slowness is how
    one restart spread to ip, e1000, pf and udp). slow itself spins those 1.5 s before its
    first beat: setting up is not a hang (for up to 10 s)."""
    write_conf("rswait.conf", WAIT_CONF)
    r = boot("", smp=2, modules=("rs conf=rswait.conf", "rswait.conf", "uecho"), timeout=120,
             until=r"^rs: caller beats again after \d+ periods waiting on a peer$")
    out = r.output
    assert re.search(r"^rs: caller waits on slow: no heartbeat for 200 ms; not killed$", out, re.M), out[-3000:]
    assert re.search(r"^rs: caller is blocked (sending to|awaiting a reply from) 0x[0-9a-f]+ on cpu \d+, .*the "
                     r"chain of calls ends at 0x[0-9a-f]+$", out, re.M), out[-3000:]
    m = re.search(r"^uecho: slow answered 42 after (\d+) ms$", out, re.M)
    assert m and int(m.group(1)) >= 1000, out[-3000:]  # slow spun 1.5 s from its start
    assert not re.search(r"^rs: (caller|slow) (hung|exited)", out, re.M), out[-3000:]


def test_rs_refuses_a_broken_configuration_with_the_line():
    write_conf("rsbad.conf", "service ok binary=uecho\nservice bad colour=blue\n")
    r = boot("", smp=1, modules=("rs conf=rsbad.conf", "rsbad.conf", "uecho"), timeout=60,
             until=r"^rs: rsbad.conf line")
    assert re.search(r"^rs: rsbad.conf line 2: unknown key: colour=blue$", r.output, re.M), r.output[-2000:]
    assert "rs: started" not in r.output
