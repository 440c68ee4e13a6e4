"""End-to-end latency of continuous replication by trigger: the copy loop (topo's default),
micro-batch and Spark's real-time mode.

Run by hand (never from tests): `python benchmarks/latency_modes.py [--rate 1000] [--seconds 30]`.
It starts two private lab clusters, and for each trigger mode: applies a one-way mirror,
produces `--rate` records/s (1 KiB values, 2 partitions) for `--seconds`, and reads the copies
on the target as they arrive. A record's latency is the moment the consumer sees the copy minus
the source record's timestamp, which topo preserves on the copy. Prints p50/p99/max per mode.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import replication as bench  # benchmarks/replication.py: the latency probe's reader
from confluent_kafka import Consumer, Producer

CLUSTERS = ("lat-src", "lat-dst")


def topo(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", "from topology.cli import main; main()", *args]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def produce(config: dict[str, str], topic: str, rate: int, seconds: float) -> int:
    producer = Producer({**config, "linger.ms": 1, "acks": "all"})
    value = b"x" * 1024
    sent, started = 0, time.monotonic()
    while time.monotonic() - started < seconds:
        due = int((time.monotonic() - started) * rate)
        while sent < due:
            producer.produce(topic, value=value, partition=sent % 2)
            sent += 1
        producer.poll(0)
        time.sleep(0.001)
    producer.flush(30)
    return sent


def consume(config: dict[str, str], topic: str, until: threading.Event) -> list[float]:
    consumer = Consumer(
        {
            **config,
            "group.id": f"lat-{time.time_ns()}",
            "auto.offset.reset": "latest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([topic])
    latencies = []
    while not until.is_set():
        for message in bench.arrived(consumer, 0.2):
            if message.error() is None:
                latencies.append(time.time() * 1000 - message.timestamp()[1])
    consumer.close()
    return latencies


def measure(
    mode: str, lab: dict[str, dict[str, str]], folder: Path, rate: int, seconds: float
) -> list[float]:
    from topology.kafka import records

    src, dst = lab["lat-src"], lab["lat-dst"]
    topic = f"lat{mode.replace('-', '')}{int(time.time())}"
    records.create_topic(src, topic, 2)
    master = "local[4]" if mode == "real-time" else "local[*]"
    file = folder / f"{topic}.yaml"
    file.write_text(
        f"version: 1\nname: {topic}\nengine: {{trigger: {mode}, master: '{master}'}}\n"
        f"clusters:\n  src: {{bootstrap: '{src['bootstrap.servers']}'}}\n"
        f"  dst: {{bootstrap: '{dst['bootstrap.servers']}'}}\n"
        f"defaults: {{replication_factor: 1}}\n"
        f"flows:\n  - mirror: {{from: src, to: dst}}\n    topics: {{include: ['{topic}']}}\n"
    )
    done = topo("apply", str(file), "--auto-approve")
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    time.sleep(10)  # the query (or the loop) is warm
    stop = threading.Event()
    found: list[float] = []
    reader = threading.Thread(target=lambda: found.extend(consume(dst, f"src.{topic}", stop)))
    reader.start()
    time.sleep(3)
    produce(src, topic, rate, seconds)
    time.sleep(5)
    stop.set()
    reader.join()
    topo("stop", str(file))
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rate", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="topo-latency-") as scratch:
        os.environ["TOPO_LAB_DIR"] = str(Path(scratch) / "lab")
        os.environ["TOPO_STATE_DIR"] = str(Path(scratch) / "state")
        from topology.lab import manager

        manager.up([manager.UpRequest(name) for name in CLUSTERS])
        try:
            lab = {name: manager.admin_config(name) for name in CLUSTERS}
            print(f"| mode | records | p50 ms | p99 ms | max ms |  ({args.rate} rec/s, 1 KiB)")
            for mode in ("loop", "micro-batch", "real-time"):
                values = sorted(measure(mode, lab, Path(scratch), args.rate, args.seconds))
                if not values:
                    print(f"| {mode} | 0 | - | - | - |")
                    continue
                p99 = values[min(len(values) - 1, int(len(values) * 0.99))]
                print(
                    f"| {mode} | {len(values)} | {statistics.median(values):.0f} | {p99:.0f} "
                    f"| {values[-1]:.0f} |",
                    flush=True,
                )
        finally:
            manager.down(list(CLUSTERS), purge=True)


if __name__ == "__main__":
    main()
