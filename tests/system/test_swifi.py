"""Code-mutating fault injection (issue 21): `service inject NAME TYPE [N] [seed=S] [at=ADDR]`
on the default image. rs draws the instruction, lib/swifi changes it, the kernel writes it
into the running instance's own text (KC_TEXT). Checked here:
- every fault type of the model is applied to pf and logged with seed, type, address and
  the bytes before and after; the bytes before are the binary's own at that address;
- a replay (same type, seed and address) after a restart makes the same change to the new
  instance, whose text is clean again (its bytes before are the binary's, not the patch);
- a never-ending loop written into pf's per-turn poll (its first instruction of two bytes or
  more, before any branch) is a hang rs detects, and pf comes
  back and serves;
- a replay at an instruction the type does not fit is refused as such, one inside an
  instruction as an invalid argument;
- N faults at once, from one seed, each logged.
"""
import re
import struct
import time

import pytest

import tcp_tools
from conftest import ROOT
from test_tcp_apps import HOST, boot_apps, sysconf_variants

TYPES = ("flip", "srcreg", "dstreg", "pointer", "nop", "branch", "offbyone", "leak", "loop")
LOGLINE = (r"^rs: swifi (\w+) #(\d+) seed=(\d+) (\w+) at=(0x[0-9a-f]+) \(([\w.]+)\+(0x[0-9a-f]+|0)\): "
           r"((?:[0-9a-f]{2} )+)-> ((?:[0-9a-f]{2} )+)")


@pytest.fixture(scope="module")
def apps():
    yield from boot_apps(sysconf_variants.default(), "swifi")


def binary_bytes(name, va, n):
    """n bytes of build/user/NAME at virtual address va, from its PT_LOAD segments."""
    data = open(f"{ROOT}/build/user/{name}", "rb").read()
    phoff, phentsize, phnum = struct.unpack_from("<Q", data, 32)[0], *struct.unpack_from("<HH", data, 54)
    for i in range(phnum):
        typ, flags, off, vaddr, _, filesz = struct.unpack_from("<IIQQQQ", data, phoff + i * phentsize)
        if typ == 1 and vaddr <= va and va + n <= vaddr + filesz:
            return data[off + va - vaddr: off + va - vaddr + n]
    raise AssertionError(f"{name} has no file bytes at {va:#x}")


def symbol(name, sym):
    """Address of a function symbol of build/user/NAME (local or global)."""
    import subprocess
    out = subprocess.run(["nm", f"{ROOT}/build/user/{name}"], capture_output=True, text=True, check=True).stdout
    m = re.search(r"^([0-9a-f]+) [tT] %s$" % re.escape(sym), out, re.M)
    assert m, f"{sym} not in {name}"
    return int(m.group(1), 16)


def first_long_instruction(name, fn):
    """The first instruction of fn in build/user/NAME that is 2 bytes or longer, with no jump
    or call before it (every call of fn runs it)."""
    import subprocess
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", f"{ROOT}/build/user/{name}"],
                         capture_output=True, text=True, check=True).stdout
    body = re.search(r"^[0-9a-f]+ <%s>:\n((?:\s+[0-9a-f]+:.*\n)+)" % re.escape(fn), out, re.M).group(1)
    insns = re.findall(r"^\s+([0-9a-f]+):\s+(\S+)", body, re.M)
    for (a, op), (b, _) in zip(insns, insns[1:]):
        assert not op.startswith(("j", "call", "ret")), f"{fn} branches before a long instruction"
        if int(b, 16) - int(a, 16) >= 2:
            return int(a, 16)
    raise AssertionError(f"no long instruction in {fn}")


def starts(apps, name):
    return len(re.findall(r"^rs: started %s as" % name, apps.out(), re.M))


def inject(apps, args, expect=r"^service: \w+: (?:(\d+) faults injected, seed=\d+|(.+))"):
    """Runs `service inject ARGS`; the fault lines rs logged for it."""
    mark = apps.g.mark()
    apps.g.type(f"service inject {args}\r")
    m = apps.g.wait_for(expect, timeout=60, start=mark)
    assert m.group(1), f"service inject {args}: {m.group(0)}"
    time.sleep(0.5)  # rs's log lines precede its answer; let the console print them
    return re.findall(LOGLINE, apps.g.output[mark:].replace("axolotl> ", ""), re.M)


def restart(apps, name, before=None):
    """pf restarted (by us, or already by rs after its fault): a new instance runs."""
    before = starts(apps, name) if before is None else before
    apps.g.type(f"service restart {name}\r")
    deadline = time.monotonic() + 120
    while starts(apps, name) <= before:
        assert time.monotonic() < deadline, f"{name} did not come back: " + apps.out()[-3000:]
        time.sleep(0.2)
    time.sleep(1.6)  # rs treats a fault within 1 s of a start as a crash loop


def hexbytes(s):
    return bytes(int(x, 16) for x in s.split())


def test_every_fault_type_is_logged_replayed_and_gone_after_restart(apps):
    for k, typ in enumerate(TYPES):
        seed = 1000 + k
        # leak needs a call to a function that frees: tcp has lwIP's (pf may have none)
        victim = "tcp" if typ == "leak" else "pf"
        before = starts(apps, victim)
        faults = inject(apps, f"{victim} {typ} seed={seed}")
        assert len(faults) == 1, (typ, faults, apps.out()[-2000:])
        name, nth, s, t, at, fn, off, old, new = faults[0]
        assert (name, nth, int(s), t) == (victim, "1", seed, typ), faults[0]
        at = int(at, 16)
        old, new = hexbytes(old), hexbytes(new)
        assert old != new and len(old) == len(new), faults[0]
        # the first fault after a start: the instance's bytes were the binary's
        assert binary_bytes(victim, at, len(old)) == old, (faults[0], binary_bytes(victim, at, len(old)).hex())
        assert at == symbol(victim, fn) + int(off, 16), faults[0]
        if typ == "loop":
            assert new[:2] == b"\xeb\xfe", faults[0]
        if typ == "nop":
            assert set(new) == {0x90}, faults[0]
        if typ == "branch":
            assert new != old and len([1 for a, b in zip(old, new) if a != b]) == 1, faults[0]
        restart(apps, victim, before)
        # the replay on the new instance: the same change, made to clean text
        again = inject(apps, f"{victim} {typ} seed={seed} at={at:#x}")
        assert len(again) == 1 and again[0][4:] == faults[0][4:], (faults[0], again)
        restart(apps, victim)
    out = apps.out()
    assert "panic" not in out.lower(), out[-3000:]


def test_a_loop_in_pf_poll_is_a_hang_rs_ends(apps):
    before = starts(apps, "pf")
    poll = first_long_instruction("pf", "poll")
    mark = apps.g.mark()
    faults = inject(apps, f"pf loop seed=7 at={poll:#x}")
    assert len(faults) == 1 and int(faults[0][4], 16) == poll, faults
    apps.g.wait_for(r"^rs: pf hung", timeout=120, start=mark)
    deadline = time.monotonic() + 120
    while starts(apps, "pf") <= before:
        assert time.monotonic() < deadline, "pf was not restarted: " + apps.out()[-3000:]
        time.sleep(0.2)
    # pf is asked for every new connection's SYN: lighttpd answers again
    deadline = time.monotonic() + 120
    while True:
        try:
            if tcp_tools.http_get(HOST, apps.port[80], "/hello.txt", timeout=10)[0] == 200:
                break
        except OSError:
            pass
        assert time.monotonic() < deadline, "no HTTP answer after pf's restart: " + apps.out()[-3000:]
        time.sleep(1)
    time.sleep(1.6)


def test_a_fault_that_fits_no_instruction_is_refused_clearly(apps):
    """A replay at an instruction the type does not fit (a branch fault at a mov) changes
    nothing and says so; an address inside an instruction is an invalid argument."""
    at = first_long_instruction("pf", "poll")
    mark = apps.g.mark()
    apps.g.type(f"service inject pf branch seed=3 at={at:#x}\r")
    apps.g.wait_for(r"^service: pf: no instruction fits branch$", timeout=60, start=mark)
    mark = apps.g.mark()
    apps.g.type(f"service inject pf flip seed=3 at={at + 1:#x}\r")
    apps.g.wait_for(r"^service: pf: invalid argument$", timeout=60, start=mark)
    assert "rs: swifi pf" not in apps.g.output[mark:], apps.out()[-2000:]


def test_n_random_faults_from_one_seed(apps):
    before = starts(apps, "udp")
    faults = inject(apps, "udp random 5 seed=4242")
    assert [f[1] for f in faults] == ["1", "2", "3", "4", "5"], faults
    assert all(f[0] == "udp" and f[2] == "4242" and f[3] in TYPES for f in faults), faults
    restart(apps, "udp", before)


# The campaign's runs 13 and 24 (docs/faults/posix): a changed register and an inverted branch
# at the top of the console's on_notify made it ignore its UART's interrupt and never unmask
# the line; its loop went on beating, and the campaign found a console that answered nothing
# ("reboot"). The kernel now says how long a line bound KIRQ_WATCHED has stayed masked since
# its interrupt, and rs weighs a line masked for 3 s as a stall of its driver's.
@pytest.mark.parametrize("run,typ,seed,off,old", [(13, "dstreg", 664374901, 0xf, "48 89 f3"),
                                                  (24, "branch", 132573017, 0x17, "75 19")])
def test_a_console_deaf_to_its_uart_is_found_and_restarted(apps, run, typ, seed, off, old):
    at = symbol("console", "on_notify") + off
    assert binary_bytes("console", at, len(hexbytes(old))) == hexbytes(old), (
        f"on_notify+{off:#x} is no longer the campaign run {run}'s instruction ({old}): find it again")
    before = starts(apps, "console")
    faults = inject(apps, f"console {typ} seed={seed} at={at:#x}")
    assert len(faults) == 1 and int(faults[0][4], 16) == at and faults[0][7] == old + " ", faults
    mark = apps.g.mark()
    apps.g.type("service list\r")  # the next interrupt: not served any more
    apps.g.wait_for(r"^rs: the kernel says console has made no progress on IRQ 4 for \d+ ms", timeout=120,
                    start=mark)
    apps.g.wait_for(r"^rs: console stuck: no progress on IRQ 4, masked since its interrupt for \d+ ms",
                    timeout=120, start=mark)
    deadline = time.monotonic() + 120
    while starts(apps, "console") <= before:
        assert time.monotonic() < deadline, "console was not restarted: " + apps.out()[-3000:]
        time.sleep(0.2)
    apps.g.wait_for(r"^console: (?:ready|restarted)", timeout=60, start=mark)
    time.sleep(1.6)  # rs treats a fault within 1 s of a start as a crash loop
    apps.monitor("service list", r"^console +running", timeout=60)

