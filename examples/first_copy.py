"""The demo's job until plan/apply lands: copy a topic from lab cluster east to west with Spark.

Run by `make demo` after `topo lab up east west`. It writes 12 records (keys, a null value,
headers, explicit partitions) to `orders` on east, runs topo's Spark copy query once
(availableNow) into `east.orders` on west, MM2-style, then reads west back and checks every
record against its source.
"""

import sys
import tempfile
import time

from topology.kafka import records
from topology.kafka.records import Record
from topology.lab import manager
from topology.spark.copy import CopyJob, start_copy
from topology.spark.session import build_session

SOURCE_TOPIC = "orders"
TARGET_TOPIC = f"east.{SOURCE_TOPIC}"
PARTITIONS = 3


def demo_records() -> list[Record]:
    made = []
    for i in range(12):
        headers: tuple[tuple[str, bytes | None], ...] = (("trace", f"t-{i}".encode()),)
        if i % 4 == 0:
            headers += (("trace", b"duplicate header kept"), ("empty", None))
        made.append(
            Record(
                topic=SOURCE_TOPIC,
                partition=i % PARTITIONS,
                key=f"customer-{i % 5}".encode(),
                value=None if i == 7 else f'{{"order": {i}, "amount": {10 * i + 5}}}'.encode(),
                headers=headers,
            )
        )
    return made


def show(rows: list[Record]) -> None:
    print(f"  {'part':>4} {'off':>3}  {'key':<11} {'value':<28} headers")
    for r in rows:
        value = "(null)" if r.value is None else r.value.decode()
        heads = ", ".join(f"{k}={'null' if v is None else v.decode()}" for k, v in r.headers)
        key = (r.key or b"").decode()
        print(f"  {r.partition:>4} {r.offset:>3}  {key:<11} {value:<28} {heads}")


def main() -> int:
    east, west = manager.admin_config("east"), manager.admin_config("west")
    for config, topic in ((east, SOURCE_TOPIC), (west, TARGET_TOPIC)):
        records.delete_topic_if_exists(config, topic)
        records.create_topic(config, topic, PARTITIONS)
    records.produce(east, demo_records())
    source = records.read_topic(east, SOURCE_TOPIC)
    print(f"east/{SOURCE_TOPIC}: {len(source)} records written")
    show(source)

    print("starting Spark (local) and copying east -> west ...", flush=True)
    spark = build_session("topo-demo", report=lambda line: print(line, file=sys.stderr))
    with tempfile.TemporaryDirectory(prefix="topo-demo-") as checkpoint:
        job = CopyJob(
            source_bootstrap=east["bootstrap.servers"],
            target_bootstrap=west["bootstrap.servers"],
            topic_pattern=SOURCE_TOPIC,
            target_prefix="east.",
            checkpoint_dir=checkpoint,
        )
        began = time.monotonic()
        start_copy(spark, job, once=True).awaitTermination()
        took = time.monotonic() - began
    spark.stop()

    target = records.read_topic(west, TARGET_TOPIC)
    print(f"west/{TARGET_TOPIC}: {len(target)} records copied by Spark in {took:.1f}s")
    show(target)
    same = [s.content()[:4] == t.content()[:4] for s, t in zip(source, target, strict=False)]
    if len(source) == len(target) and all(same):
        print(f"OK: all {len(target)} records match key, value, headers, partition and order")
        return 0
    print(f"MISMATCH: {sum(same)} of {len(source)} records match", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
