"""What `topo verify` costs per GiB: wall time and CPU of the whole process.

Run by hand, never from the test suite (it starts two lab clusters of its own):

    .venv/bin/python benchmarks/verify_cost.py [--mib 256] [--size 1024] [--partitions 4] [--runs 3]

It starts the lab clusters `bench-source` and `bench-target` in a private lab folder, writes
`--mib` MiB of `--size`-byte records (keys, a header, varied values) to one topic of
`--partitions` partitions, copies them with `topo apply --once` (the copy loop), then runs
`topo verify` `--runs` times and reports, per run, the seconds, MiB/s and CPU seconds per GiB
of the verify process (user + system, from the child's rusage), and the peak resident memory.
Both sides are read (so a GiB here is a GiB of source and a GiB of copies).
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SOURCE, TARGET = "bench-source", "bench-target"
TOPIC = "bench-verify"


def topo(*args: str) -> tuple[subprocess.CompletedProcess[str], float, float]:
    """The command's result, its wall seconds and its CPU seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "topology", *args], capture_output=True, text=True, check=False
    )
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return done, wall, cpu


def memory_of_verify(file: Path) -> float:
    """The peak resident memory (MiB) of one more verify, run alone in a child that reports
    its own (the rusage of all children would include apply's Spark JVM)."""
    code = (
        "import resource, subprocess, sys; "
        "subprocess.run([sys.executable, '-m', 'topology', 'verify', sys.argv[1]], "
        "capture_output=True); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(file)], capture_output=True, text=True, check=True
    )
    return int(done.stdout.strip()) / 1024


def produce(config: dict[str, str], mib: int, size: int, partitions: int) -> int:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient
    from confluent_kafka.cimpl import NewTopic

    admin = AdminClient({**config})
    admin.create_topics([NewTopic(TOPIC, partitions, 1)])[TOPIC].result(60)
    producer = Producer({**config, "linger.ms": 20, "batch.size": 1_000_000})
    count = mib * 1024 * 1024 // size
    body = bytes(range(256)) * (size // 256 + 1)
    for n in range(count):
        while True:
            try:
                producer.produce(
                    TOPIC,
                    key=f"key-{n % 1000}".encode(),
                    value=body[n % 200 : n % 200 + size - 16],
                    headers=[("seq", str(n).encode())],
                    partition=n % partitions,
                )
                break
            except BufferError:
                producer.poll(0.5)
        if n % 50_000 == 0:
            producer.poll(0)
    producer.flush(120)
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=256)
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    os.environ["TOPO_LAB_DIR"] = tempfile.mkdtemp(prefix="topo-bench-lab-")
    os.environ["TOPO_STATE_DIR"] = tempfile.mkdtemp(prefix="topo-bench-state-")
    from topology.lab import manager

    manager.up([manager.UpRequest(SOURCE), manager.UpRequest(TARGET)])
    try:
        source, target = manager.admin_config(SOURCE), manager.admin_config(TARGET)
        count = produce(source, options.mib, options.size, options.partitions)
        print(f"{count} records of {options.size} bytes on {SOURCE}", flush=True)
        file = Path(tempfile.mkdtemp(prefix="topo-bench-")) / "bench.yaml"
        file.write_text(
            "version: 1\nclusters:\n"
            f'  src: {{bootstrap: "{source["bootstrap.servers"]}"}}\n'
            f'  dst: {{bootstrap: "{target["bootstrap.servers"]}"}}\n'
            "defaults: {replication_factor: 1}\n"
            f'flows:\n  - mirror: {{from: src, to: dst}}\n    topics: {{include: ["{TOPIC}"]}}\n'
        )
        applied, wall, _cpu = topo("apply", str(file), "--auto-approve", "--once")
        if applied.returncode != 0:
            sys.exit(f"apply failed: {applied.stderr.strip()[-800:]}")
        print(f"copied in {wall:.1f}s", flush=True)
        gib = options.mib / 1024
        rates, per_gib = [], []
        for run in range(options.runs):
            done, wall, cpu = topo("verify", str(file))
            if done.returncode != 0:
                sys.exit(f"verify said {done.returncode}: {done.stdout[-800:]}{done.stderr[-800:]}")
            rates.append(options.mib / wall)
            per_gib.append(cpu / gib)
            print(
                f"run {run + 1}: {wall:.1f}s, {options.mib / wall:.1f} MiB/s, "
                f"{cpu / gib:.1f} CPU s per GiB",
                flush=True,
            )
        peak = memory_of_verify(file)
        print(
            f"verify of {options.mib} MiB ({count} records, {options.partitions} partitions): "
            f"median {statistics.median(rates):.1f} MiB/s, "
            f"{statistics.median(per_gib):.1f} CPU s per GiB; verify's peak resident memory "
            f"{peak:.0f} MiB"
        )
    finally:
        manager.down([], purge=True)


if __name__ == "__main__":
    main()
