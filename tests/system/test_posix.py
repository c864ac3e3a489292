"""Processes, threads and signals of the POSIX personality (issue 5): the kernel's Linux
process mechanism (fork/clone/execve, signals, futexes) with pm's policy, exercised by
tests/linux/lxproc.c inside Axolotl under TCG."""
import re

from conftest import boot
from test_rs import write_conf


def run_lxproc(conf_name, modes, extra_modules=(), timeout=300):
    """Boots vfs and pm (the services named so: vfs takes pm's messages from the service
    `pm` only) running each lxproc mode in turn under one pm per mode, the first one named
    pm; returns the output once all have ended and the LXTEST results {check: PASS|FAIL}."""
    conf = "service vfs kcalls=vcopy\n" + "".join(
        'service %s binary=pm kcalls=vcopy args="run=%s" restart=never\n' % ("pm" if i == 0 else "pm%d" % i, m)
        for i, m in enumerate(modes))
    write_conf(conf_name, conf)
    n = len(modes)
    r = boot("", smp=2, modules=("rs conf=" + conf_name, conf_name, "vfs", "initrd.cpio", "pm", "lxproc",
                                 "lxstart") + tuple(extra_modules),
             timeout=timeout,
             until=r"(?s)(?:(?:exited with status|killed by signal) \d+\n.*?){%d}(?:exited with status|killed by signal) \d+\n" % (n - 1))
    results = {}
    for status, name in re.findall(r"^LXTEST (PASS|FAIL) (\w+)$", r.output, re.M):
        results[name] = "FAIL" if results.get(name) == "FAIL" else status
    return r.output, results


def test_threads_mutexes_condvars_futexes():
    out, results = run_lxproc("lxthreads.conf", ["lxproc threads"])
    tail = out[-3000:]
    assert results.get("mutex_counter") == "PASS" and results.get("condvar_turns") == "PASS", tail
    assert len(results) == 10 and set(results.values()) == {"PASS"}, results
    assert re.search(r"^pm: lxproc \(pid \d+\) exited with status 0$", out, re.M), tail


def test_signals_handlers_masks_eintr_restart():
    out, results = run_lxproc("lxsignals.conf", ["lxproc signals"])
    tail = out[-3000:]
    assert len(results) == 21 and set(results.values()) == {"PASS"}, (results, tail)
    assert re.search(r"^pm: lxproc \(pid \d+\) exited with status 0$", out, re.M), tail


def test_fork_wait_signals_between_processes():
    out, results = run_lxproc("lxfork.conf", ["lxproc fork"])
    tail = out[-3000:]
    assert len(results) == 28 and set(results.values()) == {"PASS"}, (results, tail)
    assert re.search(r"^pm: lxproc \(pid \d+\) exited with status 0$", out, re.M), tail
    assert "panic" not in out.lower(), tail


def test_alarm_and_interval_timers():
    """alarm, setitimer and getitimer (ITIMER_REAL, pm's itimer.c): SIGALRM from the kernel
    ends a blocking read with EINTR, a 50 ms interval timer fires again and again until
    disarmed, the old values come back, errors as Linux, a fork's child has no timer while
    the parent keeps its own, and the default action ends a process. timerfd (vfs's
    timerfd.c): poll and epoll wait for it, a periodic one counts its expirations, disarming,
    an absolute time on the wall clock ending a blocking read, the errors. POSIX timers
    (timer_create ...): periodic signals with SI_TIMER and the sigev_value, overrun,
    delete, SIGEV_NONE, SIGEV_THREAD (the C library's thread on sigwaitinfo), errors;
    sigwaitinfo and sigtimedwait."""
    out, results = run_lxproc("lxtimers.conf", ["lxproc timers"])
    tail = out[-3000:]
    assert len(results) == 17 + 8 + 8 + 3 and set(results.values()) == {"PASS"}, (results, tail)
    assert re.search(r"^pm: lxproc \(pid \d+\) exited with status 0$", out, re.M), tail
    assert "unsupported system call" not in out, tail


def test_file_locks_records_ofd_and_flock():
    """fcntl record locks, OFD locks and flock (vfs's lock.c) between processes: conflicts,
    F_GETLK naming the holder's pid, F_SETLKW and a blocking flock that wait for the unlock,
    release at close (any descriptor, for record locks), at the last close (OFD, flock) and
    at exit, flock apart from record locks, EINTR from a signal, EDEADLK for a wait that
    would close a cycle, and the errors."""
    out, results = run_lxproc("lxlocks.conf", ["lxproc locks"])
    tail = out[-3000:]
    assert len(results) == 31 and set(results.values()) == {"PASS"}, (results, tail)
    assert re.search(r"^pm: lxproc \(pid \d+\) exited with status 0$", out, re.M), tail
    assert "unsupported system call" not in out, tail


def test_pipe_sizes_and_atomic_small_writes():
    """F_GETPIPE_SZ and F_SETPIPE_SZ (rounded up, 4 KiB at least, 1 MiB at most: EPERM,
    EBUSY below what the pipe holds, data kept across a resize, EBADF on a file), and a
    write of at most PIPE_BUF bytes that goes in whole: EAGAIN rather than a part, and a
    blocking one that waits for room for all of it; packet pipes (pipe2 O_DIRECT: a read
    takes one packet and drops the rest, writes past PIPE_BUF split)."""
    out, results = run_lxproc("lxpipes.conf", ["lxproc pipes"])
    tail = out[-3000:]
    assert len(results) == 16 and set(results.values()) == {"PASS"}, (results, tail)
    assert re.search(r"^pm: lxproc \(pid \d+\) exited with status 0$", out, re.M), tail


def test_named_pipes():
    """mkfifo and mknod (vfs): a named pipe whose blocking opens wait for the other side (a
    reader for a writer, a writer for a reader, each arriving 300 ms later), O_NONBLOCK's
    ENXIO and end of file, O_RDWR at once, data gone after the last close, a waiting open
    ended by a signal with no descriptor left behind; device nodes made by root (1:3 works as
    /dev/null with its number in stat, a block device and an unknown number open as ENXIO)."""
    out, results = run_lxproc("lxfifos.conf", ["lxproc fifos"])
    tail = out[-3000:]
    assert len(results) == 12 and set(results.values()) == {"PASS"}, (results, tail)
    assert re.search(r"^pm: lxproc \(pid \d+\) exited with status 0$", out, re.M), tail


def test_futexes_shared_between_processes():
    """A futex in MAP_SHARED memory (the kernel keys it by memory object and offset): a wait
    woken by another process's wake, a private futex another process cannot wake, and a
    process-shared semaphore."""
    out, results = run_lxproc("lxshfutex.conf", ["lxproc shfutex"])
    tail = out[-3000:]
    assert len(results) == 5 and set(results.values()) == {"PASS"}, (results, tail)
    assert re.search(r"^pm: lxproc \(pid \d+\) exited with status 0$", out, re.M), tail


def test_proc_pid_files():
    """/proc/self and /proc/PID (vfs procfs.c): stat (pid, comm, state, ppid; 52 fields),
    status, cmdline and environ read from the process's memory (the kernel's KI_LX_ARGS),
    comm (and comm after prctl PR_SET_NAME), maps (the stack, the vDSO, our own private and
    shared mappings with their protections, gone after munmap); a
    child's directory by its pid while it lives (state S while blocked, its parent's pid, the
    inherited command line, its exe and cwd links, its fd/ directory and a pipe there), both pids in the listing of /proc, the child's gone once it is
    reaped, and comm after an execve through a link (the link's name)."""
    out, results = run_lxproc("lxprocfs.conf", ["lxproc procfs"])
    tail = out[-3000:]
    assert len(results) == 17 and set(results.values()) == {"PASS"}, (results, tail)
    assert re.search(r"^pm: lxproc \(pid \d+\) exited with status 0$", out, re.M), tail


def test_subreaper_and_parent_death_signal():
    """prctl PR_SET_CHILD_SUBREAPER (an orphan below the process comes to it, not to pid 1,
    and is reaped by it) and PR_SET_PDEATHSIG (a process gets its signal when its parent
    ends), as supervisors like runit and s6 use them."""
    out, results = run_lxproc("lxreaper.conf", ["lxproc reaper"])
    tail = out[-3000:]
    assert len(results) == 5 and set(results.values()) == {"PASS"}, (results, tail)
    assert re.search(r"^pm: lxproc \(pid \d+\) exited with status 0$", out, re.M), tail


def test_unix_sockets():
    """AF_UNIX (vfs unix.c): a stream socketpair both ways with SO_PEERCRED, 1 MiB across a
    fork through short writes and blocking reads, end of file and EPIPE after the peer
    closes; a listener on a path (an S_IFSOCK node: EADDRINUSE, open's ENXIO, ECONNREFUSED
    before listen and after close), data written before accept, names on both ends, poll and
    epoll (readable, EPOLLRDHUP after shutdown), a blocking accept and read that wait for a
    child; datagrams on abstract names with their boundaries, the sender's address, MSG_TRUNC,
    EAGAIN, connect; autobind; a seqpacket pair whose writev is one message; SCM_RIGHTS (the
    same open file arrives, MSG_CMSG_CLOEXEC, MSG_CTRUNC keeping what fits, EBADF, a file the
    child opened reaching the parent), SO_PASSCRED with the child's pid, SCM_CREDENTIALS
    with another pid EPERM; sendmmsg and recvmmsg (MSG_WAITFORONE)."""
    out, results = run_lxproc("lxunix.conf", ["lxproc unix"])
    tail = out[-3000:]
    assert len(results) == 51 and set(results.values()) == {"PASS"}, (results, tail)
    assert re.search(r"^pm: lxproc \(pid \d+\) exited with status 0$", out, re.M), tail


def test_sysv_message_queues_semaphores_and_shared_memory():
    """System V IPC (vfs sysv.c): message queues (types: first, exact, MSG_EXCEPT, lowest up
    to -type; E2BIG and MSG_NOERROR; ENOMSG with IPC_NOWAIT; a receive that waits for another
    process's send; IPC_STAT; IPC_RMID waking a waiting receiver with EIDRM; keys with
    IPC_CREAT/IPC_EXCL/ENOENT and a new id after removal) and semaphore sets (SETALL/GETVAL,
    an atomic two-operation semop, IPC_NOWAIT's EAGAIN, semtimedop timing out without taking
    anything, a semop that waits for another process's post, GETNCNT counting a waiter,
    SEM_UNDO applied when a process ends, IPC_STAT, ERANGE, EFBIG, IPC_RMID's EIDRM) and
    shared memory (a segment seen and written by a forked child through its inherited and
    its own attachment, the attachment count following fork, shmdt and exit, SHM_RDONLY
    faulting on a write, shmdt of an unknown address EINVAL, IPC_RMID freeing the key at
    once and the segment at the last detach)."""
    out, results = run_lxproc("lxsysv.conf", ["lxproc sysv"])
    tail = out[-3000:]
    assert len(results) == 32 and set(results.values()) == {"PASS"}, (results, tail)
    assert re.search(r"^pm: lxproc \(pid \d+\) exited with status 0$", out, re.M), tail


def test_hard_links():
    """link/linkat (vfs ramfs_link): both names one file (inode, link count, data), EEXIST,
    EPERM for a directory, ENOENT, rename between two names of one file doing nothing, the
    first name's unlink leaving the other (and an open descriptor) on the same file, linkat
    with AT_SYMLINK_FOLLOW, readdir showing both names with the file's inode, and the last
    unlink leaving an open file readable with no names."""
    out, results = run_lxproc("lxlinks.conf", ["lxproc links"])
    tail = out[-3000:]
    assert len(results) == 10 and set(results.values()) == {"PASS"}, (results, tail)
    assert re.search(r"^pm: lxproc \(pid \d+\) exited with status 0$", out, re.M), tail


def test_shared_file_mappings_and_msync():
    """mmap MAP_SHARED of a file (vfs fmap.c): a store through a mapping is the file's byte
    for pread, a pwrite shows in the mapping, a second (read-only) mapping sees later stores,
    PROT_WRITE on a read-only descriptor EACCES, a private mapping stays a copy both ways, a
    forked child's stores and another process's own mapping reach the file, the file grows
    under a mapping, msync (and its EINVAL and ENOMEM), an unlinked file's pages living on."""
    out, results = run_lxproc("lxmapshared.conf", ["lxproc mapshared"])
    tail = out[-3000:]
    assert len(results) == 14 and set(results.values()) == {"PASS"}, (results, tail)
    assert re.search(r"^pm: lxproc \(pid \d+\) exited with status 0$", out, re.M), tail


def test_users_and_permissions():
    """Credentials (pm creds.c) and file permissions (vfs perm.c): a child drops root
    (setgroups, setgid, setuid) and cannot take it back; open and access give EACCES by the
    owner/group/other bits; a new file is the user's; chmod and chown of another's file EPERM,
    /tmp's sticky bit keeps another user's file; kill of root's process EPERM; no search or
    write permission on root's directories; /proc/self/status shows the ids; the saved
    set-user-ID lets seteuid(0) back; setfsuid; a set-user-ID program runs as its owner
    (not under PR_SET_NO_NEW_PRIVS); root's chown."""
    out, results = run_lxproc("lxcreds.conf", ["lxproc creds"])
    tail = out[-3000:]
    assert len(results) == 16 and set(results.values()) == {"PASS"}, (results, tail)
    assert re.search(r"^pm: lxproc \(pid \d+\) exited with status 0$", out, re.M), tail


def test_exec_scripts_errors_and_200_rounds_without_leaks():
    out, results = run_lxproc("lxexec.conf", ["lxproc exec 200"], timeout=600)
    tail = out[-3000:]
    m = re.search(r"^LXTEST exec: 200 rounds, (\d+) ok, free pages (\d+) -> (\d+)$", out, re.M)
    assert m and int(m.group(1)) == 200, tail
    assert len(results) == 16 and set(results.values()) == {"PASS"}, (results, tail)
