"""Thesis table 5.2 with the stack's TCP engine on a core of its own (`cpu=1 dedicated` in
the boot configuration, docs/sockets.md "Waking up"): tcp sleeps in KC_WAIT's MWAIT path
watching its line of the bell, so the library wakes it with a store and lighttpd's reads
and writes make no system call. Under a host keep-alive load of 10 requests per connection
about 90% of lighttpd's socket calls are answered in user space (seen 89.7-93%); what is
left is accept and close (vfs owns the descriptors: 2 of the 40 calls a connection makes),
and the epoll_waits that had to block and the accepts that found nothing, whose number
depends on timing. So the test holds every other call to user space and the share to 85%."""
import pytest

import sysconf_variants

from test_tcp_apps import boot_apps, keepalive_load


@pytest.fixture(scope="module")
def apps_dedicated():
    yield from boot_apps(sysconf_variants.dedicated(sysconf_variants.default(), "tcp"), "tcp-apps-dedicated")


def test_lighttpd_keepalive_socket_calls_in_user_space_with_tcp_dedicated(apps_dedicated):
    calls, share = keepalive_load(apps_dedicated, "tcp on a dedicated core")
    for c in ("read", "writev"):
        assert calls[c][1] * 20 < calls[c][0], (c, calls)  # (a read may still block: rare)
    for c in ("epoll_ctl", "recv", "shutdown"):
        assert calls[c][0] > 0 and calls[c][1] == 0, (c, calls)
    assert share > 0.85, calls
