"""Where topo's idle CPU goes: topo alone on many small topics, its CPU per thread name.

Run by hand, never from the test suite, on a machine where nothing else heavy runs:

    .venv/bin/python benchmarks/idle_threads.py [--topics 300] [--partitions 2]
        [--settle 60] [--window 40] [--py-spy [--rate 50] [--spy-seconds 30]]
        [--java-options=-XX:...] [--no-heartbeats] [--broker-heap 2g] [--jfr 60]

On the lab clusters `bench-src` and `bench-dst` (a private lab folder, as benchmarks/scale.py),
`--topics` topics of `--partitions` partitions with 20 records each are copied by topo (`topo
apply`, as benchmarks/mm2.py starts it); `--settle` seconds after the last record arrived, the
CPU of every thread of its session is read from /proc over `--window` seconds and summed by
process and thread name (Java names its threads: `C2 CompilerThre`, `Executor task l`; the
Python driver's threads are all `python`, librdkafka's `rdk:*`). With `--py-spy` (py-spy
installed: `pip install py-spy`), each Python process of the session is then sampled for 30 s
(raw stacks copied to `py-spy-<pid>.txt` in the current folder). With `--jfr SECONDS`, each
Java process of the session is then recorded by Java Flight Recorder (the JDK's `jcmd`, its
`profile` settings) for that long, the recording copied to `jfr-<pid>.jfr`, and its execution
samples summed by thread and by the first frame of topo's own (or the leaf frame). docs/
performance.md ("Where topo's idle goes") reads these.
"""

import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import mm2  # benchmarks/mm2.py: topo started as its users start it
import replication as bench  # benchmarks/replication.py: /proc readers, the lab's quiet logger
import scale  # benchmarks/scale.py: topics filled, copies counted

from topology.spark import topojar

RECORDS = 20  # per topic

Threads = dict[tuple[str, str], tuple[str, str, int]]  # (pid, tid) -> command, name, ticks


def threads(session: int) -> Threads:
    """Every thread of the session's processes: its process's command, its name, CPU ticks."""
    found: Threads = {}
    for pid in os.listdir("/proc"):
        fields = bench._stat_fields(pid) if pid.isdigit() else None
        if fields is None or int(fields[3]) != session:
            continue
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                stat = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
            except OSError:
                continue
            name = stat[stat.index("(") + 1 : stat.rindex(")")]
            rest = stat[stat.rindex(")") + 2 :].split()
            found[(pid, tid)] = (os.path.basename(command), name, int(rest[11]) + int(rest[12]))
    return found


def by_name(before: Threads, after: Threads, seconds: float) -> collections.Counter[str]:
    """Cores per process and thread name between the two readings."""
    tick = os.sysconf("SC_CLK_TCK")
    cores: collections.Counter[str] = collections.Counter()
    for key, (command, name, ticks) in after.items():
        earlier = before.get(key, (command, name, 0))[2]
        cores[f"{command:8s} {name}"] += (ticks - earlier) / tick / seconds
    return cores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=300)
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--settle", type=float, default=60.0)
    parser.add_argument("--window", type=float, default=40.0)
    parser.add_argument("--py-spy", action="store_true")
    parser.add_argument("--rate", type=int, default=50, help="py-spy's samples a second")
    parser.add_argument("--spy-seconds", type=int, default=30, help="py-spy's duration")
    parser.add_argument(
        "--java-options",
        help="more options for the driver's JVM (spark.driver.extraJavaOptions), to try a flag",
    )
    parser.add_argument(
        "--no-heartbeats",
        action="store_true",
        help="the flow writes no heartbeats (emit.heartbeats: false): what their copy costs",
    )
    parser.add_argument(
        "--broker-heap", help="the lab brokers' largest heap (-Xmx), as benchmarks/scale.py's"
    )
    parser.add_argument(
        "--jfr", type=int, default=0, help="seconds of Java Flight Recorder after the window"
    )
    options = parser.parse_args()
    if options.no_heartbeats:
        mm2.DEFAULTS["emit"] = "{heartbeats: false}"
    if options.java_options:
        mm2.ENGINE["spark_conf"] = json.dumps(
            {"spark.driver.extraJavaOptions": options.java_options}
        )
    from confluent_kafka.admin import AdminClient

    from topology.lab import manager, process

    if options.broker_heap:
        process.HEAP_OPTS = ["-Xms128m", f"-Xmx{options.broker_heap}"]
    root = bench.private_run("topo-bench-idle-")
    folder = root / "work"
    folder.mkdir()
    run = f"i{os.getpid()}"
    try:
        manager.up([manager.UpRequest(mm2.SOURCE), manager.UpRequest(mm2.TARGET)])
        names = [f"{run}-t{i:04d}" for i in range(options.topics)]
        scale.fill(names, options.partitions, RECORDS)
        file = mm2.topology_file(folder, run, names, False)
        admin = AdminClient({**manager.admin_config(mm2.TARGET), "logger": bench._QUIET})
        remotes = [f"src.{name}" for name in names]
        with mm2.running(mm2.start(mm2.TOPO, file)) as life:
            started = time.monotonic()
            while scale.copied(admin, remotes, options.partitions) < options.topics * RECORDS:
                if time.monotonic() - started > scale.COPY_TIMEOUT:
                    sys.exit("not every record was copied in time")
                time.sleep(2)
            print(f"copied after {time.monotonic() - started:.0f} s", flush=True)
            time.sleep(options.settle)
            session = life.session()
            assert session is not None
            before, began = threads(session), time.monotonic()
            time.sleep(options.window)
            after = threads(session)
            cores = by_name(before, after, time.monotonic() - began)
            print(f"{sum(cores.values()):.3f} cores over {options.window:.0f} s:")
            for name, used in cores.most_common():
                if used >= 0.0005:
                    print(f"  {used:.4f}  {name}")
            if options.py_spy:
                spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
                pythons = {
                    p for (p, t), (command, _, _) in after.items() if p == t and "py" in command
                }
                for pid in sorted(pythons):
                    out = root / f"py-spy-{pid}.txt"
                    record = [spy, "record", "-p", pid, "-f", "raw"]
                    record += ["-d", str(options.spy_seconds), "-r", str(options.rate)]
                    subprocess.run([*record, "-o", str(out), "--nonblocking"], check=False)
                    kept = Path.cwd() / out.name
                    shutil.copy(out, kept)
                    print(f"py-spy of {pid}: {kept}")
            if options.jfr:
                javas = {p for (p, t), (command, _, _) in after.items() if command == "java"}
                for pid in sorted(javas):
                    flight(pid, options.jfr, root)
    finally:
        manager.down([], purge=True)
        shutil.rmtree(root, ignore_errors=True)


def flight(pid: str, seconds: int, root: Path) -> None:
    """Record the Java process `pid` for `seconds` with the JDK's flight recorder, keep the
    recording in the current folder and print where its samples are."""
    out = root / f"jfr-{pid}.jfr"
    start = ["JFR.start", "settings=profile", f"duration={seconds}s", f"filename={out}"]
    subprocess.run([topojar.jdk_tool("jcmd"), pid, *start], check=True, capture_output=True)
    time.sleep(seconds + 5)
    kept = Path.cwd() / out.name
    shutil.copy(out, kept)
    printed = subprocess.run(
        [topojar.jdk_tool("jfr"), "print", "--json", "--events", "jdk.ExecutionSample", str(kept)],
        check=True,
        capture_output=True,
        text=True,
    )
    samples = json.loads(printed.stdout)["recording"]["events"]
    by_thread: collections.Counter[str] = collections.Counter()
    by_frame: collections.Counter[str] = collections.Counter()
    for sample in samples:
        thread = sample["values"]["sampledThread"]["javaName"] or "?"
        frames = [
            f"{f['method']['type']['name'].replace('/', '.')}.{f['method']['name']}"
            for f in sample["values"]["stackTrace"]["frames"]
        ]
        ours = next((f for f in frames if f.startswith("dev.topo")), None)
        by_thread[thread] += 1
        by_frame[f"{thread[:24]:24}  {frames[0] if frames else '?'}  <- {ours}"] += 1
    print(f"flight recording of {pid}: {kept}, {len(samples)} samples over {seconds} s")
    for name, count in by_thread.most_common(12):
        print(f"  {count:5d}  {name}")
    for name, count in by_frame.most_common(25):
        print(f"  {count:5d}  {name}")


if __name__ == "__main__":
    main()
