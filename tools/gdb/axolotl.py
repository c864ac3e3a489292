"""gdb commands for Axolotl (`make debug`, docs/testing.md "Debugging"). Loaded by
tools/gdb/axolotl.gdb with the kernel's symbols; every server and program is a static ELF
linked at the same user addresses, so one program's symbols are loaded at a time:

    ax-connect [PORT]        attach to QEMU's gdb stub on 127.0.0.1 (GDBPORT, else 1234)
    ax-threads               the kernel's threads: process, state, what blocks it, CPU, IP
    ax-sym NAME              load NAME's symbols (build/user/NAME or the ports' NAME)
    ax-break NAME LOCATION   ax-sym NAME, then a breakpoint at LOCATION that stops only
                             while NAME runs (the CPU's current process, from its per-CPU
                             area), since every process has code at the same addresses
    $ax_proc()               the name of the process the selected CPU runs ("" in idle);
                             print it with: python print(gdb.parse_and_eval('$ax_proc()').string())
"""
import glob
import os

import gdb

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KERNEL_HALF = 0xffff800000000000
_user_file = [None]  # the program whose symbols are loaded now


def _percpu():
    """The selected CPU's `struct cpu *`: GS base in the kernel, the swapped-out one in user mode."""
    for reg in ("gs_base", "k_gs_base"):
        try:
            v = int(gdb.parse_and_eval("$" + reg)) & 0xffffffffffffffff
        except gdb.error:
            continue
        if v >= KERNEL_HALF:
            return gdb.parse_and_eval("(struct cpu *)%d" % v)
    return None


def _proc_name(proc):
    if int(proc) == 0:
        return ""
    return proc["name"].string()


class AxProc(gdb.Function):
    """$ax_proc(): the name of the process the selected CPU runs ("" when idle or unknown)."""

    def __init__(self):
        super().__init__("ax_proc")

    def invoke(self):
        c = _percpu()
        if c is None or int(c["current"]) == 0:
            return ""
        return _proc_name(c["current"]["proc"])


class AxConnect(gdb.Command):
    """ax-connect [PORT]: attach to QEMU's gdb stub on 127.0.0.1 (default: $GDBPORT or 1234)."""

    def __init__(self):
        super().__init__("ax-connect", gdb.COMMAND_RUNNING)

    def invoke(self, arg, from_tty):
        port = arg.strip() or os.environ.get("GDBPORT", "1234")
        gdb.execute("target remote 127.0.0.1:%s" % port, from_tty)


class AxThreads(gdb.Command):
    """ax-threads: every live kernel thread (slot, process, state, block reason and peer, CPU,
    pinning, priority, pending notifications, and the user IP saved at its last kernel entry)."""

    def __init__(self):
        super().__init__("ax-threads", gdb.COMMAND_DATA)

    def invoke(self, arg, from_tty):
        n = int(gdb.parse_and_eval("sizeof(threads)/sizeof(threads[0])"))
        print("%-5s %-16s %-10s %-10s %-10s %4s %4s %4s %-8s %s" %
              ("slot", "process", "state", "blocked", "peer", "cpu", "pin", "prio", "notify", "user ip"))
        for i in range(n):
            t = gdb.parse_and_eval("threads[%d]" % i)
            if int(t["state"]) == 0:
                continue
            frame = t["uframe"]
            rip = int(frame["rip"]) if int(frame) else 0
            print("%-5d %-16s %-10s %-10s %#-10x %4d %4d %4d %#-8x %#x" %
                  (i, _proc_name(t["proc"]) or "(kernel)", str(t["state"]), str(t["blocked_on"]),
                   int(t["ipc_peer"]) & 0xffffffff, int(t["cpu"]), int(t["pinned"]), int(t["prio"]),
                   int(t["notify_pending"]), rip))


def _find_program(name):
    for pattern in ("build/user/%s", "build/ports/out/*/bin/%s", "build/ports/out/*/sbin/%s",
                    "build/ports/out/*/%s"):
        hits = sorted(glob.glob(os.path.join(ROOT, pattern % name)))
        if hits:
            return hits[0]
    return None


def _load_program(name):
    path = _find_program(name)
    if path is None:
        raise gdb.GdbError("ax-sym: no program %r under build/user or build/ports/out" % name)
    if _user_file[0]:
        gdb.execute("remove-symbol-file %s" % _user_file[0], to_string=True)
        _user_file[0] = None
    # static ELFs: their sections are at the addresses they were linked for
    gdb.execute("add-symbol-file %s" % path, to_string=True)
    _user_file[0] = path
    return path


class AxSym(gdb.Command):
    """ax-sym NAME: load the symbols of server or program NAME (replacing the last one's)."""

    def __init__(self):
        super().__init__("ax-sym", gdb.COMMAND_FILES)

    def invoke(self, arg, from_tty):
        name = arg.strip()
        if not name:
            raise gdb.GdbError("usage: ax-sym NAME")
        print("ax-sym: %s" % os.path.relpath(_load_program(name), ROOT))


class AxBreak(gdb.Command):
    """ax-break NAME LOCATION: break at LOCATION (a function of NAME, or *ADDRESS) only while
    process NAME runs on the stopping CPU."""

    def __init__(self):
        super().__init__("ax-break", gdb.COMMAND_BREAKPOINTS)

    def invoke(self, arg, from_tty):
        parts = arg.split(None, 1)
        if len(parts) != 2:
            raise gdb.GdbError("usage: ax-break NAME LOCATION")
        name, where = parts
        _load_program(name)
        gdb.execute('break %s if $_streq($ax_proc(), "%s")' % (where, name), from_tty)


AxProc()
AxConnect()
AxThreads()
AxSym()
AxBreak()
