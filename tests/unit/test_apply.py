"""Apply's bookkeeping, with a stand-in executor: order, failures per cluster, Ctrl-C.

(That the changes themselves work on Kafka is tested against real lab clusters in
tests/integration/test_plan_apply.py; here only the accounting is under test.)
"""

import dataclasses
import json
from pathlib import Path

import pytest

from topology.core.errors import KafkaUnavailableError
from topology.core.plan import execute as applying
from topology.core.plan import saved
from topology.core.plan.execute import Outcome
from topology.core.plan.values import Action, Change, Plan, Resource


def topic(cluster: str, name: str) -> Change:
    after = {
        "partitions": 1,
        "replication_factor": 1,
        "configs": {},
        "purpose": "replica",
        "sources": [],
    }
    return Change(Action.CREATE, Resource.TOPIC, cluster, name, "test", after=after)


PLAN = Plan(
    topology_file="topology.yaml",
    topology_sha256="0" * 64,
    owner="topology",
    observed_sha256="sha256:" + "1" * 64,
    clusters={"west": "127.0.0.1:1", "north": "127.0.0.1:2"},
    changes=(topic("west", "a"), topic("north", "b"), topic("west", "c"), topic("north", "d")),
)


def test_every_change_runs_in_plan_order() -> None:
    ran: list[str] = []
    report = applying.run(PLAN, lambda change: ran.append(change.name))
    assert ran == ["a", "b", "c", "d"]
    assert report.ok and report.count(Outcome.DONE) == 4


def test_a_failing_cluster_stops_its_own_changes_and_not_the_others() -> None:
    ran: list[str] = []

    def execute(change: Change) -> None:
        if change.cluster == "west":
            raise KafkaUnavailableError("cluster west (127.0.0.1:1) is unreachable")
        ran.append(change.name)

    report = applying.run(PLAN, execute)
    assert ran == ["b", "d"]
    assert [(s.change.name, s.outcome) for s in report.steps] == [
        ("a", Outcome.FAILED),
        ("b", Outcome.DONE),
        ("c", Outcome.NOT_ATTEMPTED),
        ("d", Outcome.DONE),
    ]
    assert "unreachable" in report.steps[0].detail and not report.ok


def test_ctrl_c_marks_the_running_change_and_the_rest_as_not_attempted() -> None:
    def execute(change: Change) -> None:
        if change.name == "b":
            raise KeyboardInterrupt

    report = applying.run(PLAN, execute)
    assert report.interrupted and not report.ok
    assert [s.outcome for s in report.steps] == [Outcome.DONE] + [Outcome.NOT_ATTEMPTED] * 3
    assert "partly done" in report.steps[1].detail


def batch_plan() -> Plan:
    """Creations on west, one on north between them, then a config change on west."""
    state = Change(
        Action.CREATE,
        Resource.TOPIC,
        "west",
        "topo-state.internal",
        "test",
        after={"partitions": 1, "replication_factor": 1, "configs": {}, "purpose": "state"},
    )
    config = Change(Action.UPDATE, Resource.TOPIC_CONFIG, "west", "w1", "test", after={})
    creations = [topic("west", "w1"), topic("west", "w2"), topic("west", "w3")]
    changes = (state, *creations, topic("north", "n1"), topic("west", "w4"), config)
    return dataclasses.replace(PLAN, changes=changes)


def test_consecutive_creations_on_one_cluster_go_together_and_each_is_its_own_step(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    one: list[str] = []
    calls: list[list[str]] = []
    seen: list[tuple[int, str]] = []

    def together(creations: object) -> list[str | None]:
        names = [c.name for c in creations]  # type: ignore[attr-defined]
        calls.append(names)
        return [None] * len(names)

    report = applying.run(
        batch_plan(),
        lambda change: one.append(change.name),
        on_done=lambda step: seen.append((step.number, step.outcome)),
        run_together=together,
    )
    # The state topic alone (the others' ownership records go to it), then w1-w3 at once; a
    # creation on another cluster, a lone creation and a config change one by one.
    assert calls == [["w1", "w2", "w3"]]
    assert one == ["topo-state.internal", "n1", "w4", "w1"]
    assert report.ok and [n for n, _ in seen] == list(range(1, 8))
    assert [s.detail for s in report.steps[1:4]] == ["3 created in one request"] * 3

    monkeypatch.setattr(applying, "TOGETHER_MOST", 2)
    calls.clear()
    applying.run(batch_plan(), lambda change: None, run_together=together)
    assert calls == [["w1", "w2"]]  # w3 alone: at most TOGETHER_MOST in one request
    assert applying.run(batch_plan(), lambda change: None).ok  # without it, one by one


def test_a_creation_failing_among_others_fails_alone_and_stops_its_cluster() -> None:
    def together(creations: object) -> list[str | None]:
        return [None, "creating topic w2 on 127.0.0.1:1 failed: it already exists", None]

    report = applying.run(batch_plan(), lambda change: None, run_together=together)
    assert [(s.change.name, s.outcome) for s in report.steps] == [
        ("topo-state.internal", Outcome.DONE),
        ("w1", Outcome.DONE),
        ("w2", Outcome.FAILED),
        ("w3", Outcome.DONE),  # tried in the same request: it was made
        ("n1", Outcome.DONE),
        ("w4", Outcome.NOT_ATTEMPTED),
        ("w1", Outcome.NOT_ATTEMPTED),
    ]
    assert "already exists" in report.steps[2].detail

    def unreachable(creations: object) -> list[str | None]:
        raise KafkaUnavailableError("cluster west (127.0.0.1:1) is unreachable")

    report = applying.run(batch_plan(), lambda change: None, run_together=unreachable)
    assert [s.outcome for s in report.steps[1:4]] == [Outcome.FAILED] * 3
    assert report.steps[4].outcome is Outcome.DONE


def test_ctrl_c_during_creations_together_marks_them_all_and_the_rest() -> None:
    def together(creations: object) -> list[str | None]:
        raise KeyboardInterrupt

    report = applying.run(batch_plan(), lambda change: None, run_together=together)
    assert report.interrupted and len(report.steps) == 7
    assert [s.outcome for s in report.steps] == [Outcome.DONE] + [Outcome.NOT_ATTEMPTED] * 6
    assert all("partly done" in s.detail for s in report.steps[1:4])
    assert "before it started" in report.steps[4].detail


def test_a_saved_plan_reads_back_equal() -> None:
    text = json.dumps(PLAN.to_dict())
    assert saved.looks_like_plan(text)
    assert saved.read(text, "plan.json") == PLAN


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.update(format_version="9"), "plan format '9'"),
        (lambda d: d["changes"][0].update(action="explode"), "changes/0"),
        (lambda d: d.pop("fingerprint"), "fingerprint"),
    ],
)
def test_a_damaged_saved_plan_is_refused_in_one_line(edit, message: str) -> None:  # type: ignore[no-untyped-def]
    data = PLAN.to_dict()
    edit(data)
    with pytest.raises(saved.SavedPlanError, match=message):
        saved.read(json.dumps(data), "plan.json")


def test_a_topology_is_not_mistaken_for_a_plan() -> None:
    assert not saved.looks_like_plan("version: 1\nclusters: {}\n")
    assert not saved.looks_like_plan('{"version": 1, "clusters": {}}')


def test_a_saved_plan_finds_its_topology_where_it_was_planned_or_beside_the_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from topology.host.planned_topology import first_place

    (tmp_path / "ci").mkdir()
    (tmp_path / "ci" / "topology.yaml").write_text("version: 1\n")
    plan_file = str(tmp_path / "ci" / "plan.json")
    monkeypatch.chdir(tmp_path)  # not where the plan was made
    assert first_place(PLAN, plan_file) == str(tmp_path / "ci" / "topology.yaml")
    (tmp_path / "topology.yaml").write_text("version: 1\n")  # the one it was made from
    assert first_place(PLAN, plan_file) == "topology.yaml"
