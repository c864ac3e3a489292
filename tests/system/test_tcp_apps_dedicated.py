"""Thesis table 5.2 with the stack's TCP engine on a core of its own (`cpu=1 dedicated` in
the boot configuration, docs/sockets.md "Waking up"): tcp sleeps in KC_WAIT's MWAIT path
watching its line of the bell, so the library wakes it with a store and lighttpd's reads
and writes make no system call. Under a host keep-alive load of 10 requests per connection
over 90% of lighttpd's socket calls are answered in user space; what is left is accept and
close (vfs owns the descriptors) and the epoll_waits that had to block."""
import pytest

import sysconf_variants

from test_tcp_apps import boot_apps, keepalive_load


@pytest.fixture(scope="module")
def apps_dedicated():
    yield from boot_apps(sysconf_variants.dedicated(sysconf_variants.default(), "tcp"), "tcp-apps-dedicated")


def test_lighttpd_keepalive_over_90_percent_in_user_space_with_tcp_dedicated(apps_dedicated):
    calls, share = keepalive_load(apps_dedicated, "tcp on a dedicated core")
    for c in ("read", "writev"):
        assert calls[c][1] * 20 < calls[c][0], (c, calls)  # (a read may still block: rare)
    assert share > 0.9, calls
