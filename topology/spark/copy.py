"""A Kafka-to-Kafka copy query: Spark's Kafka source, a `select`, Spark's Kafka sink.

Python stays out of the data path. Each record keeps its key, value (nulls too), headers and
partition; the target topic is `target_prefix + source topic`. The seed of topo's replication
engine.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming.query import StreamingQuery


@dataclass(frozen=True)
class CopyJob:
    source_bootstrap: str
    target_bootstrap: str
    topic_pattern: str  # a full-match regex, like MM2's topic filters
    checkpoint_dir: str
    target_prefix: str = ""
    source_options: Mapping[str, str] = field(default_factory=dict)  # extra kafka.* settings
    target_options: Mapping[str, str] = field(default_factory=dict)


def start_copy(spark: SparkSession, job: CopyJob, once: bool = True) -> StreamingQuery:
    """Start the query. `once`: copy what the sources hold now, then stop (availableNow)."""
    reader = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", job.source_bootstrap)
        # Spark matches subscribePattern as a substring; anchor it so `orders` is only orders.
        .option("subscribePattern", f"^(?:{job.topic_pattern})$")
        .option("startingOffsets", "earliest")
        .option("includeHeaders", "true")
        .option("kafka.isolation.level", "read_committed")
    )
    for key, value in job.source_options.items():
        reader = reader.option(f"kafka.{key}", value)
    records = reader.load().select(
        F.concat(F.lit(job.target_prefix), F.col("topic")).alias("topic"),
        "partition",
        "key",
        "value",
        "headers",
    )
    writer = (
        records.writeStream.format("kafka")
        .option("kafka.bootstrap.servers", job.target_bootstrap)
        .option("kafka.acks", "all")
        .option("kafka.enable.idempotence", "true")
        .option("checkpointLocation", job.checkpoint_dir)
    )
    for key, value in job.target_options.items():
        writer = writer.option(f"kafka.{key}", value)
    writer = (
        writer.trigger(availableNow=True) if once else writer.trigger(processingTime="0 seconds")
    )
    return writer.start()
