"""`topo verify`'s proof (topology.core.verify, topology.ops.verify) over fake partitions: the
clean case, a copy altered, deleted, duplicated, a record the filter or the loop rules drop,
a compacted topic, a flow behind; no Kafka (tests/integration/test_verify.py reads real ones)."""

import dataclasses
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from topology.core import analysis
from topology.core.jobs import JobSpec, copied_headers, specs_of
from topology.core.mm2.wire import OffsetSync
from topology.core.render.verify import proofs_text
from topology.core.verify import (
    Content,
    Held,
    Kind,
    PartitionProof,
    Stored,
    Verdict,
    compare,
    exit_code,
)
from topology.ops.verify import Task, prove

SCHEMA = Draft202012Validator(
    json.loads((Path(__file__).parents[2] / "schemas/verify.schema.json").read_text())
)
TOPOLOGY = """version: 1
clusters:
  east: {bootstrap: "h:1"}
  west: {bootstrap: "h:2"}
flows:
  - mirror: {from: east, to: west}
"""


def spec(extra: str = "") -> JobSpec:
    loaded = analysis.analyse(TOPOLOGY.replace("to: west}", f"to: west}}{extra}"), "t.yaml")
    assert loaded.topology is not None, loaded.diagnostics
    [found] = specs_of(loaded.topology)
    return found


def source_records(count: int, start: int = 0) -> list[Stored]:
    return [
        Stored(o, f"k{o % 3}".encode(), f"v{o}".encode(), (("h", b"x"),), 1_000 + o)
        for o in range(start, start + count)
    ]


def copy_of(flow: JobSpec, record: Stored, at: int, **changed: Any) -> Stored:
    """The copy the flow writes of `record` (its headers stamped), at target offset `at`."""
    headers = copied_headers(flow, record.headers, record.offset)
    made = Stored(at, record.key, record.value, headers, record.timestamp_ms)
    return dataclasses.replace(made, **changed)


class FakePartitions:
    def __init__(self, held: dict[tuple[str, int], list[Stored]]) -> None:
        self.held = held

    def bounds(self, topic: str, partition: int) -> tuple[int, int]:
        found = self.held[(topic, partition)]
        return (found[0].offset, found[-1].offset + 1) if found else (0, 0)

    def records(self, topic: str, partition: int, start: int, end: int) -> Iterator[Stored]:
        return iter([r for r in self.held[(topic, partition)] if start <= r.offset < end])

    def close(self) -> None:
        pass


class FakeReader:
    def __init__(
        self,
        east: list[Stored],
        west: list[Stored],
        progress: int | None,
        syncs: Sequence[OffsetSync] = (),
    ) -> None:
        self.syncs = list(syncs)
        self.clusters = {
            "east": FakePartitions({("orders", 0): east}),
            "west": FakePartitions({("east.orders", 0): west}),
        }
        self.done = {} if progress is None else {("orders", 0): progress}

    def partitions(self, cluster: str) -> FakePartitions:
        return self.clusters[cluster]

    def progress(self, cluster: str, topic: str, flow: str) -> dict[tuple[str, int], int]:
        assert (cluster, topic, flow) == ("west", "topo-offset-syncs.east.internal", "east->west")
        return self.done

    def mm2_syncs(self, cluster: str, topic: str) -> list[OffsetSync]:
        assert (cluster, topic) == ("east", "mm2-offset-syncs.west.internal")
        return self.syncs


def keep_even_values(
    _spec: JobSpec, _topic: str, _partition: int, batch: Sequence[Stored]
) -> list[bool]:
    return [int((r.value or b"v0")[1:]) % 2 == 0 for r in batch]


def proof_of(
    east: list[Stored],
    west: list[Stored],
    progress: int | None = None,
    flow: JobSpec | None = None,
    compacted: bool = False,
    syncs: Sequence[OffsetSync] = (),
) -> PartitionProof:
    flow = flow or spec()
    reader = FakeReader(east, west, len(east) if progress is None else progress, syncs)
    task = Task(flow, "orders", "east.orders", 0, compacted)
    [proof] = prove([task], reader, keep_even_values)
    SCHEMA.validate({"partitions": [proof.to_dict()], "exit": exit_code([proof])})
    return proof


def test_a_faithful_copy_is_proven_with_equal_counts_and_digests() -> None:
    east = source_records(10)
    west = [copy_of(spec(), r, r.offset) for r in east]
    proof = proof_of(east, west)
    assert proof.verdict is Verdict.PROVEN and exit_code([proof]) == 0
    shown = proof.to_dict()
    assert shown["source"] == shown["target"] and shown["source"]["records"] == 10
    assert shown["window"] == {"start": 0, "end": 10} and shown["first_difference"] is None
    assert "proven" in proofs_text([shown]) and "10 record(s)" in proofs_text([shown])


def test_an_altered_a_deleted_and_a_duplicated_copy_are_each_named_at_their_offset() -> None:
    east = source_records(10)
    flow = spec()
    faithful = [copy_of(flow, r, r.offset) for r in east]
    altered = [*faithful[:3], copy_of(flow, east[3], 3, value=b"other"), *faithful[4:]]
    deleted = [*faithful[:5], *[copy_of(flow, r, r.offset - 1) for r in east[6:]]]
    duplicated = [*faithful[:7], copy_of(flow, east[2], 7), *faithful[7:]]
    later = [copy_of(flow, r, r.offset) for r in east]
    later[8] = copy_of(flow, east[8], 8, timestamp_ms=5)
    cases = [
        (altered, Kind.ALTERED, 3, 3, "its value differ"),
        (deleted, Kind.MISSING, 5, None, "no copy on the target"),
        (duplicated, Kind.DUPLICATED, 2, 7, "a second copy of source offset 2"),
        (later, Kind.ALTERED, 8, 8, "its timestamp differ"),
    ]
    for west, kind, offset, target_offset, detail in cases:
        proof = proof_of(east, west)
        first = proof.comparison.first
        assert first is not None and proof.verdict is Verdict.DIFFERS, kind
        assert (first.kind, first.source_offset, first.target_offset) == (
            kind,
            offset,
            target_offset,
        )
        assert detail in first.detail and exit_code([proof]) == 1
        assert proof.comparison.source.digest.digest() != proof.comparison.target.digest.digest()
        assert f"first at source offset {offset}" in proofs_text([proof.to_dict()])


def test_a_filtered_flow_is_proven_on_what_its_filter_keeps_and_a_dropped_one_is_unexpected() -> (
    None
):
    flow = spec('\n    filter: "true"')
    east = source_records(10)
    kept = [r for r in east if r.offset % 2 == 0]  # keep_even_values: the fake filter
    west = [copy_of(flow, r, n) for n, r in enumerate(kept)]
    proof = proof_of(east, west, flow=flow)
    assert proof.verdict is Verdict.PROVEN and proof.comparison.source.records == 5
    leaked = [
        *west[:2],
        copy_of(flow, east[3], 2),
        *[copy_of(flow, r, n + 1) for n, r in enumerate(kept[2:], 2)],
    ]
    first = proof_of(east, leaked, flow=flow).comparison.first
    assert first is not None and (first.kind, first.source_offset) == (Kind.UNEXPECTED, 3)


def test_the_loop_rules_drop_what_the_flow_never_copies_and_other_records_are_counted_apart() -> (
    None
):
    """A source record that came from west (its provenance) is not copied back; west's own
    records in the target topic (an identity-named mesh) are not this flow's copies."""
    flow = spec()
    east = source_records(6)
    east[2] = Stored(2, b"k", b"from west", (("topo-provenance", b"west"),), 1002)
    west = [copy_of(flow, r, n) for n, r in enumerate(r for r in east if r.offset != 2)]
    west.insert(3, Stored(99, b"own", b"written on west", (), 7))
    west = [Stored(n, r.key, r.value, r.headers, r.timestamp_ms) for n, r in enumerate(west)]
    proof = proof_of(east, west)
    assert proof.verdict is Verdict.PROVEN and proof.unstamped == 1
    assert proof.comparison.source.records == 5


def test_records_after_the_flows_progress_are_behind_not_missing() -> None:
    east = source_records(10)
    west = [copy_of(spec(), r, r.offset) for r in east[:7]]
    proof = proof_of(east, west, progress=7)
    assert proof.verdict is Verdict.BEHIND and proof.behind == 3 and exit_code([proof]) == 2
    assert proof.window == (0, 7)
    assert exit_code([proof, proof_of(east, [], progress=10)]) == 1  # behind, and one missing


def test_a_target_that_no_longer_holds_its_first_copies_is_proven_from_its_first_one() -> None:
    east = source_records(10)
    west = [copy_of(spec(), r, r.offset) for r in east[4:]]  # retention removed 0..3 on west
    proof = proof_of(east, west)
    assert proof.verdict is Verdict.PROVEN and proof.window == (4, 10)


def test_a_compacted_topic_differs_only_where_both_sides_hold_a_record() -> None:
    flow = spec()
    east = source_records(9)  # keys k0 k1 k2 k0 k1 k2 ...
    compacted_east = [r for r in east if r.offset not in (0, 1)]  # the source compacted 0, 1
    # the target compacted 2 and 3 (their keys have later copies), and still holds 0
    west = [copy_of(flow, r, r.offset) for r in east if r.offset not in (1, 2, 3)]
    proof = proof_of(compacted_east, west, progress=9, compacted=True)
    assert proof.verdict is Verdict.PROVEN, proof.comparison.first
    # a record whose key has no later copy is missing, compacted or not
    lost = [c for c in west if c.offset != 8]
    first = proof_of(compacted_east, lost, progress=9, compacted=True).comparison.first
    assert first is not None and (first.kind, first.source_offset) == (Kind.MISSING, 8)


def test_the_digest_tells_apart_what_a_naive_join_would_not() -> None:
    def digest(*contents: Content) -> str:
        found = compare([Held(n, c) for n, c in enumerate(contents)], [])
        return str(found.source.digest.hexdigest())

    assert digest(Content(b"ab", b"c", (), 1)) != digest(Content(b"a", b"bc", (), 1))
    assert digest(Content(None, b"", (), 1)) != digest(Content(b"", b"", (), 1))
    assert digest(Content.of(b"k", b"v", (("topo-offsets", b"east:1"),), 1)) == digest(
        Content(b"k", b"v", (), 1)
    )
    a, b = Content(b"a", None, (), 1), Content(b"b", None, (), 1)
    assert digest(a, b) != digest(b, a)  # order counts


def test_the_partitions_to_prove_are_the_copied_topics_but_the_heartbeats() -> None:
    from topology.core.observed import Cluster, Topic
    from topology.ops.verify import tasks

    flow = spec()
    east = Cluster(
        "east",
        1,
        1,
        acls=None,
        topics={
            "orders": Topic("orders", 2, 1),
            "ledger": Topic("ledger", 1, 1, {"cleanup.policy": "compact,delete"}),
            "heartbeats": Topic("heartbeats", 1, 1),
            "fresh": Topic("fresh", 1, 1),  # no copy on west yet
        },
    )
    copies = ("east.orders", "east.ledger", "east.heartbeats")
    west = Cluster("west", 1, 1, acls=None, topics={name: Topic(name, 2, 1) for name in copies})
    maps = {flow.flow: {t: f"east.{t}" for t in ("orders", "ledger", "heartbeats", "fresh")}}
    found = tasks([flow], maps, {"east": east, "west": west})
    assert [(t.topic, t.partition, t.compacted) for t in found] == [
        ("ledger", 0, True),
        ("orders", 0, False),
        ("orders", 1, False),
    ]
    only = tasks([flow], maps, {"east": east, "west": west}, topics=["orders"])
    assert {t.topic for t in only} == {"orders"}


def test_the_copies_mm2_made_before_a_handover_are_proven_by_its_offset_syncs() -> None:
    flow = spec("\n    start: mm2")
    east = source_records(10)
    # MM2 copied 0..5 (no stamps: the record as it was), synced its first; topo the rest.
    by_mm2 = [dataclasses.replace(r) for r in east[:6]]
    west = by_mm2 + [copy_of(flow, r, r.offset) for r in east[6:]]
    first_sync = [OffsetSync("orders", 0, 0, 0)]
    proof = proof_of(east, west, flow=flow, syncs=first_sync)
    assert proof.verdict is Verdict.PROVEN and proof.window == (0, 10)
    assert proof.to_dict()["target"]["records"] == 10 and proof.unstamped == 0
    # Without the syncs, MM2's copies are records of unknown origin: proven from topo's first.
    alone = proof_of(east, west, flow=flow)
    assert alone.verdict is Verdict.PROVEN and alone.window == (6, 10) and alone.unstamped == 6
    # One of MM2's copies altered is named where it differs.
    west[3] = dataclasses.replace(west[3], value=b"altered")
    altered = proof_of(east, west, flow=flow, syncs=first_sync)
    assert altered.verdict is Verdict.DIFFERS
    assert altered.to_dict()["first_difference"]["source_offset"] == 3


def test_mm2_copies_its_syncs_cannot_place_leave_the_window_after_them() -> None:
    flow = spec("\n    start: mm2")
    east = source_records(11)
    # MM2 copied 0, then three of 1..7 (which, its syncs cannot say), then 8 and 9; topo 10.
    west = [dataclasses.replace(east[0])]
    west += [dataclasses.replace(east[o], offset=t) for t, o in ((1, 2), (2, 4), (3, 6))]
    west += [dataclasses.replace(east[8], offset=4), dataclasses.replace(east[9], offset=5)]
    west += [copy_of(flow, east[10], 6)]
    syncs = [OffsetSync("orders", 0, 0, 0), OffsetSync("orders", 0, 8, 4)]
    proof = proof_of(east, west, flow=flow, syncs=syncs)
    assert proof.verdict is Verdict.PROVEN and proof.window == (8, 11)
