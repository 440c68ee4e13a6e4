"""Plans from recorded observed states (tests/plan/<case>/), rendered three ways and snapshotted.

Each case is a topology and the clusters as `topology.kafka.inventory` reads them
(`observed.json`, in `observed.Cluster.to_dict` form), so what a reviewer would see for that
situation is pinned down without a broker. Every plan is also checked against its schema.
"""

import hashlib
import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from syrupy.assertion import SnapshotAssertion

from topology.cli.plan import Format, render
from topology.core.analysis import analyse
from topology.core.observed import cluster_from_dict
from topology.core.plan.planner import plan

ROOT = Path(__file__).resolve().parents[2]
CASES = sorted(path for path in (ROOT / "tests/plan").iterdir() if path.is_dir())
SCHEMA = Draft202012Validator(json.loads((ROOT / "schemas/plan.schema.json").read_text()))


def planned(case: Path) -> dict[str, object]:
    text = (case / "topology.yaml").read_text()
    analysis = analyse(text, "topology.yaml")
    assert analysis.ok and analysis.topology is not None, analysis.diagnostics
    recorded = json.loads((case / "observed.json").read_text())
    clusters = {data["name"]: cluster_from_dict(data) for data in recorded["clusters"]}
    for data in recorded["clusters"]:  # the recording reads back exactly
        assert clusters[data["name"]].to_dict() == data
    result = plan(
        analysis.topology,
        clusters,
        topology_sha256=hashlib.sha256(text.encode()).hexdigest(),
        allow_delete=recorded["allow_delete"],
        topo_version="test",
        cores=4,  # as `topo plan` on a machine of four cores: flows' copy slots sized for them
    )
    return result.to_dict()


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_plan_renderings(case: Path, snapshot: SnapshotAssertion) -> None:
    data = planned(case)
    SCHEMA.validate(data)
    assert planned(case) == data  # deterministic, fingerprint included
    for output in Format:
        assert render(data, output) == snapshot(name=str(output))
