"""Golden cases as data: tests/golden/<case>/topology.yaml, checked against syrupy snapshots.

A case named after a code (`T304-collision`) must report that code; a `valid-*` case must be
clean. The snapshot holds every diagnostic and, for files that analyse, the names that reach
each cluster, so any change in what topo says about a file shows up in review.
"""

from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion

from topology.core.analysis import Analysis, analyse
from topology.core.diagnostics import CODES

GOLDEN = Path(__file__).parent.parent / "golden"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "topology.yaml").is_file())


def _analyse(case: str) -> Analysis:
    text = (GOLDEN / case / "topology.yaml").read_text(encoding="utf-8")
    return analyse(text, f"{case}/topology.yaml")


def _report(analysis: Analysis) -> dict[str, object]:
    report: dict[str, object] = {"diagnostics": [d.headline() for d in analysis.diagnostics]}
    if analysis.reach is not None and analysis.reach.truncated:
        report["arrivals"] = f"{len(analysis.reach.arrivals)} chains, then the limit"
    elif analysis.reach is not None and analysis.graph is not None:
        report["arrivals"] = {
            cluster: [f"{a.describe()}  via {a.route()}" for a in analysis.reach.on(cluster)]
            for cluster in analysis.graph.clusters
        }
    return report


@pytest.mark.parametrize("case", CASES)
def test_golden_case(case: str, snapshot: SnapshotAssertion) -> None:
    analysis = _analyse(case)
    codes = {d.code for d in analysis.diagnostics}
    if case.startswith("valid-"):
        assert analysis.diagnostics == ()
    else:
        assert case.split("-")[0] in codes
    assert _report(analysis) == snapshot


@pytest.mark.parametrize("code", sorted(c for c in CODES if c.startswith("T")))
def test_every_code_has_a_golden_case(code: str) -> None:
    assert any(case.startswith(f"{code}-") for case in CASES), f"add tests/golden/{code}-<name>/"
