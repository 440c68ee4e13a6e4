"""Every example topology validates clean; the local ones point at `topo lab` ports."""

from pathlib import Path

import pytest

from tests.helpers import run_topo
from topology.core.analysis import analyse
from topology.lab.spec import default_port

EXAMPLES = Path(__file__).parent.parent.parent / "examples"
TOPOLOGIES = sorted(EXAMPLES.glob("*.yaml"))


def test_the_documented_examples_exist() -> None:
    names = {p.stem for p in TOPOLOGIES}
    assert {"quickstart", "active-active", "aggregation", "disaster-recovery", "migration"} <= names


@pytest.mark.parametrize("example", TOPOLOGIES, ids=lambda p: p.stem)
def test_example_validates_without_any_diagnostic(example: Path) -> None:
    result = run_topo("validate", "--strict", str(example))
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""


@pytest.mark.parametrize("example", ["quickstart", "active-active"])
def test_local_examples_point_at_lab_ports(example: str) -> None:
    analysis = analyse((EXAMPLES / f"{example}.yaml").read_text(), example)
    assert analysis.topology is not None
    for name, cluster in analysis.topology.clusters.items():
        assert cluster.bootstrap == f"127.0.0.1:{default_port(name)}"
