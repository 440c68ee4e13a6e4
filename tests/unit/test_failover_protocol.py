"""The failover protocol (topology.ops.failover) and the offsets rounds (topology.ops.rounds)
over an in-memory fake of the Kafka adapter: no broker.

The fake holds what the Kafka adapter reads: each cluster's topics, committed offsets and
members, each partition's records as their `topo-offsets` stamps (the source offsets a copy
carries, by cluster), and topo's log topics (checkpoints, progress) as the encoded records the
running job writes.

east's `orders` is mirrored to west as `east.orders`:
- partition 0: west holds copies of east offsets 0 1 2 4 5 7 8 9 at offsets 0..7 (east's 3 and
  6 were transaction markers, or records the flow's filter dropped);
- partition 1: west's log starts at 100 (retention) and holds copies of east 20 21, a record
  aggregated from another cluster, then copies of east 22..26 (offsets 100..107).
"""

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from topology.core import analysis
from topology.core.errors import ActiveGroupError, KafkaUnavailableError, TopoError
from topology.core.mm2 import positions, wire
from topology.core.model import Topology
from topology.core.naming import checkpoints_topic, offset_syncs_topic, topo_checkpoints_topic
from topology.core.observed import Cluster, Group, Topic
from topology.core.offsets import checkpoints
from topology.core.offsets.checkpoints import Checkpoint, CheckpointKey, Progress
from topology.core.render.offsets import moves_text
from topology.kafka.offsets import GroupState
from topology.ops.failover import Behind, Move, Offsets, behind
from topology.ops.rounds import Checkpointer

TOPOLOGY = """
version: 1
clusters:
  east: {bootstrap: "127.0.0.1:9001"}
  west: {bootstrap: "127.0.0.1:9002"}
defaults: {replication_factor: 1}
flows:
  - mirror: {from: east, to: west}
    topics: {include: ["orders"]}
    groups: {exclude: ["audit-.*"]}
"""

FLOW = "east->west"
CHECKPOINTS = topo_checkpoints_topic("east", ".")  # topo-checkpoints.east.internal, on west
MM2_CHECKPOINTS = checkpoints_topic("east", ".")  # east.checkpoints.internal, on west
PROGRESS = offset_syncs_topic("east", ".")  # topo-offset-syncs.east.internal, on west
CONFIGS = {name: {"bootstrap.servers": name} for name in ("east", "west")}

Stamps = dict[str, int]  # a record's topo-offsets header: its offset on each cluster it came from
Committed = dict[tuple[str, int], int]


def written_ms(offset: int) -> int:
    """When the fake's record at `offset` was written: one a second."""
    return 1_700_000_000_000 + offset * 1000


@dataclass
class Partition:
    records: list[Stamps]
    base: int = 0  # the log start offset
    markers: frozenset[int] = frozenset()  # offsets without a record (transaction markers)

    @property
    def end(self) -> int:
        return self.base + len(self.records)


@dataclass
class FakeCluster:
    topics: dict[str, list[Partition]] = field(default_factory=dict)
    committed: dict[str, Committed] = field(default_factory=dict)  # group -> offsets
    members: dict[str, int] = field(default_factory=dict)  # group -> active members
    logs: dict[str, list[tuple[bytes, bytes]]] = field(default_factory=dict)  # topo's logs
    down: bool = False


class FakeReader:
    def __init__(self, cluster: FakeCluster) -> None:
        self.cluster = cluster
        self.closed = False

    def close(self) -> None:
        self.closed = True

    def bounds(self, topic: str, partition: int) -> tuple[int, int]:
        found = self.cluster.topics[topic][partition]
        return found.base, found.end

    def first_stamped(
        self, topic: str, partition: int, offset: int, cluster: str, before: int | None = None
    ) -> tuple[int, int] | None:
        found = self.cluster.topics[topic][partition]
        end = found.end if before is None else min(before, found.end)
        for at in range(max(offset, found.base), end):
            stamps = found.records[at - found.base]
            if cluster in stamps:
                return at, stamps[cluster]
        return None

    def last_stamped_before(
        self, topic: str, partition: int, offset: int, cluster: str, after: int | None = None
    ) -> tuple[int, int] | None:
        found = self.cluster.topics[topic][partition]
        low = found.base if after is None else max(found.base, after + 1)
        for at in range(min(offset, found.end) - 1, low - 1, -1):
            stamps = found.records[at - found.base]
            if cluster in stamps:
                return at, stamps[cluster]
        return None

    def offsets(self, topic: str, partition: int, start: int, end: int) -> list[int]:
        found = self.cluster.topics[topic][partition]
        wanted = range(max(start, found.base), min(end, found.end))
        return [at for at in wanted if at not in found.markers]

    def timestamp(self, topic: str, partition: int, offset: int) -> int | None:
        """Each record of the fake was written a second after the one before it."""
        later = self.offsets(topic, partition, offset, self.cluster.topics[topic][partition].end)
        return written_ms(later[0]) if later else None


class FakeGroups:
    def __init__(self, kafka: "FakeKafka", name: str) -> None:
        self.kafka = kafka
        self.name = name
        self.cluster = kafka.clusters[name]

    def state(self, group: str) -> GroupState:
        members = self.cluster.members.get(group, 0)
        return GroupState("STABLE" if members else "EMPTY", members)

    def commit(self, group: str, offsets: dict[tuple[str, int], int]) -> None:
        if self.cluster.members.get(group):
            raise ActiveGroupError(f"group {group} is active on {self.name}")
        self.kafka.commits.append((self.name, group, dict(offsets)))
        self.cluster.committed.setdefault(group, {}).update(offsets)


class FakeWriter:
    def __init__(self, cluster: FakeCluster) -> None:
        self.cluster = cluster
        self.pending: list[tuple[str, tuple[bytes, bytes]]] = []

    def write(self, topic: str, entries: Iterable[tuple[bytes, bytes]]) -> None:
        self.pending += [(topic, entry) for entry in entries]

    def flush(self) -> None:
        for topic, entry in self.pending:
            self.cluster.logs.setdefault(topic, []).append(entry)
        self.pending.clear()


class FakeKafka:
    """The OffsetsAdapter over in-memory clusters; records every call it is asked to make."""

    def __init__(self, clusters: dict[str, FakeCluster]) -> None:
        self.clusters = clusters
        self.commits: list[tuple[str, str, Committed]] = []
        self.calls: list[tuple[str, str]] = []  # (method, cluster)
        self.readers: list[FakeReader] = []

    def _cluster(self, method: str, config: dict[str, str]) -> FakeCluster:
        name = config["bootstrap.servers"]
        self.calls.append((method, name))
        found = self.clusters[name]
        if found.down:
            raise KafkaUnavailableError(f"{name} is unreachable: connection refused")
        return found

    def observe(self, name: str, config: dict[str, str]) -> Cluster:
        found = self._cluster("observe", config)
        return Cluster(
            name=name,
            brokers=1,
            default_replication_factor=1,
            topics={t: Topic(t, len(parts), 1) for t, parts in found.topics.items()},
            acls=None,
            groups={
                g: Group(g, "STABLE" if found.members.get(g) else "EMPTY", dict(offsets))
                for g, offsets in found.committed.items()
            },
        )

    def read_checkpoints(
        self, config: dict[str, str], topic: str
    ) -> dict[CheckpointKey, Checkpoint]:
        log = self._cluster("read_checkpoints", config).logs.get(topic, [])
        decoded = (checkpoints.decode_checkpoint(value) for _key, value in log)
        return checkpoints.latest_checkpoints(c for c in decoded if c is not None)

    def read_progress(self, config: dict[str, str], topic: str, flow: str) -> Committed:
        log = self._cluster("read_progress", config).logs.get(topic, [])
        decoded = (checkpoints.decode_progress(value) for _key, value in log)
        return checkpoints.latest_progress((p for p in decoded if p is not None), flow)

    def read_mm2_syncs(self, config: dict[str, str], topic: str) -> list[wire.OffsetSync]:
        log = self._cluster("read_mm2_syncs", config).logs.get(topic, [])
        decoded = (wire.decode_offset_sync(key, value) for key, value in log)
        return [sync for sync in decoded if sync is not None]

    def read_mm2_checkpoints(
        self, config: dict[str, str], topic: str
    ) -> dict[tuple[str, str, int], wire.Checkpoint]:
        log = self._cluster("read_mm2_checkpoints", config).logs.get(topic, [])
        decoded = (wire.decode_checkpoint(key, value) for key, value in log)
        return {(c.group, c.topic, c.partition): c for c in decoded if c is not None}

    def read_mm2_resumes(
        self, config: dict[str, str], source: str, names: positions.Names
    ) -> Committed:
        log = self._cluster("read_mm2_resumes", config).logs.get(names.offsets_topic, [])
        return positions.resume_positions(log, source, names.connector)

    def reader(self, config: dict[str, str]) -> FakeReader:
        made = FakeReader(self._cluster("reader", config))
        self.readers.append(made)
        return made

    def groups(self, config: dict[str, str]) -> FakeGroups:
        self._cluster("groups", config)
        return FakeGroups(self, config["bootstrap.servers"])

    def log_writer(self, config: dict[str, str]) -> FakeWriter:
        return FakeWriter(self._cluster("log_writer", config))


def topology() -> Topology:
    result = analysis.analyse(TOPOLOGY, "t.yaml")
    assert result.ok, result.diagnostics
    assert result.topology is not None
    return result.topology


def copies(*offsets: int) -> list[Stamps]:
    return [{"east": o} for o in offsets]


def progress(orders_0: int, orders_1: int) -> list[tuple[bytes, bytes]]:
    """The flow's progress log on west: east's orders copied up to these offsets."""
    return [
        checkpoints.encode_progress(Progress(FLOW, "orders", 0, orders_0)),
        checkpoints.encode_progress(Progress(FLOW, "orders", 1, orders_1)),
    ]


def checkpoint(
    group: str, partition: int, upstream: int, downstream: int, **flags: bool
) -> tuple[bytes, bytes]:
    return checkpoints.encode_checkpoint(
        Checkpoint(
            group,
            "orders",
            partition,
            upstream,
            "east.orders",
            downstream,
            at_ms=1_700_000_000_000,
            **flags,
        )
    )


def world(progressed: tuple[int, int] = (10, 27)) -> FakeKafka:
    east = FakeCluster(
        topics={
            "orders": [Partition([{}] * 10), Partition([{}] * 30)],
            "payments": [Partition([{}] * 5)],
        },
        committed={
            "billing": {("orders", 0): 6, ("orders", 1): 24},
            "ledger": {("orders", 0): 9},
            "audit-1": {("orders", 0): 3},  # the flow's group filter excludes it
            "reports": {("payments", 0): 4},  # only a topic the flow does not copy
            "idle": {},
        },
    )
    west = FakeCluster(
        topics={
            "east.orders": [
                Partition(copies(0, 1, 2, 4, 5, 7, 8, 9)),
                Partition([*copies(20, 21), {"south": 3}, *copies(22, 23, 24, 25, 26)], base=100),
            ]
        },
        committed={"billing": {("east.orders", 0): 2}},
        logs={PROGRESS: progress(*progressed)},
    )
    return FakeKafka({"east": east, "west": west})


def offsets(kafka: FakeKafka, lines: list[str] | None = None, source: str = TOPOLOGY) -> Offsets:
    result = analysis.analyse(source, "t.yaml")
    assert result.ok and result.topology is not None, result.diagnostics
    return Offsets(result.topology, CONFIGS, (lines if lines is not None else []).append, kafka)


def rows(move: Move) -> list[tuple[str, int, int, str | None, int | None, bool]]:
    return [
        (r.topic, r.partition, r.offset, r.destination_topic, r.position, r.replicated)
        for r in move.rows
    ]


BILLING_ON_WEST = {("east.orders", 0): 5, ("east.orders", 1): 105}


# Live: the origin answers


def test_a_group_fails_over_live_to_exactly_its_first_unconsumed_copies() -> None:
    """east's billing committed 6 (east's 6 was never copied: it resumes at the copy of 7,
    west's 5) and 24 (the copy of 24 is west's 105, after an aggregated record)."""
    kafka = world()
    moves = offsets(kafka).failover("east", "west", ["billing"], force=False)
    [move] = moves
    assert (move.group, move.basis, move.refused, move.committed) == ("billing", "live", [], True)
    assert rows(move) == [
        ("orders", 0, 6, "east.orders", 5, True),
        ("orders", 1, 24, "east.orders", 105, True),
    ]
    assert all(r.exact for r in move.rows)
    assert move.current == {("east.orders", 0): 2}
    assert kafka.commits == [("west", "billing", BILLING_ON_WEST)]
    assert all(reader.closed for reader in kafka.readers)
    assert move.to_dict()["partitions"][0]["current"] == 2


def test_a_group_at_the_head_and_at_the_start_resume_exactly() -> None:
    kafka = world()
    kafka.clusters["east"].committed["billing"] = {("orders", 0): 10, ("orders", 1): 20}
    [move] = offsets(kafka).failover("east", "west", ["billing"], force=False)
    assert [r.position for r in move.rows] == [8, 100]  # after the last copy; the first copy
    assert kafka.commits == [("west", "billing", {("east.orders", 0): 8, ("east.orders", 1): 100})]


def test_a_group_with_members_on_the_destination_is_refused_even_forced() -> None:
    for force in (False, True):
        kafka = world()
        kafka.clusters["west"].members["billing"] = 2
        [move] = offsets(kafka).failover("east", "west", ["billing"], force=force)
        assert not move.committed and kafka.commits == []
        assert move.refused == [
            "group billing has 2 active member(s) on west; stop its consumers there first "
            "(topo never overrides a live group)"
        ]


def test_a_partition_not_replicated_far_enough_is_refused_unless_forced() -> None:
    kafka = world(progressed=(10, 23))  # the flow has copied orders [1] up to 23, billing is at 24
    [move] = offsets(kafka).failover("east", "west", ["billing"], force=False)
    assert not move.committed and kafka.commits == []
    assert rows(move)[1] == ("orders", 1, 24, "east.orders", 105, False)
    assert move.refused == [
        "orders [1] at 24 on east is not replicated to west far enough (flow east->west has "
        "copied orders [1] up to 23, short of 24); wait for the flow, or pass --force to accept "
        "re-reading what arrives later"
    ]
    forced = world(progressed=(10, 23))
    [move] = offsets(forced).failover("east", "west", ["billing"], force=True)
    assert move.committed and move.refused == []
    assert forced.commits == [("west", "billing", BILLING_ON_WEST)]


def test_nothing_is_committed_when_any_group_is_refused() -> None:
    kafka = world()
    kafka.clusters["west"].members["ledger"] = 1
    moves = offsets(kafka).failover("east", "west", ["billing", "ledger", "billing"], force=False)
    assert [m.group for m in moves] == ["billing", "ledger"]  # named twice, moved once
    assert [bool(m.refused) for m in moves] == [False, True]
    assert kafka.commits == [] and not any(m.committed for m in moves)


def test_a_named_group_without_offsets_on_linked_topics_is_refused() -> None:
    kafka = world()
    [move] = offsets(kafka).failover("east", "west", ["reports"], force=False)
    assert move.rows == [] and kafka.commits == []
    assert move.refused == [
        "group reports has no committed offsets on east for topics the topology links with west"
    ]


def test_all_takes_the_groups_the_flows_group_filter_admits_with_linked_offsets() -> None:
    """audit-1 is excluded by the flow, idle has no offsets, reports none on a copied topic."""
    kafka = world()
    found = offsets(kafka)
    assert found.groups_on("east", "west") == ["billing", "ledger", "reports"]
    moves = found.failover("east", "west", None, force=False)
    assert [m.group for m in moves] == ["billing", "ledger"]
    assert kafka.commits == [
        ("west", "billing", BILLING_ON_WEST),
        ("west", "ledger", {("east.orders", 0): 7}),  # after the copy of east's 8
    ]


def test_all_without_any_group_to_move_is_an_error() -> None:
    kafka = world()
    kafka.clusters["east"].committed = {"reports": {("payments", 0): 4}, "audit-1": {}}
    with pytest.raises(TopoError, match="no consumer group on east is replicated to west"):
        offsets(kafka).failover("east", "west", None, force=False)
    assert kafka.commits == []


def test_a_destination_that_does_not_answer_is_named_before_anything_is_read() -> None:
    kafka = world()
    kafka.clusters["west"].down = True
    kafka.clusters["east"].down = True
    with pytest.raises(TopoError, match="cluster west cannot be reached: west is unreachable"):
        offsets(kafka).failover("east", "west", None, force=False)
    assert [method for method, _ in kafka.calls] == ["observe", "observe"]


# From checkpoints: the origin does not answer


def down_east(*written: tuple[bytes, bytes], log: str = CHECKPOINTS) -> FakeKafka:
    kafka = world()
    kafka.clusters["east"].down = True
    kafka.clusters["west"].logs[log] = list(written)
    return kafka


def test_topo_checkpoints_written_to_mm2s_topic_before_its_format_was_mm2s_still_count() -> None:
    kafka = down_east(checkpoint("ledger", 0, 9, 7))  # topo's topic: ledger moved since
    kafka.clusters["west"].logs[MM2_CHECKPOINTS] = [
        checkpoint("billing", 0, 6, 5),  # JSON, before MM2's format: billing has been idle
        checkpoint("ledger", 0, 2, 1),  # older than topo's topic's: topo's wins
        # MM2's format says nothing of exactness: not read as topo's
        checkpoints.mm2_checkpoint(Checkpoint("audit", "orders", 0, 3, "east.orders", 3)),
    ]
    moves = offsets(kafka).failover("east", "west", None, force=False)
    found = {(m.group, m.basis): [(r.offset, r.position) for r in m.rows] for m in moves}
    assert found == {("billing", "checkpoints"): [(6, 5)], ("ledger", "checkpoints"): [(9, 7)]}


def test_a_group_fails_over_from_the_latest_checkpoints_when_the_origin_is_down() -> None:
    kafka = down_east(
        checkpoint("billing", 0, 4, 3),
        checkpoint("billing", 1, 24, 105),
        checkpoint("billing", 0, 6, 5),  # later: the latest of partition 0 wins
        checkpoint("ledger", 0, 9, 7),
    )
    lines: list[str] = []
    [move] = offsets(kafka, lines).failover("east", "west", ["billing"], force=False)
    assert lines == ["east cannot be reached; using the checkpoints its flow to west wrote"]
    assert (move.basis, move.refused, move.committed) == ("checkpoints", [], True)
    assert rows(move) == [
        ("orders", 0, 6, "east.orders", 5, True),
        ("orders", 1, 24, "east.orders", 105, True),
    ]
    assert kafka.commits == [("west", "billing", BILLING_ON_WEST)]
    assert ("reader", "east") not in kafka.calls  # nothing read from east but its observation


def test_all_from_checkpoints_takes_the_groups_checkpointed() -> None:
    kafka = down_east(checkpoint("billing", 0, 6, 5), checkpoint("ledger", 0, 9, 7))
    moves = offsets(kafka).failover("east", "west", None, force=False)
    assert [m.group for m in moves] == ["billing", "ledger"]
    assert kafka.commits == [
        ("west", "billing", {("east.orders", 0): 5}),
        ("west", "ledger", {("east.orders", 0): 7}),
    ]


def test_an_incomplete_checkpoint_is_refused_unless_forced() -> None:
    written = checkpoint("billing", 0, 6, 5, complete=False)
    kafka = down_east(written)
    [move] = offsets(kafka).failover("east", "west", ["billing"], force=False)
    assert len(move.refused) == 1 and "not replicated to west far enough" in move.refused[0]
    assert kafka.commits == []
    forced = down_east(written)
    offsets(forced).failover("east", "west", ["billing"], force=True)
    assert forced.commits == [("west", "billing", {("east.orders", 0): 5})]


def test_a_group_without_checkpoints_is_refused_when_the_origin_is_down() -> None:
    kafka = down_east(checkpoint("ledger", 0, 9, 7))
    [move] = offsets(kafka).failover("east", "west", ["billing"], force=False)
    assert (move.basis, move.rows, move.committed) == ("checkpoints", [], False)
    assert move.refused == [
        "group billing has no committed offsets on east for topics the topology links with west"
    ]
    assert kafka.commits == []


def test_all_without_any_checkpoint_is_an_error() -> None:
    kafka = down_east()
    with pytest.raises(TopoError, match="no consumer group on east is replicated to west"):
        offsets(kafka).failover("east", "west", None, force=False)
    assert kafka.commits == []


def test_an_origin_down_with_no_flow_writing_checkpoints_to_the_destination_is_an_error() -> None:
    kafka = world()
    kafka.clusters["west"].down = True  # failback west -> east: no flow west->east checkpoints
    with pytest.raises(TopoError, match="no flow from west to east writes checkpoints there"):
        offsets(kafka).failover("west", "east", ["billing"], force=False)
    assert kafka.commits == []


# topo offsets: the same translations, both ways, nothing committed


def test_show_translates_both_ways_and_commits_nothing() -> None:
    """Failback: billing's 2 on west's east.orders [0] is the copy of east's 2."""
    kafka = world()
    moves = offsets(kafka).show(["billing", "nobody"])
    assert [(m.origin, m.destination, m.basis) for m in moves] == [
        ("east", "west", "live"),
        ("west", "east", "live"),
    ]
    assert rows(moves[0]) == [
        ("orders", 0, 6, "east.orders", 5, True),
        ("orders", 1, 24, "east.orders", 105, True),
    ]
    assert rows(moves[1]) == [("east.orders", 0, 2, "orders", 2, True)]
    assert moves[1].current == {("orders", 0): 6, ("orders", 1): 24}
    assert kafka.commits == [] and not any(m.committed for m in moves)


def test_show_with_a_down_cluster_needs_it_named_as_the_origin() -> None:
    kafka = down_east(checkpoint("billing", 0, 6, 5))
    with pytest.raises(TopoError, match="cluster east cannot be reached"):
        offsets(kafka).show(["billing"])
    [move] = offsets(down_east(checkpoint("billing", 0, 6, 5))).show(["billing"], "east", "west")
    assert (move.basis, move.offsets) == ("checkpoints", {("east.orders", 0): 5})


# The rounds the running job makes, through the same adapter


def test_a_round_writes_changed_checkpoints_and_syncs_idle_groups_forward() -> None:
    kafka = world()
    loaded = topology()
    clusters = {name: kafka.observe(name, CONFIGS[name]) for name in ("east", "west")}
    kafka.clusters["west"].members["ledger"] = 1
    lines: list[str] = []
    keeper = Checkpointer(loaded, CONFIGS, kafka)
    done = keeper.run(clusters, lines.append)
    assert lines == []
    assert done.checkpoints == 3  # billing [0], [1] and ledger [0]; not audit-1 (excluded)
    written = kafka.read_checkpoints(CONFIGS["west"], CHECKPOINTS)
    assert {k: (c.upstream_offset, c.downstream_offset) for k, c in written.items()} == {
        ("billing", "orders", 0): (6, 5),
        ("billing", "orders", 1): (24, 105),
        ("ledger", "orders", 0): (9, 7),
    }
    as_mm2 = [wire.decode_checkpoint(k, v) for k, v in kafka.clusters["west"].logs[MM2_CHECKPOINTS]]
    assert as_mm2 == [  # MM2's format, keyed by the topic on the target
        wire.Checkpoint("billing", "east.orders", 0, 6, 5),
        wire.Checkpoint("billing", "east.orders", 1, 24, 105),
        wire.Checkpoint("ledger", "east.orders", 0, 9, 7),
    ]
    assert done.committed == {"billing": 2}
    assert done.active == ["ledger on west"]
    assert kafka.commits == [("west", "billing", BILLING_ON_WEST)]
    again = keeper.run(clusters, lines.append)
    assert again.checkpoints == 0  # unchanged: nothing written twice


# After a handover from MirrorMaker 2 (`start: mm2`): MM2's copies carry no stamps


HANDED_OVER = TOPOLOGY.replace("replication_factor: 1}", "replication_factor: 1, start: mm2}")


def handed_over(syncs: list[tuple[int, int]], source_markers: frozenset[int]) -> FakeKafka:
    """east's orders [0] holds 0..13, with markers at 4 and 10 (`source_markers`). MM2 copied
    0..6 to west 0..5 (`syncs` are the offset-syncs it wrote on east), committed 6 and stopped;
    topo copied 7, 8, 9, 11, 12, 13 to west 6..11."""
    east = FakeCluster(
        topics={"orders": [Partition([{}] * 14, markers=source_markers)]},
        committed={"billing": {("orders", 0): 5}},
        logs={
            "mm2-offset-syncs.west.internal": [
                wire.encode_offset_sync(wire.OffsetSync("orders", 0, u, d)) for u, d in syncs
            ]
        },
    )
    mm2_copies: list[Stamps] = [{}] * 6
    west = FakeCluster(
        topics={"east.orders": [Partition([*mm2_copies, *copies(7, 8, 9, 11, 12, 13)])]},
        committed={"billing": {("east.orders", 0): 3}},
        logs={
            PROGRESS: [checkpoints.encode_progress(Progress(FLOW, "orders", 0, 14))],
            positions.names("east", "west").offsets_topic: [
                positions.offset_record("east", "orders", 0, 7)
            ],
        },
    )
    return FakeKafka({"east": east, "west": west})


def test_a_group_fails_over_exactly_into_the_copies_mm2_made_before_the_handover() -> None:
    """billing committed 5 on east: its first unconsumed record is east's 5, which MM2 copied
    to west's 4 (east's 4 is a marker). MM2 synced 0 and 6 only (the sync after the marker was
    replaced by a later one): east's records between them settle it."""
    kafka = handed_over([(0, 0), (6, 5)], frozenset({4, 10}))
    [move] = offsets(kafka, source=HANDED_OVER).failover("east", "west", ["billing"], False)
    assert rows(move) == [("orders", 0, 5, "east.orders", 4, True)]
    assert move.rows[0].exact and kafka.commits == [("west", "billing", {("east.orders", 0): 4})]
    # back: billing read west's 0..2 (east's 0..2); west's 3 (east's 3) is the first it has not
    kafka = handed_over([(0, 0), (6, 5)], frozenset({4, 10}))
    [back] = offsets(kafka, source=HANDED_OVER).show(["billing"], "west", "east")
    assert rows(back) == [("east.orders", 0, 3, "orders", 3, True)]


def test_a_group_at_mm2s_last_copy_and_in_topos_first_resumes_exactly() -> None:
    kafka = handed_over([(0, 0), (5, 4)], frozenset({4, 10}))
    kafka.clusters["east"].committed["billing"] = {("orders", 0): 7}  # topo's first copy next
    [move] = offsets(kafka, source=HANDED_OVER).failover("east", "west", ["billing"], False)
    assert [r.position for r in move.rows] == [6]
    kafka = handed_over([(0, 0), (5, 4)], frozenset({4, 10}))
    kafka.clusters["west"].committed["billing"] = {("east.orders", 0): 6}  # read MM2's last
    [back] = offsets(kafka, source=HANDED_OVER).show(["billing"], "west", "east")
    assert [r.position for r in back.rows] == [7]


def test_mm2s_position_overwritten_by_topo_export_does_not_mislead_the_translation() -> None:
    """`topo export mm2 --positions` wrote topo's position (12) over MM2's: MM2's last copy is
    still known as the one before topo's first (the copy at 5 is of 6, not of 11), and a
    group yet to read it fails back to it, exactly; a group at the end, after the last copy."""
    kafka = handed_over([(0, 0), (6, 5)], frozenset({4, 10}))
    kafka.clusters["west"].logs[positions.names("east", "west").offsets_topic].append(
        positions.offset_record("east", "orders", 0, 12)
    )
    kafka.clusters["west"].committed["billing"] = {("east.orders", 0): 5}  # MM2's last next
    [back] = offsets(kafka, source=HANDED_OVER).show(["billing"], "west", "east")
    assert [(r.position, r.exact) for r in back.rows] == [(6, True)]
    kafka.clusters["west"].committed["billing"] = {("east.orders", 0): 12}  # caught up
    [back] = offsets(kafka, source=HANDED_OVER).show(["billing"], "west", "east")
    assert [(r.position, r.exact) for r in back.rows] == [(14, True)]


def test_where_mm2s_copies_do_not_tell_the_group_reads_them_again_rather_than_skip() -> None:
    """east was compacted since MM2 copied it (the records between MM2's syncs are fewer than
    its copies there): the group resumes at the last copy known to come before its record."""
    kafka = handed_over([(0, 0), (6, 5)], frozenset({2, 4, 10}))
    [move] = offsets(kafka, source=HANDED_OVER).failover("east", "west", ["billing"], False)
    assert [r.position for r in move.rows] == [1]  # after the copy of 0: 1..3 read again
    # what it costs, as a bound: the copy of east's 5 lies before west's 5, which MM2's last
    # sync names as the copy of east's 6: at most 1..4 read again
    assert move.rows[0].rereads == 4
    assert not move.rows[0].exact and "MirrorMaker 2 copied the records here" in str(
        move.rows[0].note
    )
    assert move.committed  # inexact is said, not refused: nothing is skipped
    # back from inside those copies: after the last copy known to have been consumed
    kafka = handed_over([(0, 0), (6, 5)], frozenset({2, 4, 10}))
    kafka.clusters["west"].committed["billing"] = {("east.orders", 0): 3}
    [back] = offsets(kafka, source=HANDED_OVER).show(["billing"], "west", "east")
    assert [(r.position, r.exact, r.rereads) for r in back.rows] == [(1, False, 5)]


def test_without_start_mm2_the_copies_before_topos_are_not_looked_up_in_mm2s_syncs() -> None:
    kafka = handed_over([(0, 0), (6, 5)], frozenset({4, 10}))
    [move] = offsets(kafka).failover("east", "west", ["billing"], False)
    assert [r.position for r in move.rows] == [0]  # the whole stretch read again
    assert not [c for c in kafka.calls if c[0] in ("read_mm2_syncs", "read_mm2_resumes")]


def test_mm2s_answer_is_shown_beside_topos_from_its_checkpoints_topic() -> None:
    """MM2's checkpoint of billing on west (what RemoteClusterUtils answers) said 3 for
    east.orders [0], then 4: the newest is shown beside topo's exact 5; [1] has none."""
    kafka = world()
    kafka.clusters["west"].logs[MM2_CHECKPOINTS] = [
        wire.encode_checkpoint(wire.Checkpoint("billing", "east.orders", 0, 5, downstream))
        for downstream in (3, 4)
    ]
    [move] = offsets(kafka).show(["billing"], "east", "west")
    assert [(r.position, r.mm2_checkpoint) for r in move.rows] == [(5, 4), (105, None)]
    text = moves_text([move.to_dict()], False)
    assert "MM2 checkpoint" in text.splitlines()[1]
    # on east, offset, on west, translated, there now, MM2 checkpoint
    assert [line.split()[7] for line in text.splitlines()[2:4]] == ["4", "-"]


# What a failover costs, before it is made


def test_a_failover_plan_prices_each_partition_and_commits_nothing() -> None:
    """orders [1] is copied up to 23 of its 30 records: 7 left behind, the oldest (23) written
    at second 23; now is second 40. orders [0] is copied to its end: nothing left behind."""
    kafka = world(progressed=(10, 23))
    result = analysis.analyse(TOPOLOGY, "t.yaml")
    assert result.topology is not None
    now = (written_ms(40)) / 1000
    lines: list[str] = []
    found = Offsets(result.topology, CONFIGS, lines.append, kafka, clock=lambda: now)
    [move] = found.plan_failover("east", "west", ["billing"], force=True)
    assert kafka.commits == [] and not move.committed and move.refused == []
    assert move.behind == {("orders", 0): Behind(0, None), ("orders", 1): Behind(7, 17.0)}
    assert [row.rereads for row in move.rows] == [0, 0]  # exact: nothing read twice
    shown = move.to_dict()["partitions"]
    assert [row["not_copied"] for row in shown] == [
        {"records": 0, "seconds": None},
        {"records": 7, "seconds": 17.0},
    ]
    schema = json.loads((Path(__file__).parents[2] / "schemas/offsets.schema.json").read_text())
    Draft202012Validator(schema).validate({"groups": [move.to_dict()]})
    text = moves_text([move.to_dict()], True).splitlines()
    assert text[1].split()[-5:] == ["read", "again", "not", "copied", "yet"]
    assert text[2].split()[-2:] == ["0", "0"]  # orders [0]: exact, nothing left behind
    # orders [1]: exact, 7 records left behind, the oldest 17 s old; forced past its refusal
    assert text[3].split()[7:11] == ["0", "7", "(17", "s)"] and "not replicated yet" in text[3]
    found.commit([move])
    assert move.committed and kafka.commits == [("west", "billing", BILLING_ON_WEST)]


def test_what_a_partition_leaves_behind() -> None:
    assert behind(30, 23, 0, written_ms(23), written_ms(40)) == Behind(7, 17.0)
    assert behind(30, 30, 0, None, 0) == Behind(0, None)
    # after the progress, only a transaction's commit marker: no record is left behind
    assert behind(31, 30, 0, None, written_ms(40)) == Behind(0, None)
    # nothing recorded yet: everything the origin still holds, from its first offset
    assert behind(30, None, 12, written_ms(12), written_ms(12)) == Behind(18, 0.0)
    # copied past the log's start (retention removed what was copied): from the start
    assert behind(30, 5, 12, written_ms(12), written_ms(14)) == Behind(18, 2.0)
    # a clock behind the record's own time says 0 s, not a negative age
    assert behind(30, 29, 0, written_ms(29), written_ms(20)) == Behind(1, 0.0)
