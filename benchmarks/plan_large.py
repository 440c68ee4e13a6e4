"""How long `topo plan` takes for a mirror of a source cluster holding 2,000 topics.

Run by hand, never from the test suite (it starts two lab clusters of its own):

    .venv/bin/python benchmarks/plan_large.py [--topics 2000] [--runs 3] [--keep]

It starts the lab clusters `bench-source` and `bench-target` (in a private lab folder unless
`--keep` is given, in which case they stay up for another run), creates the topics on the
source with a few configs each, and times, end to end as a user runs it, `topo plan FILE` for a
mirror admitting every one of them: process start, reading both clusters (metadata, configs of
every topic, ACLs, groups, ownership records), planning and rendering. Then it applies the plan
once (creating the copies, then starting the mirror's replication until it reports running),
and times the plan again (every copy exists, so every copy is compared); the replication is
stopped at the end.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SOURCE, TARGET = "bench-source", "bench-target"
BATCH = 500


def topo(*args: str) -> subprocess.CompletedProcess[str]:
    code = "from topology.cli import main; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=False
    )


def timed_plans(file: Path, runs: int) -> list[float]:
    seconds = []
    for _ in range(runs):
        started = time.monotonic()
        done = topo("plan", str(file), "--detailed-exitcode")
        seconds.append(time.monotonic() - started)
        if done.returncode not in (0, 2):
            sys.exit(f"plan failed: {done.stderr.strip()}")
    return seconds


def create_topics(config: dict[str, str], count: int) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient(config)
    existing = set(admin.list_topics(timeout=30).topics)
    wanted = [f"bench-{n:05d}" for n in range(count)]
    missing = [name for name in wanted if name not in existing]
    for start in range(0, len(missing), BATCH):
        batch = [
            NewTopic(name, 1, 1, config={"retention.ms": str(3_600_000 + n)})
            for n, name in enumerate(missing[start : start + BATCH])
        ]
        for future in admin.create_topics(batch, request_timeout=120).values():
            future.result(timeout=120)
        print(f"  created {min(start + BATCH, len(missing))}/{len(missing)} topics", flush=True)
    # The controller has made them; the broker's metadata shows them a little later.
    deadline = time.monotonic() + 120
    while len(set(wanted) & set(admin.list_topics(timeout=30).topics)) < count:
        if time.monotonic() > deadline:
            sys.exit(f"the source does not show all {count} topics after 120 s")
        time.sleep(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", action="store_true", help="use and keep the user's lab")
    options = parser.parse_args()
    if not options.keep:
        os.environ["TOPO_LAB_DIR"] = tempfile.mkdtemp(prefix="topo-bench-lab-")
    # The replication apply starts keeps its state here, apart from the user's and other runs'.
    os.environ["TOPO_STATE_DIR"] = tempfile.mkdtemp(prefix="topo-bench-state-")
    from topology.lab import manager

    manager.up([manager.UpRequest(SOURCE), manager.UpRequest(TARGET)])
    file: Path | None = None
    try:
        source, target = manager.admin_config(SOURCE), manager.admin_config(TARGET)
        print(f"Creating {options.topics} topics on {SOURCE} ...", flush=True)
        create_topics(source, options.topics)
        folder = Path(tempfile.mkdtemp(prefix="topo-bench-"))
        file = folder / "bench.yaml"
        file.write_text(
            "version: 1\nclusters:\n"
            f'  src: {{bootstrap: "{source["bootstrap.servers"]}"}}\n'
            f'  dst: {{bootstrap: "{target["bootstrap.servers"]}"}}\n'
            'flows:\n  - mirror: {from: src, to: dst}\n    topics: {include: ["bench-.*"]}\n'
        )
        first = timed_plans(file, options.runs)
        print(
            f"plan, nothing copied yet:  best {min(first):.2f}s, median "
            f"{statistics.median(first):.2f}s over {options.runs} runs"
        )
        started = time.monotonic()
        applied = topo("apply", str(file), "--auto-approve")
        if applied.returncode != 0:
            sys.exit(f"apply failed: {applied.stderr.strip()[-500:]}")
        print(f"apply ({options.topics} topics created): {time.monotonic() - started:.1f}s")
        log = folder / "apply.log"  # each change's line, with its seconds
        log.write_text(applied.stderr)
        print(f"  its progress lines: {log}")
        again = timed_plans(file, options.runs)
        print(
            f"plan, every copy exists:   best {min(again):.2f}s, median "
            f"{statistics.median(again):.2f}s over {options.runs} runs"
        )
    finally:
        if file is not None:  # apply started the mirror's replication: nothing outlives the run
            topo("stop", str(file))
        if not options.keep:
            manager.down([], purge=True)


if __name__ == "__main__":
    main()
