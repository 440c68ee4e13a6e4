"""Taking over from a running MirrorMaker 2 (`start: mm2`), on real lab clusters with real MM2
(dedicated mode, from Maven jars) and real Spark: MM2 copies part of a keyed, a transactional
and a compacted backlog while a producer keeps writing; while MM2 runs, the plan is refused;
MM2 stops; the plan shows where each partition resumes; `topo apply --once` copies the rest.
Every source record is then on the target exactly once, in order, record by record (key,
value, headers, timestamp, partition), whichever replicator copied it."""

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient
from confluent_kafka.cimpl import NewTopic

from tests.conftest import SOURCE_CLUSTER, TARGET_CLUSTER
from tests.helpers import RECENT_MS, run_topo
from tests.integration.test_offsets import (  # noqa: F401 (mm2_reads: a fixture)
    commit,
    committed,
    consume_part,
    failover,
    mm2_reads,
)
from tests.integration.test_replication import Topology, expected, varied, wait_for
from topology.core.jobs import OFFSETS_HEADER, PROVENANCE_HEADER
from topology.core.mm2 import wire
from topology.kafka import records
from topology.kafka.records import Record
from topology.lab import mirrormaker

pytestmark = [pytest.mark.kafka, pytest.mark.spark]
TOPO_HEADERS = {PROVENANCE_HEADER, OFFSETS_HEADER}


@pytest.fixture
def topology(tmp_path: Path, lab: dict[str, dict[str, str]]) -> Iterator[Topology]:
    made = Topology(tmp_path, {"src": lab[SOURCE_CLUSTER], "dst": lab[TARGET_CLUSTER]})
    yield made
    made.stop()
    _forget_mm2(lab[SOURCE_CLUSTER], lab[TARGET_CLUSTER])


def _forget_mm2(*configs: dict[str, str]) -> None:
    """MM2's own topics (its workers' offsets, configs and status, its offset-syncs) go: the
    session's later tests and MM2 runs start without them."""
    for config in configs:
        admin = AdminClient(dict(config))
        names = [n for n in admin.list_topics(timeout=10).topics if n.startswith("mm2-")]
        if names:
            for future in admin.delete_topics(names, operation_timeout=30).values():
                future.result(30)


class KeepWriting(threading.Thread):
    """Producers that keep writing until told to stop: keyed records to one topic and, every
    few rounds, a transaction (some aborted) to another."""

    def __init__(self, config: dict[str, str], topic: str, transactional: str, prefix: str) -> None:
        super().__init__(daemon=True)
        self.config, self.topic, self.transactional = config, topic, transactional
        self.prefix = prefix
        self.done = threading.Event()
        self.written = 0
        self.transactions = 0

    def run(self) -> None:
        producer = Producer({**self.config, "acks": "all", "enable.idempotence": True})
        txn = Producer({**self.config, "transactional.id": f"{self.prefix}-live"})
        txn.init_transactions(30)
        while not self.done.is_set():
            for _ in range(5):
                number = self.written
                producer.produce(
                    self.topic,
                    key=f"live-{number % 7}".encode(),
                    value=f"live-{number}".encode(),
                    partition=number % 3,
                    headers=[("n", str(number).encode())],
                    timestamp=RECENT_MS + 500_000 + number,
                )
                self.written += 1
            producer.flush(10)
            if self.written % 20 == 0:
                self._transaction(txn, commit=self.transactions % 3 != 1)
            time.sleep(0.1)
        producer.flush(30)

    def _transaction(self, txn: Producer, commit: bool) -> None:
        number = self.transactions
        txn.begin_transaction()
        for i in range(4):
            txn.produce(
                self.transactional,
                key=f"live-t{number}-{i}".encode(),
                value=f"{commit}".encode(),
                partition=i % 2,
                timestamp=RECENT_MS + 600_000 + number * 10 + i,
            )
        txn.flush(10)
        if commit:
            txn.commit_transaction(30)
        else:
            txn.abort_transaction(30)
        self.transactions += 1


def _transactional(config: dict[str, str], topic: str, prefix: str) -> None:
    """Committed and aborted transactions: markers and aborted records take offsets."""
    records.create_topic(config, topic, 2)
    producer = Producer({**config, "transactional.id": f"{prefix}-handover"})
    producer.init_transactions(30)
    for number, commits in enumerate([True, False, True, True, False, True, True, True]):
        producer.begin_transaction()
        for i in range(5):
            producer.produce(
                topic,
                key=f"t{number}-{i}".encode(),
                value=b"v" * i,
                partition=i % 2,
                timestamp=RECENT_MS + number * 10 + i,
            )
        producer.flush(30)
        if commits:
            producer.commit_transaction(30)
        else:
            producer.abort_transaction(30)


def _content(found: list[Record]) -> list[tuple[Any, ...]]:
    """What a consumer sees of each record, without topo's headers, in partition order."""
    return sorted(
        (
            (
                r.partition,
                r.key,
                r.value,
                tuple(h for h in r.headers if h[0] not in TOPO_HEADERS),
                r.timestamp_ms,
            )
            for r in found
        ),
        key=lambda c: c[0],  # stable: keeps the order within a partition
    )


def _start_mm2(
    topology: Topology, folder: Path, more: dict[str, str] | None = None
) -> mirrormaker.MirrorMaker:
    exported = run_topo("export", "mm2", str(topology.file))
    assert exported.returncode == 0, exported.stderr
    settings = {**mirrormaker.lab_settings(), "offset.flush.interval.ms": "2000", **(more or {})}
    folder.mkdir(parents=True, exist_ok=True)
    properties = folder / "mm2.properties"
    properties.write_text(mirrormaker.properties_text(exported.stdout, settings))
    mm2 = mirrormaker.start(properties, folder / "mm2")
    mm2.wait_started(180)
    return mm2


def _mm2_errors(log: str) -> list[str]:
    """MM2's ERROR lines, but for two that a task stopped while MM2 reconfigured its tasks (a
    new group found) prints on a slow machine, neither a record MM2 could not read: the task did
    not stop within Connect's 5 s, or it was stopped while its checkpoint task still loaded its
    stores (its closed consumer then refuses the load: "This consumer has already been
    closed")."""
    lines = log.splitlines()
    return [
        line
        for line, after in zip(lines, [*lines[1:], ""], strict=True)
        if " ERROR " in line
        and not re.search(r"ERROR Graceful stop of task \S+ failed", line)
        and not (
            "caught exception in scheduled task: starting checkpoint and offset sync stores" in line
            and "IllegalStateException: This consumer has already been closed" in after
        )
    ]


def _wait_copied(config: dict[str, str], topic: str, at_least: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if len(records.read_topic(config, topic, timeout=10)) >= at_least:
                return
        except Exception:  # not created yet
            pass
        time.sleep(1)
    raise AssertionError(f"MM2 had not copied {at_least} records to {topic} in {timeout:.0f} s")


@pytest.mark.timeout(900)
def test_topo_takes_over_from_mm2_with_no_gap_and_no_duplicate(
    topology: Topology, tmp_path: Path
) -> None:
    src, dst = topology.clusters["src"], topology.clusters["dst"]
    keyed, txn, compact = topology.topic("keyed"), topology.topic("txn"), topology.topic("compact")
    records.create_topic(src, keyed, 3)
    records.produce(src, varied(keyed, 60, partitions=3))
    _transactional(src, txn, topology.prefix)
    admin = AdminClient(dict(src))
    admin.create_topics([NewTopic(compact, 2, 1, config={"cleanup.policy": "compact"})])[
        compact
    ].result(30)
    # Keys repeat (what compaction would merge) and some values are tombstones.
    records.produce(
        src,
        [
            Record(
                compact,
                i % 2,
                f"c-{i % 5}".encode(),
                None if i % 7 == 6 else f"v{i}".encode(),
                (("i", str(i).encode()),),
                RECENT_MS + i,
            )
            for i in range(30)
        ],
    )
    topology.write("  - mirror: {from: src, to: dst}\n    start: mm2")

    mm2 = _start_mm2(topology, tmp_path)
    writer = KeepWriting(src, keyed, txn, topology.prefix)
    try:
        writer.start()
        _wait_copied(dst, f"src.{keyed}", 60, 120)
        _wait_copied(dst, f"src.{compact}", 30, 60)
        _wait_copied(dst, f"src.{txn}", 30, 60)  # the backlog's 6 committed transactions
        time.sleep(3)  # MM2 commits its positions every 2 s here (offset.flush.interval.ms)
        refused = run_topo("plan", str(topology.file))
        assert refused.returncode == 1, refused.stdout + refused.stderr
        assert (
            "MirrorMaker 2 still runs it: its status topic mm2-status.src.internal on dst "
            "shows its connector on worker"
        ) in refused.stderr
        assert "Traceback" not in refused.stderr
    finally:
        code = mm2.stop()
    assert code in (0, 130, 143), mm2.log.read_text()[-3000:]
    time.sleep(1)  # the producer goes on after MM2 stopped: topo copies that too
    writer.done.set()
    writer.join(30)
    assert writer.written > 0 and writer.transactions > 2

    planned = run_topo("plan", str(topology.file), "--format", "json")
    assert planned.returncode == 0, planned.stderr
    [flow] = [c for c in json.loads(planned.stdout)["changes"] if c["resource"] == "flow"]
    resume = flow["after"]["resume"]
    assert resume["offsets_topic"] == "mm2-offsets.src.internal"
    by_topic = {(p["topic"], p["partition"]): p for p in resume["partitions"]}
    # MM2 copied part of every topic; the records written after it stopped wait for topo.
    assert all(by_topic[(keyed, p)]["offset"] for p in range(3))
    assert resume["waiting"] > 0
    shown = run_topo("plan", str(topology.file))
    assert "resumes where MirrorMaker 2 stopped" in shown.stdout, shown.stdout

    topology.apply("--once")
    _assert_exactly_once(src, dst, (keyed, txn, compact))
    # Both replicators copied part of the live topics: MM2's copies carry no topo headers.
    for topic in (keyed, txn):
        copies = records.read_topic(dst, f"src.{topic}")
        by_topo = [r for r in copies if any(h[0] == PROVENANCE_HEADER for h in r.headers)]
        assert 0 < len(by_topo) < len(copies), topic

    # Applied again, the flow (not running: --once stopped) plans the same handover, and
    # resumes from topo's own checkpoint of it: nothing is copied twice.
    records.produce(src, varied(keyed, 9, partitions=3, tag="after"))
    topology.apply("--once")
    _assert_exactly_once(src, dst, (keyed, txn, compact))

    # topo verify proves MM2's copies (placed by its offset-syncs) and topo's alike.
    verified = run_topo("verify", str(topology.file), "--format", "json")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    proofs = [p for p in json.loads(verified.stdout)["partitions"] if p["topic"] == keyed]
    assert [p["window"]["start"] for p in proofs] == [0, 0, 0]
    assert sum(p["source"]["records"] for p in proofs) == len(records.read_topic(src, keyed))
    assert all(p["other_records"] == 0 for p in proofs), proofs


def _assert_exactly_once(src: dict[str, str], dst: dict[str, str], topics: tuple[str, ...]) -> None:
    for topic in topics:
        on_source = records.read_topic(src, topic)
        copied = records.read_topic(dst, f"src.{topic}")
        assert _content(copied) == _content(on_source), topic
        assert len(copied) == len(on_source) > 0


def test_a_flow_mm2_never_ran_is_refused_with_one_line(topology: Topology) -> None:
    topic = topology.topic("never")
    records.create_topic(topology.clusters["src"], topic, 1)
    topology.write("  - mirror: {from: src, to: dst}\n    start: mm2")
    done = run_topo("plan", str(topology.file))
    assert done.returncode == 1
    assert "holds no position MirrorMaker 2 committed for cluster 'src'" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.timeout(900)
def test_mm2_to_topo_and_back_to_mm2_copies_every_record_once(
    topology: Topology, tmp_path: Path
) -> None:
    """MM2 copies and stops; topo takes over from it (`start: mm2`) and stops; `topo export mm2
    --positions` writes where topo stopped over MM2's own commits of the same keys; MM2 copies
    the rest from there. Nothing is lost or copied twice. A group topo checkpointed inside its
    own copies keeps topo's exact checkpoint: MM2 reads it (MM2's format) and does not replace
    it with its own staler translation, while it checkpoints a group inside its new copies."""
    src, dst = topology.clusters["src"], topology.clusters["dst"]
    topic = topology.topic("back")
    records.create_topic(src, topic, 3)
    records.produce(src, varied(topic, 45, partitions=3))
    topology.write("  - mirror: {from: src, to: dst}\n    start: mm2")
    first = _start_mm2(topology, tmp_path / "first")
    try:
        _wait_copied(dst, f"src.{topic}", 45, 120)
    finally:
        first.stop()
    records.produce(src, varied(topic, 21, partitions=3, tag="topo"))  # 7 per partition
    inside, later = f"{topology.prefix}-inside", f"{topology.prefix}-later"
    consume_part(src, inside, topic, {0: 18, 1: 17, 2: 20})  # inside topo's copies (15..21)
    topology.apply("--once")
    # Both replicators copied one for one from offset 0: a copy's offset is its record's.
    topos = {0: (18, 18), 1: (17, 17), 2: (20, 20)}
    assert _checkpoints(dst, inside) == topos
    records.produce(src, varied(topic, 15, partitions=3, tag="mm2"))  # 5 per partition
    consume_part(src, later, topic, dict.fromkeys(range(3), 24))  # inside MM2's next copies

    exported = run_topo("export", "mm2", str(topology.file), "--positions")
    assert exported.returncode == 0, exported.stderr
    # The topic's 3 partitions (and the heartbeats topic's, which every flow copies).
    assert "src->dst: wrote where topo stopped, " in exported.stderr
    assert "to mm2-offsets.src.internal on dst: MM2 resumes there" in exported.stderr
    again = _start_mm2(topology, tmp_path / "again", MM2_GROUP_SYNC)
    try:
        _wait_copied(dst, f"src.{topic}", 81, 120)
        deadline = time.monotonic() + 90
        while len(_checkpoints(dst, later)) < 3:
            assert time.monotonic() < deadline, "MM2 wrote no checkpoint of its group"
            time.sleep(1)
        time.sleep(3)  # anything MM2 would copy twice has arrived by now
        # MM2 translates `inside` from its last sync before topo (it has none in topo's
        # copies) and finds topo's checkpoint further on: it keeps it
        assert _checkpoints(dst, inside) == topos
        assert _mm2_errors(again.log.read_text()) == []
    finally:
        again.stop()
    _assert_exactly_once(src, dst, (topic,))
    copies = records.read_topic(dst, f"src.{topic}")
    by_topo = [r for r in copies if any(h[0] == PROVENANCE_HEADER for h in r.headers)]
    assert len(by_topo) == 21 and len(copies) == 81


# MM2 checkpoints and syncs the group every second (its defaults: every minute)
MM2_GROUP_SYNC = {
    "emit.checkpoints.interval.seconds": "1",
    "sync.group.offsets.interval.seconds": "1",
    "refresh.groups.interval.seconds": "1",
}


def _links(src: dict[str, str], dst: dict[str, str], topic: str) -> dict[tuple[int, int], int]:
    """(partition, offset) of each copy on dst -> the offset of its record on src, matched by
    content (the records' keys are unique): the truth a translation must agree with."""
    on_source = {
        (r.partition, r.key, r.value, r.timestamp_ms): r.offset
        for r in records.read_topic(src, topic)
    }
    found = {}
    for copy in records.read_topic(dst, f"src.{topic}"):
        assert copy.offset is not None
        upstream = on_source[(copy.partition, copy.key, copy.value, copy.timestamp_ms)]
        assert upstream is not None
        found[(copy.partition, copy.offset)] = upstream
    return found


def _mm2_checkpoints(topology: Topology, group: str) -> dict[int, int]:
    """`topo offsets --json`'s MM2 column for `group`, from src to dst, by partition."""
    shown = run_topo(
        "offsets", str(topology.file), "--group", group, "--from", "src", "--to", "dst", "--json"
    )
    assert shown.returncode == 0, shown.stdout + shown.stderr
    [move] = json.loads(shown.stdout)["groups"]
    return {row["partition"]: row["mm2_checkpoint"] for row in move["partitions"]}


def _copy_of_next(links: dict[tuple[int, int], int], partition: int, offset: int) -> int:
    """Where on dst a group resumes that committed `offset` on src: the copy of the first
    record at or after it (a committed offset may be a transaction marker's)."""
    return min(at for (p, at), upstream in links.items() if p == partition and upstream >= offset)


@pytest.mark.timeout(900)
def test_a_group_moves_exactly_across_the_copies_mm2_made_and_topos(
    topology: Topology, tmp_path: Path
) -> None:
    """A group reads half of a transactional topic on src, and MM2 syncs its offsets to dst;
    MM2 stops and topo takes over. Its offsets then move between the clusters exactly, both
    where MM2 made the copies (no topo stamp: MM2's offset-syncs, settled by src's records
    where a marker or an aborted record leaves MM2's syncs unsure) and where topo made them."""
    src, dst = topology.clusters["src"], topology.clusters["dst"]
    topic, group = topology.topic("moved"), f"{topology.prefix}-moved"
    _transactional(src, topic, topology.prefix)  # 30 committed records: 18 and 12
    consume_part(src, group, topic, {0: 9, 1: 6})
    half = committed(src, group, topic, 2)
    topology.write("  - mirror: {from: src, to: dst}\n    start: mm2")
    mm2 = _start_mm2(topology, tmp_path, MM2_GROUP_SYNC)
    try:
        _wait_copied(dst, f"src.{topic}", 30, 120)
        deadline = time.monotonic() + 90
        while len(committed(dst, group, f"src.{topic}", 2)) < 2:
            assert time.monotonic() < deadline, "MM2 did not sync the group's offsets to dst"
            time.sleep(1)
        by_mm2 = committed(dst, group, f"src.{topic}", 2)
    finally:
        mm2.stop()
    records.produce(
        src,
        [Record(topic, i % 2, f"after-{i}".encode(), b"a", (), RECENT_MS + i) for i in range(10)],
    )
    before = _mm2_checkpoints(topology, group)  # MM2's own, in its checkpoints topic on dst
    topology.apply("--once")
    links = _links(src, dst, topic)
    exact = {p: _copy_of_next(links, p, half[p]) for p in (0, 1)}
    # MM2's own translation never skips a record: at or before the exact one
    assert all(by_mm2[p] <= exact[p] and before[p] <= exact[p] for p in (0, 1)), (by_mm2, exact)
    # topo's offset sync moved the idle group forward on dst, to exactly its next record, and
    # its round wrote that to MM2's checkpoints topic too, for MM2's client to read
    assert committed(dst, group, f"src.{topic}", 2) == exact
    assert _mm2_checkpoints(topology, group) == exact
    shown = run_topo("offsets", str(topology.file), "--group", group, "--from", "src")
    assert "MM2 checkpoint" in shown.stdout, shown.stdout + shown.stderr

    # Back to src from inside MM2's copies: the first record not consumed on dst is its copy
    inside = {0: exact[0] + 2, 1: exact[1] + 1}
    commit(dst, group, f"src.{topic}", inside)
    done = failover(topology, "--from", "dst", "--to", "src", "--group", group)
    assert done.returncode == 0, done.stdout + done.stderr
    assert committed(src, group, topic, 2) == {p: links[(p, at)] for p, at in inside.items()}

    # And forward again from inside topo's copies (records written after MM2 stopped)
    later = {p: max(upstream for (q, _at), upstream in links.items() if q == p) for p in (0, 1)}
    commit(src, group, topic, later)  # the last record of each partition not yet consumed
    done = failover(topology, "--from", "src", "--to", "dst", "--group", group)
    assert done.returncode == 0, done.stdout + done.stderr
    assert committed(dst, group, f"src.{topic}", 2) == {
        p: _copy_of_next(links, p, later[p]) for p in (0, 1)
    }


def _checkpoints(dst: dict[str, str], group: str) -> dict[int, tuple[int, int]]:
    """The newest checkpoint of `group` per partition in src.checkpoints.internal on dst, as
    MM2's format has it: (offset on the source, offset on the target)."""
    found = {}
    for record in records.read_topic(dst, "src.checkpoints.internal"):
        checkpoint = wire.decode_checkpoint(record.key, record.value)
        if checkpoint is not None and checkpoint.group == group:
            found[checkpoint.partition] = (checkpoint.upstream_offset, checkpoint.downstream_offset)
    return found


def _mm2_connector(kind: str, src: dict[str, str], dst: dict[str, str]) -> dict[str, str]:
    """The configuration of one of MM2's connectors (`kind`: MirrorSourceConnector, ...) from
    src to dst, for a lab Connect cluster."""
    return {
        "connector.class": f"org.apache.kafka.connect.mirror.{kind}",
        "source.cluster.alias": "src",
        "target.cluster.alias": "dst",
        "source.cluster.bootstrap.servers": src["bootstrap.servers"],
        "target.cluster.bootstrap.servers": dst["bootstrap.servers"],
        "tasks.max": "1",
        "replication.factor": "1",
        "offset-syncs.topic.replication.factor": "1",
        "checkpoints.topic.replication.factor": "1",
        "sync.topic.acls.enabled": "false",
    }


@pytest.mark.timeout(900)
def test_mm2_on_a_connect_cluster_runs_beside_topo_then_hands_its_topics_over(
    topology: Topology,
    tmp_path: Path,
    mm2_reads: Callable[..., list[list[str]]],  # noqa: F811 (the fixture imported above)
) -> None:
    """A migration topic by topic, with MM2 run as connectors on the user's own Connect cluster
    (its topics and connector names, which the flow's `mm2` setting names). topo runs src->dst
    for its topics while MM2 runs the same pair for others: MM2 starts with topo's checkpoints
    in its checkpoints topic and topo's heartbeats in `heartbeats`, copies and checkpoints its
    own topics, and neither MM2 nor its client library finds a record it cannot read; `topo
    status` says MM2 runs the other topology's flow, with its heartbeats' latency, and runs
    beside topo's. Then the other topology takes over from MM2: refused while its connector
    runs; once the worker stopped, every record is on the target once."""
    src, dst = topology.clusters["src"], topology.clusters["dst"]
    ours, group = topology.topic("ours"), f"{topology.prefix}-ours"
    records.create_topic(src, ours, 2)
    records.produce(src, varied(ours, 20, partitions=2))
    consume_part(src, group, ours, {0: 3, 1: 2})
    (tmp_path / "beside").mkdir()
    beside = Topology(tmp_path / "beside", topology.clusters)  # MM2's topics: another prefix
    state = {kind: f"{beside.prefix}-connect-{kind}" for kind in ("offsets", "configs", "status")}
    where_mm2_is = (
        f"    mm2: {{offsets_topic: {state['offsets']}, status_topic: {state['status']},"
        ' connector: "{source}->{target}.MirrorSourceConnector"}'
    )
    topology.write("  - mirror: {from: src, to: dst}\n" + where_mm2_is)
    topology.apply()  # continuous: heartbeats every second, offset rounds
    wait_for(dst, f"src.{ours}", 20)
    # topo's offset round checkpoints the group exactly (the copies are one for one: a new
    # topic on both sides), in MM2's format, before MM2 starts
    topos = {0: (3, 3), 1: (2, 2)}
    deadline = time.monotonic() + 90
    while _checkpoints(dst, group) != topos:
        assert time.monotonic() < deadline, _checkpoints(dst, group)
        time.sleep(1)

    # The topics MM2 copies: the other topology's, which will take them over.
    theirs, their_group = beside.topic("theirs"), f"{beside.prefix}-theirs"
    records.create_topic(src, theirs, 2)
    records.produce(src, varied(theirs, 20, partitions=2))
    consume_part(src, their_group, theirs, {0: 4, 1: 3})
    beside.write("  - mirror: {from: src, to: dst}\n    start: mm2\n" + where_mm2_is)
    worker = mirrormaker.connect_worker(
        dst["bootstrap.servers"], f"{beside.prefix}-connect", state, tmp_path / "connect"
    )
    try:
        mirrormaker.add_connector(
            worker,
            "src->dst.MirrorSourceConnector",
            {
                **_mm2_connector("MirrorSourceConnector", src, dst),
                "topics": f"{beside.prefix}-.*",
            },
        )
        mirrormaker.add_connector(
            worker,
            "src->dst.MirrorCheckpointConnector",
            {
                **_mm2_connector("MirrorCheckpointConnector", src, dst),
                "topics": f"{beside.prefix}-.*",
                "groups": f"{beside.prefix}-.*",
                **MM2_GROUP_SYNC,
                "sync.group.offsets.enabled": "true",
            },
        )
        _wait_copied(dst, f"src.{theirs}", 20, 120)
        deadline = time.monotonic() + 90
        while len(_checkpoints(dst, their_group)) < 2:
            assert time.monotonic() < deadline, "MM2 wrote no checkpoint of its group"
            time.sleep(1)
        assert _checkpoints(dst, group) == topos  # MM2 checkpoints its own groups only
        shown = run_topo("status", str(beside.file), "--json")
        assert shown.returncode == 0, shown.stderr
        [flow] = json.loads(shown.stdout)["flows"]
        assert flow["state"] == "run by MM2" and flow["mm2"], flow
        assert flow["latency_ms"] is not None and flow["latency_ms"]["p50"] is not None, flow
        text = run_topo("status", str(beside.file)).stdout
        assert "src->dst: MirrorMaker 2 copies it (connector on worker" in text, text
        [flow] = topology.status()["flows"]
        assert flow["state"] == "running" and flow["mm2"], flow
        # MM2's client library reads every checkpoint and heartbeat on dst: topo's and MM2's
        found = mm2_reads(dst["bootstrap.servers"], "src", their_group, "src.heartbeats")
        assert ("src", "dst") in {(w[1], w[2]) for w in found if w[0] == "heartbeat"}
        translated = {int(w[2]): int(w[3]) for w in found if w[0] == "translated"}
        assert translated == {p: at for p, (_up, at) in _checkpoints(dst, their_group).items()}
        read = {(w[1], int(w[3])): (int(w[4]), int(w[5])) for w in found if w[0] == "checkpoint"}
        assert all(read[(group, p)] == at for p, at in topos.items())
        log = worker.process.log.read_text()  # (stopping, Connect may log an error of its own)
        assert "Ignored invalid checkpoint record" not in log and _mm2_errors(log) == []
        time.sleep(2)  # the worker commits its positions every 2 s here
        refused = run_topo("plan", str(beside.file))
        assert refused.returncode == 1, refused.stdout + refused.stderr
        assert (
            f"its status topic {state['status']} on dst shows its connector on worker"
            in refused.stderr
        ), refused.stderr
    finally:
        code = worker.process.stop()
    assert code in (0, 130, 143), worker.process.log.read_text()[-3000:]
    topology.stop()
    copied = records.read_topic(dst, f"src.{ours}")
    assert [r.content() for r in copied] == expected(records.read_topic(src, ours), "src")

    records.produce(src, varied(theirs, 10, partitions=2, tag="after"))
    planned = run_topo("plan", str(beside.file), "--format", "json")
    assert planned.returncode == 0, planned.stderr
    [flow] = [c for c in json.loads(planned.stdout)["changes"] if c["resource"] == "flow"]
    resume = flow["after"]["resume"]
    assert resume["offsets_topic"] == state["offsets"]
    # MM2's connector committed where it stopped (the heartbeats topic, which it copied too,
    # has topo's heartbeats written since)
    assert sum(p["waiting"] for p in resume["partitions"] if p["topic"] == theirs) == 10, resume
    beside.apply("--once")
    _assert_exactly_once(src, dst, (theirs,))
