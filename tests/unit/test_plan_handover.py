"""A flow that takes over from MirrorMaker 2 (`start: mm2`): its create change says where each
partition resumes, the plan is refused while MM2 still runs the flow, and the published jobs
carry the positions to the job. Plain values, no broker."""

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tests.unit.test_planner import topology
from topology.core.jobs import carry_starts, document, job_views, read_document
from topology.core.mm2.positions import Handover, Names
from topology.core.model import Topology
from topology.core.observed import Cluster, Topic
from topology.core.plan.handover import starts
from topology.core.plan.planner import PlanError, plan
from topology.core.plan.saved import first_difference
from topology.core.plan.values import Plan, Resource
from topology.core.render import plan_markdown, plan_text

SCHEMA = Draft202012Validator(
    json.loads((Path(__file__).parents[2] / "schemas" / "plan.schema.json").read_text())
)
HANDOVER = """
version: 1
clusters:
  east: {bootstrap: "127.0.0.1:9001"}
  west: {bootstrap: "127.0.0.1:9002"}
defaults: {replication_factor: 1}
flows:
  - mirror: {from: east, to: west}
    topics: {include: ["orders", "fresh"]}
    emit: {heartbeats: false}
    start: mm2
"""


def _topology() -> Topology:
    return topology(HANDOVER)


def _clusters() -> dict[str, Cluster]:
    east = {"orders": Topic("orders", 2, 1), "fresh": Topic("fresh", 1, 1)}
    return {
        "east": Cluster("east", 1, 1, east, None),
        "west": Cluster("west", 1, 1, {}, None),
    }


def _handover(running: tuple[str, ...] = (), **positions: int) -> Handover:
    found = {("orders", int(p[1:])): offset for p, offset in positions.items()}
    ends = {("orders", 0): 120, ("orders", 1): 80}
    status = "mm2-status.east.internal"
    return Handover("east->west", "mm2-offsets.east.internal", status, running, found, ends)


def _plan(found: Handover | None) -> Plan:
    handovers = None if found is None else {"east->west": found}
    return plan(_topology(), _clusters(), topology_sha256="0" * 64, handovers=handovers)


def _flow(made: Plan) -> dict[str, Any]:
    change = next(c for c in made.changes if c.resource is Resource.FLOW)
    return dict(change.after or {})


def test_each_partition_resumes_after_mm2s_last_copy_and_one_it_never_copied_at_the_start() -> None:
    after = _flow(_plan(_handover(p0=100, p1=80)))
    assert after["start"] == "mm2"
    assert after["resume"] == {
        "from": "mm2",
        "offsets_topic": "mm2-offsets.east.internal",
        "partitions": [
            {"topic": "fresh", "partition": 0, "offset": None, "waiting": None},
            {"topic": "orders", "partition": 0, "offset": 100, "waiting": 20},
            {"topic": "orders", "partition": 1, "offset": 80, "waiting": 0},
        ],
        "waiting": 20,
    }
    assert starts(after["resume"]) == {"orders": {0: 100, 1: 80}}


def test_the_plan_is_refused_while_mm2_still_runs_the_flow() -> None:
    running = (
        r"its status topic mm2-status.east.internal on west shows its task 0 on worker w1 "
        r"\(RUNNING\)"
    )
    with pytest.raises(PlanError, match=r"MirrorMaker 2 still runs it: " + running):
        _plan(_handover(("task 0 on worker w1 (RUNNING)",), p0=100))


def test_the_plan_is_refused_when_mm2_left_no_position_for_the_source() -> None:
    with pytest.raises(
        PlanError, match="holds no position MirrorMaker 2 committed for cluster 'east'"
    ):
        _plan(_handover())


def test_the_plan_is_refused_when_mm2_copied_none_of_the_flows_topics() -> None:
    other = Handover(
        "east->west",
        "mm2-offsets.east.internal",
        "mm2-status.east.internal",
        (),
        {("legacy", 0): 5},
    )
    with pytest.raises(
        PlanError,
        match=r"left no position for any topic it copies now "
        r"\(MM2 copied legacy from east\)",
    ):
        _plan(other)


def test_the_records_waiting_grow_without_making_a_saved_plan_stale() -> None:
    """Producers keep writing while a plan waits to be applied: only MM2's positions count."""
    saved = _plan(_handover(p0=100, p1=80))
    later = Handover(
        "east->west",
        "mm2-offsets.east.internal",
        "mm2-status.east.internal",
        (),
        {("orders", 0): 100, ("orders", 1): 80},
        {("orders", 0): 500, ("orders", 1): 90},
    )
    assert first_difference(saved, _plan(later)) is None
    moved = _plan(_handover(p0=101, p1=80))
    assert first_difference(saved, moved) is not None


def test_without_mm2s_state_the_start_is_planned_without_positions() -> None:
    """The running driver's own plans read no handover: they never start a flow anyway."""
    assert "resume" not in _flow(_plan(None))


def test_mm2s_positions_are_part_of_what_a_saved_plan_is_checked_against() -> None:
    first = _plan(_handover(p0=100, p1=80)).observed_sha256
    moved = _plan(_handover(p0=101, p1=80)).observed_sha256
    assert first != moved


def test_a_running_flow_is_not_resumed_again() -> None:
    loaded = _topology()
    running = job_views(loaded)
    made = plan(loaded, _clusters(), topology_sha256="0" * 64, running=running, handovers={})
    assert not [c for c in made.changes if c.resource is Resource.FLOW]


def test_the_text_and_markdown_plans_show_where_each_partition_resumes() -> None:
    data = _plan(_handover(p0=100, p1=80)).to_dict()
    SCHEMA.validate(data)
    text = plan_text.render(data)
    assert (
        "resumes where MirrorMaker 2 stopped (its positions in mm2-offsets.east.internal)" in text
    )
    assert "orders[0] from offset 100, 20 waiting" in text
    assert "fresh[0] from its earliest offset (MM2 copied none of it)" in text
    markdown = plan_markdown.render(data)
    assert "2 of 3 partition(s) from MM2's positions, 20 record(s) waiting" in markdown


def test_a_later_publication_keeps_the_positions_of_a_flow_not_started_yet() -> None:
    """Published again before its first copy (waiting for topics, say), a flow must still start
    where MM2 stopped; a flow the new plan resumes afresh takes the new positions."""
    made = _topology()
    before = document(made, 1.0, {"east->west": {"orders": {0: 100}}})
    again = carry_starts(document(made, 2.0), before.to_dict())
    assert again.starts == {"east->west": {"orders": {0: 100}}}
    fresh = document(made, 3.0, {"east->west": {"orders": {0: 120}}})
    assert carry_starts(fresh, before.to_dict()).starts == {"east->west": {"orders": {0: 120}}}
    assert carry_starts(fresh, {"format": "0"}).starts == fresh.starts  # unreadable: nothing


def test_the_jobs_document_carries_the_positions_to_the_job() -> None:
    jobs = document(_topology(), 1.0, {"east->west": {"orders": {0: 100}}})
    again = read_document(jobs.to_dict())
    assert again.starts == {"east->west": {"orders": {0: 100}}}
    assert "starts" not in document(_topology(), 1.0).to_dict()


def test_the_guard_compares_positions_not_the_records_waiting() -> None:
    from topology.core.plan.guard import compared

    change = next(c for c in _plan(_handover(p0=100, p1=80)).changes if c.resource is Resource.FLOW)
    shown = compared(change.to_dict())
    assert "waiting" not in shown["after"]["resume"]
    assert {p["offset"] for p in shown["after"]["resume"]["partitions"]} == {None, 100, 80}
    assert all("waiting" not in p for p in shown["after"]["resume"]["partitions"])
    topic = next(c for c in _plan(None).changes if c.resource is Resource.TOPIC)
    assert compared(topic.to_dict()) == topic.to_dict()


CONNECT_CLUSTER = """
version: 1
clusters:
  east: {bootstrap: "127.0.0.1:9001"}
  west: {bootstrap: "127.0.0.1:9002"}
  north: {bootstrap: "127.0.0.1:9003"}
defaults:
  start: mm2
  mm2: {offsets_topic: connect-offsets, connector: "{source}->{target}.MirrorSourceConnector"}
flows:
  - mirror: {from: east, to: west}
  - mirror: {from: east, to: north}
    mm2: {status_topic: "mm2-{target}-status"}
"""


def test_mm2_on_a_connect_cluster_is_named_per_flow_with_its_clusters_filled_in() -> None:
    from topology.core.mm2.positions import names_of

    loaded = topology(CONNECT_CLUSTER)
    west, north = (names_of(loaded.edge(name)) for name in ("east->west", "east->north"))
    assert west == Names(
        "connect-offsets", "mm2-status.east.internal", "east->west.MirrorSourceConnector"
    )
    # a flow's own mm2 keys merge with the defaults' key by key
    assert north == Names(
        "connect-offsets", "mm2-north-status", "east->north.MirrorSourceConnector"
    )


def test_an_unknown_mm2_key_is_one_located_error() -> None:
    from topology.core import analysis

    text = CONNECT_CLUSTER.replace("offsets_topic:", "offset_topic:")
    result = analysis.analyse(text, "topology.yaml")
    assert not result.ok
    [problem] = [d for d in result.diagnostics if d.code == "T101"]
    assert "offset_topic" in problem.message and "offsets_topic" in problem.message
