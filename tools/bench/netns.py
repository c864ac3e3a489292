"""The benchmark suite's tap network (`bench.py run --net tap`): a network namespace of its
own, axbench-PID, holding only a loopback and a tap device (TAP, HOST_ADDR/24) that QEMU
opens; the guests are GUEST_ADDR behind it. The suite runs itself again inside the
namespace (QEMU and the host-side clients both), so no packet can reach any other network,
and the namespace (its tap with it) is removed afterwards, also when the run is interrupted
(SIGINT and SIGTERM are passed on to the run, which kills its QEMUs by PID). A namespace
left by a run that was killed outright (SIGKILL) is removed by the next run, once the PID
in its name is gone. Needs root and /dev/net/tun."""
import os
import re
import signal
import subprocess

PREFIX = "axbench-"
TAP = "axtap0"
HOST_ADDR = "10.0.2.2"


def _ip(*args, check=True):
    return subprocess.run(["ip"] + list(args), capture_output=True, text=True, check=check)


def names():
    """The suite's namespaces that exist now."""
    out = _ip("netns", "list", check=False).stdout
    return [m for m in re.findall(r"^(\S+)", out, re.M) if m.startswith(PREFIX)]


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale():
    for ns in names():
        pid = ns[len(PREFIX):]
        if pid.isdigit() and not _alive(int(pid)):
            _ip("netns", "del", ns, check=False)


def create(ns):
    """The namespace with lo up and the tap device addressed and up; removed again if any
    step fails."""
    _ip("netns", "add", ns)
    try:
        _ip("-n", ns, "link", "set", "lo", "up")
        _ip("-n", ns, "tuntap", "add", "dev", TAP, "mode", "tap")
        _ip("-n", ns, "addr", "add", HOST_ADDR + "/24", "dev", TAP)
        _ip("-n", ns, "link", "set", TAP, "up")
    except subprocess.CalledProcessError as e:
        _ip("netns", "del", ns, check=False)
        raise SystemExit(f"bench: cannot make the tap network ({' '.join(e.cmd)}): {e.stderr.strip()}")


def run_inside(cmd):
    """Runs cmd in a fresh namespace and removes the namespace afterwards: cmd's exit
    status."""
    if os.geteuid() != 0:
        raise SystemExit("bench: --net tap needs root (a network namespace and a tap device)")
    remove_stale()
    ns = f"{PREFIX}{os.getpid()}"
    create(ns)
    child = None

    def forward(sig, _frame):
        if child is not None and child.poll() is None:
            child.send_signal(sig)

    old = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        child = subprocess.Popen(["ip", "netns", "exec", ns] + list(cmd))
        return child.wait()
    finally:
        if child is not None and child.poll() is None:
            child.terminate()
            try:
                child.wait(60)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
        for s, h in old.items():
            signal.signal(s, h)
        _ip("netns", "del", ns, check=False)
