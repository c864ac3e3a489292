"""`make run` with no terminal attached, and booting the same ISO under UEFI firmware."""
import os
import re
import signal
import subprocess
import time

import pytest

from conftest import ROOT, EXIT_TESTS_PASSED, boot

OVMF = "/usr/share/ovmf/OVMF.fd"


def test_make_run_boots_to_the_console_prompt_without_terminal():
    t0 = time.monotonic()
    # A session of our own: make, the launcher and QEMU share its process group, which we
    # end by the PID we started.
    proc = subprocess.Popen(["make", "-s", "--no-print-directory", "run", "SMP=4", "MEM=512"],
                            cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    out = b""
    try:
        os.set_blocking(proc.stdout.fileno(), False)
        while time.monotonic() - t0 < 120 and b"axolotl> " not in out:
            chunk = proc.stdout.read()
            if chunk:
                out += chunk
            elif proc.poll() is not None:
                break
            else:
                time.sleep(0.05)
        elapsed = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    text = out.decode("utf-8", "replace").replace("\r", "")
    assert "AXOLOTL READY" in text, text[-3000:]
    assert re.search(r"^cpus: 4 online of 4 listed", text, re.M)
    assert re.search(r"^memory: \d+ MiB usable", text, re.M)
    assert len(re.findall(r"^cpu\d apic=\d+ (bsp|ap) online monitor=\d", text, re.M)) == 4
    # the default image: rs starts the services of boot/system.conf, the console prompts
    nconf = sum(1 for l in open(os.path.join(ROOT, "boot", "system.conf")) if l.startswith("service "))
    assert re.search(r"^rs: %d services in system.conf$" % nconf, text, re.M), text[-3000:]
    assert re.search(r"^rs: started ds as 0x[0-9a-f]+ \(restarts 0\)$", text, re.M)
    assert re.search(r"^rs: started console as 0x[0-9a-f]+ \(restarts 0\)$", text, re.M)
    assert "axolotl> " in text
    print(f"make run reached the console prompt in {elapsed:.1f} s")


@pytest.mark.skipif(not os.path.exists(OVMF), reason="ovmf is not installed")
def test_uefi_boot():
    run = boot("tests=cpus_online,map_unmap_shootdown,timer_ticks qemu_exit", smp=2, cpu="max",
               uefi=True, timeout=240)
    assert "AXOLOTL READY" in run.output, run.output[-3000:]
    assert "XSDT" in run.output  # OVMF hands over ACPI 2.0 tables
    assert run.returncode == EXIT_TESTS_PASSED
