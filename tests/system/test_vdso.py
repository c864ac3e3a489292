"""The vDSO (docs/kernel-api.md section 8c): tests/linux/lxvdso.c, a musl program started by
pm from a boot module (so it gets the vDSO at KC_LX_PID) which also execs itself from the
initrd (KC_LX_EXEC), checks every clock against the system call and counts that the C
library's clock reads make no system call, inside Axolotl under TCG."""
import re

from conftest import boot
from test_rs import write_conf


def run_lxvdso(conf_name, cpu="max", timeout=300):
    """Boots vfs and pm (named so: vfs takes pm's messages from the service `pm` only) with
    pm running lxvdso; returns the output and the LXTEST results {check: PASS|FAIL}."""
    conf = ("service vfs kcalls=vcopy\n"
            'service pm binary=pm kcalls=vcopy args="run=lxvdso" restart=never\n')
    write_conf(conf_name, conf)
    r = boot("", smp=2, cpu=cpu, modules=("rs conf=" + conf_name, conf_name, "vfs", "initrd.cpio", "pm", "lxvdso"),
             timeout=timeout, until=r"^pm: lxvdso \(pid \d+\) (?:exited with status|killed by signal) \d+$")
    results = {}
    for status, name in re.findall(r"^LXTEST (PASS|FAIL) (\w+)$", r.output, re.M):
        results[name] = "FAIL" if results.get(name) == "FAIL" else status
    return r.output, results


def test_vdso_clocks_without_system_calls():
    out, results = run_lxvdso("lxvdso.conf")
    tail = out[-4000:]
    assert re.search(r"\bvdso: \d+-byte image, clocks from the TSC, getcpu by RDTSCP$", out, re.M), tail
    for name in ("auxv_sysinfo_ehdr", "symbols_dt_hash_linux_2_6", "symbols_dt_gnu_hash", "counter_counts_syscalls",
                 "monotonic_interleaved", "realtime_interleaved", "gettimeofday_agrees", "time_agrees",
                 "getres_agrees", "cputime_falls_back", "invalid_clock_einval",
                 "libc_10000_clock_gettime_no_syscalls", "getcpu_agrees", "vvar_write_faults",
                 "child_mprotect_madvise_munmap", "parent_vdso_intact", "execve_gets_vdso"):
        assert results.get(name) == "PASS", (name, results, tail)
    assert len(results) == 30 and set(results.values()) == {"PASS"}, (results, tail)
    assert "LXTEST INFO getcpu: no system call (RDTSCP)" in out, tail
    assert re.search(r"^pm: lxvdso \(pid \d+\) exited with status 0$", out, re.M), tail
    assert "panic" not in out.lower(), tail


def test_vdso_without_rdtscp_getcpu_traps():
    """qemu64 has no RDTSCP: the clocks still come from the TSC, getcpu is the system call."""
    out, results = run_lxvdso("lxvdso64.conf", cpu="qemu64")
    tail = out[-4000:]
    assert re.search(r"\bvdso: \d+-byte image, clocks from the TSC, getcpu by system call$", out, re.M), tail
    assert len(results) == 30 and set(results.values()) == {"PASS"}, (results, tail)
    assert "LXTEST INFO getcpu: system call" in out, tail
    assert "panic" not in out.lower(), tail
