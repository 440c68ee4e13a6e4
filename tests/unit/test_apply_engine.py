"""apply on an install without the replication engine: refused before any change when the plan
would start replication; let through when it only stops it or changes cluster resources."""

import pytest

from topology.cli.apply import _refuse_without_engine
from topology.cli.live import Loaded
from topology.core import analysis
from topology.core.plan.values import Action, Change, Plan, Resource
from topology.spark import installed

PAIR = """\
version: 1
clusters:
  east: {bootstrap: "127.0.0.1:1"}
  west: {bootstrap: "127.0.0.1:2"}
"""
WITH_FLOW = PAIR + "flows:\n  - mirror: {from: east, to: west}\n"
WITHOUT_FLOWS = PAIR + "flows: []\n"


def _loaded(text: str) -> Loaded:
    result = analysis.analyse(text, "t.yaml")
    assert result.topology is not None, result.diagnostics
    return Loaded("t.yaml", "0" * 64, result.topology)


def _plan(*changes: Change) -> Plan:
    return Plan("t.yaml", "0" * 64, "t", "sha256:x", {}, changes)


FLOW_STOP = Change(Action.DELETE, Resource.FLOW, "west", "east->west", "no flow needs it")
FLOW_START = Change(Action.CREATE, Resource.FLOW, "west", "east->west", "new flow")
TOPIC = Change(Action.CREATE, Resource.TOPIC, "west", "east.orders", "replicated")


@pytest.fixture
def lean(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(installed, "present", lambda: False)


@pytest.mark.usefixtures("lean")
def test_a_plan_that_starts_replication_is_refused_naming_the_extra() -> None:
    with pytest.raises(installed.EngineMissingError, match=r"pip install 'topo\[spark\]'"):
        _refuse_without_engine(_plan(TOPIC, FLOW_START), _loaded(WITH_FLOW), once=False)
    with pytest.raises(installed.EngineMissingError, match="--once"):
        _refuse_without_engine(_plan(TOPIC), _loaded(WITH_FLOW), once=True)


@pytest.mark.usefixtures("lean")
def test_cluster_resources_and_stopping_replication_need_no_engine() -> None:
    _refuse_without_engine(_plan(TOPIC), _loaded(WITH_FLOW), once=False)
    _refuse_without_engine(_plan(FLOW_STOP), _loaded(WITHOUT_FLOWS), once=False)
