"""Consumer offsets across clusters, end to end on real lab clusters and real Spark: a group
consumes part of a topic, `topo apply --once` copies it (and checkpoints and syncs the group),
`topo failover` moves the group, and the group then reads exactly the records it had not
committed: compared record by record, zero lost and zero repeated.
"""

import json
import os
import subprocess
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient
from confluent_kafka.cimpl import NewTopic
from jsonschema import Draft202012Validator

from tests.conftest import SOURCE_CLUSTER, TARGET_CLUSTER
from tests.helpers import RECENT_MS, run_topo
from tests.integration.test_replication import Topology, varied
from topology.core.jobs import OFFSETS_HEADER, PROVENANCE_HEADER
from topology.core.mm2 import wire
from topology.kafka import client, heartbeats, records
from topology.kafka.records import Headers, Record
from topology.spark.topojar import jdk_tool

ROOT = Path(__file__).resolve().parents[2]
OFFSETS_SCHEMA = Draft202012Validator(
    json.loads((ROOT / "schemas/offsets.schema.json").read_text())
)

pytestmark = [pytest.mark.kafka, pytest.mark.spark]

Seen = tuple[int, bytes | None, bytes | None, Headers, int | None]
TOPO_HEADERS = {PROVENANCE_HEADER, OFFSETS_HEADER}


def seen(found: Iterable[Record]) -> list[Seen]:
    """What a consumer sees of each record, without topo's own headers, in partition order."""
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
        key=lambda s: s[0],
    )


def consume_part(config: dict[str, str], group: str, topic: str, counts: dict[int, int]) -> None:
    """A consumer of `group` reads the first `counts[p]` records of each partition and commits
    what it read, as an application does (after a transaction's last record, the committed
    offset lands on its commit marker)."""
    consumer = _consumer(config, group)
    try:
        for partition, count in counts.items():
            consumer.assign([TopicPartition(topic, partition, 0)])
            read = 0
            last = None
            while read < count:
                message = consumer.poll(10)
                assert message is not None, f"{topic} [{partition}] has fewer than {count}"
                if message.error():
                    continue
                last = message.offset()
                read += 1
            if last is not None:
                consumer.commit(
                    offsets=[TopicPartition(topic, partition, last + 1)], asynchronous=False
                )
    finally:
        consumer.close()


def commit(config: dict[str, str], group: str, topic: str, offsets: dict[int, int]) -> None:
    consumer = _consumer(config, group)
    try:
        consumer.commit(
            offsets=[TopicPartition(topic, p, o) for p, o in offsets.items()], asynchronous=False
        )
    finally:
        consumer.close()


def committed(config: dict[str, str], group: str, topic: str, partitions: int) -> dict[int, int]:
    consumer = _consumer(config, group)
    try:
        found = consumer.committed([TopicPartition(topic, p) for p in range(partitions)], 30)
    finally:
        consumer.close()
    return {tp.partition: tp.offset for tp in found if tp.offset >= 0}


def resume(config: dict[str, str], group: str, topic: str, partitions: int) -> list[Record]:
    """What `group`'s consumers read on this cluster from its committed offsets to the end."""
    consumer = _consumer(config, group, client.READ_TO_END)
    found: list[Record] = []
    try:
        # Assigned without an offset: the consumer starts at the group's committed offset.
        consumer.assign([TopicPartition(topic, p) for p in range(partitions)])
        pending = set(range(partitions))
        deadline = time.monotonic() + 60
        while pending and time.monotonic() < deadline:
            message = consumer.poll(1)
            if message is None:
                continue
            error = message.error()
            if error is not None:
                if error.code() == KafkaError._PARTITION_EOF:
                    pending.discard(message.partition())
                continue
            _kind, timestamp = message.timestamp()
            partition, offset = message.partition(), message.offset()
            assert partition is not None and offset is not None
            headers: Headers = tuple(message.headers() or ())  # type: ignore[arg-type]
            found.append(
                Record(topic, partition, message.key(), message.value(), headers, timestamp, offset)
            )
        assert not pending, f"{topic}: partitions {pending} never reached their end"
    finally:
        consumer.close()
    return found


def _consumer(config: dict[str, str], group: str, extra: dict[str, Any] | None = None) -> Consumer:
    return Consumer(
        {
            **config,
            "group.id": group,
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
            "auto.offset.reset": "earliest",
            **(extra or {}),
        }
    )


def rest(config: dict[str, str], topic: str, offsets: dict[int, int]) -> list[Record]:
    """The source's records the group had not committed (partitions it never committed on
    are read from the start, as auto.offset.reset=earliest does)."""
    return [
        r
        for r in records.read_topic(config, topic)
        if r.offset is not None and r.offset >= offsets.get(r.partition, 0)
    ]


def failover(topology: Topology, *args: str) -> Any:
    """`topo failover`, approved (it asks first; without a terminal it must be told)."""
    return run_topo("failover", str(topology.file), *args, "--auto-approve")


def dry_run(topology: Topology, *args: str) -> dict[str, Any]:
    """`topo failover --dry-run --json`: what it would commit and cost, checked by the schema."""
    done = run_topo("failover", str(topology.file), *args, "--dry-run", "--json")
    document: dict[str, Any] = json.loads(done.stdout)
    OFFSETS_SCHEMA.validate(document)
    assert not any(move["committed"] for move in document["groups"])
    document["returncode"] = done.returncode
    return document


@pytest.fixture
def topology(tmp_path: Path, lab: dict[str, dict[str, str]]) -> Iterator[Topology]:
    made = Topology(tmp_path, {"src": lab[SOURCE_CLUSTER], "dst": lab[TARGET_CLUSTER]})
    yield made
    made.stop()


def _compacted_with_gaps(config: dict[str, str], topic: str) -> None:
    """A compacted 3-partition topic whose log the cleaner has compacted: offsets with gaps."""
    admin = AdminClient(dict(config))
    settings = {
        "cleanup.policy": "compact",
        "segment.ms": "100",
        "min.cleanable.dirty.ratio": "0.001",
        "min.compaction.lag.ms": "0",
    }
    admin.create_topics([NewTopic(topic, 3, 1, config=settings)])[topic].result(30)
    for round_ in range(4):
        records.produce(
            config,
            [
                Record(
                    topic,
                    i % 3,
                    f"k{i % 6}".encode(),
                    f"v{round_}-{i}".encode(),
                    (),
                    RECENT_MS + round_ * 100 + i,
                )
                for i in range(12)
            ],
        )
        time.sleep(0.3)  # each round in its own segment
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        records.produce(
            config, [Record(topic, p, b"roll", b"r", (), RECENT_MS + 999) for p in range(3)]
        )
        offsets = [r.offset for r in records.read_topic(config, topic) if r.partition == 0]
        if offsets and offsets[-1] is not None and len(offsets) < offsets[-1] + 1:
            return  # the cleaner removed superseded records: partition 0 has gaps
        time.sleep(2)
    raise AssertionError(f"{topic} was not compacted in time")


def _transactional(config: dict[str, str], topic: str, prefix: str) -> None:
    """Committed and aborted transactions on 3 partitions: commit markers and aborted records
    leave offsets no consumer reads."""
    records.create_topic(config, topic, 3)
    producer = Producer({**config, "transactional.id": f"{prefix}-tx"})
    producer.init_transactions(30)
    for number, commit_it in enumerate([True, False, True, True, False, True]):
        producer.begin_transaction()
        for i in range(6):
            producer.produce(
                topic,
                key=f"t{number}-{i}".encode(),
                value=b"v",
                partition=i % 3,
                timestamp=RECENT_MS + number * 10 + i,
            )
        producer.flush(30)
        if commit_it:
            producer.commit_transaction(30)
        else:
            producer.abort_transaction(30)


def test_groups_fail_over_and_back_reading_exactly_what_they_had_not_committed(
    topology: Topology,
) -> None:
    src, dst = topology.clusters["src"], topology.clusters["dst"]
    t = topology.topic
    plain, txn, compact, sparse, deep = t("plain"), t("txn"), t("compact"), t("sparse"), t("deep")
    records.create_topic(src, plain, 3)
    records.produce(src, varied(plain, 30, partitions=3))
    _transactional(src, txn, topology.prefix)
    _compacted_with_gaps(src, compact)
    records.create_topic(src, sparse, 3)
    records.produce(src, varied(sparse, 20, partitions=2))  # partition 2 stays empty
    records.create_topic(src, deep, 3)
    records.produce(
        src, [Record(deep, i % 3, f"d{i}".encode(), b"x", (), RECENT_MS + i) for i in range(3000)]
    )
    g = {
        name: f"{topology.prefix}-{name}"
        for name in ("plain", "txn", "compact", "sparse", "far", "rewound", "ahead", "active")
    }
    consume_part(src, g["plain"], plain, {0: 4, 1: 7, 2: 1})
    consume_part(src, g["txn"], txn, {0: 3, 1: 5, 2: 6})
    consume_part(src, g["compact"], compact, {0: 2, 1: 3, 2: 4})
    consume_part(src, g["sparse"], sparse, {0: 3, 1: 5})
    commit(src, g["sparse"], sparse, {2: 0})  # on the empty partition: at its start
    consume_part(src, g["far"], deep, {0: 3, 1: 1, 2: 2})  # ~1,000 records behind the head
    consume_part(src, g["rewound"], plain, {0: 9, 1: 9, 2: 9})
    topology.write("  - mirror: {from: src, to: dst}")

    log = topology.apply("--once")

    assert "checkpoint(s) written" in log
    # Group offset sync already committed the translations on dst (the groups are idle there).
    assert committed(dst, g["plain"], f"src.{plain}", 3) == {0: 4, 1: 7, 2: 1}

    # The group rewinds on src; the next round's checkpoint follows it back, but sync never
    # rewinds the group on dst.
    commit(src, g["rewound"], plain, {0: 2, 1: 5, 2: 0})
    topology.apply("--once")
    assert committed(dst, g["rewound"], f"src.{plain}", 3) == {0: 9, 1: 9, 2: 9}
    written = records.read_topic(dst, "topo-checkpoints.src.internal")
    checkpoints = [json.loads(r.value or b"{}") for r in written]
    latest = {(c["group"], c["partition"]): c for c in checkpoints if c["topic"] == plain}
    assert latest[(g["rewound"], 1)]["upstream_offset"] == 5
    assert latest[(g["rewound"], 1)]["downstream_offset"] == 5
    # The same checkpoints, one for one and in order, in MM2's format under MM2's name (this
    # test's groups: the topic is the session's, where a real MM2 also wrote its own).
    mine = set(g.values())
    as_mm2 = [
        wire.decode_checkpoint(r.key, r.value)
        for r in records.read_topic(dst, "src.checkpoints.internal")
    ]
    assert [c for c in as_mm2 if c is not None and c.group in mine] == [
        wire.Checkpoint(
            c["group"],
            c["target_topic"],
            c["partition"],
            c["upstream_offset"],
            c["downstream_offset"],
        )
        for c in checkpoints
        if c["group"] in mine
    ]

    shown = run_topo("offsets", str(topology.file), "--group", g["txn"], "--json")
    assert shown.returncode == 0, shown.stderr
    document = json.loads(shown.stdout)
    OFFSETS_SCHEMA.validate(document)
    # The synced group has offsets on both clusters: each is translated to the other.
    assert {(m["from"], m["to"]) for m in document["groups"]} == {("src", "dst"), ("dst", "src")}
    [move] = [m for m in document["groups"] if m["from"] == "src"]
    assert move["committed"] is False and move["basis"] == "live"
    assert all(row["exact"] and row["replicated"] for row in move["partitions"])

    # A group that is live on dst is refused, and nothing is committed for any group.
    live = _consumer(dst, g["active"])
    live.subscribe([f"src.{plain}"])
    consume_part(src, g["active"], plain, {0: 2})
    deadline = time.monotonic() + 30
    while not live.assignment() and time.monotonic() < deadline:
        live.poll(0.5)
    refused = failover(
        topology, "--from", "src", "--to", "dst", "--group", g["active"], "--group", g["plain"]
    )
    live.close()
    assert refused.returncode == 1
    assert "active member" in refused.stdout and "nothing was committed" in refused.stderr

    chosen = [
        x
        for name in ("plain", "txn", "compact", "sparse", "far", "rewound")
        for x in ("--group", g[name])
    ]
    # Caught up: the dry run says each partition resumes exactly, with nothing left behind,
    # and commits nothing.
    planned = dry_run(topology, "--from", "src", "--to", "dst", *chosen)
    assert planned["returncode"] == 0
    rows = [row for move in planned["groups"] for row in move["partitions"]]
    assert rows and all(row["rereads"] == 0 for row in rows)
    assert all(row["not_copied"] == {"records": 0, "seconds": None} for row in rows)
    # (the rewound group would move back to 2, 5, 0: the dry run left it where sync put it)
    assert committed(dst, g["rewound"], f"src.{plain}", 3) == {0: 9, 1: 9, 2: 9}
    shown = run_topo(
        "failover", str(topology.file), "--from", "src", "--to", "dst", *chosen[:2], "--dry-run"
    )
    assert shown.returncode == 0 and "Dry run: nothing was committed on dst" in shown.stderr
    assert "read again  not copied yet" in shown.stdout

    moved = failover(topology, "--from", "src", "--to", "dst", *chosen)
    assert moved.returncode == 0, moved.stdout + moved.stderr
    assert "committed 3 offset(s) for" in moved.stdout

    cases = {
        "plain": plain,
        "txn": txn,
        "compact": compact,
        "sparse": sparse,
        "far": deep,
        "rewound": plain,
    }
    for name, topic in cases.items():
        on_src = committed(src, g[name], topic, 3)
        read = resume(dst, g[name], f"src.{topic}", 3)
        assert seen(read) == seen(rest(src, topic, on_src)), name  # none lost, none repeated
        assert len(read) == len({(r.partition, r.offset) for r in read})
    # The offset gaps were real: transaction markers and compaction.
    assert any(o not in {r.offset for r in records.read_topic(src, txn)} for o in range(10))

    # Not replicated far enough: records arrive on src after the copy and the group reads
    # past them. Refused; --force accepts it.
    late = varied(plain, 6, partitions=3, tag="late")
    records.produce(src, late)
    consume_part(src, g["ahead"], plain, {0: 12, 1: 12, 2: 12})
    # Lagging: the dry run says what a failover now would leave behind, and why it is refused.
    lagging = dry_run(topology, "--from", "src", "--to", "dst", "--group", g["ahead"])
    assert lagging["returncode"] == 1
    [move] = lagging["groups"]
    assert move["refused"] and "not replicated" in move["refused"][0]
    behind = {row["partition"]: row["not_copied"] for row in move["partitions"]}
    assert {p: b["records"] for p, b in behind.items()} == Counter(r.partition for r in late)
    assert all(b["seconds"] is not None and b["seconds"] >= 0 for b in behind.values())
    ahead = failover(topology, "--from", "src", "--to", "dst", "--group", g["ahead"])
    assert ahead.returncode == 1 and "not replicated" in ahead.stdout
    assert committed(dst, g["ahead"], f"src.{plain}", 3) == {}
    forced = failover(topology, "--from", "src", "--to", "dst", "--group", g["ahead"], "--force")
    assert forced.returncode == 0, forced.stdout + forced.stderr

    # Failback: the plain group reads a little more on dst, then returns to src and reads
    # exactly the rest there (src.<topic> on dst maps back to <topic> on src).
    remote = f"src.{plain}"
    consumer = _consumer(dst, g["plain"])
    consumer.assign([TopicPartition(remote, 0, 4)])
    got = [consumer.poll(10) for _ in range(3)]
    assert [m.offset() for m in got if m is not None and not m.error()] == [4, 5, 6]
    consumer.commit(offsets=[TopicPartition(remote, 0, 7)], asynchronous=False)
    consumer.close()
    back = failover(topology, "--from", "dst", "--to", "src", "--group", g["plain"])
    assert back.returncode == 0, back.stdout + back.stderr
    assert committed(src, g["plain"], plain, 3) == {0: 7, 1: 7, 2: 1}
    read = resume(src, g["plain"], plain, 3)
    assert seen(read) == seen(rest(src, plain, {0: 7, 1: 7, 2: 1}))


def test_identity_naming_and_two_hops_translate_exactly(
    tmp_path: Path, lab: dict[str, dict[str, str]], more_clusters: dict[str, dict[str, str]]
) -> None:
    a, b, c = lab[SOURCE_CLUSTER], lab[TARGET_CLUSTER], more_clusters["itest-region-c"]
    topology = Topology(tmp_path, {"a": a, "b": b, "c": c})
    ident, hop = topology.topic("ident"), topology.topic("hop")
    for topic in (ident, hop):
        records.create_topic(a, topic, 3)
        records.produce(a, varied(topic, 24, partitions=3))
    groups = {"ident": f"{topology.prefix}-ident", "hop": f"{topology.prefix}-hop"}
    consume_part(a, groups["ident"], ident, {0: 5, 1: 2, 2: 8})
    consume_part(a, groups["hop"], hop, {0: 1, 1: 6, 2: 3})
    topology.write(
        f"  - mirror: {{from: a, to: c}}\n    naming: identity\n"
        f'    topics: {{include: ["{ident}"]}}\n'
        f'  - mirror: {{from: a, to: b}}\n    topics: {{include: ["{hop}"]}}\n'
        f"    filter: \"key IS NULL OR CAST(key AS STRING) NOT LIKE '%2'\"\n"
        f'  - mirror: {{from: b, to: c}}\n    topics: {{include: ["a\\\\.{hop}"]}}'
    )
    try:
        topology.apply("--once")
        topology.apply("--once")  # the second hop copies what the first delivered

        moved = failover(
            topology,
            "--from",
            "a",
            "--to",
            "c",
            "--group",
            groups["ident"],
            "--group",
            groups["hop"],
        )
        assert moved.returncode == 0, moved.stdout + moved.stderr
        read = resume(c, groups["ident"], ident, 3)
        assert seen(read) == seen(rest(a, ident, committed(a, groups["ident"], ident, 3)))
        # The first hop's filter dropped keys ending in 2, so offsets differ at every hop.
        read = resume(c, groups["hop"], f"b.a.{hop}", 3)
        wanted = [
            r
            for r in rest(a, hop, committed(a, groups["hop"], hop, 3))
            if r.key is None or not r.key.endswith(b"2")
        ]
        assert len(wanted) > 0 and seen(read) == seen(wanted)
    finally:
        topology.stop()


def test_a_group_fails_over_into_an_aggregated_topic(
    tmp_path: Path, lab: dict[str, dict[str, str]], more_clusters: dict[str, dict[str, str]]
) -> None:
    east, west, hub = lab[SOURCE_CLUSTER], more_clusters["itest-region-c"], lab[TARGET_CLUSTER]
    topology = Topology(tmp_path, {"east": east, "west": west, "hub": hub})
    clicks = topology.topic("clicks")
    for alias, config in (("east", east), ("west", west)):
        records.create_topic(config, clicks, 3)
        records.produce(config, varied(clicks, 18, partitions=3, tag=alias))
    group = f"{topology.prefix}-clicks"
    consume_part(east, group, clicks, {0: 2, 1: 4, 2: 6})
    topology.write("  - aggregate: {from: [east, west], into: hub}\n    naming: identity")
    try:
        topology.apply("--once")
        moved = failover(topology, "--from", "east", "--to", "hub", "--group", group)
        assert moved.returncode == 0, moved.stdout + moved.stderr
        read = resume(hub, group, clicks, 3)
        from_east = [r for r in read if (PROVENANCE_HEADER, b"east") in r.headers]
        assert seen(from_east) == seen(rest(east, clicks, {0: 2, 1: 4, 2: 6}))
    finally:
        topology.stop()


def test_continuous_replication_checkpoints_and_syncs_and_fails_over_from_a_lost_cluster(
    tmp_path: Path, lab: dict[str, dict[str, str]], more_clusters: dict[str, dict[str, str]]
) -> None:
    from topology.lab import manager

    lost_name = "itest-region-d"
    lost, dst = more_clusters[lost_name], lab[TARGET_CLUSTER]
    topology = Topology(tmp_path, {"lost": lost, "dst": dst})
    orders = topology.topic("orders")
    records.create_topic(lost, orders, 3)
    records.produce(lost, varied(orders, 30, partitions=3))
    group = f"{topology.prefix}-orders"
    topology.write("  - mirror: {from: lost, to: dst}")
    try:
        topology.apply()  # continuous: checkpoints and sync run with the job
        consume_part(lost, group, orders, {0: 3, 1: 6, 2: 9})
        remote = f"lost.{orders}"
        deadline = time.monotonic() + 90
        while committed(dst, group, remote, 3) != {0: 3, 1: 6, 2: 9}:
            assert time.monotonic() < deadline, "the group was never synced to dst"
            time.sleep(2)
        topology.stop()
        commit(dst, group, remote, {0: 0, 1: 0, 2: 0})  # undo the sync: failover must redo it
        manager.down([lost_name])
        moved = failover(topology, "--from", "lost", "--to", "dst", "--all")
        assert moved.returncode == 0, moved.stdout + moved.stderr
        assert "checkpoints" in moved.stdout and f"group {group}:" in moved.stdout
        assert committed(dst, group, remote, 3) == {0: 3, 1: 6, 2: 9}
    finally:
        manager.up([manager.UpRequest(lost_name)])
        topology.stop()
    expected = rest(lost, orders, {0: 3, 1: 6, 2: 9})
    assert seen(resume(dst, group, remote, 3)) == seen(expected)


def test_identity_active_active_with_writes_on_both_sides_loses_nothing(
    topology: Topology,
) -> None:
    """Both clusters write one identity-named topic, so each orders the two origins its own
    way. Failover must still lose nothing; a partition reported exact repeats nothing."""
    src, dst = topology.clusters["src"], topology.clusters["dst"]
    mesh = topology.topic("mesh")
    for config, tag in ((src, "s"), (dst, "d")):
        records.create_topic(config, mesh, 3)
        records.produce(config, varied(mesh, 12, partitions=3, tag=tag))
    group = f"{topology.prefix}-mesh"
    topology.write("  - active-active: [src, dst]\n    naming: identity")
    topology.apply("--once")
    topology.apply("--once")  # each flow also passes over (and drops) the other's copies
    consume_part(src, group, mesh, {0: 2, 1: 4, 2: 7})  # some of src's own, then dst's too

    moved = failover(topology, "--from", "src", "--to", "dst", "--group", group, "--json")
    assert moved.returncode == 0, moved.stdout + moved.stderr
    document = json.loads(moved.stdout)
    OFFSETS_SCHEMA.validate(document)
    exact = {row["partition"]: row["exact"] for row in document["groups"][0]["partitions"]}

    read = seen(resume(dst, group, mesh, 3))
    wanted = seen(rest(src, mesh, committed(src, group, mesh, 3)))
    assert set(wanted) <= set(read)  # nothing lost
    for partition, is_exact in exact.items():
        if is_exact:
            mine = Counter(s for s in read if s[0] == partition)
            assert mine == Counter(s for s in wanted if s[0] == partition)


@pytest.fixture(scope="module")
def mm2_reads(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., list[list[str]]]:
    """tests/java/Mm2Reads.java, compiled against MM2's own jars (connect-mirror-client at the
    lab's Kafka version): what MM2's client library makes of the records topo writes."""
    from topology.host import maven

    classpath = os.pathsep.join(str(jar) for jar in maven.resolve("mirror-maker"))
    classes = tmp_path_factory.mktemp("mm2-reads")
    source = ROOT / "tests" / "java" / "Mm2Reads.java"
    built = subprocess.run(
        [jdk_tool("javac"), "-cp", classpath, "-d", str(classes), str(source)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stderr

    def run(*args: str) -> list[list[str]]:
        done = subprocess.run(
            [jdk_tool("java"), "-cp", f"{classes}{os.pathsep}{classpath}", "Mm2Reads", *args],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
        lines = (line.split() for line in done.stdout.splitlines())
        return [w for w in lines if w and w[0] in ("translated", "checkpoint", "heartbeat")]

    return run


def test_mm2s_client_reads_the_checkpoints_and_heartbeats_topo_writes(
    topology: Topology, mm2_reads: Callable[..., list[list[str]]]
) -> None:
    src, dst = topology.clusters["src"], topology.clusters["dst"]
    topic = topology.topic("mm2")
    records.create_topic(src, topic, 2)
    records.produce(src, varied(topic, 12, partitions=2))
    group = f"{topology.prefix}-mm2"
    consume_part(src, group, topic, {0: 4, 1: 2})
    topology.write("  - mirror: {from: src, to: dst}")
    topology.apply("--once")

    shown = run_topo("offsets", str(topology.file), "--group", group, "--json")
    assert shown.returncode == 0, shown.stderr
    [move] = [m for m in json.loads(shown.stdout)["groups"] if m["from"] == "src"]
    rows = move["partitions"]
    topo_shows = {(r["destination_topic"], r["partition"]): r["position"] for r in rows}
    assert len(topo_shows) == 2 and all(row["exact"] for row in rows)
    written = [
        json.loads(r.value or b"{}")
        for r in records.read_topic(dst, "topo-checkpoints.src.internal")
    ]
    ours = sorted(
        (c["target_topic"], c["partition"], c["upstream_offset"], c["downstream_offset"])
        for c in written
        if c["group"] == group
    )

    # `--once` writes no heartbeats: one as the running job writes them, on dst's topic.
    emitter = heartbeats.Emitter({"dst": dst})
    emitter.beat("dst", "src", "dst")
    emitter.flush()
    found = mm2_reads(dst["bootstrap.servers"], "src", group, "heartbeats", "src.heartbeats")
    # RemoteClusterUtils.translateOffsets gives what `topo offsets` shows.
    translated = {(w[1], int(w[2])): int(w[3]) for w in found if w[0] == "translated"}
    assert translated == topo_shows
    # Checkpoint.deserializeRecord reads every checkpoint, the same as topo's own records.
    theirs = sorted(
        (w[2], int(w[3]), int(w[4]), int(w[5]))
        for w in found
        if w[0] == "checkpoint" and w[1] == group
    )
    assert theirs == ours and len(ours) == 2
    # Heartbeat.deserializeRecord reads every heartbeat on dst (those of this session's other
    # flows too, and their copies), topo's emitter's among them.
    beats = {(w[1], w[2]) for w in found if w[0] == "heartbeat"}
    assert ("src", "dst") in beats
