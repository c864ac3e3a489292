"""tools/qprof.py, the monitor-sampling profiler: its parsing of `info registers -a`, its
symbol lookup against the built kernel, and its report. No guest."""
import os
import sys

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "tools"))
import qprof  # noqa: E402

# Two vCPUs as QEMU's x86 monitor prints them (fields trimmed to what matters, order kept).
REGS = """CPU#0
RAX=0000000000000000 RBX=0000000000000001 RCX=0000000000000002 RDX=0000000000000003
RSI=0000000000000000 RDI=0000000000000000 RBP=ffffffff80213fa8 RSP=ffffffff80213f80
RIP=ffffffff80101010 RFL=00000246 [---Z-P-] CPL=0 II=0 A20=1 SMM=0 HLT=1
CR0=80010033 CR2=0000000000000000 CR3=0000000001000000 CR4=00000620
CPU#1
RAX=0000000000000000 RBX=0000000000000001 RCX=0000000000000002 RDX=0000000000000003
RIP=0000000000406ce0 RFL=00000202 [-------] CPL=3 II=0 A20=1 SMM=0 HLT=0
CR0=80010033 CR2=0000000000000000 CR3=000000003fca3000 CR4=00000620
"""


def test_parse_registers_takes_rip_and_cr3_of_each_vcpu():
    assert qprof.parse_registers(REGS) == [(0, 0xffffffff80101010, 0x1000000), (1, 0x406ce0, 0x3fca3000)]
    assert qprof.parse_registers("(qemu) unknown command") == []


def test_report_names_kernel_functions_and_user_address_spaces():
    r = qprof.Resolver([(0xffffffff80100000, "sched_idle_loop"), (0xffffffff80101000, "memset"),
                        (0xffffffff80102000, "klock")])
    samples = [(10.0 + i * 0.01, cpu, rip, cr3) for i in range(10)
               for cpu, rip, cr3 in qprof.parse_registers(REGS)]
    samples.append((10.2, 0, 0xffffffff80102004, 0x1000000))
    text = qprof.report(samples, r, bin_s=0.05)
    assert "cpu0: 11 samples" in text and "cpu1: 10 samples" in text, text
    assert " 90.9%  memset" in text and "  9.1%  klock" in text, text
    assert "100.0%  user cr3=3fca3000 rip=406ce0" in text, text
    # the timeline: 10 ms apart, 50 ms bins: 5 per bin, the last bin holds the klock sample
    assert "     0 ms  memset:5 | user cr3=3fca3000:5" in text, text
    assert "   200 ms  klock:1 | -" in text, text
    assert qprof.report([], r) == "no samples\n"


def test_symbols_of_the_built_kernel():
    elf = os.path.join(ROOT, "build", "axolotl.elf")
    syms = qprof.symbols(elf)
    names = dict((n, a) for a, n in syms)
    assert "memset" in names and "syscall_dispatch" in names, len(syms)
    r = qprof.Resolver(syms)
    assert r.where(names["memset"] + 1, 0) == "memset"
    assert r.where(0x401000, 0x2000).startswith("user cr3=2000")


def test_threads_name_address_spaces_and_user_functions():
    text = ("endpoint   cpu  state          runs     cpu_ms     kcalls   notifies as         name\n"
            "10004      1    receive        1200        116       5000        700 3fca3000   vfs\n"
            "10005      0p   wait             90         12        400         30 2000       e1000\n")
    spaces = qprof.address_spaces(text)
    assert spaces == {0x3fca3000: "vfs", 0x2000: "e1000"}
    r = qprof.Resolver([(0xffffffff80100000, "sched_idle_loop")], spaces,
                       {"vfs": [(0x406000, "epoll_wait"), (0x407000, "vfs_poll")]})
    assert r.where(0x406ce0, 0x3fca3000) == "vfs:epoll_wait"
    assert r.where(0x401000, 0x2000) == "e1000 rip=401000"
    assert r.where(0x401000, 0x5000) == "user cr3=5000 rip=401000"
    samples = [(10.0, 0, 0x406ce0, 0x3fca3000), (10.01, 0, 0x407004, 0x3fca3000)]
    text = qprof.report(samples, r)
    assert "100.0%  vfs" in text and " 50.0%  vfs:vfs_poll" in text, text
