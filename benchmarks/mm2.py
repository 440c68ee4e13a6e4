"""topo beside Apache Kafka MirrorMaker 2: both replicators on the same two lab clusters, in the
same run, on identical backlogs, alternated.

Run by hand, never from the test suite, on a machine where nothing else heavy runs (after
`make setup`; the first run resolves MM2's jars with mvn):

    .venv/bin/python benchmarks/mm2.py [--pairs 3] [--records 1000000] [--small-records 1000000]
        [--eos-records N] [--rates 1000,5000] [--seconds 30] [--warmup 10]
        [--mm2-default-refresh] [--json results.json]
    .venv/bin/python benchmarks/mm2.py --smoke   # a few thousand records, checked one by one

It starts the lab clusters `bench-src` and `bench-dst` in a private lab folder (the user's labs
and jobs are untouched). MM2 4.3.1 (the lab's Kafka version) runs in dedicated mode from Maven
jars (topology/lab/mirrormaker.py), its mm2.properties written by `topo export mm2` from the
same topology topo runs, plus the lab's replication factors of 1. topo runs as `topo apply`
starts it (the local runner: `topo run` supervising a Spark driver in local mode).

Each pair measures the producer ceiling of the target first, then runs MM2 and topo one after
the other (ABAB...), each on its own fresh topics filled alike:

- bulk copy of `--records` x 1 KiB, then `--small-records` x 100 B, into 6 partitions: the
  replicator starts against the backlog; time to the first copy on the target, the copy alone
  (first to last copy landing, from the target's high watermarks) in MiB/s and records/s, end
  to end (start to last copy), the replicator's CPU seconds per GiB over the copy alone and the
  brokers' CPU beside it;
- continuous: at each of `--rates` records/s (1 KiB), one producer for `--warmup` seconds
  then `--seconds` measured (a new producer JVM's start-up stays in the warm-up): per-record
  latency of the records created after the warm-up (a consumer of the target sees the copy,
  minus the source record's CreateTime, which both replicators keep) p50/p99/p99.9/max, and
  the replicator's cores; then its cores with nothing to copy, then a topic created on the
  source: seconds until its first record is on the target (MM2 with
  refresh.topics.interval.seconds=5; with `--mm2-default-refresh`, once more at MM2's default
  of 600 s, in the first pair);
- exactly-once: `--eos-records` x 1 KiB (as many as `--records`), topo `delivery:
  exactly-once` against MM2 with `exactly.once.source.support=enabled`: MiB/s and CPU seconds
  per GiB, and each against its own at-least-once copy of the same backlog.

Pinned alike: acks=all and idempotence on the producers writing to the target (topo's copy
slots set both; MM2's Connect producer too), read_committed on the source consumers (topo always;
MM2 from the exported `src.consumer.isolation.level`), 1 GiB of JVM heap (MM2's -Xmx1g;
Spark's default spark.driver.memory) with Kafka's G1 settings (a 20 ms pause target) for both,
and parallelism: MM2's tasks.max is the machine's core count, as many tasks as topo's Spark
has task slots (local[*]). MiB and GiB count record values (2^20, 2^30 bytes).
"""

import argparse
import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import replication as bench  # benchmarks/replication.py: the ceiling, CPU and latency probes

SOURCE, TARGET = bench.SOURCE, bench.TARGET
ENGINE: dict[str, str] = {}  # more of topo's engine settings (benchmarks/metrics_cost.py)
DEFAULTS: dict[str, str] = {}  # more flow defaults, such as tasks (benchmarks/scale_out.py)
PAYLOAD_FILE: Path | None = None  # the bulk values' lines (benchmarks/compression.py)
PARTITIONS = bench.PARTITIONS
MM2, TOPO = "MM2", "topo"
TASKS = os.cpu_count() or 1  # MM2's tasks.max: as many as topo's task slots (local[*])
NEW_TOPIC_TIMEOUT = 120
DEFAULT_REFRESH_TIMEOUT = 660  # MM2's refresh.topics.interval.seconds default is 600


# -- the two replicators --------------------------------------------------------------------------


@dataclass
class Life:
    """One start of a replicator: its topology, and what to measure it by."""

    replicator: str
    file: Path
    started_at: float
    session: Callable[[], int | None]  # the replicator's session id, once known
    extra_cpu: Callable[[], float]  # CPU outside that session (topo apply's own process)
    stop: Callable[[], None]


def topology_file(folder: Path, name: str, topics: list[str], exactly_once: bool) -> Path:
    from topology.lab import manager

    file = folder / f"{name}.yaml"
    source, target = (manager.admin_config(c)["bootstrap.servers"] for c in (SOURCE, TARGET))
    file.write_text(
        f"version: 1\nname: {name}\n"
        "clusters:\n"
        f'  src: {{bootstrap: "{source}"}}\n'
        f'  dst: {{bootstrap: "{target}"}}\n'
        "defaults:\n  replication_factor: 1\n"
        + "".join(f"  {k}: {v}\n" for k, v in DEFAULTS.items())
        + "flows:\n  - mirror: {from: src, to: dst}\n"
        f"    topics: {{include: {json.dumps(topics)}}}\n"
        + ("    delivery: exactly-once\n" if exactly_once else "")
        + (f"engine: {{{', '.join(f'{k}: {v}' for k, v in ENGINE.items())}}}\n" if ENGINE else "")
    )
    return file


def start_mm2(file: Path, refresh_seconds: int | None, exactly_once: bool) -> Life:
    from topology.lab import mirrormaker

    exported = subprocess.run(
        [*bench.TOPO, "export", "mm2", str(file)], capture_output=True, text=True, check=False
    )
    if exported.returncode != 0:
        sys.exit(f"topo export mm2 failed: {exported.stderr.strip()}")
    settings = mirrormaker.lab_settings(exactly_once)
    settings["tasks.max"] = str(TASKS)
    if refresh_seconds is not None:
        settings["refresh.topics.interval.seconds"] = str(refresh_seconds)
    properties = file.with_suffix(".properties")
    properties.write_text(mirrormaker.properties_text(exported.stdout, settings))
    mm2 = mirrormaker.start(properties, file.parent / f"{file.stem}-mm2")

    def stop() -> None:
        mm2.stop()
        forget_mm2_state()

    return Life(MM2, file, mm2.started_at, lambda: mm2.pid, lambda: 0.0, stop)


def forget_mm2_state() -> None:
    """Delete MM2's internal topics (its workers' configs, offsets and status, its offset-syncs
    and checkpoints) on both clusters, so the next MM2 starts as fresh as topo does: the same
    cluster aliases would otherwise hand it the last run's task configs to rebalance first."""
    from confluent_kafka.admin import AdminClient

    from topology.lab import manager

    for cluster in (SOURCE, TARGET):
        admin = AdminClient({**manager.admin_config(cluster), "logger": bench._QUIET})
        names = _mm2_internal(admin)
        if not names:
            continue
        for future in admin.delete_topics(sorted(names), operation_timeout=30).values():
            with contextlib.suppress(Exception):
                future.result()
        deadline = time.monotonic() + 30
        while _mm2_internal(admin) and time.monotonic() < deadline:
            time.sleep(0.5)


def _mm2_internal(admin: Any) -> set[str]:
    topics = admin.list_topics(timeout=10).topics
    return {n for n in topics if n.startswith("mm2-") or n.endswith(".checkpoints.internal")}


class _Waited(threading.Thread):
    """Waits for a child with wait4: its exit code and its own CPU seconds."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.cpu = pid, 0.0
        self.code: int | None = None

    def run(self) -> None:
        _, status, usage = os.wait4(self.pid, 0)
        self.code = os.waitstatus_to_exitcode(status)
        self.cpu = usage.ru_utime + usage.ru_stime


def start_topo(file: Path) -> Life:
    """`topo apply` in the background: it starts `topo run` (a new session) and returns once
    the driver runs; the apply process's own CPU is counted beside that session's."""
    from topology.host import jobstate

    name = file.stem
    log = file.with_suffix(".apply.log")
    started = time.time()
    with log.open("w") as out:
        pid = os.posix_spawn(
            sys.executable,
            [sys.executable, *bench.TOPO[1:], "apply", str(file), "--auto-approve"],
            dict(os.environ),
            file_actions=[
                (os.POSIX_SPAWN_DUP2, out.fileno(), 1),
                (os.POSIX_SPAWN_DUP2, out.fileno(), 2),
            ],
        )
    apply = _Waited(pid)
    apply.start()

    def session() -> int | None:
        driver = jobstate.running_driver(name)
        return None if driver is None else driver.launcher_pid

    def stop() -> None:
        apply.join(300)
        try:
            subprocess.run([*bench.TOPO, "stop", str(file)], capture_output=True, check=False)
        finally:
            supervisor = session()
            if supervisor is not None:  # `topo stop` did not end it: nothing outlives the run
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(supervisor, signal.SIGKILL)
        if apply.code != 0:
            sys.exit(f"topo apply failed ({apply.code}):\n{log.read_text()[-3000:]}")

    return Life(TOPO, file, started, session, lambda: apply.cpu, stop)


def start(replicator: str, file: Path, refresh_seconds: int | None = 5, eos: bool = False) -> Life:
    return start_mm2(file, refresh_seconds, eos) if replicator == MM2 else start_topo(file)


@contextmanager
def running(life: Life) -> Iterator[Life]:
    try:
        yield life
    finally:
        life.stop()


# -- measures -------------------------------------------------------------------------------------


@dataclass
class Bulk:
    replicator: str
    record_size: int
    records: int
    first_copy: float  # seconds from the replicator's start to the first copy on the target
    end_to_end: float  # seconds from its start to the last copy
    copy_seconds: float  # first to last copy
    mib_per_second: float  # copy alone
    records_per_second: float
    cpu_per_gib: float  # the replicator's CPU seconds per GiB over the copy alone
    cpu_per_gib_whole: float  # from its start to the last copy (topo apply's own CPU too)
    broker_cpu_per_gib: tuple[float, ...]  # source, target brokers, over the copy alone
    outside: tuple[float, float]  # cores others used, cores stolen, over the whole life
    eos: bool = False
    by_process: dict[str, float] = field(default_factory=dict)  # CPU s per GiB, copy alone


def load(tools: bench.Tools, topic: str, records: int, size: int, smoke: bool) -> None:
    from topology.kafka import records as kafka_records
    from topology.lab import manager

    source = manager.admin_config(SOURCE)
    kafka_records.create_topic(source, topic, PARTITIONS)
    if smoke:  # varied keys, headers, timestamps and partitions, to check one by one
        kafka_records.produce(source, smoke_records(topic, records, size))
    else:
        bench.perf_test(
            tools,
            source["bootstrap.servers"],
            topic,
            records,
            -1,
            bench.PRODUCER_BATCH,
            size,
            PAYLOAD_FILE,
        )


def smoke_records(topic: str, count: int, size: int) -> list[Any]:
    from topology.kafka.records import Record

    base = int(time.time() * 1000) - 60_000
    made = []
    for i in range(count):
        key = None if i % 7 == 0 else f"k{i}".encode()
        value = (f"v{i}-".encode() * size)[:size]
        headers = (("n", str(i).encode()), ("n", b"again"))
        made.append(Record(topic, i % PARTITIONS, key, value, headers, base + i))
    return made


def bulk(
    replicator: str,
    folder: Path,
    tools: bench.Tools,
    brokers: list[int],
    run: str,
    records: int,
    size: int,
    smoke: bool = False,
    eos: bool = False,
) -> Bulk:
    topic = f"{run}-{'eos' if eos else 'bulk'}{size}"
    load(tools, topic, records, size, smoke)
    file = topology_file(folder, f"{run}-{'eos' if eos else 'bulk'}{size}", [topic], eos)
    meter = bench.Outside(brokers)
    with running(start(replicator, file, eos=eos)) as life:
        from topology.lab import manager

        target = manager.admin_config(TARGET)
        watch = bench.TargetWatch(target, f"src.{topic}", records, life.session, brokers)
        watch.start()
        watch.join(timeout=900)
        watch.done.set()
        if watch.first is None or watch.last is None:
            sys.exit(f"{replicator} did not copy {records:,} records of {topic} in 15 min")
        if smoke:
            check_copy(topic)
        session = life.session()
        meter.sessions = () if session is None else (session,)  # started after the meter: 0 then
        outside = meter.cores()
    first, last = watch.first, watch.last
    gib = records * size / bench.GIB
    seconds = max(last.at - first.at, 1e-3)
    whole_cpu = last.replicator + life.extra_cpu()
    return Bulk(
        replicator=replicator,
        record_size=size,
        records=records,
        first_copy=first.at - life.started_at,
        end_to_end=last.at - life.started_at,
        copy_seconds=seconds,
        mib_per_second=records * size / bench.MIB / seconds,
        records_per_second=records / seconds,
        cpu_per_gib=(last.replicator - first.replicator) / gib,
        cpu_per_gib_whole=whole_cpu / gib,
        broker_cpu_per_gib=tuple(
            (b - a) / gib for a, b in zip(first.brokers, last.brokers, strict=True)
        ),
        outside=outside,
        eos=eos,
        by_process={kind: cpu / gib for kind, cpu in last.since(first).items()},
    )


def check_copy(topic: str) -> None:
    """Every source record on the target once, in order per partition: key, value, headers
    (topo's own `topo-*` headers set aside), timestamp, partition."""
    from topology.kafka import records as kafka_records
    from topology.lab import manager

    def shape(found: list[Any]) -> dict[int, list[Any]]:
        by_partition: dict[int, list[Any]] = {}
        for r in found:
            headers = tuple(h for h in r.headers if not h[0].startswith("topo-"))
            by_partition.setdefault(r.partition, []).append(
                (r.key, r.value, headers, r.timestamp_ms)
            )
        return by_partition

    source = shape(kafka_records.read_topic(manager.admin_config(SOURCE), topic))
    copy = shape(kafka_records.read_topic(manager.admin_config(TARGET), f"src.{topic}"))
    if source != copy:
        wrong = [p for p in sorted(set(source) | set(copy)) if source.get(p) != copy.get(p)]
        sys.exit(f"src.{topic} is not an exact copy of {topic}: partitions {wrong} differ")
    print(f"  checked: src.{topic} holds every record of {topic} once, in order", flush=True)


@dataclass
class Latency:
    replicator: str
    rate: int
    seen: int
    p50: float
    p99: float
    p999: float
    max: float
    cores: float  # the replicator's CPU seconds per second while copying


@dataclass
class Continuous:
    replicator: str
    rates: list[Latency] = field(default_factory=list)
    idle_cores: float = 0.0
    new_topic_seconds: float | None = None  # topic created on the source -> first copy
    outside: tuple[float, float] = (0.0, 0.0)


def continuous(
    replicator: str,
    folder: Path,
    tools: bench.Tools,
    brokers: list[int],
    run: str,
    rates: list[int],
    seconds: int,
    warmup: int,
) -> Continuous:
    from topology.kafka import records as kafka_records
    from topology.lab import manager

    source = manager.admin_config(SOURCE)
    topic, new = f"{run}-latency", f"{run}-new"
    kafka_records.create_topic(source, topic, PARTITIONS)
    file = topology_file(folder, f"{run}-continuous", [topic, new], False)
    meter = bench.Outside(brokers)
    result = Continuous(replicator)
    with running(start(replicator, file)) as life:
        wait_for_topic(f"src.{topic}", 180)
        probe = bench.LatencyProbe(manager.admin_config(TARGET), f"src.{topic}")
        probe.start()
        probe.ready.wait(60)
        produced = 0
        for rate in rates:
            # The replicator copies (a second of records, waited for); then one producer for the
            # warm-up and the measurement, of the records created after the warm-up.
            bench.perf_test(
                tools, source["bootstrap.servers"], topic, rate, rate, bench.PRODUCER_BATCH
            )
            produced += rate
            wait_seen(probe, produced, 180)
            mark = len(probe.latencies)
            producing = bench.Producing(
                tools, source["bootstrap.servers"], topic, rate * (warmup + seconds), rate
            )
            producing.start()
            time.sleep(warmup)
            measured_from = time.time() * 1000
            session = life.session()
            assert session is not None
            before = bench.snapshot(session, [])
            producing.join()
            if producing.failure:
                sys.exit(producing.failure)
            produced += rate * (warmup + seconds)
            wait_seen(probe, produced, 120)
            after = bench.snapshot(session, [])
            seen = sorted(probe.since(measured_from, mark))
            if not seen:
                sys.exit("none of the measured records' copies were seen")
            result.rates.append(
                Latency(
                    replicator=replicator,
                    rate=rate,
                    seen=len(seen),
                    p50=statistics.median(seen),
                    p99=bench._percentile(seen, 0.99),
                    p999=bench._percentile(seen, 0.999),
                    max=seen[-1],
                    cores=(after.replicator - before.replicator) / (after.at - before.at),
                )
            )
            print(f"  {result.rates[-1]}", flush=True)
        probe.done.set()
        session = life.session()
        assert session is not None
        idle_from = bench.snapshot(session, [])
        time.sleep(bench.IDLE_SECONDS)
        idle_to = bench.snapshot(session, [])
        idle = idle_to.replicator - idle_from.replicator
        result.idle_cores = idle / (idle_to.at - idle_from.at)
        result.new_topic_seconds = new_topic_latency(new, NEW_TOPIC_TIMEOUT)
        meter.sessions = (session,)  # started after the meter: it had used nothing then
        result.outside = meter.cores()
    return result


def wait_seen(probe: bench.LatencyProbe, count: int, timeout: float) -> None:
    if not probe.wait_for(count, timeout):
        sys.exit(f"only {len(probe.latencies):,} of {count:,} copies seen in {timeout:.0f} s")


def wait_for_topic(topic: str, timeout: float) -> None:
    from confluent_kafka.admin import AdminClient

    from topology.lab import manager

    admin = AdminClient({**manager.admin_config(TARGET), "logger": bench._QUIET})
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if topic in admin.list_topics(timeout=10).topics:
            return
        time.sleep(0.2)
    sys.exit(f"{topic} did not appear on the target in {timeout:.0f} s")


def new_topic_latency(topic: str, timeout: float) -> float | None:
    """Create `topic` on the source and write a record to it every 100 ms: seconds from its
    creation until the first copy is on the target (None if not within `timeout`)."""
    from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

    from topology.kafka import records as kafka_records
    from topology.lab import manager

    source, target = manager.admin_config(SOURCE), manager.admin_config(TARGET)
    kafka_records.create_topic(source, topic, 1)
    created = time.time()
    producer = Producer({**source, "linger.ms": 0, "logger": bench._QUIET})
    consumer = Consumer({**target, "group.id": "bench-new", "logger": bench._QUIET})
    remote = f"src.{topic}"
    try:
        while time.time() - created < timeout:
            producer.produce(topic, b"new")
            producer.poll(0)
            try:
                found = consumer.list_topics(remote, timeout=1).topics.get(remote)
                if found is not None and found.error is None and found.partitions:
                    tp = TopicPartition(remote, 0)
                    if consumer.get_watermark_offsets(tp, 1, cached=False)[1] > 0:
                        return time.time() - created
            except KafkaException:
                pass
            time.sleep(0.1)
        return None
    finally:
        producer.flush(10)
        consumer.close()


def mm2_default_refresh(folder: Path, run: str) -> float | None:
    """MM2 at refresh.topics.interval.seconds' default (600 s): a new topic's first copy."""
    new = f"{run}-new-default"
    file = topology_file(folder, f"{run}-default-refresh", [new], False)
    with running(start_mm2(file, None, False)):
        time.sleep(20)  # MM2 has started and listed the source's topics once
        return new_topic_latency(new, DEFAULT_REFRESH_TIMEOUT)


# -- the run --------------------------------------------------------------------------------------


@dataclass
class Pair:
    ceiling_mib_per_second: float
    bulk: list[Bulk] = field(default_factory=list)
    continuous: list[Continuous] = field(default_factory=list)


Row = tuple[str, dict[str, list[float]], list[float]]


def measures(pairs: list[Pair]) -> list[Row]:
    """(measure, {replicator: its value in each pair}, topo/MM2 in each pair with both)."""
    rows: list[Row] = []

    def add(name: str, lower: bool, pick: Callable[[Pair, str], float | None]) -> None:
        values = {
            who: [v for pair in pairs if (v := pick(pair, who)) is not None] for who in (MM2, TOPO)
        }
        ratios = [
            t / m
            for pair in pairs
            if (m := pick(pair, MM2)) and (t := pick(pair, TOPO)) is not None
        ]
        if values[MM2] or values[TOPO]:
            rows.append((name, values, ratios))

    def of_bulk(size: int, eos: bool, attribute: str) -> Callable[[Pair, str], float | None]:
        def pick(pair: Pair, who: str) -> float | None:
            for b in pair.bulk:
                if b.replicator == who and b.record_size == size and b.eos == eos:
                    return float(getattr(b, attribute))
            return None

        return pick

    for size, label in ((1024, "1 KiB"), (100, "100 B")):
        add(f"bulk {label}: copy alone, MiB/s", False, of_bulk(size, False, "mib_per_second"))
        records = of_bulk(size, False, "records_per_second")
        add(f"bulk {label}: copy alone, records/s", False, records)
        add(f"bulk {label}: end to end, s", True, of_bulk(size, False, "end_to_end"))
        add(f"bulk {label}: first copy after start, s", True, of_bulk(size, False, "first_copy"))
        add(f"bulk {label}: replicator CPU s per GiB", True, of_bulk(size, False, "cpu_per_gib"))
    add("exactly-once 1 KiB: copy alone, MiB/s", False, of_bulk(1024, True, "mib_per_second"))
    add("exactly-once 1 KiB: replicator CPU s per GiB", True, of_bulk(1024, True, "cpu_per_gib"))
    rates = sorted({r.rate for p in pairs for c in p.continuous for r in c.rates})
    for rate in rates:
        for attribute, label in (("p50", "p50"), ("p99", "p99"), ("p999", "p99.9"), ("max", "max")):
            add(f"continuous {rate:,}/s: latency {label}, ms", True, _of_rate(rate, attribute))
        add(f"continuous {rate:,}/s: replicator cores", True, _of_rate(rate, "cores"))
    add("idle: replicator cores", True, _of_continuous("idle_cores"))
    add("new topic: s to its first copy", True, _of_continuous("new_topic_seconds"))
    return rows


def _of_rate(rate: int, attribute: str) -> Callable[[Pair, str], float | None]:
    def pick(pair: Pair, who: str) -> float | None:
        for c in pair.continuous:
            for r in c.rates:
                if c.replicator == who and r.rate == rate:
                    return float(getattr(r, attribute))
        return None

    return pick


def _of_continuous(attribute: str) -> Callable[[Pair, str], float | None]:
    def pick(pair: Pair, who: str) -> float | None:
        for c in pair.continuous:
            if c.replicator == who:
                value = getattr(c, attribute)
                return None if value is None else float(value)
        return None

    return pick


def table(pairs: list[Pair]) -> str:
    """Markdown: median [min-max] of each replicator over the pairs, and of topo/MM2 per pair."""
    lines = ["| measure | MM2 | topo | topo / MM2 |", "|---|---|---|---|"]
    for name, values, ratios in measures(pairs):
        lines.append(
            f"| {name} | {spread(values[MM2])} | {spread(values[TOPO])} | "
            f"{spread(ratios, ratio=True)} |"
        )
    return "\n".join(lines)


def delivery_table(pairs: list[Pair]) -> str:
    """Markdown: each replicator's exactly-once copy against its at-least-once copy of as many
    1 KiB records in the same pair (MiB/s and CPU per GiB, median [min-max] of the ratios); ""
    when no pair copied the same backlog both ways."""
    lines = [
        "| replicator | exactly-once / at-least-once: MiB/s | CPU s per GiB |",
        "|---|---|---|",
    ]
    for who in (MM2, TOPO):
        speed, cost = [], []
        for pair in pairs:
            by = {b.eos: b for b in pair.bulk if b.replicator == who and b.record_size == 1024}
            if True in by and False in by and by[True].records == by[False].records:
                speed.append(by[True].mib_per_second / by[False].mib_per_second)
                cost.append(by[True].cpu_per_gib / by[False].cpu_per_gib)
        if speed:
            lines.append(f"| {who} | {spread(speed, ratio=True)} | {spread(cost, ratio=True)} |")
    return "\n".join(lines) if len(lines) > 2 else ""


def spread(values: list[float], ratio: bool = False) -> str:
    """`median [min-max]` of the values (one value alone; `-` for none)."""
    if not values:
        return "-"
    show = (lambda v: f"{v:.2f}") if ratio else _number
    middle = show(statistics.median(values))
    if len(values) == 1:
        return middle
    return f"{middle} [{show(min(values))}-{show(max(values))}]"


def _number(value: float) -> str:
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def _interrupted(_signum: int, _frame: object) -> None:
    raise SystemExit("interrupted (SIGTERM)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--records", type=int, default=1_000_000, help="bulk copy, 1 KiB")
    parser.add_argument("--small-records", type=int, default=1_000_000, help="bulk, 100 B")
    parser.add_argument(
        "--eos-records",
        type=int,
        help="exactly-once, 1 KiB (default: --records, so each replicator's "
        "exactly-once is set against its at-least-once copy of as many records); "
        "0 skips it",
    )
    parser.add_argument("--rates", default="1000,5000", help="records/s; empty skips it")
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--mm2-default-refresh", action="store_true")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="one pair, 3,000 records of each size, each copy checked",
    )
    parser.add_argument(
        "--lab-clusters",
        metavar="SRC,DST",
        help="use these running lab clusters instead of starting two (MM2's "
        "internal topics on them are deleted after each MM2 run)",
    )
    parser.add_argument("--json", type=Path, help="write every measurement here")
    parser.add_argument("--only", choices=(MM2, TOPO), help="run one replicator (for tuning)")
    parser.add_argument("--keep", action="store_true", help="keep the logs and state folder")
    options = parser.parse_args()
    signal.signal(signal.SIGTERM, _interrupted)  # stopped from outside: still clean up
    if options.eos_records is None:
        options.eos_records = options.records
    if options.smoke:
        options.pairs = 1
        options.records, options.small_records = (
            min(n, 3000) for n in (options.records, options.small_records)
        )
        options.eos_records, options.rates = 0, ""
    rates = [int(r) for r in options.rates.split(",") if r.strip()]
    global SOURCE, TARGET
    if options.lab_clusters:
        SOURCE, TARGET = options.lab_clusters.split(",")
    root = bench.private_run("topo-bench-mm2-", lab=not options.lab_clusters)
    from topology.host import maven
    from topology.lab import manager, mirrormaker

    folder = root / "work"
    folder.mkdir()
    tools = bench.kafka_tools()
    maven.resolve(mirrormaker.ARTIFACTS, report=print)
    host = bench.machine()
    pairs: list[Pair] = []
    tag = f"b{os.getpid()}"  # fresh topic names on clusters that may have run this before
    default_refresh: float | None = None
    try:
        if not options.lab_clusters:
            print(f"Starting {SOURCE} and {TARGET} in {root} ...", flush=True)
            manager.up([manager.UpRequest(SOURCE), manager.UpRequest(TARGET)])
        brokers = [s.pid for s in map(manager.status_of, (SOURCE, TARGET)) if s.pid is not None]
        target = manager.admin_config(TARGET)
        for number in range(options.pairs):
            print(
                f"Pair {number + 1} of {options.pairs}: the target's producer ceiling ...",
                flush=True,
            )
            from topology.kafka import records as kafka_records

            ceiling_topic = f"{tag}p{number}-ceiling"
            kafka_records.create_topic(target, ceiling_topic, PARTITIONS)
            ceiling = bench.perf_test(
                tools,
                target["bootstrap.servers"],
                ceiling_topic,
                options.records or 100_000,
                -1,
                bench.PRODUCER_BATCH,
            )
            pair = Pair(ceiling.mib_per_second)
            pairs.append(pair)
            print(f"  {ceiling.mib_per_second:.1f} MiB/s", flush=True)
            order = (MM2, TOPO) if number % 2 == 0 else (TOPO, MM2)  # ABBA: no order bias
            for who in (options.only,) if options.only else order:
                run = f"{tag}p{number}{who.lower()}"
                for size, count in ((1024, options.records), (100, options.small_records)):
                    if not count:
                        continue
                    print(f"{who}: bulk copy of {count:,} x {size} B ...", flush=True)
                    pair.bulk.append(
                        bulk(who, folder, tools, brokers, run, count, size, smoke=options.smoke)
                    )
                    print(f"  {pair.bulk[-1]}", flush=True)
                if options.eos_records:
                    print(
                        f"{who}: exactly-once copy of {options.eos_records:,} x 1 KiB ...",
                        flush=True,
                    )
                    pair.bulk.append(
                        bulk(who, folder, tools, brokers, run, options.eos_records, 1024, eos=True)
                    )
                    print(f"  {pair.bulk[-1]}", flush=True)
                if rates:
                    print(f"{who}: continuous at {rates} records/s ...", flush=True)
                    pair.continuous.append(
                        continuous(
                            who, folder, tools, brokers, run, rates, options.seconds, options.warmup
                        )
                    )
                    print(
                        f"  idle {pair.continuous[-1].idle_cores:.3f} cores, new topic "
                        f"{pair.continuous[-1].new_topic_seconds} s",
                        flush=True,
                    )
            if number == 0 and options.mm2_default_refresh:
                print("MM2: a new topic at the default refresh interval ...", flush=True)
                default_refresh = mm2_default_refresh(folder, f"{tag}p{number}mm2")
        print()
        print(f"Machine: {host}")
        print(
            f"Kafka {tools.kafka_version}; target producer ceiling per pair (MiB/s): "
            f"{[round(p.ceiling_mib_per_second, 1) for p in pairs]}"
        )
        if default_refresh is not None or options.mm2_default_refresh:
            print(f"MM2, new topic at the default refresh interval: {default_refresh} s")
        print(table(pairs))
        delivery = delivery_table(pairs)
        if delivery:
            print(f"\nEach replicator's exactly-once against its own at-least-once:\n{delivery}")
        if options.json:
            options.json.write_text(
                json.dumps(
                    {
                        "machine": host,
                        "kafka": tools.kafka_version,
                        "mm2_default_refresh_seconds": default_refresh,
                        "pairs": [asdict(p) for p in pairs],
                    },
                    indent=2,
                )
            )
    finally:
        if not options.lab_clusters:
            manager.down([], purge=True)
        if options.keep:
            print(f"kept: {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
