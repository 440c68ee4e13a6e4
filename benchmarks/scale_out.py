"""One flow's bulk copy with 1, 2 and 4 copy slots, on the local runner and on a standalone
Spark cluster of one and of two workers: what a slot copies and what it costs.

Run by hand, never from the test suite, on a machine where nothing else heavy runs:

    .venv/bin/python benchmarks/scale_out.py [--records 500000] [--size 1024] [--rounds 2]
        [--slots 1,2,4] [--workers 0,1,2] [--json results.json]

On two private lab clusters (as benchmarks/mm2.py starts them), the bulk copy `mm2.py`
measures (a backlog of `--records` records in 6 partitions, topo started with `topo apply`),
with `defaults: {tasks: N}` for each slot count; `--workers 0` is the local runner
(`local[*]`), 1 and 2 a standalone Spark cluster of that many workers of 4 cores each
(`runner: spark`), started from the Spark that pyspark ships. Printed per setting: MiB/s of
the copy alone and the replicator's CPU seconds per GiB (the Spark workers' and executors'
processes included), median of `--rounds`.

What it can show on one machine: what a slot costs (CPU per GiB does not depend on where the
slot runs), and whether more slots help while the machine has cores to spare. What it cannot:
workers on other machines. On 2 cores, two workers share the cores one worker had, so a
second worker adds executors and no capacity; the cores a load needs are its MiB/s times the
CPU per GiB, divided by 1024.
"""

import argparse
import json
import os
import shutil
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import mm2  # benchmarks/mm2.py: the labs, the bulk copy and its measures
import replication as bench

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests import spark_cluster as standalone

WORKER_CORES = 4  # each worker's task slots; a copy slot holds one while it runs


@dataclass
class Setting:
    workers: int  # 0: the local runner
    slots: int
    mib_per_second: list[float]
    cpu_per_gib: list[float]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=500_000)
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--slots", default="1,2,4")
    parser.add_argument("--workers", default="0,1,2", help="0: the local runner")
    parser.add_argument("--json", type=Path)
    options = parser.parse_args()
    slot_counts = [int(n) for n in options.slots.split(",")]
    worker_counts = [int(n) for n in options.workers.split(",")]
    root = bench.private_run("topo-bench-scale-out-")
    from topology.lab import manager

    folder = root / "work"
    folder.mkdir()
    tools = bench.kafka_tools()
    host = bench.machine()
    settings: list[Setting] = []
    tag = f"o{os.getpid()}"
    try:
        print(f"Starting {mm2.SOURCE} and {mm2.TARGET} in {root} ...", flush=True)
        manager.up([manager.UpRequest(mm2.SOURCE), manager.UpRequest(mm2.TARGET)])
        brokers = [s.pid for s in map(manager.status_of, (mm2.SOURCE, mm2.TARGET)) if s.pid]
        for workers in worker_counts:
            cluster = None
            if workers:
                print(f"Starting a Spark cluster of {workers} worker(s) ...", flush=True)
                cluster = standalone.start(
                    root / f"spark-{workers}", cores=WORKER_CORES, workers=workers
                )
                mm2.ENGINE = {"runner": "spark", "master": json.dumps(cluster.master_url)}
                bench.ALSO_SESSIONS = tuple(process.pid for process in cluster.processes)
            else:
                mm2.ENGINE, bench.ALSO_SESSIONS = {}, ()
            try:
                for slots in slot_counts:
                    mm2.DEFAULTS = {"tasks": str(slots)}
                    setting = Setting(workers, slots, [], [])
                    for number in range(options.rounds):
                        run = f"{tag}w{workers}s{slots}r{number}"
                        print(f"{workers} worker(s), {slots} slot(s), round {number + 1} ...")
                        found = mm2.bulk(
                            mm2.TOPO, folder, tools, brokers, run, options.records, options.size
                        )
                        setting.mib_per_second.append(found.mib_per_second)
                        setting.cpu_per_gib.append(found.cpu_per_gib)
                        print(
                            f"  {found.mib_per_second:.1f} MiB/s, "
                            f"{found.cpu_per_gib:.1f} CPU s per GiB",
                            flush=True,
                        )
                    settings.append(setting)
            finally:
                if cluster is not None:
                    standalone.stop(cluster)
        print()
        print(f"Machine: {host}")
        print("| where | slots | MiB/s | CPU s per GiB |")
        print("|---|---|---|---|")
        for s in settings:
            where = "local runner" if s.workers == 0 else f"{s.workers} worker(s)"
            speed, cost = mm2.spread(s.mib_per_second), mm2.spread(s.cpu_per_gib)
            print(f"| {where} | {s.slots} | {speed} | {cost} |")
        if options.json:
            options.json.write_text(
                json.dumps({"machine": host, "settings": [asdict(s) for s in settings]}, indent=2)
            )
    finally:
        manager.down([], purge=True)
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
