"""One edge's replication query: Spark's Kafka source, a `select`, Spark's Kafka sink.

Python stays out of the data path (except for exactly-once, whose transactional writes
Spark's sink cannot do). The select:
- drops records the loop rules or the user's filter reject;
- names the target topic from the edge's topic map (source topic -> remote topic);
- keeps partition, key, value (nulls too) and headers (order and duplicates kept), then
  appends the `topo-provenance` and `topo-offsets` headers (the clusters the record has been
  on, and its offset on each it was copied from) and the source timestamp header the sink's
  interceptor turns back into the record's timestamp (docs/engine.md says why).
"""

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming.query import StreamingQuery

from topology.core import naming, progress
from topology.core.flow_status import lag
from topology.core.jobs import OFFSETS_HEADER, PROVENANCE_HEADER, SOURCE_TIMESTAMP_HEADER, JobSpec
from topology.core.progress import LATENCY_BUCKETS, FlowProgress, from_query

INTERCEPTOR = "dev.topo.replication.SourceTimestampInterceptor"
HEADERS_TYPE = "array<struct<key:string,value:binary>>"
METRICS = progress.OBSERVED  # the name of the observed metrics in each batch's progress
SIZE_COLUMN = "topo_size"  # each record's key and value bytes, for the observed figures
TOPIC_COLUMN = "topo_topic_index"  # its topic's place in observed_topics, for the same
EXACTLY_ONCE_BATCH = "200000"  # records per micro-batch, over all partitions
REAL_TIME_CHECKPOINT = "5 seconds"  # real-time mode's batch: progress checkpoint interval
OBSERVED_TOPICS_MAX = 50  # a query of more topics has its figures per flow, not per topic


@dataclass(frozen=True)
class QueryPlan:
    spec: JobSpec
    topic_map: Mapping[str, str]  # source topic -> remote topic
    source_options: Mapping[str, str]  # Java Kafka client settings, without the `kafka.` prefix
    target_options: Mapping[str, str]
    checkpoint: str
    once: bool  # availableNow: copy what the source holds now, then stop
    # exactly-once only: the librdkafka settings of the target and the owner's name
    target_client: Mapping[str, str] | None = None
    owner: str = "topology"
    trigger: str = "micro-batch"  # | real-time | loop (topology/spark/loop.py, not a query)
    detailed: bool = True  # observe per-topic figures and latencies for the metrics endpoint
    # Where a flow taking over from MM2 starts (Spark's startingOffsets JSON: topic ->
    # partition -> offset, -2 for the earliest); None: the spec's start.
    starting: Mapping[str, Mapping[str, int]] | None = None
    partitions: Mapping[str, int] = field(default_factory=dict)  # source topic -> count
    # The copy loop only (its positions are in Kafka, not the checkpoint): a new handover's
    # `starting` wins over the positions the loop committed before it.
    starting_wins: bool = False


def start(spark: SparkSession, plan: QueryPlan) -> StreamingQuery:
    records = _copied(_read(spark, plan), plan.spec, plan.topic_map)
    real_time = plan.trigger == "real-time" and not plan.once
    if real_time and plan.spec.delivery != "exactly-once":
        return _start_real_time(spark, plan, records)
    observed = observe(records, plan.topic_map, plan.detailed)
    if plan.spec.delivery == "exactly-once":
        writer = observed.writeStream.foreachBatch(_transactional_batch(plan))
    else:
        sink_columns = observed.select("topic", "partition", "key", "value", "headers")
        writer = sink_columns.writeStream.format("kafka")
        for key, value in {**_sink_defaults(), **plan.target_options}.items():
            writer = writer.option(f"kafka.{key}", value)
    writer = writer.queryName(plan.spec.flow).option("checkpointLocation", plan.checkpoint)
    if plan.once:
        writer = writer.trigger(availableNow=True)
    else:
        writer = writer.trigger(processingTime="0 seconds")
    return writer.start()


def observed_topics(topic_map: Mapping[str, str]) -> list[str]:
    """The source topics in the order the observed per-topic figures number them."""
    return sorted(topic_map)


def observe(records: DataFrame, topic_map: Mapping[str, str], detailed: bool) -> DataFrame:
    """`records` with each batch's figures observed (as METRICS in its progress)."""
    records, found = observed_figures(records, topic_map, detailed)
    return records.observe(METRICS, *found)


def observed_figures(
    records: DataFrame, topic_map: Mapping[str, str], detailed: bool
) -> tuple[DataFrame, list[Column]]:
    """The figures to observe over `records` (and `records` with what they need): when
    `detailed`, OBSERVED_FIGURES alone, topo's `CopyFigures` aggregate (its Java source says what
    it holds; topology/telemetry/figures.py reads it); otherwise the records and their bytes."""
    # A column, not an expression of the aggregates: Spark folds it into the projection that
    # makes the copy, which reads each key and value once for both; evaluated by an aggregate,
    # each record's key and value would be copied out of the row again just to be measured.
    size = F.coalesce(F.length("key"), F.lit(0)) + F.coalesce(F.length("value"), F.lit(0))
    records = records.withColumn(SIZE_COLUMN, size.cast("long"))
    size = F.col(SIZE_COLUMN)
    if not detailed:
        return records, [
            F.count(F.lit(1)).alias(progress.OBSERVED_RECORDS),
            F.sum(size).alias(progress.OBSERVED_BYTES),
        ]
    topics = observed_topics(topic_map)
    if len(topics) > OBSERVED_TOPICS_MAX:
        topics = []  # per flow only: the figures would outgrow a progress report
    if len(topics) == 1:
        index = F.lit(0)  # every record is of the query's one topic
    elif topics:
        listed = F.array(*[F.lit(topic) for topic in topics])
        index = F.array_position(listed, F.col("source_topic")) - 1
    else:
        index = F.lit(-1)
    # A column too: the aggregate reads its inputs straight from the row
    records = records.withColumn(TOPIC_COLUMN, index.cast("int"))
    aggregate = _copy_figures(records.sparkSession, len(topics))
    found = F.call_function(aggregate, F.col(TOPIC_COLUMN), size, F.col("timestamp_ms"))
    return records, [found.alias(progress.OBSERVED_FIGURES)]


def _copy_figures(spark: SparkSession, topics: int) -> str:
    """The name of the session's `CopyFigures` aggregate for queries of `topics` topics."""
    name = f"topo_copy_figures_{topics}"
    jvm = spark.sparkContext._jvm
    gateway = spark.sparkContext._gateway
    assert jvm is not None and gateway is not None
    bounds = gateway.new_array(jvm.long, len(LATENCY_BUCKETS))
    for index, bound in enumerate(LATENCY_BUCKETS):
        bounds[index] = round(bound * 1000)
    # the same for every such query
    jvm.dev.topo.replication.CopyFigures.register(spark._jsparkSession, name, topics, bounds)
    return name


def _start_real_time(spark: SparkSession, plan: QueryPlan, records: DataFrame) -> StreamingQuery:
    """Spark 4.1's real-time mode: long-running tasks, one per source partition, copy records
    as they arrive; the trigger interval only sets how often progress is checkpointed. PySpark
    4.1 has no keyword for it, so the JVM's Trigger.RealTime is set directly. Observed metrics
    are not allowed in this mode: status counts the input rows instead."""
    writer = records.select("topic", "partition", "key", "value", "headers").writeStream
    writer = writer.format("kafka").outputMode("update")
    for key, value in {**_sink_defaults(), **plan.target_options}.items():
        writer = writer.option(f"kafka.{key}", value)
    writer = writer.queryName(plan.spec.flow).option("checkpointLocation", plan.checkpoint)
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    real_time = jvm.org.apache.spark.sql.streaming.Trigger.RealTime(REAL_TIME_CHECKPOINT)
    writer._jwrite = writer._jwrite.trigger(real_time)
    return writer.start()


def _read(spark: SparkSession, plan: QueryPlan) -> DataFrame:
    reader = (
        spark.readStream.format("kafka")
        .option("subscribe", ",".join(sorted(plan.topic_map)))
        .option("startingOffsets", _starting(plan))
        .option("includeHeaders", "true")
        # A partition that retention emptied before the job read it is skipped, not fatal:
        # like MM2, the copy continues from the oldest record the source still has; with
        # on_loss: stop the query fails there instead. (Micro-batches do not count the loss:
        # the copy loop does.)
        .option("failOnDataLoss", "true" if plan.spec.on_loss == "stop" else "false")
    )
    if plan.spec.delivery == "exactly-once":
        # Each task's batch is one Kafka transaction: keep it well inside its 60 s timeout.
        reader = reader.option("maxOffsetsPerTrigger", EXACTLY_ONCE_BATCH)
    for key, value in {**plan.source_options, "isolation.level": "read_committed"}.items():
        reader = reader.option(f"kafka.{key}", value)
    return reader.load()


def _starting(plan: QueryPlan) -> str:
    """Read only when the query has no checkpoint: MM2's positions for a handover, else the
    spec's start (`mm2` without positions, from a jobs document that has none: the earliest,
    where MM2 itself starts a partition it never copied)."""
    if plan.starting:
        return json.dumps(plan.starting, sort_keys=True)
    return "earliest" if plan.spec.start == "mm2" else plan.spec.start


def _sink_defaults() -> dict[str, str]:
    return {
        "acks": "all",
        "enable.idempotence": "true",  # with acks=all: no duplicates or reordering on retry
        "interceptor.classes": INTERCEPTOR,
        "linger.ms": "5",
    }


def _copied(source: DataFrame, spec: JobSpec, topic_map: Mapping[str, str]) -> DataFrame:
    headers = F.coalesce(F.col("headers"), F.array().cast(HEADERS_TYPE))
    mine = F.filter(headers, lambda h: h["key"] == F.lit(PROVENANCE_HEADER))
    hops = F.filter(headers, lambda h: h["key"] == F.lit(OFFSETS_HEADER))
    theirs = F.filter(
        headers,
        lambda h: (h["key"] != F.lit(PROVENANCE_HEADER)) & (h["key"] != F.lit(OFFSETS_HEADER)),
    )
    provenance = F.try_element_at(mine, F.lit(-1))["value"].cast("string")
    earlier_hops = F.coalesce(F.try_element_at(hops, F.lit(-1))["value"].cast("string"), F.lit(""))
    visited = F.when(provenance.isNull() | (provenance == ""), F.array().cast("array<string>"))
    visited = visited.otherwise(F.split(provenance, ","))
    kept = source.where(~F.array_contains(visited, spec.target))
    if spec.no_forward_from:
        last_hop = F.try_element_at(visited, F.lit(-1))
        from_mesh = F.size(visited) > 0
        kept = kept.where(~(from_mesh & last_hop.isin(*spec.no_forward_from)))
    if spec.record_filter:
        kept = kept.where(F.expr(spec.record_filter))
    stamp = F.array_join(F.concat(visited, F.array(F.lit(spec.source))), ",")
    hop = F.concat(F.lit(f"{spec.source}:"), F.col("offset").cast("string"))
    offsets = F.when(earlier_hops == "", hop).otherwise(F.concat(earlier_hops, F.lit(","), hop))
    out_headers = headers
    if spec.provenance:
        out_headers = F.concat(
            theirs,
            F.array(
                _header(PROVENANCE_HEADER, stamp.cast("binary")),
                _header(OFFSETS_HEADER, offsets.cast("binary")),
            ),
        )
    timestamp = F.unix_millis(F.col("timestamp"))
    if spec.delivery != "exactly-once":
        out_headers = F.concat(
            out_headers,
            F.array(_header(SOURCE_TIMESTAMP_HEADER, timestamp.cast("string").cast("binary"))),
        )
    topics = F.create_map(*[F.lit(x) for pair in sorted(topic_map.items()) for x in pair])
    return kept.select(
        F.try_element_at(topics, F.col("topic")).alias("topic"),
        "partition",
        "key",
        "value",
        out_headers.alias("headers"),
        timestamp.alias("timestamp_ms"),
        F.col("topic").alias("source_topic"),
        F.col("offset").alias("source_offset"),
    )


def _header(key: str, value: Column) -> Column:
    return F.struct(F.lit(key).alias("key"), value.alias("value"))


def _transactional_batch(plan: QueryPlan) -> Any:
    """A foreachBatch function: each task writes its source partition's records in one Kafka
    transaction, with the source offsets committed in it (topology/kafka/transactional.py)."""
    config = dict(plan.target_client or {})
    prefix = naming.transactional_prefix(plan.owner, plan.spec.slug)
    group = naming.progress_group(plan.owner, plan.spec.slug)

    def write_partition(rows: Any) -> None:
        from topology.kafka.transactional import Row, write_exactly_once

        write_exactly_once(
            config,
            (
                Row(
                    topic=row.topic,
                    partition=row.partition,
                    key=None if row.key is None else bytes(row.key),
                    value=None if row.value is None else bytes(row.value),
                    headers=tuple(
                        (h.key, None if h.value is None else bytes(h.value)) for h in row.headers
                    ),
                    timestamp_ms=row.timestamp_ms,
                    source_topic=row.source_topic,
                    source_partition=row.partition,
                    source_offset=row.source_offset,
                )
                for row in rows
            ),
            transactional_prefix=prefix,
            progress_group=group,
        )

    def write_batch(batch: DataFrame, _batch_id: int) -> None:
        batch.foreachPartition(write_partition)

    return write_batch


def progress_since(
    running: StreamingQuery, seen: dict[str, int], topics: Sequence[str], final: bool
) -> tuple[list[FlowProgress], int | None]:
    """The batches a query finished since the last look (`seen`: run id -> the last batch
    counted, updated here), and the lag an idle trigger reported (None without one). A look
    asks for the last batch's progress only (one object across py4j); the recent ones, up to a
    hundred, only when batches were missed (a restart, several batches between two looks) or
    once the query has ended (`final`)."""
    reported: list[Any]
    if final:
        reported = list(running.recentProgress)
    else:
        last = running.lastProgress
        if last is None:
            return [], None
        batch = int(last.get("batchId", -1))
        counted = seen.get(str(last.get("runId")))
        if counted is not None and batch <= counted:
            return [], None  # nothing new
        one = counted is not None and batch == counted + 1
        reported = [last] if one else list(running.recentProgress)
    found, idle_lag = [], None
    for report in reported:
        run_id, batch = str(report.get("runId")), int(report.get("batchId", -1))
        if batch <= seen.get(run_id, -1):
            continue
        made = from_query(report, topics)
        if made is None:  # a look that found no data, under the next batch's id
            seen[run_id] = batch - 1
            idle_lag = lag(report)
            continue
        seen[run_id] = batch
        found.append(made)
    return found, idle_lag
