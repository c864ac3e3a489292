"""The applications' core acceptance (test_tcp_apps.py) with the user-space socket library
turned off: pm starts /etc/rc through `env AXOLOTL_SOCK=0`, so lighttpd, memcached and iperf
(linked with lib/sock by ld --wrap) take every socket call the normal way (system calls).
One guest: curl's fetches (byte-exact), memcached's 10000 keys, iperf both ways."""
import pytest

import test_tcp_apps as t
from sysconf_variants import default, without_library
from test_tcp_apps import boot_apps


@pytest.fixture(scope="module")
def apps():
    yield from boot_apps(without_library(default()), "tcp-apps-nolib", library=False)


@pytest.mark.parametrize("path", ["/hello.txt", "/4mib.bin"])
def test_curl_fetches_files_byte_exact_without_library(apps, path, tmp_path):
    t.test_curl_fetches_files_byte_exact(apps, path, tmp_path)


def test_memcached_10000_keys_round_trip_without_library(apps):
    t.test_memcached_10000_keys_round_trip(apps)


@pytest.mark.parametrize("reverse", [False, True], ids=["client-sends", "reverse"])
def test_iperf_reports_a_throughput_without_library(apps, reverse):
    t.test_iperf_reports_a_throughput(apps, reverse)
