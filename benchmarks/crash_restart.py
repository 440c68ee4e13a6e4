"""A crash repaired: seconds from kill -9 of topo's driver to its successor's first copy.

Run by hand, never from the test suite, on a machine where nothing else heavy runs:

    .venv/bin/python benchmarks/crash_restart.py [--kills 10] [--rate 200] [--between 10]
        [--exactly-once] [--json results.json]

On the lab clusters `bench-src` and `bench-dst` (a private lab folder, as benchmarks/mm2.py),
topo copies one topic of 2 partitions (`topo apply`, which starts `topo run`, as users start
it) while a producer writes `--rate` records a second into it. `--kills` times, `--between`
seconds after the driver copies again: kill -9 of the driver (spark-submit's process group
and the driver program, not `topo run`), then the target's ends are read every 50 ms; the
seconds from the kill until they move past where they stood 0.3 s after it (what the dead
driver had in flight has landed by then) are the time to the successor's first copy. With
`--exactly-once`, the ends read are the last stable offsets (committed transactions only).
At the end every record on the source is checked to be on the target (none missing; under
exactly-once none twice).
"""

import argparse
import contextlib
import json
import os
import shutil
import signal
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

import mm2  # benchmarks/mm2.py: topo started as its users start it
import replication as bench  # benchmarks/replication.py: the lab's quiet logger

PARTITIONS = 2
RESTART_TIMEOUT = 120.0


def ends(admin: Any, topic: str, committed: bool) -> int | None:
    """The sum of the topic's end offsets on the target (last stable offsets if
    `committed`), or None while it cannot be read."""
    from confluent_kafka import IsolationLevel, KafkaException, TopicPartition
    from confluent_kafka.admin import OffsetSpec

    level = IsolationLevel.READ_COMMITTED if committed else IsolationLevel.READ_UNCOMMITTED
    asked = {TopicPartition(topic, p): OffsetSpec.latest() for p in range(PARTITIONS)}
    try:
        futures = admin.list_offsets(asked, isolation_level=level, request_timeout=2)
        return sum(f.result(3).offset for f in futures.values())
    except KafkaException:
        return None


def produce(topic: str, rate: int, done: threading.Event, written: list[int]) -> None:
    """`rate` records a second (keys `r-<i>`) into `topic` until `done`."""
    from confluent_kafka import Producer

    from topology.lab import manager

    producer = Producer({**manager.admin_config(mm2.SOURCE), "linger.ms": 5})
    count, started = 0, time.monotonic()
    while not done.is_set():
        due = int((time.monotonic() - started) * rate)
        for i in range(count, due):
            producer.produce(topic, key=f"r-{i}".encode(), value=b"v" * 100, partition=i % 2)
        count = max(count, due)
        producer.poll(0)
        time.sleep(0.01)
    producer.flush(30)
    written.append(count)


def kill(owner: str) -> float:
    """kill -9 of the running driver (not of `topo run`); the time it was sent."""
    from topology.host import jobstate

    driver = jobstate.running_driver(owner)
    while driver is None or driver.driver_pid is None or driver.submit_pid is None:
        time.sleep(0.1)
        driver = jobstate.running_driver(owner)
    at = time.monotonic()
    os.killpg(driver.submit_pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        os.kill(driver.driver_pid, signal.SIGKILL)
    return at


def first_copy_after(admin: Any, topic: str, killed_at: float, committed: bool) -> float | None:
    """Seconds from the kill to the first copy past where the target stood 0.3 s after it."""
    time.sleep(max(0.0, killed_at + 0.3 - time.monotonic()))
    stood = None
    while time.monotonic() - killed_at < RESTART_TIMEOUT:
        now = ends(admin, topic, committed)
        if stood is None:
            stood = now  # None while the target does not answer: asked again
        elif now is not None and now > stood:
            return time.monotonic() - killed_at
        time.sleep(0.05)
    return None


def check(topic: str, remote: str, exactly_once: bool) -> str:
    """Every source record on the target (by key); under exactly-once, each once."""
    from topology.kafka import records
    from topology.lab import manager

    source = [r.key for r in records.read_topic(manager.admin_config(mm2.SOURCE), topic)]
    copied = [r.key for r in records.read_topic(manager.admin_config(mm2.TARGET), remote)]
    missing = len(set(source) - set(copied))
    twice = len(copied) - len(set(copied))
    if missing or (exactly_once and twice):
        return f"FAILED: {missing} missing, {twice} copied twice"
    return f"every one of {len(source)} records copied ({twice} twice)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--rate", type=int, default=200, help="records a second")
    parser.add_argument("--between", type=float, default=10.0, help="seconds copying per kill")
    parser.add_argument("--exactly-once", action="store_true")
    parser.add_argument("--json", type=Path)
    options = parser.parse_args()
    from confluent_kafka.admin import AdminClient, NewTopic

    from topology.lab import manager

    root = bench.private_run("topo-bench-crash-")
    folder = root / "work"
    folder.mkdir()
    name = f"c{os.getpid()}"
    topic, remote = f"{name}-stream", f"src.{name}-stream"
    seconds: list[float | None] = []
    try:
        manager.up([manager.UpRequest(mm2.SOURCE), manager.UpRequest(mm2.TARGET)])
        source = AdminClient({**manager.admin_config(mm2.SOURCE), "logger": bench._QUIET})
        source.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(30)
        file = mm2.topology_file(folder, name, [topic], options.exactly_once)
        target = AdminClient({**manager.admin_config(mm2.TARGET), "logger": bench._QUIET})
        done, written = threading.Event(), []
        producer = threading.Thread(target=produce, args=(topic, options.rate, done, written))
        producer.start()
        try:
            with mm2.running(mm2.start(mm2.TOPO, file)):
                for number in range(1, options.kills + 1):
                    time.sleep(options.between)
                    killed_at = kill(name)
                    took = first_copy_after(target, remote, killed_at, options.exactly_once)
                    seconds.append(took)
                    shown = "no copy" if took is None else f"{took:.1f} s"
                    print(f"kill {number}: first copy after {shown}", flush=True)
                time.sleep(options.between)
                done.set()
                producer.join()
                time.sleep(options.between)  # the last records copied
                print(check(topic, remote, options.exactly_once), flush=True)
        finally:
            done.set()
        known = sorted(s for s in seconds if s is not None)
        if known:
            print(
                f"kill -9 to the first new copy, {len(known)} of {len(seconds)} kills: median "
                f"{statistics.median(known):.1f} s, {known[0]:.1f} to {known[-1]:.1f} s",
                flush=True,
            )
        print(f"Machine: {bench.machine()}")
        if options.json:
            options.json.write_text(
                json.dumps(
                    {
                        "machine": bench.machine(),
                        "rate": options.rate,
                        "exactly_once": options.exactly_once,
                        "seconds": seconds,
                        "written": written,
                    },
                    indent=2,
                )
            )
    finally:
        manager.down([], purge=True)
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
