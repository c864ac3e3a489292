"""User space: init starts boot modules as processes; utest exercises kernel IPC,
scheduling, fault isolation and the kernel-call interface from ring 3."""
import re

import pytest

from conftest import EXIT_POWEROFF, run_user_tests


def run_utest(tests, smp=2, cpu="max", timeout=240):
    return run_user_tests("utest", tests, ("uecho", "ds"), smp=smp, cpu=cpu, timeout=timeout)


@pytest.mark.parametrize("cpu", ["max", "qemu64"])
def test_ipc_and_isolation(cpu):
    names = ["hello", "pingpong-same", "pingpong-cross", "notify", "calldie", "fault", "fpu"]
    r, res = run_utest(names, smp=2, cpu=cpu)
    assert r.returncode == EXIT_POWEROFF, r.output[-3000:]
    for n in names:
        assert res.get(n, ("missing",))[0] == "PASS", (n, res.get(n), r.output[-3000:])
    assert "UTEST DONE failures=0" in r.output
    # the fault test's child is reported by the kernel with its details, not silently lost
    assert re.search(r"process uecho .*stopped: exception 14 error 0x6 at rip 0x[0-9a-f]+, address 0$", r.output, re.M), r.output[-3000:]


def test_spawn_reclaims_memory_and_fuzzed_calls_are_refused():
    r, res = run_utest(["spawnloop", "fuzz"], smp=2)
    assert r.returncode == EXIT_POWEROFF, r.output[-3000:]
    assert res.get("spawnloop", ("missing",))[0] == "PASS", r.output[-3000:]
    assert res.get("fuzz", ("missing",))[0] == "PASS", r.output[-3000:]


def test_dedicated_core_takes_no_tick():
    r, res = run_utest(["dedicated"], smp=4)
    assert r.returncode == EXIT_POWEROFF, r.output[-3000:]
    assert res.get("dedicated", ("missing",))[0] == "PASS", r.output[-3000:]
    ticks = int(re.search(r"ticks_during=(-?\d+)", res["dedicated"][1]).group(1))
    assert ticks == 0


def test_init_reports_exit_of_every_module():
    r, res = run_utest(["hello"], smp=1)
    assert r.returncode == EXIT_POWEROFF, r.output[-3000:]
    assert re.search(r"init: utest .*exit.*0", r.output), r.output[-3000:]


def test_memory_objects_grant_revoke_copy_and_reclaim():
    names = ["share", "revoke", "vcopy", "text", "moloop", "lazy", "legacy"]
    r, res = run_utest(names, smp=4)
    assert r.returncode == EXIT_POWEROFF, r.output[-3000:]
    for n in names:
        assert res.get(n, ("missing",))[0] == "PASS", (n, res.get(n), r.output[-3000:])
    # the read-only grantee's write was a user write fault at its mapping, reported by the kernel
    va = re.search(r"grantee_va=(0x[0-9a-f]+)", res["share"][1]).group(1)
    assert re.search(r"process uecho .*exception 14 error 0x7 .*address 0x%x$" % (int(va, 16) + 24),
                     r.output, re.M), r.output[-3000:]


@pytest.mark.parametrize("cpu,path", [("max", "mwait"), ("qemu64", "block")])
def test_wait_wakes_a_waiter_on_another_core(cpu, path):
    r, res = run_utest(["wait"], smp=4, cpu=cpu)
    assert r.returncode == EXIT_POWEROFF, r.output[-3000:]
    assert res.get("wait", ("missing",))[0] == "PASS", r.output[-3000:]
    assert ("path=%s " % path) in res["wait"][1]


@pytest.mark.parametrize("cpu", ["max", "qemu64"])
def test_channel_round_trips_and_a_corrupted_channel(cpu):
    r, res = run_utest(["chan"], smp=4, cpu=cpu)
    assert r.returncode == EXIT_POWEROFF, r.output[-3000:]
    assert res.get("chan", ("missing",))[0] == "PASS", r.output[-3000:]


def test_data_store_namespaces_subscriptions_and_restart():
    r, res = run_utest(["ds"], smp=2)
    assert r.returncode == EXIT_POWEROFF, r.output[-3000:]
    assert res.get("ds", ("missing",))[0] == "PASS", r.output[-3000:]
