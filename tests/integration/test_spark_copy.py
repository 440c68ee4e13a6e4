"""A real PySpark Structured Streaming query copies a topic between two real lab clusters."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import RECENT_MS
from topology.kafka import records
from topology.kafka.records import Record

pytestmark = [pytest.mark.kafka, pytest.mark.spark]

PARTITIONS = 3


@pytest.fixture(scope="session")
def spark(lab_dir: Path) -> Iterator[object]:
    """One Spark session for the run; it stops before the lab clusters it writes to."""
    from topology.spark.session import build_session

    session = build_session("topo-tests", master="local[2]")
    yield session
    session.stop()


def varied_records(topic: str) -> list[Record]:
    """Null keys and values, repeated and null headers, explicit partitions and timestamps."""
    made = []
    for i in range(15):
        headers: tuple[tuple[str, bytes | None], ...] = (("seq", str(i).encode()),)
        if i % 3 == 0:
            headers += (("seq", b"repeated"), ("nothing", None))
        made.append(
            Record(
                topic=topic,
                partition=(i * 7) % PARTITIONS,
                key=None if i == 5 else f"key-{i % 4}".encode(),
                value=None if i == 9 else bytes([i, 0, 255]) + f"value-{i}".encode(),
                headers=headers,
                timestamp_ms=RECENT_MS + 1000 * i,
            )
        )
    return made


def copy_once(spark: object, source: dict[str, str], target: dict[str, str], pattern: str,
              checkpoint: Path) -> None:  # fmt: skip
    from topology.spark.copy import CopyJob, start_copy

    job = CopyJob(
        source_bootstrap=source["bootstrap.servers"],
        target_bootstrap=target["bootstrap.servers"],
        topic_pattern=pattern,
        target_prefix="src.",
        checkpoint_dir=str(checkpoint),
        # A write to a missing target topic fails in seconds rather than blocking for a minute.
        target_options={"max.block.ms": "10000"},
    )
    query = start_copy(spark, job, once=True)  # type: ignore[arg-type]
    query.awaitTermination(240)
    assert query.exception() is None


def test_records_arrive_with_key_value_headers_partition_and_order(
    spark: object, source: dict[str, str], target: dict[str, str], topic_name: str,
    tmp_path: Path,
) -> None:  # fmt: skip
    written = varied_records(topic_name)
    records.create_topic(source, topic_name, PARTITIONS)
    # A topic the pattern matches only as a substring: Spark's own matching would take it.
    records.create_topic(source, f"{topic_name}-other", 1)
    records.produce(source, [*written, Record(f"{topic_name}-other", 0, b"k", b"not copied")])
    records.create_topic(target, f"src.{topic_name}", PARTITIONS)

    copy_once(spark, source, target, topic_name, tmp_path / "checkpoint")

    source_side = records.read_topic(source, topic_name)
    copied = records.read_topic(target, f"src.{topic_name}")
    assert len(copied) == len(written)
    for original, replica in zip(source_side, copied, strict=True):
        assert replica.partition == original.partition
        assert replica.offset == original.offset  # same order within each partition
        assert replica.key == original.key
        assert replica.value == original.value
        assert replica.headers == original.headers


@pytest.mark.xfail(
    strict=True,
    reason="Spark 4.1's Kafka sink has no timestamp column (SPARK-50160 is not in 4.1): the "
    "copy gets the producer's clock. The replication engine issue must preserve it.",
)
def test_records_keep_their_source_timestamp(
    spark: object, source: dict[str, str], target: dict[str, str], topic_name: str,
    tmp_path: Path,
) -> None:  # fmt: skip
    written = varied_records(topic_name)[:3]
    records.create_topic(source, topic_name, PARTITIONS)
    records.produce(source, written)
    records.create_topic(target, f"src.{topic_name}", PARTITIONS)
    copy_once(spark, source, target, topic_name, tmp_path / "checkpoint")
    original = [r.timestamp_ms for r in records.read_topic(source, topic_name)]
    copied = [r.timestamp_ms for r in records.read_topic(target, f"src.{topic_name}")]
    assert copied == original
