"""Recovery under traffic (issue 4): a source -> relay -> sink pipeline over channels named in
ds (tests/pipeline/README.md), driven from the console's `service` command. One boot runs
the whole story while 600000 messages flow: the relay is killed, crashed, hung, updated to a
binary that cannot take over (rollback), live-updated to version 2; garbage is pushed into
its input; ds is killed and every server republishes; the relay is killed again and finds
its channels in the new ds. The sink must receive every message exactly once (the
guarantee this pipeline documents: duplicates from a crash between the relay's push and pop
are dropped by sequence number), and the relay's counter must survive the live update."""
import re

from conftest import boot
from test_rs import write_conf

COUNT = 600000
CONF = f"""# pipeline recovery test
service ds heartbeat=2000
service console ioports=0x3f8-0x3ff irq=4 control
service source cpu=1 args="count={COUNT} rate=20000"
service relay cpu=2 heartbeat=500 backoff=20
service sink cpu=3 args="count={COUNT}"
"""
MODULES = ("rs conf=pipeline.conf", "pipeline.conf", "ds", "console", "source", "relay", "relay2",
           "sink", "uecho")


def test_pipeline_survives_kill_crash_hang_update_and_ds_restart():
    write_conf("pipeline.conf", CONF)
    script = [
        (r"sink: 60000 of", "service kill relay\r"),
        (r"relay v1: attached, restart 1,", "service inject relay crash\r"),
        (r"relay v1: attached, restart 2,", "service inject relay hang\r"),
        (r"relay v1: attached, restart 3,", "service update relay uecho\r"),
        (r"relay v1: resumed at count", "service update relay relay2\r"),
        (r"service: relay updated to relay2", "service inject source garbage\r"),
        (r"source: pushed \d+ garbage messages", "service kill ds\r"),
        # the relay's checkpoint is back in the new ds before the relay is killed
        (r"relay2?: ds restarted, published [1-9]\d* keys", "service kill relay\r"),
        (r"relay v2: attached, restart 4,", ""),
        (r"sink: complete:", "service inject source corrupt\r"),
        (r"relay: source/out is corrupt", "service inject relay ping\r"),
        (r"relay2: no injectable fault named ping", "service list\r"),
        (r"^sink\s+running\s", "service log\r"),
    ]
    r = boot("", smp=4, modules=MODULES, timeout=300, script=script,
             until=r"^\[\s*\d+\.\d{3}\] injecting ping into relay$")
    out = r.output.replace("axolotl> ", "")  # the prompt shares a line with what follows it
    tail = out[-5000:]
    # every message exactly once, while all of the below happened
    m = re.search(r"sink: complete: (\d+) messages exactly once, (\d+) duplicates dropped, (\d+) invalid$", out, re.M)
    assert m and int(m.group(1)) == COUNT, tail
    assert int(m.group(3)) == 0, "garbage must be dropped by the relay, not reach the sink"
    # kill, crash and hang: each noticed by rs and the relay restarted
    assert re.search(r"rs: relay exited with status", out, re.M), tail
    assert re.search(r"rs: relay crashed: vector 14 ", out, re.M), tail
    # exactly one hang, the injected one (no false alarms under load)
    assert len(re.findall(r"^rs: \w+ hung", out, re.M)) == 1, tail
    assert re.search(r"^rs: injecting hang into relay$(.|\n)*^rs: relay hung: no heartbeat for 500 ms", out, re.M), tail
    # the sink heard of the restarts through its ds subscription to rs/relay
    assert re.search(r"sink: ds: rs/relay = endpoint 0x[0-9a-f]+, restarts [1-9]", out, re.M), tail
    # a binary that cannot take over is rolled back; the old relay resumes
    assert re.search(r"rs: update of relay to uecho failed \(the new instance ended\): rolled back$", out, re.M), tail
    assert "service: relay: update failed and was rolled back" in out, tail
    # the live update keeps the relay's counter: the sink sees version 2 continue the stamps
    q = re.search(r"relay v1: quiesced at count (\d+)$", out.split("service update relay relay2")[-1], re.M)
    t = re.search(r"relay v2: took over at count (\d+) \(from version 1\)$", out, re.M)
    assert q and t and q.group(1) == t.group(1), tail
    v = re.search(r"sink: relay version 1 -> 2 at seq \d+, stamp (\d+) -> (\d+) \((\w+)\)$", out, re.M)
    assert v and v.group(3) == "continuous", tail
    # garbage in the relay's input is dropped, not fatal
    assert re.search(r"relay: dropped invalid message", out, re.M), tail
    # ds restarted: services republished, and the relay restarted afterwards found its
    # channels by name in the new ds
    assert re.search(r"rs: ds restarted: labels registered again, [1-9]\d* services told to republish$", out, re.M)
    assert re.search(r"sink: ds restarted, published 1 keys and 1 subscriptions again \(0 failed\)$", out, re.M), tail
    assert re.search(r"relay v2: attached, restart 4, count \d+ \(from the checkpoint\)$", out, re.M), tail
    # a corrupted input channel is detected and the relay keeps serving
    assert re.search(r"relay\s+running\s+0x[0-9a-f]+\s+2\s+4\s", out, re.M), tail
    assert "rs: relay crashed" not in out.split("service inject source corrupt")[-1]
    # rs's event log, read back through `service log`: the same events, with times, in order
    log = out.split("service log")[-1]
    times = [float(t) for t in re.findall(r"^\[\s*(\d+\.\d{3})\] ", log, re.M)]
    assert len(times) >= 20 and times == sorted(times), log[-3000:]
    assert re.search(r"^\[\s*\d+\.\d{3}\] ds restarted: labels registered again", log, re.M), log[-3000:]
