"""`topo reset`'s decisions (core/reset.py), its use case over fakes (ops/reset.py: refused
unless the flow is paused in the file and on the running driver) and its text and JSON."""

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from topology.core import analysis, naming, runstate
from topology.core import reset as resets
from topology.core.errors import TopoError
from topology.core.jobs import JobSpec, document, spec_of
from topology.core.model import Topology
from topology.core.render.reset import reset_text
from topology.core.runstate import Book
from topology.ops import reset as resetting

OWNER = "prod"
T0 = 1_700_000_000.0
SCHEMA = json.loads((Path(__file__).parents[2] / "schemas/reset.schema.json").read_text())


def topology(paused: bool, delivery: str = "at-least-once") -> Topology:
    text = (
        f"version: 1\nname: {OWNER}\nclusters:\n  east: {{bootstrap: 'h:1'}}\n"
        "  west: {bootstrap: 'h:2'}\nflows:\n"
        f"  - mirror: {{from: east, to: west}}\n    paused: {str(paused).lower()}\n"
        f"    delivery: {delivery}\n"
    )
    made = analysis.analyse(text, "topology.yaml").topology
    assert made is not None
    return made


def spec(paused: bool = True, delivery: str = "at-least-once") -> JobSpec:
    made = topology(paused, delivery)
    return spec_of(made, made.edges()[0])


# -- where a position goes, and what it costs ---------------------------------------------------


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("earliest", resets.To("earliest")),
        ("latest", resets.To("latest")),
        ("42", resets.To("offset", 42)),
        ("2026-11-28T09:30:00Z", resets.To("time", 1_795_858_200_000)),
        ("2026-11-28T09:30:00", resets.To("time", 1_795_858_200_000)),  # no zone: UTC
        ("2026-11-28T10:30:00+01:00", resets.To("time", 1_795_858_200_000)),
    ],
)
def test_to_is_read_as_a_person_writes_it(given: str, expected: resets.To) -> None:
    assert resets.parse_to(given) == expected


@pytest.mark.parametrize("given", ["yesterday", "-5", "1.5", "", "2026-13-01"])
def test_a_to_that_is_none_of_them_is_one_line(given: str) -> None:
    with pytest.raises(TopoError, match="is not earliest, latest, an offset or an ISO 8601"):
        resets.parse_to(given)


def seen(position: int | None, at_time: int | None = None) -> resets.Seen:
    return resets.Seen("orders", "east.orders", 0, position, 100, 200, at_time)


def test_back_to_the_start_copies_again_what_was_copied() -> None:
    moved = resets.move(seen(150), resets.To("earliest"), start_latest=False)
    assert (moved.before, moved.after, moved.again, moved.skipped) == (150, 100, 50, 0)


def test_on_to_the_end_skips_what_waits() -> None:
    moved = resets.move(seen(150), resets.To("latest"), start_latest=False)
    assert (moved.after, moved.again, moved.skipped) == (200, 0, 50)


def test_a_time_goes_to_the_first_record_that_new_or_to_the_end() -> None:
    at = resets.To("time", 1)
    assert resets.move(seen(150, at_time=120), at, False).after == 120
    none_that_new = resets.move(seen(150, at_time=None), at, False)
    assert (none_that_new.after, none_that_new.note) == (200, "no record that new: its end")


def test_an_offset_is_held_within_what_the_partition_holds() -> None:
    assert resets.move(seen(150), resets.To("offset", 170), False).after == 170
    past = resets.move(seen(150), resets.To("offset", 500), False)
    assert (past.after, past.skipped, past.note) == (200, 50, "offset 500 is past its end")
    before = resets.move(seen(150), resets.To("offset", 3), False)
    assert (before.after, before.again, before.note) == (100, 50, "offset 3 is past its start")


def test_without_a_position_it_counts_from_where_the_flow_would_start() -> None:
    earliest = resets.move(seen(None), resets.To("offset", 150), start_latest=False)
    assert (earliest.before, earliest.skipped, earliest.again) == (None, 50, 0)
    assert earliest.note == "no position yet"
    latest = resets.move(seen(None), resets.To("offset", 150), start_latest=True)
    assert (latest.skipped, latest.again) == (0, 50)


def test_a_position_the_source_no_longer_holds_counts_from_its_start() -> None:
    moved = resets.move(seen(40), resets.To("latest"), start_latest=False)
    assert (moved.before, moved.skipped) == (40, 100)  # 40..99 are gone: not the reset's cost


def test_only_the_positions_that_move_are_committed() -> None:
    planned = resets.reset(
        "east->west",
        "at-least-once",
        "west",
        "g",
        resets.To("latest"),
        [seen(200), replace(seen(150), partition=1), replace(seen(None), partition=2)],
        start_latest=False,
    )
    assert planned.changed() == {("east.orders", 1): 200, ("east.orders", 2): 200}
    assert (planned.skipped, planned.again) == (150, 0)


def test_topics_are_chosen_by_their_source_name() -> None:
    copied = {"orders": "east.orders", "audit": "east.audit"}
    with_beats = {**copied, "heartbeats": "east.heartbeats"}
    assert resets.chosen_topics(with_beats, [], "east->west") == copied  # topo's own: asked only
    assert resets.chosen_topics(with_beats, ["heartbeats"], "east->west") == {
        "heartbeats": "east.heartbeats"
    }
    assert resets.chosen_topics(copied, ["audit"], "east->west") == {"audit": "east.audit"}
    with pytest.raises(TopoError, match=r"does not copy topic nope \(it copies: audit, orders"):
        resets.chosen_topics(copied, ["nope"], "east->west")


# -- refused unless nothing copies the flow -------------------------------------------------------


class Log:
    def __init__(self) -> None:
        self.book = Book()
        self.offset = 0

    def put(self, kind: str, value: dict[str, Any], at: float = T0) -> None:
        key = runstate.record_key(OWNER, kind)
        self.book.feed(key, runstate.encode(value), int(at * 1000), self.offset)
        self.offset += 1

    def jobs(self, paused: bool) -> float:
        made = document(topology(paused), T0)
        self.put("jobs", made.to_dict())
        return made.published_at

    def lease(self) -> None:
        self.put("lease", runstate.lease_record("h:1:x", 1))

    def status(self, published_at: float, state: str) -> None:
        flows = [{"flow": "east->west", "state": state}]
        self.put("status", {"jobs_published_at": published_at, "state": "running", "flows": flows})


def test_a_flow_the_file_does_not_pause_is_refused_before_any_cluster_is_asked() -> None:
    said = resetting.not_paused(spec(paused=False), "t.yaml")
    assert said is not None and "not paused in t.yaml: set `paused: true`" in said
    assert resetting.not_paused(spec(), "t.yaml") is None
    assert resetting.refusal(None, OWNER, spec(paused=False), "t.yaml", T0) == said


def test_without_a_running_driver_a_paused_flow_may_move() -> None:
    assert resetting.refusal(None, OWNER, spec(), "t.yaml", T0) is None
    log = Log()
    log.jobs(paused=False)  # published, but no driver holds the lease: nothing copies
    assert resetting.refusal(log.book, OWNER, spec(), "t.yaml", T0 + 1) is None


def test_a_driver_that_still_copies_the_flow_refuses_it() -> None:
    log = Log()
    published = log.jobs(paused=False)
    log.lease()
    log.status(published, "running")
    said = resetting.refusal(log.book, OWNER, spec(), "t.yaml", T0 + 1)
    assert said is not None and "still copies east->west: `topo apply t.yaml` first" in said


def test_a_driver_that_has_not_paused_it_yet_refuses_it_until_it_has() -> None:
    log = Log()
    published = log.jobs(paused=True)
    log.lease()
    said = resetting.refusal(log.book, OWNER, spec(), "t.yaml", T0 + 1)
    assert said is not None and "has not reported on the jobs published last" in said
    log.status(published, "running")
    said = resetting.refusal(log.book, OWNER, spec(), "t.yaml", T0 + 1)
    assert said is not None and "has not paused east->west yet (it reports it running)" in said
    log.status(published, "paused")
    assert resetting.refusal(log.book, OWNER, spec(), "t.yaml", T0 + 1) is None


# -- the use case over fakes ------------------------------------------------------------------


class Source:
    def bounds(self, topic: str, partition: int) -> tuple[int, int]:
        return (10 * partition, 100 + 10 * partition)

    def offset_at(self, topic: str, partition: int, ms: int) -> int | None:
        return None if partition == 1 else 50


class Progress:
    def __init__(self, committed: dict[tuple[str, int], int]) -> None:
        self.committed = dict(committed)
        self.commits: list[tuple[str, dict[tuple[str, int], int]]] = []

    def offsets(self, group: str) -> dict[tuple[str, int], int]:
        return dict(self.committed)

    def commit(self, group: str, offsets: dict[tuple[str, int], int]) -> None:
        self.commits.append((group, dict(offsets)))
        self.committed |= offsets


def test_a_reset_to_a_time_reads_each_partition_and_commits_what_moves() -> None:
    progress = Progress({("east.orders", 0): 90, ("east.orders", 1): 110})
    planned = resetting.plan(
        spec(delivery="exactly-once"),
        OWNER,
        {"orders": ("east.orders", 2)},
        resets.To("time", 1_795_858_200_000),
        Source(),
        progress,
    )
    assert [(m.partition, m.before, m.after, m.again, m.skipped) for m in planned.moves] == [
        (0, 90, 50, 40, 0),
        (1, 110, 110, 0, 0),  # nothing that new: its end, where it already is
    ]
    assert resetting.commit(planned, progress) == 1
    group = naming.progress_group(OWNER, spec().slug)
    assert progress.commits == [(group, {("east.orders", 0): 50})]
    document = {**planned.to_dict(), "committed": True}
    jsonschema.validate(document, SCHEMA)
    text = reset_text(document)
    assert "Reset of east->west (exactly-once) to 2026-11-28T09:30:00Z" in text
    assert "orders  0          90   50     40 copied again" in text
    assert "1 position(s) move: 40 record(s) copied again, 0 never copied." in text
    assert "written to west a second time" in text


def test_nothing_to_move_says_so() -> None:
    planned = resetting.plan(
        spec(),
        OWNER,
        {"orders": ("east.orders", 1)},
        resets.To("latest"),
        Source(),
        Progress({("east.orders", 0): 100}),
    )
    assert not planned.changed()
    assert "Nothing to move" in reset_text({**planned.to_dict(), "committed": False})
