"""Device privileges: I/O ports through the TSS bitmap, ISA IRQ delivery as notifications,
MMIO mappings (never RAM), PCI configuration space, DMA objects, and a fuzz of the device
calls. udev (tests/user/udev.c) holds every privilege (init gives it all) and hands subsets
to the children it spawns stopped."""
import re

import pytest

from conftest import EXIT_POWEROFF, run_user_tests

ALL = ["pit", "ports", "pci", "mmio", "dma", "fuzz"]


def run_udev(tests, smp=2, cpu="max", timeout=90):
    return run_user_tests("udev", tests, smp=smp, cpu=cpu, timeout=timeout)


@pytest.mark.parametrize("cpu", ["max", "qemu64"])
def test_device_privileges(cpu):
    r, res = run_udev(ALL, smp=2, cpu=cpu)
    assert r.returncode == EXIT_POWEROFF, r.output[-3000:]
    for n in ALL:
        assert res.get(n, ("missing",))[0] == "PASS", (n, res.get(n), r.output[-3000:])
    assert "UTEST DONE failures=0" in r.output
    # port faults are general-protection faults (vector 13), reported with the details
    assert re.search(r"process udev .*stopped: exception 13 error (0x)?0 at rip", r.output), r.output[-3000:]
    assert "panic" not in r.output.lower(), r.output[-3000:]
