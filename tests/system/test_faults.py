"""The fault-injection campaign (tools/faults/campaign.py, `make faults QUICK=1`): three
short runs from seed 1 on the default image, as a subprocess. Checked: it ends with status
0; runs.json has the three runs, each with its server, seed, fault type and address and a
verdict of the thesis's set; tables.md and faults.png were written; and no run found a
silent corruption (a wrong byte in any load is a bug of the system: the message has the
run's replay line). How many runs were transparent is not asserted: that is what the
campaign measures."""
import json
import os
import re
import subprocess
import sys

from conftest import ROOT

CAMPAIGN = os.path.join(ROOT, "tools", "faults", "campaign.py")
sys.path.insert(0, os.path.join(ROOT, "tools", "faults"))
from report import DETECTIONS, VERDICTS  # noqa: E402


def test_quick_campaign(tmp_path):
    out = tmp_path / "faults"
    r = subprocess.run([sys.executable, CAMPAIGN, "--quick", "--runs", "3", "--seed", "1", "--out", str(out)],
                       capture_output=True, text=True, timeout=15 * 60)
    log = r.stdout[-6000:] + r.stderr[-3000:]
    assert r.returncode == 0, log
    data = json.load(open(out / "runs.json"))
    runs = data["runs"]
    assert len(runs) == 3, log
    for run in runs:
        assert run["server"] in ("e1000", "ip", "pf", "udp", "tcp", "syscall"), run
        assert isinstance(run["seed"], int), run
        assert run["type"] in ("flip", "srcreg", "dstreg", "pointer", "nop", "branch", "offbyone", "leak",
                               "loop"), run
        assert re.fullmatch(r"0x[0-9a-f]+", run["address"] or ""), run
        assert run["verdict"] in VERDICTS, run
        assert run["detection"] in DETECTIONS, run
    corrupt = [run for run in runs if run["verdict"] == "corrupt"]
    assert not corrupt, "silent corruption: " + "; ".join(
        f"run {c['index']} ({c['reason']}): python3 tools/faults/campaign.py --replay {out}/runs.json:{c['index']}"
        f" [{c.get('replay')}]" for c in corrupt)
    for name in ("tables.md", "faults.png"):
        assert (out / name).stat().st_size > 0, name
    assert (out / "faults.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    tables = (out / "tables.md").read_text()
    assert "table 2.3" in tables and "table 2.4" in tables, tables
    m = re.search(r"^campaign: 3 runs, (\d+) transparent, (\d+) reachable, (\d+) broke-tcp, (\d+) manual, "
                  r"(\d+) reboot, (\d+) corrupt$", r.stdout, re.M)
    assert m and sum(map(int, m.groups())) == 3, log
