"""The replication engine end to end: `topo apply` runs real Spark jobs between real lab
clusters, and every copy is compared with its source record by record (partition, order, key,
value, headers, timestamp), never by counts alone.

Each test writes its own topology (its own name, so its own job state and ownership records)
admitting only topics with the test's unique prefix.
"""

import contextlib
import json
import os
import re
import signal
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from confluent_kafka import Producer
from jsonschema import Draft202012Validator

from tests.conftest import SOURCE_CLUSTER, TARGET_CLUSTER
from tests.helpers import RECENT_MS, run_topo
from topology.core.jobs import OFFSETS_HEADER, PROVENANCE_HEADER
from topology.host import jobstate
from topology.kafka import records
from topology.kafka.records import Headers, Record

# Settings added to a test topology's clusters, by alias (`Topology.write`).
Settings = Mapping[str, Mapping[str, Any]]

if TYPE_CHECKING:
    from tests.spark_cluster import StandaloneSpark

ROOT = Path(__file__).resolve().parents[2]
PLAN_SCHEMA = Draft202012Validator(json.loads((ROOT / "schemas/plan.schema.json").read_text()))
STATUS_SCHEMA = Draft202012Validator(json.loads((ROOT / "schemas/status.schema.json").read_text()))

pytestmark = [pytest.mark.kafka, pytest.mark.spark]

Content = tuple[int, bytes | None, bytes | None, Headers, int | None]


class Topology:
    """One test's topology file over the lab clusters (aliases src, dst, ...)."""

    def __init__(self, folder: Path, clusters: dict[str, dict[str, str]]) -> None:
        self.prefix = f"rp{uuid.uuid4().hex[:8]}"
        self.file = folder / f"{self.prefix}.yaml"
        self.clusters = clusters

    def topic(self, suffix: str) -> str:
        return f"{self.prefix}-{suffix}"

    def write(self, flows: str, extra: str = "", more: Settings | None = None) -> None:
        """The topology file; `more` adds settings to clusters, by alias."""
        lines = ["version: 1", "clusters:"]
        lines += [
            f'  {alias}: {{bootstrap: "{c["bootstrap.servers"]}"'
            + "".join(f", {k}: {json.dumps(v)}" for k, v in (more or {}).get(alias, {}).items())
            + "}"
            for alias, c in self.clusters.items()
        ]
        lines += [
            "defaults:",
            "  replication_factor: 1",
            f'  topics: {{include: ["{self.prefix}-.*"]}}',
        ]
        self.file.write_text("\n".join([*lines, extra, "flows:", flows]) + "\n")

    def apply(self, *flags: str) -> str:
        done = run_topo("apply", str(self.file), "--auto-approve", *flags)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stderr

    def status(self) -> dict[str, Any]:
        done = run_topo("status", str(self.file), "--json")
        assert done.returncode == 0, done.stderr
        document: dict[str, Any] = json.loads(done.stdout)
        return document

    def stop(self) -> None:
        run_topo("stop", str(self.file))


@pytest.fixture
def topology(tmp_path: Path, lab: dict[str, dict[str, str]]) -> Iterator[Topology]:
    made = Topology(tmp_path, {"src": lab[SOURCE_CLUSTER], "dst": lab[TARGET_CLUSTER]})
    yield made
    made.stop()


def varied(topic: str, count: int, partitions: int, tag: str = "") -> list[Record]:
    """Null keys and values, repeated and null headers, explicit partitions and timestamps."""
    made = []
    for i in range(count):
        headers: Headers = (("seq", f"{tag}{i}".encode()),)
        if i % 3 == 0:
            headers += (("seq", b"again"), ("empty", None))
        made.append(
            Record(
                topic=topic,
                partition=(i * 7) % partitions,
                key=None if i % 5 == 4 else f"key-{tag}{i % 4}".encode(),
                value=None if i % 6 == 5 else bytes([i % 256, 0, 255]) + f"{tag}value-{i}".encode(),
                headers=headers,
                timestamp_ms=RECENT_MS + 1000 * i,
            )
        )
    return made


def expected(on_source: Iterable[Record], provenance: str) -> list[Content]:
    """The copies' content: the source records' (as read back, with their offsets), plus topo's
    provenance and source offset headers; partition order."""
    found = []
    for r in on_source:
        assert r.offset is not None, "expected() needs records read back from the source"
        stamps = (
            (PROVENANCE_HEADER, provenance.encode()),
            (OFFSETS_HEADER, f"{provenance.split(',')[-1]}:{r.offset}".encode()),
        )
        found.append((r.partition, r.key, r.value, (*r.headers, *stamps), r.timestamp_ms))
    return sorted(found, key=lambda c: c[0])  # stable: keeps the order within a partition


def contents(found: Iterable[Record]) -> list[Content]:
    return [r.content() for r in found]


def wait_for(config: dict[str, str], topic: str, count: int, timeout: float = 120) -> list[Record]:
    """The topic's records once it holds at least `count` (read_committed)."""
    deadline = time.monotonic() + timeout
    found: list[Record] = []
    while time.monotonic() < deadline:
        try:
            found = records.read_topic(config, topic)
        except Exception:
            found = []
        if len(found) >= count:
            return found
        time.sleep(1)
    raise AssertionError(f"{topic} has {len(found)} of {count} records after {timeout}s")


def test_a_mirror_copies_every_record_exactly_and_once_returns(topology: Topology) -> None:
    src, dst = topology.clusters["src"], topology.clusters["dst"]
    orders, empty = topology.topic("orders"), topology.topic("empty")
    records.create_topic(src, orders, 3)
    records.create_topic(src, empty, 2)
    written = varied(orders, 30, partitions=3)
    records.produce(src, written)
    text = topology.topic("text")  # compressible: written uncompressed, copied with zstd
    records.create_topic(src, text, 2)
    lines = [
        Record(
            text,
            i % 2,
            f"k{i}".encode(),
            f"line {i % 7} of a text; ".encode() * 40,
            (),
            RECENT_MS + i,
        )
        for i in range(1500)
    ]
    records.produce(src, lines)
    # The target's admin settings (Java names) reach plan's and apply's librdkafka admin
    # clients translated (an untranslated name would stop them being made) and the copy's own.
    admin = {"request.timeout.ms": 20000, "receive.buffer.bytes": -1, "retries": 5}
    topology.write(
        "  - mirror: {from: src, to: dst}\n    producer: {compression.type: zstd}",
        more={"dst": {"admin": admin}},
    )
    shown = run_topo("plan", str(topology.file), "--show-jobs", "--format", "json")
    plan = json.loads(shown.stdout)
    PLAN_SCHEMA.validate(plan)
    [job] = plan["jobs"]
    assert job["flow"] == "src->dst" and job["naming"] == "prefix"
    assert {orders: f"src.{orders}", empty: f"src.{empty}"}.items() <= job["topics_now"].items()
    assert "+ replication job src->dst" in run_topo("plan", str(topology.file)).stdout

    log = topology.apply("--once")

    assert "Copy complete." in log
    copied = records.read_topic(dst, f"src.{orders}")
    assert contents(copied) == expected(records.read_topic(src, orders), "src")
    assert [r.content()[1:3] for r in records.read_topic(src, orders)] == [
        w.content()[1:3] for w in sorted(written, key=lambda w: w.partition)
    ]
    assert records.read_topic(dst, f"src.{empty}") == []  # created, and nothing to copy
    # zstd end to end: the copies are the records, and the target keeps them compressed
    assert contents(records.read_topic(dst, f"src.{text}")) == expected(
        records.read_topic(src, text), "src"
    )
    kept, written_bytes = _on_disk(TARGET_CLUSTER, f"src.{text}"), _on_disk(SOURCE_CLUSTER, text)
    assert 0 < kept * 5 < written_bytes, (kept, written_bytes)
    assert topology.status()["running"] is False  # --once leaves nothing behind
    # A second --once copies only what is new: the checkpoint is kept.
    more = varied(orders, 6, partitions=3, tag="b")
    records.produce(src, more)
    topology.apply("--once")
    assert contents(records.read_topic(dst, f"src.{orders}")) == expected(
        records.read_topic(src, orders), "src"
    )


def _on_disk(cluster: str, topic: str) -> int:
    """The bytes of the topic's log segments on the lab cluster's disk."""
    from topology.lab import state

    return sum(log.stat().st_size for log in state.data_dir(cluster).glob(f"{topic}-*/*.log"))


def test_aborted_transactions_are_never_copied(topology: Topology) -> None:
    src, dst = topology.clusters["src"], topology.clusters["dst"]
    topic = topology.topic("payments")
    records.create_topic(src, topic, 1)
    producer = Producer({**src, "transactional.id": f"{topology.prefix}-tx"})
    producer.init_transactions(30)
    batches = {"committed-1": True, "aborted": False, "committed-2": True}
    for name, commit in batches.items():
        producer.begin_transaction()
        for i in range(3):
            producer.produce(
                topic, key=f"{name}-{i}".encode(), value=b"v", partition=0, timestamp=RECENT_MS + i
            )
        producer.flush(30)
        if commit:
            producer.commit_transaction(30)
        else:
            producer.abort_transaction(30)
    topology.write("  - mirror: {from: src, to: dst}")

    topology.apply("--once")

    copied = records.read_topic(dst, f"src.{topic}")
    assert [r.key for r in copied] == [
        f"{b}-{i}".encode() for b in ("committed-1", "committed-2") for i in range(3)
    ]
    assert contents(copied) == expected(records.read_topic(src, topic), "src")


def test_the_record_filter_runs_in_the_job(topology: Topology) -> None:
    src, dst = topology.clusters["src"], topology.clusters["dst"]
    topic = topology.topic("events")
    records.create_topic(src, topic, 2)
    written = varied(topic, 24, partitions=2)
    records.produce(src, written)
    topology.write(
        "  - mirror: {from: src, to: dst}\n"
        "    filter: \"key IS NOT NULL AND CAST(value AS STRING) LIKE '%value-1%'"
        " AND exists(headers, h -> h.key = 'seq' AND CAST(h.value AS STRING) = '13') = false\""
    )

    # In the copy loop's slots (the plan counts them), by Spark's own expression engine.
    assert re.search(r"copy slots? sized from \d", run_topo("plan", str(topology.file)).stdout)
    topology.apply("--once")

    kept = [
        r
        for r in records.read_topic(src, topic)
        if r.key is not None
        and r.value
        and b"value-1" in r.value
        and ("seq", b"13") not in r.headers
    ]
    assert 0 < len(kept) < len(written)
    assert contents(records.read_topic(dst, f"src.{topic}")) == expected(kept, "src")


def test_active_active_under_identity_naming_never_loops(topology: Topology) -> None:
    src, dst = topology.clusters["src"], topology.clusters["dst"]
    topic = topology.topic("accounts")
    for config in (src, dst):
        records.create_topic(config, topic, 2)
    from_src, from_dst = varied(topic, 6, 2, tag="s"), varied(topic, 4, 2, tag="d")
    records.produce(src, from_src)
    records.produce(dst, from_dst)
    topology.write("  - active-active: [src, dst]\n    naming: identity")

    for _round in range(3):  # more rounds copy nothing more: no record comes back
        topology.apply("--once")

    def plain(found: Iterable[Content]) -> list[Content]:
        """Two origins' records interleave by arrival: compare them in one canonical order."""
        return sorted(found, key=lambda c: (c[0], c[4] or 0, c[3]))

    on_src, on_dst = records.read_topic(src, topic), records.read_topic(dst, topic)
    assert len(on_src) == len(on_dst) == 10
    local_src = [r for r in on_src if not any(k == PROVENANCE_HEADER for k, _ in r.headers)]
    local_dst = [r for r in on_dst if not any(k == PROVENANCE_HEADER for k, _ in r.headers)]
    assert plain(contents(local_src)) == plain(contents(from_src))
    assert plain(contents(local_dst)) == plain(contents(from_dst))
    assert plain(contents(on_src)) == plain(contents(from_src) + expected(local_dst, "dst"))
    assert plain(contents(on_dst)) == plain(contents(from_dst) + expected(local_src, "src"))


def test_active_active_under_prefix_naming_copies_each_way_once(topology: Topology) -> None:
    src, dst = topology.clusters["src"], topology.clusters["dst"]
    topic = topology.topic("orders")
    for config in (src, dst):
        records.create_topic(config, topic, 1)
    from_src, from_dst = varied(topic, 5, 1, tag="s"), varied(topic, 3, 1, tag="d")
    records.produce(src, from_src)
    records.produce(dst, from_dst)
    topology.write("  - active-active: [src, dst]")

    topology.apply("--once")
    topology.apply("--once")

    on_src, on_dst = records.read_topic(src, topic), records.read_topic(dst, topic)
    assert contents(on_src) == contents(from_src) and contents(on_dst) == contents(from_dst)
    assert contents(records.read_topic(dst, f"src.{topic}")) == expected(on_src, "src")
    assert contents(records.read_topic(src, f"dst.{topic}")) == expected(on_dst, "dst")
    names = set(records_topics(src)) | set(records_topics(dst))
    assert f"src.dst.{topic}" not in names and f"dst.src.{topic}" not in names


def records_topics(config: dict[str, str]) -> list[str]:
    from confluent_kafka.admin import AdminClient

    return list(AdminClient({**config}).list_topics(timeout=10).topics)


def test_three_clusters_aggregate_into_one_under_identity_naming(
    tmp_path: Path, lab: dict[str, dict[str, str]], more_clusters: dict[str, dict[str, str]]
) -> None:
    central = lab[TARGET_CLUSTER]
    regions = {
        "a": lab[SOURCE_CLUSTER],
        "c": more_clusters["itest-region-c"],
        "d": more_clusters["itest-region-d"],
    }
    topology = Topology(tmp_path, {**regions, "central": central})
    topic = topology.topic("clicks")
    written = {}
    for alias, config in regions.items():
        records.create_topic(config, topic, 2)
        written[alias] = varied(topic, 4, 2, tag=alias)
        records.produce(config, written[alias])
    topology.write("  - aggregate: {from: [a, c, d], into: central}\n    naming: identity")

    topology.apply("--once")

    merged = records.read_topic(central, topic)
    assert len(merged) == 12
    for alias in regions:
        mine = [r for r in merged if (PROVENANCE_HEADER, alias.encode()) in r.headers]
        assert contents(mine) == expected(records.read_topic(regions[alias], topic), alias)
    assert records.read_topic(central, topic) == merged  # nothing more arrives


def test_a_target_down_for_a_while_loses_nothing(
    tmp_path: Path, lab: dict[str, dict[str, str]], more_clusters: dict[str, dict[str, str]]
) -> None:
    from topology.lab import manager

    far_name = "itest-region-d"
    src, far = lab[SOURCE_CLUSTER], more_clusters[far_name]
    topology = Topology(tmp_path, {"src": src, "far": far})
    topic = topology.topic("orders")
    records.create_topic(src, topic, 2)
    before, during = varied(topic, 8, 2, tag="a"), varied(topic, 12, 2, tag="b")
    records.produce(src, before)
    topology.write("  - mirror: {from: src, to: far}")
    try:
        topology.apply()
        wait_for(far, f"src.{topic}", len(before))
        manager.down([far_name])
        records.produce(src, during)
        time.sleep(8)  # the job's producer keeps retrying meanwhile
        manager.up([manager.UpRequest(far_name)])
        copied = wait_for(far, f"src.{topic}", len(before) + len(during))
        on_source = records.read_topic(src, topic)
        assert len(on_source) == len(before) + len(during)
        assert set(contents(copied)) == set(expected(on_source, "src"))
        by_partition = {p: [c for c in contents(copied) if c[0] == p] for p in (0, 1)}
        for partition, found in by_partition.items():
            mine = [c for c in expected(on_source, "src") if c[0] == partition]
            assert list(dict.fromkeys(found)) == mine  # order kept; a retry may only repeat
    finally:
        topology.stop()


def test_continuous_replication_follows_new_topics_partitions_and_survives_kill_9(
    topology: Topology,
) -> None:
    src, dst = topology.clusters["src"], topology.clusters["dst"]
    first, later = topology.topic("first"), topology.topic("later")
    records.create_topic(src, first, 2)
    records.produce(src, varied(first, 10, 2))
    topology.write("  - mirror: {from: src, to: dst}")

    log = topology.apply()  # continuous: returns once the driver runs
    assert "starting the replication supervisor" in log
    wait_for(dst, f"src.{first}", 10)

    # A topic created after apply is copied without another apply, its remote topic created
    # first with the source's partitions; a partition added on the source is followed.
    records.create_topic(src, later, 3)
    records.produce(src, varied(later, 9, 3))
    assert contents(wait_for(dst, f"src.{later}", 9)) == expected(
        records.read_topic(src, later), "src"
    )
    _add_partition(src, first, 3)
    grown = [Record(first, 2, b"in-new-partition", b"v", (), RECENT_MS)]
    records.produce(src, grown)
    wait_for(dst, f"src.{first}", 11)

    deadline = time.monotonic() + 30  # the status is published every two seconds: let it catch up
    status = topology.status()
    while status["flows"][0]["records"] < 20 and time.monotonic() < deadline:
        time.sleep(1)
        status = topology.status()
    [flow] = status["flows"]
    assert status["running"] and flow["state"] == "running"
    assert flow["records"] >= 20 and flow["topics"] >= 2
    assert flow["latency_ms"] is not None and flow["latency_ms"]["p50"] >= 0
    assert flow["lag"] is not None and flow["bytes"] > 0
    STATUS_SCHEMA.validate(status)
    assert "src->dst" in run_topo("status", str(topology.file)).stdout

    # kill -9 of the driver mid-stream: its supervisor (`topo run`) releases the dead driver's
    # lease and starts it again at once; no record lost (duplicates allowed only here).
    stream = [
        Record(first, i % 3, f"stream-{i}".encode(), b"v", (), RECENT_MS + i) for i in range(300)
    ]
    producing = threading.Thread(target=_trickle, args=(src, stream))
    producing.start()
    time.sleep(2)
    killed = kill_driver(topology.prefix)
    producing.join()
    restarted = wait_for_restart(topology, killed)
    assert restarted.launcher_pid == killed.launcher_pid  # the same supervisor
    everything = records.read_topic(src, first)
    copied = wait_for(dst, f"src.{first}", len(everything))
    assert set(expected(everything, "src")) <= set(contents(copied))

    topology.stop()
    assert topology.status()["running"] is False


def started_driver(owner: str) -> jobstate.Driver:
    """The running driver of `owner` once spark-submit has started its program (60 s at most)."""
    deadline = time.monotonic() + 60
    driver = jobstate.running_driver(owner)
    while (driver is None or driver.driver_pid is None) and time.monotonic() < deadline:
        time.sleep(0.5)
        driver = jobstate.running_driver(owner)
    assert driver is not None and driver.submit_pid is not None and driver.driver_pid is not None
    return driver


def kill_driver(owner: str) -> jobstate.Driver:
    """kill -9 of the running driver (spark-submit and the driver program), not of `topo run`."""
    driver = started_driver(owner)
    assert driver.submit_pid is not None and driver.driver_pid is not None
    os.killpg(driver.submit_pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        os.kill(driver.driver_pid, signal.SIGKILL)
    return driver


def wait_for_restart(
    topology: Topology, killed: jobstate.Driver, timeout: float = 150
) -> jobstate.Driver:
    """The driver `topo run` started after `killed`, once `topo status` says it runs."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        driver = jobstate.running_driver(topology.prefix)
        if driver is not None and driver.driver_pid not in (None, killed.driver_pid):
            status = topology.status()
            reported = status.get("driver") or {}
            if status["running"] and reported.get("pid") == driver.driver_pid:
                return driver
        time.sleep(1)
    raise AssertionError(f"the driver of {topology.prefix} was not restarted in {timeout:.0f}s")


def kill_while_streaming(topology: Topology, topic: str, kills: int = 1) -> None:
    """`kills` kill -9s of the driver, each once its supervisor has restarted the one before,
    while records (`stream-<i>`, 2 partitions) trickle into the source topic throughout; back
    once the last is restarted and the trickle has ended. Each dead driver's lease is released
    by its supervisor, so its successor never waits for the lease to expire."""
    done = threading.Event()
    producing = threading.Thread(
        target=_trickle_until, args=(topology.clusters["src"], topic, done)
    )
    producing.start()
    try:
        for _ in range(kills):
            time.sleep(2)  # copying, with records arriving
            killed = kill_driver(topology.prefix)
            wait_for_restart(topology, killed)
    finally:
        done.set()
        producing.join()
    log = (jobstate.folder(topology.prefix) / jobstate.LOG).read_text(errors="replace")
    assert log.count("released the lease of the dead driver") >= kills, log
    # Neither the supervisor nor a new driver ever found the dead driver's lease still held.
    assert "holds this topology's lease" not in log, log
    assert "replication is held by" not in log, log
    assert "another driver holds the lease" not in log, log


def _add_partition(config: dict[str, str], topic: str, total: int) -> None:
    from confluent_kafka.admin import AdminClient
    from confluent_kafka.cimpl import NewPartitions  # admin re-exports it without declaring it

    # {**config}: a dict[str, str | int | float | bool], as AdminClient asks (dict is invariant)
    admin = AdminClient({**config})
    admin.create_partitions([NewPartitions(topic, total)])[topic].result(30)


def _trickle_until(config: dict[str, str], topic: str, done: threading.Event) -> None:
    """Records `stream-<i>` into `topic` (2 partitions), ten every 0.3 s, until `done`."""
    written = 0
    while not done.is_set():
        batch = [
            Record(topic, i % 2, f"stream-{i}".encode(), b"v", (), RECENT_MS + i)
            for i in range(written, written + 10)
        ]
        records.produce(config, batch)
        written += len(batch)
        time.sleep(0.3)


def _trickle(config: dict[str, str], stream: list[Record]) -> None:
    for start in range(0, len(stream), 30):
        records.produce(config, stream[start : start + 30])
        time.sleep(0.3)


def test_the_spark_runner_submits_the_same_job_to_a_standalone_cluster(
    topology: Topology, spark_cluster: "StandaloneSpark"
) -> None:
    src, dst = topology.clusters["src"], topology.clusters["dst"]
    topic = topology.topic("orders")
    records.create_topic(src, topic, 2)
    written = varied(topic, 12, partitions=2)
    records.produce(src, written)
    topology.write(
        "  - mirror: {from: src, to: dst}",
        extra=f"engine:\n  runner: spark\n  master: {spark_cluster.master_url}\n"
        "  spark_conf: {spark.executor.memory: 512m, spark.cores.max: 2}",
    )

    topology.apply("--once")

    assert contents(records.read_topic(dst, f"src.{topic}")) == expected(
        records.read_topic(src, topic), "src"
    )
    ran = [app["name"] for app in spark_cluster.status().get("completedapps", [])]
    assert f"topo-{topology.prefix}" in ran  # the copy ran on the cluster, not locally


def test_once_copies_a_large_backlog_exactly(topology: Topology) -> None:
    src, dst = topology.clusters["src"], topology.clusters["dst"]
    topic = topology.topic("backlog")
    records.create_topic(src, topic, 3)
    # One millisecond apart: brokers refuse timestamps more than an hour ahead.
    written = [
        replace(r, timestamp_ms=RECENT_MS + i)
        for i, r in enumerate(varied(topic, 20_000, partitions=3))
    ]
    records.produce(src, written)
    topology.write("  - mirror: {from: src, to: dst}")

    topology.apply("--once")

    on_source = records.read_topic(src, topic, timeout=120)
    assert len(on_source) == len(written)
    assert contents(records.read_topic(dst, f"src.{topic}", timeout=120)) == expected(
        on_source, "src"
    )
