"""How fast topo's replication engine copies records, at what CPU cost, and with what latency.

Run by hand, never from the test suite (it starts two lab clusters of its own and takes a few
minutes), and on a shared machine only while nothing else heavy runs:

    .venv/bin/python benchmarks/replication.py [--records 1000000] [--rate 5000] [--seconds 60]
        [--warmup 10] [--no-latency] [--target-client KEY=VALUE]... [--spark-conf KEY=VALUE]...

It starts the lab clusters `bench-src` and `bench-dst` in a private lab folder, with topo's job
state in a private folder too (the user's labs and jobs are untouched), and measures, with 1 KiB
records and 6-partition topics:

1. the ceiling: how fast Kafka's own producer (`kafka-producer-perf-test`, acks=all) writes
   `--records` records into the target cluster on this machine;
2. `topo apply --once`: the same number of records, loaded into the source first, copied to the
   target; end to end (process start to exit) and the copy alone (first to last record landing
   on the target, from the target's high watermarks), with the ratio to the ceiling;
3. the CPU time of the replicator (the `topo` CLI, the spark-submit JVM and the Python driver)
   per GiB copied, for the whole run and for the copy alone, and the brokers' CPU beside it;
4. continuous replication at a steady `--rate` records/s for `--seconds`: per-record latency,
   the time a consumer of the target sees the copy minus the source record's timestamp (topo
   keeps the source timestamp on the copy; the source topic uses CreateTime, so that is when
   the producer sent it), of the records created after `--warmup` seconds at the same rate
   from the same producer; then the replicator's CPU with nothing to copy.

For each phase it also reports the CPU other processes used and the hypervisor stole, so a
disturbed run shows. kafka-producer-perf-test lives in `org.apache.kafka:kafka-tools`, which
the lab's broker jars lack: the first run resolves it with mvn into topo's jar cache.
`--target-client` and `--spark-conf` try settings (the target's `client:` settings reach the
copy slots' producers). topo copies with its copy loop.
Sizes: MiB and GiB (2^20, 2^30 bytes of record value), as kafka-producer-perf-test counts.
"""

import argparse
import contextlib
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SOURCE, TARGET = "bench-src", "bench-dst"
NAME = "bench-replication"  # the topology's name: its job state is <state dir>/bench-replication
RECORD_SIZE = 1024
PARTITIONS = 6
COPIED, LATENCY, CEILING = "bench", "latency", "ceiling"  # topics
PRODUCER_BATCH = 16384  # the producer default batch.size: the benchmarks' own producers use it
IDLE_SECONDS = 15
PERF_TOOL = "org.apache.kafka.tools.ProducerPerformance"
MIB, GIB = 2**20, 2**30
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
TOOLS_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>dev.topo.bench</groupId>
  <artifactId>kafka-tools</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.kafka</groupId>
      <artifactId>kafka-tools</artifactId>
      <version>{version}</version>
    </dependency>
  </dependencies>
</project>
"""


# -- Kafka's own tools ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Tools:
    java: str
    classpath: str
    kafka_version: str


def kafka_tools() -> Tools:
    """java and a classpath holding kafka-producer-perf-test: the lab broker's jars plus
    `kafka-tools` of the same Kafka version (the broker set lacks it), resolved with mvn once
    into topo's jar cache."""
    from topology.host import maven, paths
    from topology.lab import process

    broker = maven.resolve("kafka-broker")
    version = next(
        match.group(1)
        for jar in broker
        if (match := re.fullmatch(r"kafka-clients-(.+)\.jar", jar.name))
    )
    tools = paths.jars_dir() / f"bench-kafka-tools-{version}"
    if not (tools / maven.COMPLETE_MARKER).exists():
        print(f"resolving org.apache.kafka:kafka-tools:{version} with mvn into {tools}")
        scratch = Path(tempfile.mkdtemp(prefix=".bench-kafka-tools-", dir=paths.jars_dir()))
        (scratch / "pom.xml").write_text(TOOLS_POM.format(version=version))
        done = subprocess.run(
            [
                "mvn",
                "-B",
                "-q",
                "-f",
                str(scratch / "pom.xml"),
                maven.COPY_GOAL,
                f"-DoutputDirectory={scratch / 'lib'}",
                "-DincludeScope=runtime",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            shutil.rmtree(scratch, ignore_errors=True)
            sys.exit(f"mvn could not resolve kafka-tools: {done.stdout[-800:]}")
        (scratch / maven.COMPLETE_MARKER).touch()
        os.replace(scratch, tools)
    classpath = os.pathsep.join([f"{broker[0].parent}/*", f"{tools / 'lib'}/*"])
    return Tools(process.java(), classpath, version)


@dataclass(frozen=True)
class PerfResult:
    records: int
    records_per_second: float
    mib_per_second: float
    latency_p50_ms: int
    latency_p99_ms: int


SUMMARY = re.compile(
    r"(\d+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), [\d.]+ ms avg latency, "
    r"[\d.]+ ms max latency, (\d+) ms 50th, \d+ ms 95th, (\d+) ms 99th"
)


class Producing(threading.Thread):
    """perf_test in the background: one producer JVM for a warm-up and the measurement after
    it, so the measured records are not the first of a JVM just started. `result` once joined."""

    def __init__(self, tools: Tools, bootstrap: str, topic: str, records: int, rate: int) -> None:
        super().__init__(daemon=True)
        self.arguments = (tools, bootstrap, topic, records, rate, PRODUCER_BATCH)
        self.result: PerfResult | None = None
        self.failure: str | None = None

    def run(self) -> None:
        try:
            self.result = perf_test(*self.arguments)
        except SystemExit as failed:  # perf_test's one-line error, for the main thread
            self.failure = str(failed)


def perf_test(
    tools: Tools,
    bootstrap: str,
    topic: str,
    records: int,
    throughput: int,
    batch_size: int,
    record_size: int = RECORD_SIZE,
    payload_file: Path | None = None,
) -> PerfResult:
    """Run kafka-producer-perf-test and parse its final summary line; its values are random
    letters of `record_size` bytes, or lines of `payload_file` picked at random."""
    command = [
        tools.java,
        "-Xms256m",
        "-Xmx512m",
        "-cp",
        tools.classpath,
        PERF_TOOL,
        "--bootstrap-server",
        bootstrap,
        "--topic",
        topic,
        "--num-records",
        str(records),
        *(
            ["--record-size", str(record_size)]
            if payload_file is None
            else ["--payload-file", str(payload_file)]
        ),
        "--throughput",
        str(throughput),
        "--command-property",
        "acks=all",
        "linger.ms=5",
        f"batch.size={batch_size}",
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    summaries = [m for line in done.stdout.splitlines() if (m := SUMMARY.search(line))]
    if done.returncode != 0 or not summaries:
        sys.exit(
            f"kafka-producer-perf-test failed ({done.returncode}): "
            f"{(done.stderr or done.stdout)[-1500:]}"
        )
    last = summaries[-1]
    return PerfResult(
        records=int(last.group(1)),
        records_per_second=float(last.group(2)),
        mib_per_second=float(last.group(3)),
        latency_p50_ms=int(last.group(4)),
        latency_p99_ms=int(last.group(5)),
    )


# -- CPU accounting from /proc --------------------------------------------------------------------


def _stat_fields(pid: int | str) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[-1].split()  # fields from the 3rd (state) on


def session_cpu(session: int) -> dict[str, float]:
    """CPU seconds of every live process in a session, by kind (JVM, Python driver, topo CLI),
    with their reaped children's: each exited child is counted once, in its parent's
    cutime/cstime."""
    ticks: dict[str, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            text = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        command = text[text.index("(") + 1 : text.rindex(")")]
        fields = text.rsplit(")", 1)[-1].split()
        if int(fields[3]) != session:
            continue
        if command == "java":
            kind = "JVM"
        elif command.startswith("python"):
            kind = "topo CLI" if int(entry) == session else "Python driver"
        else:
            kind = command
        ticks[kind] = ticks.get(kind, 0) + sum(int(value) for value in fields[11:15])
    return {kind: count / CLOCK_TICKS for kind, count in ticks.items()}


def process_cpu(pid: int) -> float:
    fields = _stat_fields(pid)
    return 0.0 if fields is None else (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def machine_ticks() -> tuple[int, int]:
    """(busy, total) jiffies over all CPUs since boot; busy counts what ran on this machine
    (user, nice, system, irq, softirq), not idle, iowait or the hypervisor's steal."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:9]]
    user, nice, system, _idle, _iowait, irq, softirq, _steal = values
    return user + nice + system + irq + softirq, sum(values)


def steal_ticks() -> int:
    """Jiffies the hypervisor gave to other guests while this one wanted to run."""
    return int(Path("/proc/stat").read_text().splitlines()[0].split()[8])


class Outside:
    """How much CPU processes other than this benchmark's (itself, its waited-for children,
    the brokers, the replicator's session) used from creation to `cores()`: a run disturbed
    by someone else's work shows it here. The hypervisor's steal is reported beside it."""

    def __init__(self, brokers: list[int], sessions: tuple[int, ...] = ()) -> None:
        self.brokers, self.sessions = brokers, sessions
        self.started, self.busy, self.known = self._now()
        self.steal = steal_ticks()

    def _now(self) -> tuple[float, float, float]:
        own = os.times()
        known = own.user + own.system + own.children_user + own.children_system
        known += sum(process_cpu(pid) for pid in self.brokers)
        known += sum(sum(session_cpu(session).values()) for session in self.sessions)
        return time.time(), machine_ticks()[0] / CLOCK_TICKS, known

    def cores(self) -> tuple[float, float]:
        """(cores used by other processes, cores stolen by the hypervisor) on average."""
        at, busy, known = self._now()
        seconds = max(at - self.started, 1e-6)
        stolen = (steal_ticks() - self.steal) / CLOCK_TICKS / seconds
        return max(0.0, (busy - self.busy) - (known - self.known)) / seconds, stolen


@dataclass(frozen=True)
class CpuSnapshot:
    at: float
    by_kind: dict[str, float]
    brokers: tuple[float, ...]
    machine: tuple[int, int]

    @property
    def replicator(self) -> float:
        return sum(self.by_kind.values())

    def since(self, before: "CpuSnapshot") -> dict[str, float]:
        """CPU seconds by kind between two snapshots."""
        kinds = sorted(set(self.by_kind) | set(before.by_kind))
        return {k: self.by_kind.get(k, 0.0) - before.by_kind.get(k, 0.0) for k in kinds}


# Sessions whose processes count as the replicator's too: a standalone Spark cluster's master
# and workers (each its own session, its executors in it), set by benchmarks/scale_out.py.
ALSO_SESSIONS: tuple[int, ...] = ()


def snapshot(session: int, brokers: list[int]) -> CpuSnapshot:
    by_kind = session_cpu(session)
    for other in ALSO_SESSIONS:
        for kind, cpu in session_cpu(other).items():
            by_kind[f"Spark cluster {kind}"] = by_kind.get(f"Spark cluster {kind}", 0.0) + cpu
    return CpuSnapshot(
        at=time.time(),
        by_kind=by_kind,
        brokers=tuple(process_cpu(pid) for pid in brokers),
        machine=machine_ticks(),
    )


# -- the --once copy ------------------------------------------------------------------------------


class TargetWatch(threading.Thread):
    """Polls the target topic's high watermarks: when the first copy lands and when the last
    does, with a CPU snapshot at each moment."""

    def __init__(
        self,
        config: dict[str, str],
        topic: str,
        expected: int,
        session: "int | Callable[[], int | None]",
        brokers: list[int],
    ) -> None:
        """`session`: the replicator's session id, or how to learn it once it is known."""
        super().__init__(daemon=True)
        self.config, self.topic, self.expected = config, topic, expected
        self.session = session if callable(session) else (lambda: session)
        self.brokers = brokers
        self.first: CpuSnapshot | None = None
        self.last: CpuSnapshot | None = None
        self.done = threading.Event()

    def run(self) -> None:
        from confluent_kafka import Consumer, KafkaException, TopicPartition

        consumer = Consumer({**self.config, "group.id": "bench-watch", "logger": _QUIET})
        try:
            while not self.done.is_set():
                total = 0
                try:
                    topics = consumer.list_topics(self.topic, timeout=5).topics
                    found = topics.get(self.topic)
                    if found is not None and found.error is None:
                        for partition in found.partitions:
                            tp = TopicPartition(self.topic, partition)
                            total += consumer.get_watermark_offsets(tp, 5, cached=False)[1]
                except KafkaException:  # the topic was just created: no leader yet
                    time.sleep(0.1)
                    continue
                session = self.session()
                if session is None:  # not started yet
                    time.sleep(0.05)
                    continue
                if total > 0 and self.first is None:
                    self.first = snapshot(session, self.brokers)
                if total >= self.expected:
                    self.last = snapshot(session, self.brokers)
                    return
                time.sleep(0.05)
        finally:
            consumer.close()


@dataclass
class OnceResult:
    records: int
    seconds: float  # process start to exit
    cpu_seconds: float  # the replicator's whole process tree, whole run
    spark_ready: float | None  # seconds from start to the driver's SparkSession being up
    first_copy: float | None  # seconds from start to the first copy on the target
    copy_seconds: float | None  # first to last copy on the target
    copy_cpu: float | None  # the replicator's CPU seconds from first to last copy
    copy_cpu_by_kind: dict[str, float] = field(default_factory=dict)
    broker_cpu: tuple[float, ...] = ()  # source, target broker CPU seconds over the copy
    machine_busy: float | None = None  # fraction of all CPUs busy over the copy


def copy_once(file: Path, target: dict[str, str], brokers: list[int], records: int) -> OnceResult:
    log = file.parent / "apply-once.log"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.time()
    with log.open("w") as out:
        process = subprocess.Popen(
            [*TOPO, "apply", str(file), "--once", "--auto-approve"],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        watch = TargetWatch(target, f"src.{COPIED}", records, process.pid, brokers)
        watch.start()
        code = process.wait()
    ended = time.time()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    watch.done.set()
    watch.join(timeout=10)
    if code != 0:
        sys.exit(
            f"topo apply --once failed ({code}):\n{log.read_text()[-3000:]}\n"
            f"driver.log ends:\n{driver_log_tail()}"
        )
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    driver = topo_json("status", str(file), "--json").get("driver") or {}
    ready = driver.get("started_at") or None  # when the driver's SparkSession was up
    result = OnceResult(
        records=records,
        seconds=ended - started,
        cpu_seconds=cpu,
        spark_ready=None if ready is None else float(ready) - started,
        first_copy=None if watch.first is None else watch.first.at - started,
        copy_seconds=None,
        copy_cpu=None,
    )
    first, last = watch.first, watch.last
    if first is not None and last is not None:
        result.copy_seconds = last.at - first.at
        result.copy_cpu = last.replicator - first.replicator
        result.copy_cpu_by_kind = last.since(first)
        result.broker_cpu = tuple(b - a for a, b in zip(first.brokers, last.brokers, strict=True))
        busy, total = (b - a for a, b in zip(first.machine, last.machine, strict=True))
        result.machine_busy = busy / total if total else None
    return result


# -- continuous latency ---------------------------------------------------------------------------


def arrived(consumer: Any, timeout: float) -> list[Any]:
    """The messages a consumer has now, as soon as there is one (waiting up to `timeout`).
    consume(n, timeout) alone waits for n messages or the whole timeout, which would add up to
    the timeout to a latency measured at its return; poll() returns with the first."""
    first = consumer.poll(timeout)
    return [] if first is None else [first, *consumer.consume(1000, timeout=0)]


class LatencyProbe(threading.Thread):
    """Reads the target topic from its start; for each copy, now minus its timestamp."""

    def __init__(self, config: dict[str, str], topic: str) -> None:
        super().__init__(daemon=True)
        self.config, self.topic = config, topic
        self.latencies: list[int] = []
        self.created: list[int] = []  # each copy's source CreateTime (ms), beside its latency
        self.done = threading.Event()
        self.ready = threading.Event()

    def run(self) -> None:
        from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

        consumer = Consumer(
            {
                **self.config,
                "group.id": "bench-latency",
                "logger": _QUIET,
                "enable.auto.commit": False,
            }
        )
        try:
            partitions = consumer.list_topics(self.topic, timeout=30).topics[self.topic].partitions
            consumer.assign([TopicPartition(self.topic, p, OFFSET_BEGINNING) for p in partitions])
            self.ready.set()
            while not self.done.is_set():
                messages = arrived(consumer, 0.05)
                now_ms = time.time() * 1000
                for message in messages:
                    if message.error() is None:
                        created = message.timestamp()[1]
                        self.created.append(created)
                        self.latencies.append(round(now_ms - created))
        finally:
            consumer.close()

    def since(self, created_ms: float, start: int = 0) -> list[int]:
        """The latencies of the copies (seen from the `start`th) whose source records were
        created at or after `created_ms`."""
        return [
            latency
            for created, latency in zip(self.created[start:], self.latencies[start:], strict=False)
            if created >= created_ms
        ]

    def wait_for(self, count: int, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while len(self.latencies) < count and time.monotonic() < deadline:
            time.sleep(0.2)
        return len(self.latencies) >= count


@dataclass
class LatencyResult:
    rate: int
    produced: int
    seen: int
    p50: float
    p90: float
    p99: float
    max: int
    min: int
    producer: PerfResult
    replicator_cores: float  # CPU seconds per second of the replicator over the measurement
    halves: tuple[tuple[float, float], tuple[float, float]]  # (p50, p99), each half of the run
    cores_by_kind: dict[str, float]
    outside: tuple[float, float]  # cores used by other processes, stolen by the hypervisor
    idle_cores: float  # the replicator's CPU with nothing to copy
    heartbeat: dict[str, Any] | None = None  # what `topo status` reports
    timestamps_kept: bool | None = None
    lag_after: Any = None
    notes: list[str] = field(default_factory=list)


def continuous_latency(
    file: Path,
    tools: Tools,
    source: dict[str, str],
    target: dict[str, str],
    rate: int,
    seconds: int,
    warmup: int,
    brokers: list[int],
) -> LatencyResult:
    from topology.host import jobstate

    applied = subprocess.run(
        [*TOPO, "apply", str(file), "--auto-approve"], capture_output=True, text=True, check=False
    )
    if applied.returncode != 0:
        sys.exit(
            f"topo apply failed:\n{(applied.stdout + applied.stderr)[-3000:]}\n"
            f"driver.log ends:\n{driver_log_tail()}"
        )
    driver = jobstate.running_driver(NAME)
    assert driver is not None
    probe = LatencyProbe(target, f"src.{LATENCY}")
    probe.start()
    probe.ready.wait(60)
    bootstrap = source["bootstrap.servers"]
    # The copy's first records (a second of them, waited for); then one producer JVM for the
    # warm-up and the measurement, of the records created after the warm-up (a JVM just started
    # is not in the measured window).
    perf_test(tools, bootstrap, LATENCY, rate, rate, PRODUCER_BATCH)
    if not probe.wait_for(rate, timeout=180):
        sys.exit(
            f"the first records were not copied within 180 s (seen "
            f"{len(probe.latencies)}); driver.log ends:\n{driver_log_tail()}"
        )
    mark = len(probe.latencies)
    producing = Producing(tools, bootstrap, LATENCY, rate * (warmup + seconds), rate)
    producing.start()
    time.sleep(warmup)
    measured_from = time.time() * 1000
    before = snapshot(driver.launcher_pid, [])
    meter = Outside(brokers, (driver.launcher_pid,))
    producing.join()
    if producing.failure or producing.result is None:
        sys.exit(producing.failure or "kafka-producer-perf-test gave no summary")
    producer = producing.result
    complete = probe.wait_for(mark + rate * (warmup + seconds), timeout=120)
    after = snapshot(driver.launcher_pid, [])
    disturbed = meter.cores()
    status = topo_json("status", str(file), "--json")
    probe.done.set()
    probe.join(timeout=10)
    # What the running replicator costs with nothing to copy (heartbeats only).
    idle_from = snapshot(driver.launcher_pid, [])
    time.sleep(IDLE_SECONDS)
    idle_to = snapshot(driver.launcher_pid, [])
    seen = probe.since(measured_from, mark)  # about rate * seconds, the JVM's start-up aside
    produced = rate * seconds  # the measured window's nominal records
    measured = sorted(seen)
    if not measured:
        sys.exit("no copies were seen on the target")
    half = len(seen) // 2
    flow = (status.get("flows") or [{}])[0]
    result = LatencyResult(
        rate=rate,
        produced=produced,
        seen=len(measured),
        p50=statistics.median(measured),
        p90=_percentile(measured, 0.90),
        p99=_percentile(measured, 0.99),
        max=measured[-1],
        min=measured[0],
        producer=producer,
        replicator_cores=(after.replicator - before.replicator) / (after.at - before.at),
        halves=(_spread(seen[:half] or seen), _spread(seen[half:])),
        cores_by_kind={k: v / (after.at - before.at) for k, v in after.since(before).items()},
        outside=disturbed,
        idle_cores=(idle_to.replicator - idle_from.replicator) / (idle_to.at - idle_from.at),
        heartbeat=flow.get("latency_ms"),
        timestamps_kept=timestamps_kept(source, target),
        lag_after=flow.get("lag"),
    )
    if not complete:
        result.notes.append(
            f"only {len(probe.latencies) - mark} of {rate * (warmup + seconds)} "
            "copies seen within 120 s"
        )
    return result


def _spread(latencies: list[int]) -> tuple[float, float]:
    ordered = sorted(latencies)
    return statistics.median(ordered), _percentile(ordered, 0.99)


def _percentile(ordered: list[int], fraction: float) -> float:
    return float(ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))])


def timestamps_kept(source: dict[str, str], target: dict[str, str]) -> bool:
    """Whether each latency-topic partition's first copy has its source record's timestamp
    (both topics started empty, so offset 0 is the same record on both)."""
    return _first_timestamps(source, LATENCY) == _first_timestamps(target, f"src.{LATENCY}")


def _first_timestamps(config: dict[str, str], topic: str) -> dict[int, int]:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({**config, "group.id": "bench-check", "logger": _QUIET})
    try:
        consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
        found: dict[int, int] = {}
        deadline = time.monotonic() + 30
        while len(found) < PARTITIONS and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                partition = message.partition()
                assert partition is not None
                found.setdefault(partition, message.timestamp()[1])
        return found
    finally:
        consumer.close()


# -- topo and the clusters ------------------------------------------------------------------------

TOPO = [sys.executable, "-c", "from topology.cli import main; main()"]
_QUIET: Any = None  # a logger for librdkafka's lines (set by private_run)


def private_run(prefix: str, lab: bool = True) -> Path:
    """A benchmark's own folder (returned): its lab clusters (unless `lab` is False: clusters
    the user named) and its job state inside it, so the user's are untouched; inherited files
    kept private, and the benchmark's own clients' librdkafka lines silenced."""
    global _QUIET
    import logging

    keep_inherited_files_private()
    root = Path(tempfile.mkdtemp(prefix=prefix))
    if lab:
        os.environ["TOPO_LAB_DIR"] = str(root / "lab")
    os.environ["TOPO_STATE_DIR"] = str(root / "state")
    _QUIET = logging.getLogger("bench.librdkafka")
    _QUIET.addHandler(logging.NullHandler())
    _QUIET.propagate = False
    return root


def topo_json(*args: str) -> dict[str, Any]:
    done = subprocess.run([*TOPO, *args], capture_output=True, text=True, check=False)
    try:
        data = json.loads(done.stdout)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def driver_log_tail(lines: int = 40) -> str:
    from topology.host import jobstate

    try:
        text = (jobstate.folder(NAME) / jobstate.LOG).read_text(errors="replace")
    except OSError:
        return "(no driver.log)"
    return "\n".join(text.splitlines()[-lines:])


def write_topology(
    folder: Path,
    source: str,
    target: str,
    target_client: dict[str, str],
    spark_conf: dict[str, str],
) -> Path:
    """The benchmark's topology; `target_client` goes to the target cluster's `client:`
    settings (which reach the copy slots' producers), `spark_conf` to `engine.spark_conf`."""
    file = folder / "replication.yaml"
    file.write_text(
        f"version: 1\nname: {NAME}\n"
        + (f"engine: {{spark_conf: {json.dumps(spark_conf)}}}\n" if spark_conf else "")
        + "clusters:\n"
        f'  src: {{bootstrap: "{source}"}}\n'
        f'  dst: {{bootstrap: "{target}", client: {json.dumps(target_client)}}}\n'
        "defaults:\n  replication_factor: 1\n"
        "flows:\n  - mirror: {from: src, to: dst}\n"
        f'    topics: {{include: ["{COPIED}", "{LATENCY}"]}}\n'
    )
    return file


def machine() -> dict[str, str]:
    import confluent_kafka
    import pyspark

    model = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor() or "?",
    )
    memory = next(
        int(line.split()[1]) * 1024
        for line in Path("/proc/meminfo").read_text().splitlines()
        if line.startswith("MemTotal:")
    )
    from topology.lab import process

    java = subprocess.run([process.java(), "-version"], capture_output=True, text=True).stderr
    return {
        "cpus": f"{os.cpu_count()} ({model})",
        "memory": f"{memory / GIB:.1f} GiB",
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "pyspark": pyspark.__version__,
        "confluent-kafka": str(confluent_kafka.__version__),  # the stubs say tuple
        "java": java.splitlines()[0] if java else "?",
    }


# -- report ---------------------------------------------------------------------------------------


def report(
    host: dict[str, str],
    kafka: str,
    ceilings: dict[int, PerfResult],
    load: PerfResult,
    once: OnceResult,
    latency: LatencyResult | None,
    outside: dict[str, tuple[float, float]],
) -> None:
    ceiling = max(ceilings.values(), key=lambda r: r.mib_per_second).mib_per_second
    gib = once.records * RECORD_SIZE / GIB
    mib = once.records * RECORD_SIZE / MIB
    rows: list[tuple[str, str]] = []

    def rate(seconds: float) -> str:
        speed = mib / seconds
        return (
            f"{speed:.1f} MiB/s, {once.records / seconds:,.0f} rec/s, "
            f"{speed / ceiling:.2f} of the ceiling"
        )

    for batch, result in sorted(ceilings.items()):
        speed = f"{result.mib_per_second:.1f} MiB/s, {result.records_per_second:,.0f} rec/s"
        rows.append((f"ceiling: perf-test into the target, batch.size={batch}", speed))
    speed = f"{load.mib_per_second:.1f} MiB/s, {load.records_per_second:,.0f} rec/s"
    rows.append((f"load: perf-test into the source, batch.size={PRODUCER_BATCH}", speed))
    rows.append((f"`topo apply --once`, end to end ({once.seconds:.1f} s)", rate(once.seconds)))
    if once.copy_seconds:
        copy = f"`--once` copy alone, first to last record ({once.copy_seconds:.1f} s)"
        rows.append((copy, rate(once.copy_seconds)))
    startup = f"{_seconds(once.spark_ready)} / {_seconds(once.first_copy)}"
    rows.append(("startup: Spark session up / first copy on the target", startup))
    cpu = f"{once.cpu_seconds:.1f} s, {once.cpu_seconds / gib:.1f} CPU s/GiB"
    rows.append(("replicator CPU, whole `--once` run", cpu))
    if once.copy_cpu is not None and once.copy_seconds:
        cores = once.copy_cpu / once.copy_seconds
        cpu = f"{once.copy_cpu:.1f} s, {once.copy_cpu / gib:.1f} CPU s/GiB, {cores:.2f} cores"
        rows.append(("replicator CPU, copy alone", cpu))
        seconds = once.copy_seconds
        split = ", ".join(
            f"{k} {v / seconds:.2f}" for k, v in once.copy_cpu_by_kind.items() if v >= 0.005
        )
        rows.append(("replicator over the copy, by process (cores)", split))
        used = [f"{broker / seconds:.2f}" for broker in once.broker_cpu]
        rows.append(("brokers over the copy: source / target (cores)", " / ".join(used)))
        if once.machine_busy is not None:
            rows.append(("whole machine busy over the copy", f"{once.machine_busy:.0%}"))
    if latency is not None:
        measured = f"{latency.rate:,} rec/s for {latency.produced // latency.rate} s"
        spread = (
            f"{latency.p50:.0f} / {latency.p90:.0f} / {latency.p99:.0f} / "
            f"{latency.max} ms ({latency.seen:,} copies)"
        )
        rows.append((f"continuous, {measured}: latency p50 / p90 / p99 / max", spread))
        (p50a, p99a), (p50b, p99b) = latency.halves
        halves = f"{p50a:.0f} / {p99a:.0f} ms, then {p50b:.0f} / {p99b:.0f} ms"
        rows.append(("continuous: latency p50 / p99, first half then second half", halves))
        rows.append(("continuous: lag when done (`topo status`)", str(latency.lag_after)))
        split = ", ".join(f"{k} {v:.2f}" for k, v in latency.cores_by_kind.items() if v >= 0.005)
        using = f"{latency.replicator_cores:.2f} cores ({split})"
        rows.append(("continuous: replicator CPU", using))
        idle = f"{latency.idle_cores:.2f} cores"
        rows.append((f"continuous: replicator CPU with nothing to copy ({IDLE_SECONDS} s)", idle))
        acks = f"{latency.producer.latency_p50_ms} / {latency.producer.latency_p99_ms} ms"
        rows.append(
            ("continuous: the source producer's own ack latency p50 / p99 (warm-up too)", acks)
        )
        if latency.heartbeat:
            beats = f"{latency.heartbeat.get('p50')} / {latency.heartbeat.get('max')} ms"
            rows.append(("continuous: `topo status` heartbeat latency p50 / max", beats))
        rows.append(("copies keep the source timestamp", str(latency.timestamps_kept)))
    others = ", ".join(f"{phase} {a:.2f} / {b:.2f}" for phase, (a, b) in outside.items())
    rows.append(("other processes / hypervisor steal during each phase (cores)", others))
    print(
        f"\n## Replication benchmark: {once.records:,} records of {RECORD_SIZE} B, "
        f"{PARTITIONS} partitions\n"
    )
    print("| measure | result |\n|---|---|")
    for name, value in rows:
        print(f"| {name} | {value} |")
    for note in latency.notes if latency else []:
        print(f"\nNote: {note}")
    print("\nMachine: " + "; ".join(f"{k} {v}" for k, v in host.items()) + f"; Kafka {kafka}")


def _seconds(value: float | None, digits: int = 1) -> str:
    return "?" if value is None else f"{value:.{digits}f} s"


def _pairs(items: list[str]) -> dict[str, str]:
    return dict(item.split("=", 1) for item in items)


def keep_inherited_files_private() -> None:
    """Mark every file descriptor this process inherited (beyond stdio) close-on-exec.

    `topo lab` starts brokers with posix_spawn, which passes them every inheritable descriptor:
    run under `flock LOCK`, a broker would hold the lock for as long as it lives.
    """
    for entry in os.listdir("/proc/self/fd"):
        fd = int(entry)
        if fd > 2:
            with contextlib.suppress(OSError):
                os.set_inheritable(fd, False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--rate", type=int, default=5000, help="records/s, continuous phase")
    parser.add_argument("--seconds", type=int, default=60, help="length of the continuous phase")
    parser.add_argument(
        "--target-client",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Kafka client setting of the target cluster (the copy slots' producers)",
    )
    parser.add_argument(
        "--spark-conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Spark setting (engine.spark_conf)",
    )
    parser.add_argument("--warmup", type=int, default=10, help="seconds before measuring")
    parser.add_argument("--no-latency", action="store_true", help="skip the continuous phase")
    options = parser.parse_args()
    root = private_run("topo-bench-replication-")
    from topology.kafka.records import create_topic
    from topology.lab import manager

    folder = root / "work"
    folder.mkdir()
    tools = kafka_tools()
    host = machine()
    print(f"Starting {SOURCE} and {TARGET} in {root} ...", flush=True)
    started_replication = False
    try:
        labs = manager.up([manager.UpRequest(SOURCE), manager.UpRequest(TARGET)])
        brokers = [status.pid for status in labs if status.pid is not None]
        source, target = manager.admin_config(SOURCE), manager.admin_config(TARGET)
        for config, topic in ((source, COPIED), (source, LATENCY), (target, CEILING)):
            create_topic(config, topic, PARTITIONS)
        client, spark_conf = _pairs(options.target_client), _pairs(options.spark_conf)
        bootstraps = source["bootstrap.servers"], target["bootstrap.servers"]
        file = write_topology(folder, *bootstraps, client, spark_conf)
        ceilings = {}
        outside: dict[str, tuple[float, float]] = {}
        for batch in (PRODUCER_BATCH, 8 * PRODUCER_BATCH):
            print(
                f"Ceiling: {options.records:,} records into {TARGET}, batch.size={batch} ...",
                flush=True,
            )
            meter = Outside(brokers)
            ceilings[batch] = perf_test(
                tools, target["bootstrap.servers"], CEILING, options.records, -1, batch
            )
            outside[f"ceiling {batch}"] = meter.cores()
            print(f"  {ceilings[batch]}", flush=True)
        print(f"Loading {options.records:,} records into {SOURCE} ...", flush=True)
        load = perf_test(
            tools, source["bootstrap.servers"], COPIED, options.records, -1, PRODUCER_BATCH
        )
        print(f"  {load}", flush=True)
        print("Timing topo apply --once ...", flush=True)
        meter = Outside(brokers)
        once = copy_once(file, target, brokers, options.records)
        outside["--once"] = meter.cores()
        print(f"  {once}", flush=True)
        latency = None
        if not options.no_latency:
            print(
                f"Continuous replication at {options.rate:,} records/s for {options.seconds} s ...",
                flush=True,
            )
            started_replication = True
            latency = continuous_latency(
                file, tools, source, target, options.rate, options.seconds, options.warmup, brokers
            )
            outside["continuous"] = latency.outside
        report(host, tools.kafka_version, ceilings, load, once, latency, outside)
        if client or spark_conf:
            print(
                f"\nTuned: target client {client or 'defaults'}; spark_conf "
                f"{spark_conf or 'defaults'}"
            )
    finally:
        if started_replication:
            subprocess.run(
                [*TOPO, "stop", str(folder / "replication.yaml")], check=False, capture_output=True
            )
        manager.down([], purge=True)
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
