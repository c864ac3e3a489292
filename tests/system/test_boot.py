"""Boot Axolotl under TCG in several machine shapes and check the kernel self-tests
(kernel/test/), the CPU census and the feature detection."""
import re

import pytest

from conftest import EXIT_PANIC, EXIT_TESTS_PASSED, boot, qemu_release

# The self-tests every full run must report as passed (IPI tests skip on one CPU).
CORE_TESTS = {"cpus_online", "pmm_all_memory", "pmm_contig", "heap", "map_unmap_shootdown",
              "kernel_protections", "timer_ticks", "ioapic"}
MP_TESTS = {"ipi_roundtrip", "ipi_storm_no_deadlock", "resched_ipi", "klock_exclusion"}

MACHINES = [(1, "max"), (1, "qemu64"), (2, "max"), (2, "qemu64"), (8, "max"), (8, "qemu64")]


@pytest.mark.parametrize("smp,cpu", MACHINES, ids=[f"smp{s}-{c}" for s, c in MACHINES])
def test_selftests_pass(smp, cpu):
    run = boot("tests=all qemu_exit", smp=smp, cpu=cpu)
    results = run.ktests()
    failed = {k: v for k, v in results.items() if v[0] == "FAIL"}
    assert not failed, f"self-tests failed: {failed}"
    assert "KTEST SUMMARY" in run.output, run.output[-3000:]
    for name in CORE_TESTS:
        assert results.get(name, ("missing",))[0] == "PASS", f"{name}: {results.get(name)}"
    for name in MP_TESTS:
        want = "PASS" if smp > 1 else "SKIP"
        assert results.get(name, ("missing",))[0] == want, f"{name}: {results.get(name)}"
    assert run.returncode == EXIT_TESTS_PASSED, f"QEMU exit status {run.returncode}"


@pytest.mark.parametrize("smp,cpu", MACHINES, ids=[f"smp{s}-{c}" for s, c in MACHINES])
def test_every_cpu_online_with_features(smp, cpu):
    run = boot("tests=cpus_online qemu_exit", smp=smp, cpu=cpu)
    assert re.search(rf"^cpus: {smp} online of {smp} listed", run.output, re.M), run.output[-2000:]
    cpu_lines = re.findall(r"^cpu(\d+) apic=(\d+) (bsp|ap) (\w+) (.*)$", run.output, re.M)
    assert len(cpu_lines) == smp
    apic_ids = set()
    for idx, apic, role, state, feats in cpu_lines:
        assert state == "online"
        assert role == ("bsp" if idx == "0" else "ap")
        apic_ids.add(apic)
        f = dict(kv.split("=") for kv in feats.split())
        assert set(f) >= {"monitor", "x2apic", "invtsc", "pcid", "nx"}
        # -cpu max has MONITOR/MWAIT, qemu64 has not; TCG's -cpu max has x2APIC from
        # QEMU 8.1 on (test_x2apic_modes), qemu64 never.
        assert f["monitor"] == ("1" if cpu == "max" else "0"), feats
        if cpu == "qemu64":
            assert f["x2apic"] == "0", feats
        assert f["nx"] == "1"
    assert len(apic_ids) == smp, "APIC IDs must be distinct"
    assert "(xAPIC)" in run.output or "(x2APIC)" in run.output


# The LAPIC's two interfaces (kernel/arch/lapic.c): x2APIC MSRs where the CPU has them and
# the command line does not say nox2apic, else the xAPIC MMIO page. QEMU 10's TCG gives
# -cpu max an x2APIC, so -cpu max,-x2apic and nox2apic keep the MMIO path covered with the
# same CPU features otherwise (MONITOR/MWAIT, PCID, invariant TSC).
X2APIC_CASES = [  # (cpu, command line, CPUID's x2apic, the mode the kernel chose)
    ("max,-x2apic", "", "0", "xAPIC"),
    ("max", "nox2apic", "1", "xAPIC"),
    ("max", "", "1", "x2APIC"),
]


@pytest.mark.parametrize("cpu,opt,feature,mode", X2APIC_CASES, ids=["no-x2apic", "nox2apic", "x2apic"])
def test_x2apic_modes(cpu, opt, feature, mode):
    if feature == "1" and qemu_release() < (8, 1):
        pytest.skip("TCG has no x2APIC before QEMU 8.1")
    run = boot(f"tests=all {opt} qemu_exit".replace("  ", " "), smp=2, cpu=cpu)
    assert re.search(rf"^cpus: 2 online of 2 listed \({mode}\)", run.output, re.M), run.output[-2000:]
    feats = re.findall(r"^cpu\d+ apic=\d+ (?:bsp|ap) online (.*)$", run.output, re.M)
    assert len(feats) == 2, run.output[-2000:]
    for line in feats:
        f = dict(kv.split("=") for kv in line.split())
        assert f["x2apic"] == feature and f["monitor"] == "1", line
    # Every self-test passes in this mode: IPIs (calls, storms, rescheduling, shootdown),
    # the LAPIC timer and the IOAPIC's routing all go through the chosen interface.
    results = run.ktests()
    failed = {k: v for k, v in results.items() if v[0] == "FAIL"}
    assert not failed, f"self-tests failed: {failed}"
    for name in CORE_TESTS | MP_TESTS:
        assert results.get(name, ("missing",))[0] == "PASS", f"{name}: {results.get(name)}"
    assert run.returncode == EXIT_TESTS_PASSED, f"QEMU exit status {run.returncode}"


def test_deliberate_page_fault_dumps_and_halts_all_cpus():
    run = boot("tests=panic qemu_exit", smp=4, cpu="max", until=r"^PANIC: halted")
    out = run.output
    assert "TRAP 14 (page fault) on cpu0" in out, out[-3000:]
    assert re.search(r"page fault at CR2=0xffffd000dead0000: page not present, write, kernel", out)
    for reg in ("RIP", "RSP", "RAX", "RBX", "R15", "CR0", "CR3", "CR4", "RFLAGS"):
        assert re.search(rf"\b{reg} ?=0x[0-9a-f]{{4,16}}", out), f"{reg} missing from the dump"
    assert re.search(r"#0 0xffffffff8[0-9a-f]+ fault_here[.\w]*\+0x", out), "backtrace must name the faulting function"
    # The faulting leaf keeps no frame: its caller is found as the return address at RSP.
    assert re.search(r"0xffffffff8[0-9a-f]+ ktest_fn_panic\+0x", out), "backtrace must reach the caller"
    assert re.search(r"#\d 0xffffffff8[0-9a-f]+ ktest_run\+0x", out)
    assert "KERNEL PANIC on cpu0: unhandled page fault in kernel mode" in out
    halted = sorted(int(c) for c in re.findall(r"^cpu(\d+) halted by panic NMI", out, re.M))
    assert halted == [1, 2, 3]
    # Each halted CPU dumps its own state and backtrace.
    for c in (1, 2, 3):
        section = out.split(f"cpu{c} halted by panic NMI", 1)[1]
        assert re.search(rf"TRAP 2 \(NMI\) on cpu{c}", section), section[:800]
        assert re.search(r"backtrace:\n  #0 0xffffffff8[0-9a-f]+ \w+", section)
    assert len(re.findall(r"^  RAX=0x", out, re.M)) == 4  # the faulting CPU and three others
    assert "PANIC: halted 3 of 3 other CPUs" in out
    # Nothing runs after the panic: no further self-test output.
    assert "KTEST SUMMARY" not in out


def test_sixty_four_cpus():
    run = boot("tests=cpus_online,ipi_roundtrip,map_unmap_shootdown qemu_exit", smp=64, cpu="qemu64")
    assert re.search(r"^cpus: 64 online of 64 listed", run.output, re.M), run.output[-2000:]
    assert len(re.findall(r"roundtrip_cycles=\d+", run.output)) == 63
    assert run.returncode == EXIT_TESTS_PASSED, run.output[-2000:]


def test_test_selection_and_bad_options():
    # Unknown values fall back to defaults with the boot going on; only the named test runs.
    run = boot("tests=heap hz=abc loglevel=zz qemu_exit", smp=2, cpu="qemu64")
    assert run.ktests() == {"heap": ("PASS", run.ktests()["heap"][1])}
    assert "tick 100 Hz" in run.output
    assert "KTEST SUMMARY passed=1 failed=0 skipped=0" in run.output
    assert run.returncode == EXIT_TESTS_PASSED


def test_custom_tick_rate():
    run = boot("tests=timer_ticks hz=250 qemu_exit", smp=2, cpu="qemu64")
    assert "tick 250 Hz" in run.output
    ticks = [int(t) for t in re.findall(r"ticks=(\d+) in 300ms", run.output)]
    assert len(ticks) == 2
    # 250 Hz for 300 ms is 75 ticks; a 100 Hz tick would give 30 at most.
    assert all(t > 40 for t in ticks), ticks
    assert run.returncode == EXIT_TESTS_PASSED


def test_memory_above_4g():
    # q35 puts RAM beyond 2 GiB above the 4 GiB hole: the frame allocator and direct map
    # must cover it, and every frame must still be handed out exactly once.
    run = boot("tests=pmm_all_memory,pmm_contig,heap,map_unmap_shootdown qemu_exit", smp=2,
               cpu="qemu64", mem=3072)
    assert run.returncode == EXIT_TESTS_PASSED, run.output[-3000:]
    m = re.search(r"^memory: (\d+) MiB usable", run.output, re.M)
    assert m and int(m.group(1)) > 3000, m and m.group(0)
    frames = int(re.search(r"pmm_all_memory frames=(\d+)", run.output).group(1))
    assert frames * 4096 > 2900 * 2**20
