"""The copy loop (topo's one engine) end to end, on real lab
clusters and a real Spark driver: every copy compared with its source record by record, as in
test_replication.py (whose tests, the loop rules of active-active meshes among them, run the
loop too). Here: what only the loop does (topics joining it, its positions in Kafka, a flow
that copied as micro-batches going on from its checkpoint) and its exactly-once."""

import json
import os
import re
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from tests.conftest import SOURCE_CLUSTER, TARGET_CLUSTER
from tests.helpers import RECENT_MS, run_topo
from tests.integration.test_replication import (
    Topology,
    _add_partition,
    _trickle_until,
    contents,
    expected,
    kill_while_streaming,
    started_driver,
    varied,
    wait_for,
)
from topology.host import jobstate
from topology.kafka import records
from topology.kafka.ends import PartitionEnds
from topology.kafka.records import Record

pytestmark = [pytest.mark.kafka, pytest.mark.spark]


@pytest.fixture
def topology(tmp_path: Path, lab: dict[str, dict[str, str]]) -> Iterator[Topology]:
    made = Topology(tmp_path, {"src": lab[SOURCE_CLUSTER], "dst": lab[TARGET_CLUSTER]})
    yield made
    made.stop()


def driver_log(owner: str) -> str:
    return (jobstate.folder(owner) / jobstate.LOG).read_text(errors="replace")


def test_the_loop_copies_exactly_and_new_topics_join_without_a_restart(
    topology: Topology,
) -> None:
    src, dst = topology.clusters["src"], topology.clusters["dst"]
    first, later = topology.topic("first"), topology.topic("later")
    records.create_topic(src, first, 3)
    records.produce(src, varied(first, 30, 3))
    topology.write("  - mirror: {from: src, to: dst}")

    assert "Copy complete." in topology.apply("--once")
    assert contents(records.read_topic(dst, f"src.{first}")) == expected(
        records.read_topic(src, first), "src"
    )
    # Continuous from where --once stopped (its positions are in Kafka): nothing twice.
    topology.apply()
    running = _driver_jvm_arguments(topology.prefix)
    assert "-XX:MaxGCPauseMillis=20" in running and "-Xms1g" in running  # heap as MM2's
    more = varied(first, 12, 3, tag="b")
    records.produce(src, more)
    # A committed transaction is copied, an aborted one never; the positions pass both
    # transactions' markers (no poll returns those), so the lag comes back to 0.
    _transactions(src, first, topology.prefix)
    copied = wait_for(dst, f"src.{first}", 45)
    assert contents(copied) == expected(records.read_topic(src, first), "src")
    assert [r.key for r in copied if r.key and r.key.startswith(b"tx-")] == [
        b"tx-committed-0",
        b"tx-committed-1",
        b"tx-committed-2",
    ]

    # A topic created now joins the running loop; a partition added is followed.
    records.create_topic(src, later, 2)
    records.produce(src, varied(later, 8, 2))
    assert contents(wait_for(dst, f"src.{later}", 8)) == expected(
        records.read_topic(src, later), "src"
    )
    _add_partition(src, first, 4)
    records.produce(src, [Record(first, 3, b"in-new-partition", b"v", (), RECENT_MS)])
    assert contents(wait_for(dst, f"src.{first}", 46)) == expected(
        records.read_topic(src, first), "src"
    )
    # Each partition's position reaches its end, past the transactions' markers (which no
    # poll returns), and the metrics say so: no lag left on the topic.
    ends = {(first, p): offset for p, offset in enumerate((21, 14, 14, 1))}
    deadline = time.monotonic() + 30
    while positions(dst, topology.prefix, first, 4) != ends and time.monotonic() < deadline:
        time.sleep(1)
    assert positions(dst, topology.prefix, first, 4) == ends
    url = topology.status()["driver"]["metrics_url"]
    while metrics_lag(url, first) != 0 and time.monotonic() < deadline + 30:
        time.sleep(1)  # the metrics ask the source every 5 s, new partitions included
    assert metrics_lag(url, first) == 0
    # With nothing else moving, the heartbeats' position is committed every 10 s, not every
    # second (CopyTask.HEARTBEATS_COMMIT_MS), yet said as copied at once: the progress group
    # falls behind the source's heartbeats while their lag stays about 0.
    trailing = None
    beats = ("heartbeats", 0)
    source_ends = PartitionEnds(src)
    deadline = time.monotonic() + 25
    while trailing is None and time.monotonic() < deadline:
        time.sleep(1)
        end = source_ends.of([beats])[beats]
        behind = end - positions(dst, topology.prefix, "heartbeats", 1)[beats]
        if behind >= 5:
            trailing = (behind, metrics_lag(url, "heartbeats"))
    assert trailing is not None, "the heartbeats' position was committed every second"
    assert trailing[1] is not None and trailing[1] <= 2, trailing
    flow = topology.status()["flows"][0]
    assert flow["state"] == "running" and flow["restarts"] == 0 and flow["topics"] == 3
    assert flow["records"] >= 24  # 12 + 3 + 8 + 1 since the continuous start, and heartbeats
    log = driver_log(topology.prefix)
    assert f"new topic(s) {later}; copying them too" in log
    # No `tasks`: the driver sized the flow from its partitions and this machine's cores.
    sized = re.findall(r"src->dst: (\d+) copy slots? sized from (\d+) partitions? and (\d+)", log)
    assert sized, log
    cores = os.cpu_count() or 1
    assert all(int(n) == min(cores, max(int(p), 2)) and int(c) == cores for n, p, c in sized)

    # The copy's topic deleted on the target under the running copy: the driver makes it
    # again, and its new topic id tells the copies it held are gone: a loss, in topo status.
    records.delete_topic_if_exists(dst, f"src.{later}")
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        losses = topology.status()["flows"][0]["losses"]
        if losses:
            break
        time.sleep(2)
    assert [(x["topic"], x["kind"], x["records"]) for x in losses] == [
        (f"src.{later}", "target", None)
    ]
    assert f"LOST: topic src.{later} on the target was deleted and made again" in driver_log(
        topology.prefix
    )
    topology.stop()


def positions(config: dict[str, str], owner: str, topic: str, count: int) -> dict[Any, int]:
    """The flow's positions in its progress group on the target, by source partition."""
    reader = Consumer({**config, "group.id": f"topo-eos.{owner}.src--dst"})
    try:
        wanted = [TopicPartition(f"src.{topic}", p) for p in range(count)]
        found = reader.committed(wanted, timeout=10)
        return {(topic, f.partition): f.offset for f in found}
    finally:
        reader.close()


def metrics_lag(url: str, topic: str) -> float | None:
    body = urllib.request.urlopen(f"{url}/metrics", timeout=10).read().decode()
    for line in body.splitlines():
        if line.startswith("topo_replication_lag_records{") and f'topic="{topic}"' in line:
            return float(line.rsplit(" ", 1)[1])
    return None


def _transactions(config: dict[str, str], topic: str, prefix: str) -> None:
    producer = Producer({**config, "transactional.id": f"{prefix}-tx"})
    producer.init_transactions(30)
    for outcome in ("committed", "aborted"):
        producer.begin_transaction()
        for i in range(3 if outcome == "committed" else 2):
            producer.produce(
                topic,
                key=f"tx-{outcome}-{i}".encode(),
                value=b"v",
                partition=0,
                timestamp=RECENT_MS + i,
            )
        producer.flush(30)
        if outcome == "committed":
            producer.commit_transaction(30)
        else:
            producer.abort_transaction(30)


def test_exactly_once_loop_from_latest_has_no_duplicates_after_ten_kill_9s(
    topology: Topology,
) -> None:
    src, dst = topology.clusters["src"], topology.clusters["dst"]
    topic, later = topology.topic("ledger"), topology.topic("later")
    records.create_topic(src, topic, 2)
    records.produce(src, varied(topic, 20, 2))  # before the start: never copied
    flow = "  - mirror: {from: src, to: dst}\n    delivery: exactly-once\n    start: latest"
    topology.write(flow + "\n    tasks: 3")

    topology.apply()
    wait_for_positions(topology, topic, {(topic, 0): 10, (topic, 1): 10})  # the ends, pinned
    kill_while_streaming(topology, topic, kills=10)  # each successor takes the lease at once
    on_source = records.read_topic(src, topic)
    since_start = [r for r in on_source if (r.key or b"").startswith(b"stream-")]
    wait_for(dst, f"src.{topic}", len(since_start))
    # A topic found while the flow runs is copied from its first record, whatever `start` says.
    records.create_topic(src, later, 2)
    records.produce(src, varied(later, 8, 2))
    assert contents(wait_for(dst, f"src.{later}", 8)) == expected(
        records.read_topic(src, later), "src"
    )
    assert contents(records.read_topic(dst, f"src.{topic}")) == expected(since_start, "src")

    # The slot count changed (apply restarts the flow): partitions move between slots, each to
    # a slot of another transactional id; nothing is copied twice or lost across the move. The
    # producers of the ids no slot holds now are fenced before the slots start.
    topology.write(flow + "\n    tasks: 1")
    topology.apply()
    said = [line for line in driver_log(topology.prefix).splitlines() if "no copy slot" in line]
    assert said and "fenced the producers of" in said[-1], said
    fenced = said[-1].split("holds now: ", 1)[1].split(", ")
    assert {name.rsplit(".", 1)[1] for name in fenced} >= {"1"} and not any(
        name.endswith(".loop.0") for name in fenced
    ), fenced
    moved = [
        Record(topic, i % 2, f"moved-{i}".encode(), b"v", (), RECENT_MS + i) for i in range(20)
    ]
    records.produce(src, moved)
    since_start = [
        r
        for r in records.read_topic(src, topic)
        if (r.key or b"").startswith((b"stream-", b"moved-"))
    ]
    copied = wait_for(dst, f"src.{topic}", len(since_start))
    assert contents(copied) == expected(since_start, "src")
    topology.stop()


def test_a_hot_partition_moves_to_the_idle_slot_with_nothing_lost_or_copied_twice(
    topology: Topology,
) -> None:
    """Exactly-once, 2 slots: the leader places heartbeats-0 and partitions 1 and 3 on slot 0,
    0 and 2 on slot 1 (in order, each to the slot with the fewest). With 0 and 2 hot, slot 1
    lets one of them go (committing its transaction first) and slot 0 takes it up from there."""
    src, dst = topology.clusters["src"], topology.clusters["dst"]
    topic = topology.topic("hot")
    records.create_topic(src, topic, 4)
    flow = "  - mirror: {from: src, to: dst}\n    delivery: exactly-once\n    tasks: 2"
    conf = '{"spark.topo.loop.rebalanceMs": "5000"}'
    topology.write(flow, extra=f"engine: {{spark_conf: {conf}}}")
    topology.apply()
    producer = Producer({**src, "linger.ms": 5})
    sent, deadline = 0, time.monotonic() + 150
    moved: list[str] = []
    while not moved:  # about 2 MiB/s into partitions 0 and 2, until the leader moves one
        assert time.monotonic() < deadline, "no partition moved off the busy slot"
        for i in range(sent, sent + 200):
            producer.produce(topic, b"x" * 1024, f"hot-{i}".encode(), partition=2 * (i % 2))
        producer.poll(0)
        sent += 200
        time.sleep(0.1)
        moved = [line for line in driver_log(topology.prefix).splitlines() if "moved " in line]
    assert producer.flush(30) == 0
    assert f"{topic}-" in moved[0] and "from copy slot 1 to copy slot 0" in moved[0], moved
    after = [
        Record(topic, p, f"after-{i}".encode(), b"v", (), RECENT_MS + i)
        for i in range(40)
        for p in (i % 4,)
    ]
    records.produce(src, after)
    on_source = records.read_topic(src, topic)
    copied = wait_for(dst, f"src.{topic}", len(on_source))
    assert contents(copied) == expected(on_source, "src")  # read_committed: none twice, none lost
    topology.stop()


def wait_for_positions(topology: Topology, topic: str, wanted: dict[Any, int]) -> None:
    """Until the running flow's committed positions in `topic` are `wanted`."""
    dst, deadline = topology.clusters["dst"], time.monotonic() + 60
    while positions(dst, topology.prefix, topic, len(wanted)) != wanted:
        assert time.monotonic() < deadline, "the flow did not commit where it starts"
        time.sleep(1)


def _spark_checkpoint(folder: Path, ends: dict[str, dict[str, int]]) -> None:
    """What Spark's micro-batches left in a flow's checkpoint: batch 0 planned and committed,
    then batch 1 planned to `ends` and committed (Structured Streaming's files: a version
    line, the batch's metadata, one line per source), and batch 2 planned but never committed."""
    for batch, committed in ((0, True), (1, True), (2, False)):
        planned = (
            ends
            if batch == 1
            else {t: {p: o + batch for p, o in at.items()} for t, at in ends.items()}
        )
        offsets = folder / "offsets" / str(batch)
        offsets.parent.mkdir(parents=True, exist_ok=True)
        offsets.write_text(f'v1\n{{"batchWatermarkMs":0}}\n{json.dumps(planned)}\n')
        if committed:
            done = folder / "commits" / str(batch)
            done.parent.mkdir(parents=True, exist_ok=True)
            done.write_text('v1\n{"nextBatchWatermarkMs":0}\n')


def test_a_flow_that_copied_as_micro_batches_goes_on_in_the_loop_from_its_checkpoint(
    topology: Topology, tmp_path: Path
) -> None:
    """A topology from before the loop was the only engine (`trigger: micro-batch`, warning
    T212), whose flow left a Spark checkpoint in shared storage: the loop starts each partition
    where the newest committed batch ended, read through Hadoop as Spark reads it."""
    src, dst = topology.clusters["src"], topology.clusters["dst"]
    topic = topology.topic("moved")
    records.create_topic(src, topic, 2)
    records.produce(src, varied(topic, 14, 2))
    on_source = records.read_topic(src, topic)
    # the micro-batches had copied offsets 0 to 2 of partition 0 and 0 to 4 of partition 1
    _spark_checkpoint(tmp_path / "shared" / topology.prefix / "src--dst", {topic: {"0": 3, "1": 5}})
    shared = f"checkpoints: 'file://{tmp_path / 'shared'}'"
    topology.write(
        "  - mirror: {from: src, to: dst}", extra=f"engine: {{trigger: micro-batch, {shared}}}"
    )
    checked = run_topo("validate", str(topology.file))
    assert (
        "warning[T212]: engine: trigger micro-batch was removed" in checked.stdout + checked.stderr
    )

    topology.apply("--once")

    rest = [
        r for r in on_source if r.offset is not None and r.offset >= (3 if r.partition == 0 else 5)
    ]
    assert len(rest) == 14 - 3 - 5
    assert contents(records.read_topic(dst, f"src.{topic}")) == expected(rest, "src")
    assert run_topo("status", str(topology.file)).returncode == 0


def _driver_jvm_arguments(owner: str) -> list[str]:
    """The command line of the running driver's JVM (spark-submit execs java), where the loop
    runs: Kafka's short-pause collector settings are there (topology/spark/conf.py)."""
    driver = started_driver(owner)
    raw = Path(f"/proc/{driver.submit_pid}/cmdline").read_bytes()
    return raw.decode().split("\0")


def _remove_before(config: dict[str, str], topic: str, offset: int) -> None:
    """What retention does to partition 0 of `topic`: every record before `offset` removed."""
    from confluent_kafka.admin import AdminClient

    admin = AdminClient(dict(config))
    (future,) = admin.delete_records([TopicPartition(topic, 0, offset)]).values()
    assert future.result(timeout=30).low_watermark == offset


def test_records_the_source_lost_before_they_were_copied_are_reported_or_stop_the_flow(
    topology: Topology,
) -> None:
    """Issue 33's loss detection: retention ahead of the copy, then the topic made again."""
    src, dst = topology.clusters["src"], topology.clusters["dst"]
    topic = topology.topic("lossy")
    remote = f"src.{topic}"
    records.create_topic(src, topic, 1)
    records.produce(src, varied(topic, 6, 1, tag="a"))
    topology.write("  - mirror: {from: src, to: dst}")
    topology.apply("--once")
    copied_first = records.read_topic(src, topic)
    assert contents(records.read_topic(dst, remote)) == expected(copied_first, "src")

    # Retention removes offsets 6 to 8 before the copy reached them.
    records.produce(src, varied(topic, 6, 1, tag="b"))
    _remove_before(src, topic, 9)

    # on_loss: stop: the copy stops at the loss, copying nothing past it, and says why.
    topology.write("  - mirror: {from: src, to: dst}\n    on_loss: stop")
    stopped = run_topo("apply", str(topology.file), "--auto-approve", "--once")
    said = stopped.stdout + stopped.stderr
    assert stopped.returncode == 1, said
    assert f"records lost on the source ({topic}-0 offsets 6 to 8 removed before copied)" in said
    assert "Traceback" not in said
    assert len(records.read_topic(dst, remote)) == 6

    # alert (the default): counted, reported, and the copy goes on from the oldest record.
    topology.write("  - mirror: {from: src, to: dst}")
    log = topology.apply("--once")
    assert (
        f"LOST: 3 records of {topic}-0 (offsets 6 to 8) were removed from the source by "
        "retention before they were copied (on_loss: alert)"
    ) in log, log
    kept = records.read_topic(src, topic)
    assert [r.offset for r in kept] == [9, 10, 11]
    assert contents(records.read_topic(dst, remote)) == expected(copied_first + kept, "src")

    # The topic deleted and made again with fewer records than the copy had read: a reset.
    records.delete_topic_if_exists(src, topic)
    records.create_topic(src, topic, 1)
    records.produce(src, varied(topic, 2, 1, tag="c"))
    log = topology.apply("--once")
    assert f"LOST: {topic}-0 on the source ends at offset 2, behind the copy at 12" in log, log
    again = records.read_topic(src, topic)
    assert contents(records.read_topic(dst, remote)) == expected(
        copied_first + kept, "src"
    ) + expected(again, "src")


def test_a_paused_flow_is_reset_to_a_time_and_to_its_end_and_resumes_from_there(
    topology: Topology,
) -> None:
    """Exactly-once, under load: paused (nothing copied while records arrive), moved back to a
    time while paused and resumed: every record is on the target once, and those from that time
    on a second time, nothing else. Then at-least-once: paused, moved to the end while records
    arrive, resumed: those records are never copied, every later one is."""
    src, dst = topology.clusters["src"], topology.clusters["dst"]
    topic = topology.topic("rewind")
    copy = f"src.{topic}"
    records.create_topic(src, topic, 2)
    early = [
        Record(topic, i % 2, f"early-{i}".encode(), b"v", (), RECENT_MS + 10_000 + 1000 * i)
        for i in range(20)
    ]
    records.produce(src, early)
    flow = "  - mirror: {from: src, to: dst}\n    delivery: exactly-once"
    topology.write(flow)
    topology.apply()
    wait_for(dst, copy, len(early))

    done = threading.Event()
    producing = threading.Thread(target=_trickle_until, args=(src, topic, done))
    producing.start()
    try:
        time.sleep(3)  # copying, with records arriving
        topology.write(flow + "\n    paused: true")
        assert "pause: its copy slots stop with their positions committed" in _applied(topology)
        [paused] = topology.status()["flows"]
        assert paused["state"] == "paused", paused
        held = len(records.read_topic(dst, copy))
        time.sleep(3)  # records keep arriving on the source; none is copied
        assert len(records.read_topic(dst, copy)) == held
        # A reset while the running driver still copies is refused: here, once the file no
        # longer pauses the flow, before any cluster is asked.
        topology.write(flow)
        refused = run_topo("reset", str(topology.file), "--flow", "src->dst", "--to", "latest")
        assert refused.returncode == 1 and "is not paused in" in refused.stderr, refused.stderr
        topology.write(flow + "\n    paused: true")
        when = _iso(RECENT_MS + 20_000)  # the 11th early record's time
        shown = run_topo(
            "reset", str(topology.file), "--flow", "src->dst", "--to", when, "--dry-run", "--json"
        )
        assert shown.returncode == 0, shown.stderr
        planned = json.loads(shown.stdout)
        assert planned["committed"] is False and planned["to"]["kind"] == "time"
        done_reset = run_topo(
            "reset", str(topology.file), "--flow", "src->dst", "--to", when, "--auto-approve"
        )
        assert done_reset.returncode == 0, done_reset.stderr
        assert "Committed 2 position(s) of src->dst on dst" in done_reset.stdout, done_reset.stdout
        topology.write(flow)
        assert "resume: it copies again from its committed positions" in _applied(topology)
    finally:
        done.set()
        producing.join()
    on_source = records.read_topic(src, topic)
    stopped_at = {row["partition"]: row["before"] for row in planned["partitions"]}
    moved_to = {row["partition"]: row["after"] for row in planned["partitions"]}
    since = RECENT_MS + 20_000  # the 11th early record's time
    for partition in (0, 1):  # the first record at or after the time, as the source holds them
        first = next(
            r for r in on_source if r.partition == partition and (r.timestamp_ms or 0) >= since
        )
        assert moved_to[partition] == first.offset
    once = [r for r in on_source if r.offset is not None and r.offset < stopped_at[r.partition]]
    from_time = [r for r in on_source if r.offset is not None and r.offset >= moved_to[r.partition]]
    assert sum(row["again"] for row in planned["partitions"]) == sum(
        stopped_at[p] - moved_to[p] for p in (0, 1)
    )
    wanted = expected([*once, *from_time], "src")  # partition order; within it, copy order
    assert contents(wait_for(dst, copy, len(wanted))) == wanted

    # At-least-once, moved to the end while paused: what arrived meanwhile is never copied.
    alo = "  - mirror: {from: src, to: dst}\n    delivery: at-least-once"
    topology.write(alo + "\n    paused: true")
    topology.apply()
    skipped = [
        Record(topic, i % 2, f"skipped-{i}".encode(), b"v", (), RECENT_MS + i) for i in range(10)
    ]
    records.produce(src, skipped)
    latest = run_topo(
        "reset",
        str(topology.file),
        "--flow",
        "src->dst",
        "--to",
        "latest",
        "--auto-approve",
        "--json",
    )
    assert latest.returncode == 0, latest.stderr
    moved = json.loads(latest.stdout)
    assert moved["committed"] is True and moved["skipped"] == len(skipped) and moved["again"] == 0
    after = [
        Record(topic, i % 2, f"after-{i}".encode(), b"v", (), RECENT_MS + i) for i in range(10)
    ]
    records.produce(src, after)
    topology.write(alo)
    topology.apply()
    on_source = records.read_topic(src, topic)
    later = [r for r in on_source if (r.key or b"").startswith(b"after-")]
    wanted = expected([*once, *from_time, *later], "src")
    assert contents(wait_for(dst, copy, len(wanted))) == wanted
    topology.stop()


def _applied(topology: Topology) -> str:
    """`topo apply` of the topology; its plan as it printed it."""
    done = run_topo("apply", str(topology.file), "--auto-approve")
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _iso(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"
