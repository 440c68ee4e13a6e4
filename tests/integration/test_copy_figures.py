"""topo's CopyFigures aggregate in real Spark: the latency histogram and per-topic figures a
query observes for the metrics endpoint, read back exactly as the driver reads them."""

import time
from collections.abc import Iterator
from typing import Any

import pytest

from topology.core.progress import LATENCY_BUCKETS, OBSERVED_FIGURES, unpacked

pytest.importorskip("pyspark")

TOPICS = {"orders": "east.orders", "audit": "east.audit", "payments": "east.payments"}
FUTURE_MS = 4_102_444_800_000  # 2100: a latency below 0 counts as 0, in every bucket


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    from topology.spark.session import build_session

    session = build_session("topo-copy-figures", master="local[2]")
    yield session
    session.stop()


def _observed(spark: Any, rows: list[tuple[Any, ...]], topic_map: dict[str, str]) -> Any:
    from pyspark.sql import Observation

    from topology.spark import query

    records = spark.createDataFrame(
        rows, "key binary, value binary, timestamp_ms long, source_topic string"
    ).repartition(3)  # figures from several tasks, merged
    records, found = query.observed_figures(records, topic_map, detailed=True)
    observation = Observation("topo")
    records.observe(observation, *found).write.format("noop").mode("overwrite").save()
    return observation.get


def test_each_topic_gets_its_records_bytes_latency_and_newest_timestamp(spark: Any) -> None:
    rows = [
        (b"k1", b"12345", FUTURE_MS, "orders"),  # 7 bytes, latency 0
        (None, b"123", FUTURE_MS + 5, "orders"),  # 3 bytes, a null key
        (b"k", None, 1_000, "payments"),  # 1 byte, a tombstone, latency ~ now
        (b"kk", b"v", FUTURE_MS, "payments"),  # 3 bytes
    ]
    before_ms = time.time() * 1000
    found = _observed(spark, rows, TOPICS)
    after_ms = time.time() * 1000
    assert set(found) == {OBSERVED_FIGURES}  # the query's one observed aggregate
    values = unpacked(found[OBSERVED_FIGURES], len(TOPICS))
    assert values is not None
    assert (values.records, values.bytes) == (4, 14)
    # sorted topics: audit, orders, payments; audit had none of the batch's records
    audit, orders, payments = values.topics
    assert audit == (0, 0, 0, None)
    assert orders == (2, 10, 0, FUTURE_MS + 5)
    assert payments[:2] == (2, 4) and payments[3] == FUTURE_MS
    assert before_ms - 1_000 - 1 <= payments[2] <= after_ms - 1_000  # the old record's latency
    assert values.latency_ms == payments[2]
    assert values.buckets == [3] * len(LATENCY_BUCKETS)  # the old record is past every bound


def test_latencies_fall_in_their_cumulative_buckets(spark: Any) -> None:
    now_ms = int(time.time() * 1000)
    # latencies of about 20 s, 90 s and 400 s: past 10 s, past 60 s, past every bound
    rows = [(b"k", b"v", now_ms - ago, "orders") for ago in (20_000, 90_000, 400_000)]
    values = unpacked(_observed(spark, rows, {"orders": "east.orders"})[OBSERVED_FIGURES], 1)
    assert values is not None
    expected = [
        sum(1 for ago in (20_000, 90_000, 400_000) if ago <= bound * 1000 - 5_000)
        for bound in LATENCY_BUCKETS
    ]  # a margin of 5 s for the time the batch took to start
    assert values.buckets == expected
    assert values.topics == [(3, 6, values.latency_ms, now_ms - 20_000)]


def test_a_query_of_too_many_topics_observes_latencies_per_flow_only(spark: Any) -> None:
    from topology.spark.query import OBSERVED_TOPICS_MAX

    many = {f"t{i:03}": f"east.t{i:03}" for i in range(OBSERVED_TOPICS_MAX + 1)}
    rows = [(b"k", b"v", FUTURE_MS, "t000"), (b"k", b"v", FUTURE_MS, "t050")]
    found = _observed(spark, rows, many)
    values = unpacked(found[OBSERVED_FIGURES], len(many))
    assert values is not None and values.topics == [] and values.buckets[0] == 2
    assert (values.records, values.bytes) == (2, 4)


def test_inputs_given_as_expressions_are_evaluated_as_columns_are_read(spark: Any) -> None:
    """The aggregate reads a column straight from each row; any other input is evaluated."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    from topology.spark import query

    rows = [(b"k1", b"12345", FUTURE_MS, "orders"), (None, b"123", FUTURE_MS + 5, "orders")]
    records = spark.createDataFrame(
        rows, "key binary, value binary, timestamp_ms long, source_topic string"
    )
    name = query._copy_figures(spark, 1)
    size = F.length("value").cast("long") + F.lit(1)  # not a column: evaluated per record
    found = F.call_function(name, F.lit(0), size, F.col("timestamp_ms") + F.lit(0))
    observation = Observation("expressions")
    records.observe(observation, found.alias(OBSERVED_FIGURES)).write.format("noop").mode(
        "overwrite"
    ).save()
    values = unpacked(observation.get[OBSERVED_FIGURES], 1)
    assert values is not None
    assert (values.records, values.bytes) == (2, 10)
    assert values.topics == [(2, 10, 0, FUTURE_MS + 5)]


def test_inputs_of_other_types_are_refused_when_the_query_is_analysed(spark: Any) -> None:
    from pyspark.errors import AnalysisException
    from pyspark.sql import functions as F

    from topology.spark import query

    records = spark.createDataFrame([(b"k", 1_000)], "key binary, timestamp_ms long")
    name = query._copy_figures(spark, 1)
    wrong = F.call_function(
        name, F.lit(0), F.col("timestamp_ms").cast("int"), F.col("timestamp_ms")
    )
    with pytest.raises(AnalysisException, match=r"takes \(int, bigint, bigint\); input 1 is"):
        records.select(wrong).collect()
