"""What the metrics' per-record work costs Spark, alone: the observed figures topo adds to each
query (topology/spark/query.py `observe`) over records shaped like a copy's (key, 1 KiB or
100-byte value, source timestamp, source topic), held in memory and written to Spark's `noop`
sink, so that nothing but the observing differs between settings. Compared, in rounds whose
order rotates: `metrics: false` (records and bytes only), on with one, ten and fifty topics.
Printed: seconds per setting and round, and the extra wall time per record against `metrics:
false` (median and range over the rounds), to set beside the copy's own CPU time per record
(benchmarks/metrics_cost.py measures it end to end, where this difference drowns in noise).

    .venv/bin/python benchmarks/observe_cost.py [--records 2000000] [--size 1024] [--rounds 5]
"""

import argparse
import statistics
import time

SETTINGS = ("off", "on, 1 topic", "on, 10 topics", "on, 50 topics")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=2_000_000)
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()
    from pyspark.sql import functions as F

    from topology.spark import query
    from topology.spark.session import build_session

    # topo's session (its jar holds CopyFigures); the records are held in memory
    spark = build_session("topo-observe-cost", "local[2]", {"spark.driver.memory": "6g"})
    spark.sparkContext.setLogLevel("ERROR")
    print(f"{options.records:,} records of {options.size} B in memory, local[2] ...", flush=True)
    records = (
        spark.range(options.records)
        .repartition(6)
        .select(
            F.col("id").cast("string").cast("binary").alias("key"),
            F.expr(f"cast(repeat('x', {options.size}) as binary)").alias("value"),
            # Source timestamps up to 3 s old: every latency bucket gets records.
            (F.unix_millis(F.current_timestamp()) - F.col("id") % 3000).alias("timestamp_ms"),
            F.concat(F.lit("topic-"), (F.col("id") % 50).cast("string")).alias("source_topic"),
        )
        .cache()
    )
    records.count()
    maps = {
        "off": {"topic-0": "src.topic-0"},
        "on, 1 topic": {"topic-0": "src.topic-0"},
        "on, 10 topics": {f"topic-{i}": f"src.topic-{i}" for i in range(10)},
        "on, 50 topics": {f"topic-{i}": f"src.topic-{i}" for i in range(50)},
    }

    def run(setting: str) -> float:
        observed = query.observe(records, maps[setting], detailed=setting != "off")
        started = time.perf_counter()
        observed.select("key", "value").write.format("noop").mode("overwrite").save()
        return time.perf_counter() - started

    for setting in SETTINGS:  # compiled and warmed once each, set aside
        run(setting)
    took: dict[str, list[float]] = {setting: [] for setting in SETTINGS}
    for number in range(options.rounds):
        turn = number % len(SETTINGS)
        order = SETTINGS[turn:] + SETTINGS[:turn]
        for setting in order:
            took[setting].append(run(setting))
        print(
            f"  round {number + 1}: " + ", ".join(f"{s} {took[s][-1]:.2f} s" for s in SETTINGS),
            flush=True,
        )
    for setting in SETTINGS[1:]:
        extra = [
            (a - b) / options.records * 1e9 for a, b in zip(took[setting], took["off"], strict=True)
        ]
        print(
            f"{setting}: {statistics.median(extra):.0f} ns more wall time per record "
            f"[{min(extra):.0f} to {max(extra):.0f}] than off "
            f"({statistics.median(took['off']) / options.records * 1e9:.0f} ns)"
        )
    spark.stop()


if __name__ == "__main__":
    main()
