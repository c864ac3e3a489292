"""The POSIX personality, first slice (issue 5): unmodified static Linux binaries built with
musl-gcc run under pm. The kernel serves arch_prctl, exit and sched_yield itself and forwards
every other Linux system call to pm in one kernel IPC round trip; pm reads the caller's
memory with KC_VCOPY, so bad pointers are EFAULT, and unknown calls are ENOSYS, logged once
by name."""
import re

from conftest import boot
from test_rs import write_conf

CONF = """# Linux programs under pm, files (the console) through vfs
service vfs kcalls=vcopy
service pmhello binary=pm kcalls=vcopy args="run=lxtest hello world 42" restart=never
service pmerrors binary=pm kcalls=vcopy args="run=lxtest errors" restart=never
service pmexit binary=pm kcalls=vcopy args="run=lxtest exit 7" restart=never
service pmfuzz binary=pm kcalls=vcopy args="run=lxtest fuzz 20000" restart=never
service pmmem binary=pm kcalls=vcopy args="run=lxtest memory" restart=never
service pmtime binary=pm kcalls=vcopy args="run=lxtest time" restart=never
service pmsys binary=pm kcalls=vcopy args="run=lxtest sysinfo" restart=never
"""


def run_programs(conf_name, conf, nprograms):
    """Boots rs with conf (vfs and pm services running lxtest); returns the serial output
    once nprograms have ended, and its LXTEST results {check: PASS|FAIL}."""
    write_conf(conf_name, conf)
    r = boot("", smp=2, modules=("rs conf=" + conf_name, conf_name, "vfs", "initrd.cpio", "pm", "lxtest"),
             timeout=180, until=r"(?s)(?:exited with status \d+\n.*?){%d}exited with status \d+\n" % (nprograms - 1))
    results = {name: status for status, name in re.findall(r"^LXTEST (PASS|FAIL) (\w+)$", r.output, re.M)}
    return r.output, results


def test_musl_static_binaries_run_under_pm():
    out, results = run_programs("lxtest.conf", CONF, 7)
    tail = out[-4000:]
    # stdout through writev with printf's buffering, stderr through write, argv, TLS
    assert "hello from musl: world 42 (argc 4, tls 42)" in out, tail
    assert "lxtest: stderr works too" in out, tail
    # error cases of the forwarded calls
    assert len(results) == 8 + 19 + 12 + 18 and set(results.values()) == {"PASS"}, results
    assert out.count("LXTEST DONE 0 failures") == 4, tail
    # ENOSYS is logged by name, once per call and pm
    assert len(re.findall(r"^pm: lxtest: unsupported system call acct \(163\): ENOSYS$", out, re.M)) <= 2
    # exit status reaches pm
    assert re.search(r"^pm: lxtest \(pid \d+\) exited with status 7$", out, re.M), tail
    # 20000 random calls: pm and the kernel survive, the program still gets answers
    m = re.search(r"^LXTEST fuzz: 20000 calls, (\d+) ENOSYS, pid (\d+) still answers$", out, re.M)
    assert m and int(m.group(2)) > 0, tail
    assert "crashed" not in out and "panic" not in out.lower(), tail
    assert len(re.findall(r"^pm: lxtest \(pid \d+\) exited with status 0$", out, re.M)) == 6, tail


VFS_CONF = """# Linux programs with vfs: file calls go straight to vfs
service vfs kcalls=vcopy
service pmfiles binary=pm kcalls=vcopy args="run=lxtest files" restart=never
service pmhello binary=pm kcalls=vcopy args="run=lxtest hello through vfs" restart=never
service pmfuzz binary=pm kcalls=vcopy args="run=lxtest fuzz 20000" restart=never
service pmpipes binary=pm kcalls=vcopy args="run=lxtest pipes" restart=never
"""


def test_files_on_vfs_ramfs_from_the_initrd():
    out, results = run_programs("lxvfs.conf", VFS_CONF, 4)
    tail = out[-4000:]
    assert re.search(r"^vfs: \d+ entries from initrd.cpio$", out, re.M), tail
    assert "hello from musl: through vfs (argc 4, tls 42)" in out, tail
    assert len(results) == 27 + 10 and set(results.values()) == {"PASS"}, results
    assert out.count("LXTEST DONE 0 failures") == 2, tail
    # random calls, the file calls among them served by vfs: vfs, pm and the kernel survive
    assert re.search(r"^LXTEST fuzz: 20000 calls, \d+ ENOSYS, pid \d+ still answers$", out, re.M), tail
    assert len(re.findall(r"^pm: lxtest \(pid \d+\) exited with status 0$", out, re.M)) == 4, tail
    assert "crashed" not in out and "no KC_VCOPY" not in out, tail


MORE_CONF = """# Linux programs with vfs: links, metadata, devices, /proc, polling
service vfs kcalls=vcopy
service pmlinks binary=pm kcalls=vcopy args="run=lxtest links" restart=never
service pmmeta binary=pm kcalls=vcopy args="run=lxtest meta" restart=never
service pmdevs binary=pm kcalls=vcopy args="run=lxtest devs" restart=never
service pmeventfd binary=pm kcalls=vcopy args="run=lxtest eventfd" restart=never
service pmpoll binary=pm kcalls=vcopy args="run=lxtest poll" restart=never
service pmepoll binary=pm kcalls=vcopy args="run=lxtest epoll" restart=never
service pmioctl binary=pm kcalls=vcopy args="run=lxtest ioctl" restart=never
"""
MORE_CHECKS = {"links": 38, "meta": 37, "devs": 29, "eventfd": 12, "poll": 21, "epoll": 23, "ioctl": 9}


def test_vfs_links_metadata_devices_and_polling():
    out, results = run_programs("lxmore.conf", MORE_CONF, len(MORE_CHECKS))
    tail = out[-4000:]
    assert set(results.values()) == {"PASS"}, results
    assert len(results) == sum(MORE_CHECKS.values()), results
    assert out.count("LXTEST DONE 0 failures") == len(MORE_CHECKS), tail
    assert len(re.findall(r"^pm: lxtest \(pid \d+\) exited with status 0$", out, re.M)) == len(MORE_CHECKS), tail
    assert "crashed" not in out, tail
