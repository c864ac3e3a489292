"""Variants of the default image's service configuration (boot/system.conf), the one place
that makes them: the system tests boot them (tests/system/test_tcp_apps*.py, test_sock.py)
and the benchmark suite measures them side by side (tools/bench/bench.py).

Each function takes a configuration text and returns the changed text; it raises
ValueError when the line it changes is not there (a changed boot/system.conf must not
silently turn a variant into the default)."""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def default():
    return open(os.path.join(ROOT, "boot", "system.conf")).read()


def _sub(pattern, repl, conf, what):
    new, n = re.subn(pattern, repl, conf, count=1, flags=re.M)
    if not n:
        raise ValueError(f"{what}: no line matches {pattern!r} in:\n{conf}")
    return new


def without_library(conf):
    """pm starts /etc/rc through env AXOLOTL_SOCK=0: every application /etc/rc starts
    inherits it, so lib/sock (linked into lighttpd, memcached and iperf by ld --wrap) stays
    off and they use system calls only."""
    return _sub(r'^(service pm .*args=")run=(/[^"]*)"', r'\1run=/usr/bin/env AXOLOTL_SOCK=0 \2"', conf,
                "without_library")


def dedicated(conf, server="tcp", cpu=1):
    """server on a core of its own (`cpu=N dedicated`, docs/sockets.md "Waking up"): it
    sleeps in KC_WAIT's MWAIT path and the library wakes it with a store. Under TCG MWAIT
    returns at once, so the dedicated core spins and slows the other vCPUs, which run
    everything else: heartbeats of a few seconds get missed and rs would restart healthy
    servers, so every heartbeat is made 30 s."""
    conf = _sub(rf"^service {server} dma ", f"service {server} dma cpu={cpu} dedicated ", conf, "dedicated")
    return re.sub(r"heartbeat=\d+", "heartbeat=30000", conf)


def static_address(conf, addr="10.0.2.15/24", gw="10.0.2.2"):
    """ip configured with a fixed address instead of its DHCP client (a tap device has no
    DHCP server behind it)."""
    return _sub(r'^(service ip .*args="[^"]*)\bdhcp\b', rf"\1addr={addr} gw={gw}", conf, "static_address")
