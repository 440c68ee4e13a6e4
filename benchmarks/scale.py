"""topo beside MirrorMaker 2 at scale: many small topics copied from nothing, then idle.

Run by hand, never from the test suite, on a machine where nothing else heavy runs (after
`make setup`; the first run resolves MM2's jars with mvn):

    .venv/bin/python benchmarks/scale.py [--pairs 2] [--topics 300] [--partitions 2]
        [--records 50] [--settle 60] [--idle 30] [--later 300] [--json results.json]
        [--topo-first] [--mm2-intervals] [--broker-heap 2g]

On the two lab clusters `bench-src` and `bench-dst` (started in a private lab folder, as
benchmarks/mm2.py does; the replicators are started the same way: MM2 in dedicated mode from
`topo export mm2` of the same topology, with refresh.topics.interval.seconds=5 and tasks.max as
many as the machine's cores; topo with `topo apply`, the copy loop's default slots), each
replicator in turn (ABBA over the pairs), on topics of its own:

- `--topics` topics of `--partitions` partitions, each holding `--records` records of 1 KiB,
  written before the replicator starts: seconds from its start until every record is on the
  target (the sum of the copies' high watermarks);
- then, after `--settle` seconds (a minute by default), its cores over `--idle` seconds with
  nothing to copy, and its resident memory (every process of its session);
- and its cores over `--idle` seconds again from `--later` seconds after the copy (five minutes
  by default; 0 leaves it out): a JVM still compiles the code its idle work runs for minutes
  (topo's C2 compiler took 0.013 cores a minute after the copy and 0.0045 five minutes after),
  so the first figure holds some of the start and the second is nearer what idle costs for
  hours;
- then a topic created on the source: seconds until its first record is on the target.

topo's default intervals are shorter than MM2's (topics every 2 s, checkpoints and group offsets
every 10 s, configs and ACLs every 10 s backing off to 600: docs/topology.md); with
`--mm2-intervals` the topology sets MM2's (topics every 5 s, checkpoints and group offsets every
60 s, configs and ACLs every 600 s) and its export gives MM2 the same, so both do the same
periodic work.

What it can show on one small machine: the periodic work each replicator does for a topology
of that size while idle (listing topics, reading ends, offsets and heartbeats), and how long
each takes to pick up hundreds of topics at once. Not what a cluster of many machines does.
"""

import argparse
import json
import os
import shutil
import signal
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import mm2  # benchmarks/mm2.py: the two replicators, started as their users start them
import replication as bench  # benchmarks/replication.py: CPU probes, the lab's quiet logger

MM2, TOPO = mm2.MM2, mm2.TOPO
SETTLE_SECONDS = 60  # the first rounds done; the JIT compilers still at work (see --later)
LATER_SECONDS = 300  # the JIT compilers nearly done with the idle work's code
COPY_TIMEOUT = 900
# MM2's own defaults but the topic refresh, which both replicators get at 5 s (as MM2 is started
# here): with --mm2-intervals, topo's driver does its chores as often as MM2 does.
MM2_INTERVALS = {
    "refresh.topics.interval.seconds": 5,
    "sync.topic.configs.interval.seconds": 600,
    "sync.topic.acls.interval.seconds": 600,
    "emit.checkpoints.interval.seconds": 60,
    "sync.group.offsets.interval.seconds": 60,
}


@dataclass
class Run:
    replicator: str
    topics: int
    partitions: int
    records: int  # in all
    all_copied_seconds: float | None  # start -> every record on the target
    idle_cores: float
    idle_later_cores: float | None  # from LATER_SECONDS after the copy
    resident_mib: float
    new_topic_seconds: float | None
    outside: tuple[float, float]  # cores others used, cores stolen, over the run


def fill(topics: list[str], partitions: int, records: int) -> None:
    """Each topic made with `partitions` partitions and `records` records of 1 KiB, spread
    over its partitions."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

    from topology.lab import manager

    source = manager.admin_config(mm2.SOURCE)
    admin = AdminClient({**source, "logger": bench._QUIET})
    made = admin.create_topics([NewTopic(t, partitions, 1) for t in topics], request_timeout=60)
    for future in made.values():
        future.result(timeout=60)
    producer = Producer({**source, "linger.ms": 20, "logger": bench._QUIET})
    value = b"x" * 1024
    for topic in topics:
        for number in range(records):
            producer.produce(topic, value, key=str(number).encode(), partition=number % partitions)
            producer.poll(0)
    if producer.flush(60) != 0:
        sys.exit("the source did not take every record within 60 s")


def drop(config: dict[str, str], topics: list[str]) -> None:
    """The run's topics deleted (those that exist), waited for."""
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({**config, "logger": bench._QUIET})
    existing = set(admin.list_topics(timeout=30).topics)
    doomed = [t for t in topics if t in existing]
    if doomed:
        for future in admin.delete_topics(doomed, request_timeout=120).values():
            future.result(timeout=120)


def copied(admin: Any, remotes: list[str], partitions: int) -> int:
    """The records on the target's copies: the sum of their high watermarks (0 for a copy that
    does not exist yet)."""
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import OffsetSpec  # type: ignore[attr-defined]

    existing = admin.list_topics(timeout=10).topics
    asked = {
        TopicPartition(topic, partition): OffsetSpec.latest()  # type: ignore[no-untyped-call]
        for topic in remotes
        if topic in existing
        for partition in range(partitions)
    }
    if not asked:
        return 0
    total = 0
    for future in admin.list_offsets(asked, request_timeout=30).values():
        try:
            total += future.result().offset
        except Exception:  # a copy's partition not ready yet
            continue
    return total


def resident_mib(session: int) -> float:
    """The resident memory of every process in the session, in MiB."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        fields = bench._stat_fields(entry)
        if fields is None or int(fields[3]) != session:
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1])
    return total / 1024


def one(
    who: str,
    folder: Path,
    run: str,
    topics: int,
    partitions: int,
    records: int,
    idle: int,
    settle: float = SETTLE_SECONDS,
    later: float = LATER_SECONDS,
) -> Run:
    from confluent_kafka.admin import AdminClient

    from topology.lab import manager

    names = [f"{run}-t{i:04d}" for i in range(topics)]
    new = f"{run}-new"
    print(f"{who}: {topics} topics x {partitions} partitions, {records} records each ...")
    fill(names, partitions, records)
    file = mm2.topology_file(folder, run, [*names, new], False)
    admin = AdminClient({**manager.admin_config(mm2.TARGET), "logger": bench._QUIET})
    remotes = [f"src.{name}" for name in names]
    expected = topics * records
    meter = bench.Outside([])
    with mm2.running(mm2.start(who, file)) as life:
        all_copied = None
        deadline = time.monotonic() + COPY_TIMEOUT
        while time.monotonic() < deadline:
            if copied(admin, remotes, partitions) >= expected:
                all_copied = time.time() - life.started_at
                break
            time.sleep(1)
        print(f"  every record copied after {all_copied} s", flush=True)
        time.sleep(settle)
        session = life.session()
        assert session is not None
        cores = idle_cores(session, idle)
        memory = resident_mib(session)
        print(f"  idle {cores:.3f} cores, {memory:.0f} MiB resident", flush=True)
        cores_later = None
        if later > 0:
            time.sleep(max(0.0, later - settle - idle))
            cores_later = idle_cores(session, idle)
            print(f"  idle {cores_later:.3f} cores from {later:.0f} s after the copy", flush=True)
        new_topic = mm2.new_topic_latency(new, mm2.NEW_TOPIC_TIMEOUT)
        print(f"  a new topic's first copy after {new_topic} s", flush=True)
        meter.sessions = (session,)
        outside = meter.cores()
    # The next run starts on clusters that hold only its own topics: a one-broker lab of
    # 12,000 partitions runs out of open files.
    drop(manager.admin_config(mm2.SOURCE), [*names, new])
    drop(manager.admin_config(mm2.TARGET), [*remotes, f"src.{new}"])
    figures = (all_copied, cores, cores_later, memory, new_topic, outside)
    return Run(who, topics, partitions, expected, *figures)


def idle_cores(session: int, seconds: int) -> float:
    """The cores every process of the session used over the next `seconds`."""
    before = bench.snapshot(session, [])
    time.sleep(seconds)
    after = bench.snapshot(session, [])
    return (after.replicator - before.replicator) / (after.at - before.at)


def table(runs: list[Run]) -> str:
    rows = [
        ("every record copied, s", "all_copied_seconds"),
        ("idle, cores", "idle_cores"),
        ("idle later, cores", "idle_later_cores"),
        ("resident, MiB", "resident_mib"),
        ("a new topic's first copy, s", "new_topic_seconds"),
    ]
    lines = ["| measure | MM2 | topo | topo / MM2 |", "|---|---|---|---|"]
    for label, attribute in rows:
        values = {
            who: [getattr(r, attribute) for r in runs if r.replicator == who] for who in (MM2, TOPO)
        }
        ratios = [
            t / m
            for m, t in zip(values[MM2], values[TOPO], strict=False)
            if m is not None and t is not None and m > 0
        ]
        shown = {
            who: mm2.spread([v for v in known if v is not None]) for who, known in values.items()
        }
        ratio = mm2.spread(ratios, ratio=True)
        lines.append(f"| {label} | {shown[MM2]} | {shown[TOPO]} | {ratio} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=2)
    parser.add_argument("--topics", type=int, default=300)
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--records", type=int, default=50, help="per topic, 1 KiB each")
    parser.add_argument("--settle", type=float, default=SETTLE_SECONDS, help="seconds before idle")
    parser.add_argument("--idle", type=int, default=30, help="seconds measured idle")
    parser.add_argument(
        "--later", type=float, default=LATER_SECONDS, help="seconds after the copy, idle again"
    )
    parser.add_argument("--json", type=Path, help="write every measurement here")
    parser.add_argument("--topo-first", action="store_true", help="the first pair starts with topo")
    parser.add_argument(
        "--broker-heap",
        help="the lab brokers' largest heap (-Xmx), e.g. 2g: the lab's 512m is sized for tests, "
        "and a broker that runs out exits (at 6,000 partitions, one did)",
    )
    parser.add_argument(
        "--mm2-intervals",
        action="store_true",
        help="both replicators at MM2's default intervals (topo's engine.intervals, exported)",
    )
    options = parser.parse_args()
    if options.mm2_intervals:
        mm2.ENGINE["intervals"] = (
            "{" + ", ".join(f"{k}: {v}" for k, v in MM2_INTERVALS.items()) + "}"
        )
    signal.signal(signal.SIGTERM, mm2._interrupted)
    root = bench.private_run("topo-bench-scale-")
    from topology.host import maven
    from topology.lab import manager, mirrormaker, process

    if options.broker_heap:  # both replicators' clusters alike
        process.HEAP_OPTS = ["-Xms128m", f"-Xmx{options.broker_heap}"]

    folder = root / "work"
    folder.mkdir()
    maven.resolve(mirrormaker.ARTIFACTS, report=print)
    host = bench.machine()
    runs: list[Run] = []
    tag = f"s{os.getpid()}"
    try:
        print(f"Starting {mm2.SOURCE} and {mm2.TARGET} in {root} ...", flush=True)
        manager.up([manager.UpRequest(mm2.SOURCE), manager.UpRequest(mm2.TARGET)])
        for number in range(options.pairs):
            order = (MM2, TOPO) if (number + options.topo_first) % 2 == 0 else (TOPO, MM2)
            for who in order:
                runs.append(
                    one(
                        who,
                        folder,
                        f"{tag}p{number}{who.lower()}",
                        options.topics,
                        options.partitions,
                        options.records,
                        options.idle,
                        options.settle,
                        options.later,
                    )
                )
        print()
        print(f"Machine: {host}")
        print(table(runs))
        if options.json:
            options.json.write_text(
                json.dumps(
                    {
                        "machine": host,
                        "settle_seconds": options.settle,
                        "later_seconds": options.later,
                        "mm2_intervals": options.mm2_intervals,
                        "runs": [asdict(r) for r in runs],
                    },
                    indent=2,
                )
            )
    except BaseException:
        _keep_logs(mm2.SOURCE, mm2.TARGET)  # the lab's folder goes below: why a broker stopped
        raise
    finally:
        manager.down([], purge=True)
        shutil.rmtree(root, ignore_errors=True)


def _keep_logs(*clusters: str) -> None:
    """Each lab cluster's broker logs, copied to the current folder before the lab is purged."""
    from topology.lab import state

    for name in clusters:
        for log in (state.server_log(name), state.console_log(name)):
            if log.exists():
                kept = Path(f"scale-{name}-{log.name}")
                shutil.copyfile(log, kept)
                print(f"kept {kept}", flush=True)


if __name__ == "__main__":
    main()
