"""The idle floor of a PySpark application as topo builds it: a SparkSession that does nothing.

Run by hand, never from the test suite, on a machine where nothing else heavy runs:

    .venv/bin/python benchmarks/spark_floor.py [--master local[2]] [--settle 60] [--later 180]
        [--window 30]

A Python program in a session of its own builds its SparkSession with `spark/session.py` (the
Kafka connector's and topo's jars, topo's Spark settings and its copy slots' plugin, as the
running driver has them), runs no job and sleeps. Its CPU per process and thread name is read
from /proc over `--window` seconds, `--settle` seconds after the session is up and again from
`--later` seconds (0 leaves it out). No Kafka cluster is involved.

What it shows: the part of topo's idle that is Spark's own (its RPC, the executor's heartbeats,
the context cleaner, the JIT compiling them) and the Python driver's bare process, which no
change to topo's periodic work can take away while the replication is a PySpark application.
docs/performance.md ("Where topo's idle goes") reads it beside MM2's whole idle process.
"""

import argparse
import os
import subprocess
import sys
import time

import idle_threads  # benchmarks/idle_threads.py: threads read from /proc, summed by name

IDLE_PROGRAM = """
import sys, time
from topology.spark.session import build_session
spark = build_session("topo-floor", sys.argv[1])
spark.sparkContext.parallelize([1]).count()  # the executor's threads started, as a job would
print("ready", flush=True)
time.sleep(float(sys.argv[2]))
spark.stop()
"""


def window(session: int, seconds: float) -> None:
    before, began = idle_threads.threads(session), time.monotonic()
    time.sleep(seconds)
    after = idle_threads.threads(session)
    cores = idle_threads.by_name(before, after, time.monotonic() - began)
    print(f"{sum(cores.values()):.3f} cores over {seconds:.0f} s:")
    for name, used in cores.most_common():
        if used >= 0.0005:
            print(f"  {used:.4f}  {name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--settle", type=float, default=60.0)
    parser.add_argument("--later", type=float, default=180.0)
    parser.add_argument("--window", type=float, default=30.0)
    options = parser.parse_args()
    lasting = max(options.settle, options.later) + options.window + 30
    child = subprocess.Popen(
        [sys.executable, "-c", IDLE_PROGRAM, options.master, str(lasting)],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert child.stdout is not None
        if child.stdout.readline().strip() != "ready":
            sys.exit("the Spark session did not start")
        up = time.monotonic()
        time.sleep(options.settle)
        print(f"{options.master}, {options.settle:.0f} s after the session started:")
        window(child.pid, options.window)
        if options.later > 0:
            time.sleep(max(0.0, up + options.later - time.monotonic()))
            print(f"{options.later:.0f} s after the session started:")
            window(child.pid, options.window)
    finally:
        os.killpg(child.pid, 15)
        child.wait(timeout=60)


if __name__ == "__main__":
    main()
