"""What the metrics cost the copy: topo's bulk copy with `engine.metrics` on (the default:
the endpoint served, heartbeats read back, the sources' ends asked, history kept; the copy
loop counts records, bytes and latencies either way) and with `metrics: false`, alternated in
pairs (ABBA) on the same two private lab clusters, each run on a fresh topic filled alike.
Printed: MiB/s and replicator CPU seconds per GiB of the copy alone, per run, and the on/off
ratios within each pair (median and range); one warm-up copy of each is run first and set
aside. Reuses benchmarks/mm2.py's bulk copy (topo's side only).

With `--idle-pairs N` it also measures what the metrics cost while nothing is copied: the
replication running on an empty topic (heartbeats on), the driver's cores over
`--idle-seconds`, alternated on/off in N pairs. That is the fixed cost (the endpoint, the
telemetry thread's heartbeat reads, lag look-ups and history) which a bulk copy does not
show.

    .venv/bin/python benchmarks/metrics_cost.py [--pairs 4] [--records 300000] [--size 1024]
        [--idle-pairs 0] [--idle-seconds 60]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import mm2  # benchmarks/mm2.py: the labs, the bulk copy and its measures
import replication as bench

SETTLE_SECONDS = 30
SETTINGS: dict[str, dict[str, str]] = {"on": {}, "off": {"metrics": "false"}}  # engine settings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--records", type=int, default=300_000)
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--idle-pairs", type=int, default=0)
    parser.add_argument("--idle-seconds", type=int, default=60)
    options = parser.parse_args()
    root = bench.private_run("topo-bench-metrics-")
    from topology.lab import manager

    folder = root / "work"
    folder.mkdir()
    tools = bench.kafka_tools()
    written = mm2.topology_file
    mode = {"now": "on"}

    def topology_file(folder: Path, name: str, topics: list[str], exactly_once: bool) -> Path:
        mm2.ENGINE = SETTINGS[mode["now"]]
        return written(folder, name, topics, exactly_once)

    mm2.topology_file = topology_file
    results: dict[str, list[mm2.Bulk]] = {"on": [], "off": []}
    try:
        print(f"Starting {mm2.SOURCE} and {mm2.TARGET} in {root} ...", flush=True)
        manager.up([manager.UpRequest(mm2.SOURCE), manager.UpRequest(mm2.TARGET)])
        pids = (manager.status_of(c).pid for c in (mm2.SOURCE, mm2.TARGET))
        brokers = [pid for pid in pids if pid is not None]
        # The first copy on fresh clusters is the slowest of a session (cold JVMs, brokers'
        # page cache): run one of each and set them aside, or it weighs on the first pair.
        idle_cores: dict[str, list[float]] = {"on": [], "off": []}
        for number in range(options.idle_pairs):
            order = ("on", "off") if number % 2 == 0 else ("off", "on")
            for setting in order:
                mode["now"] = setting
                cores = idle(folder, f"i{number}{setting}", options.idle_seconds, topology_file)
                idle_cores[setting].append(cores)
                print(f"  idle pair {number + 1}, metrics {setting}: {cores:.4f} cores", flush=True)
        if options.idle_pairs:
            differences = [a - b for a, b in zip(idle_cores["on"], idle_cores["off"], strict=True)]
            print(
                f"idle cores: on {statistics.median(idle_cores['on']):.4f}, off "
                f"{statistics.median(idle_cores['off']):.4f}, on-off "
                f"{statistics.median(differences):+.4f} [{min(differences):+.4f}"
                f"..{max(differences):+.4f}]",
                flush=True,
            )
        for setting in ("on", "off") if options.pairs else ():
            mode["now"] = setting
            found = mm2.bulk(
                mm2.TOPO, folder, tools, brokers, f"w{setting}", options.records, options.size
            )
            print(
                f"  warm-up, metrics {setting}: {found.mib_per_second:.1f} MiB/s (set aside)",
                flush=True,
            )
        for number in range(options.pairs):
            order = ("on", "off") if number % 2 == 0 else ("off", "on")
            for setting in order:
                mode["now"] = setting
                run = f"p{number}{setting}"
                found = mm2.bulk(
                    mm2.TOPO, folder, tools, brokers, run, options.records, options.size
                )
                results[setting].append(found)
                print(
                    f"  pair {number + 1}, metrics {setting}: {found.mib_per_second:.1f} MiB/s, "
                    f"{found.cpu_per_gib:.1f} CPU s/GiB ({_split(found.by_process)})",
                    flush=True,
                )
        for measure in ("mib_per_second", "cpu_per_gib") if options.pairs else ():
            ratios = [
                getattr(a, measure) / getattr(b, measure)
                for a, b in zip(results["on"], results["off"], strict=True)
            ]
            on = [getattr(r, measure) for r in results["on"]]
            off = [getattr(r, measure) for r in results["off"]]
            middle, low, high = statistics.median(ratios), min(ratios), max(ratios)
            print(
                f"{measure}: on {statistics.median(on):.1f} [{min(on):.1f}-{max(on):.1f}], "
                f"off {statistics.median(off):.1f} [{min(off):.1f}-{max(off):.1f}], on/off "
                f"{middle:.3f} [{low:.3f}-{high:.3f}]"
            )
    finally:
        manager.down([], purge=True)
        shutil.rmtree(root, ignore_errors=True)


def _split(by_process: dict[str, float]) -> str:
    return ", ".join(f"{kind} {cpu:.1f}" for kind, cpu in sorted(by_process.items()))


def idle(folder: Path, run: str, seconds: int, topology_file: Callable[..., Path]) -> float:
    """The driver's cores while it follows an empty topic: started, settled (its first copies
    and reports, a history saved), then measured over `seconds`."""
    from topology.kafka import records as kafka_records
    from topology.lab import manager

    topic = f"{run}-idle"
    kafka_records.create_topic(manager.admin_config(mm2.SOURCE), topic, mm2.PARTITIONS)
    file = topology_file(folder, f"{run}-idle", [topic], False)
    with mm2.running(mm2.start(mm2.TOPO, file)) as life:
        mm2.wait_for_topic(f"src.{topic}", 180)
        time.sleep(SETTLE_SECONDS)
        session = life.session()
        assert session is not None
        before = bench.snapshot(session, [])
        if os.environ.get("TOPO_BENCH_JFR"):  # a flight recording of the Spark JVM, by hand
            recording = Path(os.environ["TOPO_BENCH_JFR"]) / f"{run}.jfr"
            jvms = subprocess.run(
                ["pgrep", "-s", str(session), "java"], capture_output=True, text=True, check=False
            ).stdout.split()
            for pid in jvms:
                subprocess.run(
                    [
                        "jcmd",
                        pid,
                        "JFR.start",
                        f"duration={seconds}s",
                        f"filename={recording}",
                        "settings=profile",
                    ],
                    capture_output=True,
                    check=False,
                )
        time.sleep(seconds)
        after = bench.snapshot(session, [])
    spent = after.since(before)
    kinds = ", ".join(f"{kind} {cpu / (after.at - before.at):.3f}" for kind, cpu in spent.items())
    print(f"    cores by process: {kinds}", flush=True)
    return (after.replicator - before.replicator) / (after.at - before.at)


if __name__ == "__main__":
    main()
