import time, re
import test_tcp_apps as t
from test_tcp_apps import apps  # noqa: F401 (fixture)


def test_scratch(apps, tmp_path):
    c0 = apps.tcp_counters().get("sockets")
    t.test_memcached_10000_keys_round_trip(apps)
    c1 = apps.tcp_counters().get("sockets")
    t.test_iperf_reports_a_throughput(apps, False)
    c2 = apps.tcp_counters().get("sockets")
    t.test_curl_fetches_files_byte_exact(apps, "/4mib.bin", tmp_path)
    c3 = apps.tcp_counters().get("sockets")
    serial = sum(t.tcp_tools.tcphash_small(t.HOST, apps.port[7000], i) for i in range(100))
    time.sleep(5)
    c4 = apps.tcp_counters().get("sockets")
    print("sockets", c0, c1, c2, c3, c4)
    mark = apps.g.mark()
    apps.g.type("netstat\r")
    time.sleep(3)
    out = apps.g.output[mark:]
    print(out[out.find("tcp:"):][-2500:])
