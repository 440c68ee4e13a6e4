"""The side-by-side benchmark's smoke run: MirrorMaker 2 from Maven jars and topo copy the same
kind of backlog on the same two lab clusters, each copy checked record by record (key, value,
headers, timestamp, partition, order). Only that both ran and copied exactly is asserted here;
how fast they are is measured by hand (benchmarks/mm2.py, docs/performance.md)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.kafka, pytest.mark.spark]
ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 600  # seconds; the smoke run takes about two minutes


@pytest.mark.timeout(TIMEOUT + 120)
def test_mm2_and_topo_both_copy_a_backlog_exactly_side_by_side(tmp_path: Path) -> None:
    results = tmp_path / "results.json"
    # Its own two lab clusters: MM2's heartbeats and internal topics stay off the session's.
    environment = {k: v for k, v in os.environ.items() if k not in ("TOPO_LAB_DIR",)}
    smoke = subprocess.Popen(
        # One record size: the copies are checked one by one either way; 100-byte records
        # only change how fast, which is the benchmark's business (and 2 starts fewer here).
        [
            sys.executable,
            str(ROOT / "benchmarks" / "mm2.py"),
            "--smoke",
            "--small-records",
            "0",
            "--json",
            str(results),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=environment,
        cwd=ROOT,
        start_new_session=True,
    )
    try:
        output, _ = smoke.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        smoke.terminate()  # SIGTERM: the benchmark stops MM2, topo and its clusters
        output, _ = smoke.communicate(timeout=120)
        raise AssertionError(f"the smoke run took over {TIMEOUT} s:\n{output[-3000:]}") from None
    assert smoke.returncode == 0, output[-5000:]
    checked = [line for line in output.splitlines() if line.strip().startswith("checked:")]
    assert len(checked) == 2, output  # by MM2 and by topo
    assert "| measure | MM2 | topo | topo / MM2 |" in output
    pairs = json.loads(results.read_text())["pairs"]
    copies = {(b["replicator"], b["record_size"]): b for b in pairs[0]["bulk"]}
    assert set(copies) == {("MM2", 1024), ("topo", 1024)}
    for copy in copies.values():
        # (The copy alone may land within one look at the target: its CPU may round to 0.)
        assert copy["records"] == 3000 and copy["mib_per_second"] > 0
        assert copy["cpu_per_gib_whole"] > 0
