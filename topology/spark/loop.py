"""One flow copied by topo's copy loop, the one engine topo copies with.

The loop (topo's jar, docs/engine.md, Copy slots) is a leader in the driver's JVM (`CopyLoop`)
and copy slots (`Slot`, `CopyTask`), each a single-task Spark job (`SlotJobs`) on an executor:
a Kafka consumer of some of the flow's source partitions feeding a producer to the target,
with topo's loop rules and stamps applied in between, reporting to the leader over Spark's
plugin RPC (`SlotPlugin`, added to `spark.plugins` by `conf.with_slot_plugin`). Its positions are
committed to the flow's progress group on the target (inside each transaction for exactly-once),
not to a Spark checkpoint (a flow that copied as Spark micro-batches, before topo had only the
loop, goes on from where its checkpoint ends: `checkpoint_offsets`). `LoopPlan` is what one flow's
loop is started with; `RunningLoop` is the running loop as the driver drives it; what the loop did
reaches Python as its own versioned report (`CopyLoop.report()`), read into
`progress.FlowProgress`.
"""

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from topology.core import client_roles, naming
from topology.core.errors import TopoError
from topology.core.jobs import JobSpec
from topology.core.progress import LATENCY_BUCKETS, FlowProgress, read_loop_report
from topology.spark import resumed

# How often positions are committed: at-least-once after a flush (a restart copies at most this
# much again); exactly-once, each transaction's span (how long a copy is invisible to readers).
COMMIT_MS = {"at-least-once": 1000, "exactly-once": 100}
BUSY_COMMIT_MS = 1000  # while a slot is behind (more left than its poll took), at most this often
# How soon after a flow's start, and after each move, its leader may move a partition off a busy
# copy slot, unless `naming.LOOP_REBALANCE_CONF` says otherwise (0: never).
REBALANCE_MS = 60_000
STOP_WAIT_MS = 30_000


HEADERS_TYPE = "array<struct<key:string,value:binary>>"  # Spark's Kafka source's headers


@dataclass(frozen=True)
class LoopPlan:
    """What one flow's copy loop is started with."""

    spec: JobSpec
    topic_map: Mapping[str, str]  # source topic -> remote topic
    source_options: Mapping[str, str]  # Java Kafka client settings of the source
    target_options: Mapping[str, str]  # ... and of the target
    once: bool  # copy what the source holds now, then stop
    slots: int  # copy slots, each a consumer and a producer (`core.copy_slots`); idle ones sleep
    owner: str = "topology"
    # Where the flow starts (Spark's startingOffsets shape: topic -> partition -> offset, -2 the
    # earliest): a handover from MM2, or the end of the Spark checkpoint of a flow that copied as
    # micro-batches; None: from its committed positions, else the spec's start.
    starting: Mapping[str, Mapping[str, int]] | None = None
    partitions: Mapping[str, int] = field(default_factory=dict)  # source topic -> count
    # A new handover's `starting` wins over the positions the loop committed before it.
    starting_wins: bool = False
    # The flow's clients by role (`core.client_roles`), over `source_options` / `target_options`:
    # the source's consumer, the target's producer (topo's defaults and guarantees included) and
    # the leader's admin client of the target.
    consumer: Mapping[str, str] = field(default_factory=dict)
    producer: Mapping[str, str] = field(default_factory=lambda: client_roles.producer())
    admin: Mapping[str, str] = field(default_factory=dict)


class LoopFailed(Exception):
    """Why a copy loop stopped on its own (a cluster down, a copy refused)."""


class RunningLoop:
    """A running copy loop, as the driver drives it: `isActive`, `exception()`, `stop()`,
    `halt()`, `update()` (a topic or partition the driver finds joins it), and `reports()`,
    what it did since the last look (`progress.FlowProgress`, read from the loop's own
    versioned report)."""

    def __init__(self, java: Any, name: str) -> None:
        self._java = java
        self.name = name
        self._given: tuple[dict[str, str], dict[str, int]] | None = None

    @property
    def isActive(self) -> bool:
        """True until every thread has ended (stopped, done, or failed)."""
        return bool(self._java.isActive())

    def reports(self) -> list[FlowProgress]:
        """What the loop did since the last call (nothing when nothing moved)."""
        text = self._java.report()
        return [] if text is None else [read_loop_report(str(text))]

    def exception(self) -> LoopFailed | None:
        failure = self._java.failure()
        return None if failure is None else LoopFailed(str(failure))

    def stop(self) -> None:
        """Every thread commits what it copied and stops (waited for, up to STOP_WAIT_MS)."""
        self._java.stop(STOP_WAIT_MS)

    def halt(self) -> None:
        """Every thread stops at once and commits nothing more (the lease is lost); returns
        without waiting for them."""
        self._java.halt()

    def news(self) -> list[str]:
        """What the leader did since the last call that a person should hear of: each partition
        it moved between copy slots, and how."""
        said = self._java.news()  # one call: lines, or None when there is nothing new
        return [] if said is None else str(said).splitlines()

    def fencing(self) -> tuple[str, str] | None:
        """What the leader did, as it started, to the transactional ids of copy slots past the
        flow's count (exactly-once), to be said, with its level; None when nothing."""
        said = self._java.fencing()
        if said is None:
            return None
        return str(said), "warning" if self._java.fencingFailed() else "info"

    def update(self, topic_map: Mapping[str, str], partitions: Mapping[str, int]) -> None:
        """The flow's topics and partition counts now; nothing moves when they did not change."""
        given = (dict(topic_map), dict(partitions))
        if given != self._given:
            self._java.update(json.dumps(given[0]), json.dumps(given[1]))
            self._given = given


def checkpoint_offsets(spark: SparkSession, checkpoint: str) -> dict[str, dict[str, int]] | None:
    """Where a flow's Spark checkpoint says its newest committed batch ended (None without
    one): on this machine's disk, or through Spark's Hadoop file systems for a URI
    (`engine.checkpoints`: hdfs://, s3a://, file://), as Spark itself reads it."""
    if "://" not in checkpoint:
        return resumed.checkpoint_offsets(checkpoint)
    jvm, context = spark.sparkContext._jvm, spark.sparkContext._jsc
    assert jvm is not None and context is not None
    hadoop = jvm.org.apache.hadoop.fs
    root = hadoop.Path(checkpoint)
    files = root.getFileSystem(context.hadoopConfiguration())
    commits = hadoop.Path(root, "commits")
    if not files.exists(commits):
        return None
    newest = resumed.newest_batch(
        status.getPath().getName() for status in files.listStatus(commits)
    )
    if newest is None:
        return None
    stream = files.open(hadoop.Path(hadoop.Path(root, "offsets"), str(newest)))
    try:
        text = jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8")
    finally:
        stream.close()
    return resumed.batch_ends(str(text))


def record_filter(spark: SparkSession, predicate: str) -> Any:
    """The flow's filter for its slots (`SqlFilter`): resolved here, once, by Spark's analyzer
    over an empty relation of the Kafka source's columns, so it means what it means in a Spark
    query over Kafka; each slot compiles it."""
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    rows = spark.createDataFrame([], SOURCE_COLUMNS).where(F.expr(predicate))
    return jvm.dev.topo.replication.SqlFilter.of(rows._jdf.queryExecution().analyzed())


# The columns Spark's Kafka source gives a record (with headers), which a filter is written over.
SOURCE_COLUMNS = (
    "key binary, value binary, topic string, partition int, offset long, "
    f"timestamp timestamp, timestampType int, headers {HEADERS_TYPE}"
)


def start(spark: SparkSession, plan: LoopPlan) -> RunningLoop:
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    given = config(plan, rebalance_ms(spark))
    predicate = plan.spec.record_filter
    kept = None if predicate is None else record_filter(spark, predicate)
    slots = jvm.dev.topo.replication.SlotJobs(spark.sparkContext._jsc, kept)
    leader = jvm.dev.topo.replication.CopyLoop.start(json.dumps(given), plan.spec.flow, slots)
    started = RunningLoop(leader, plan.spec.flow)
    started._given = (given["topics"], given["partitions"])
    return started


def rebalance_ms(spark: SparkSession) -> int:
    """`spark.topo.loop.rebalanceMs` of the session's conf (`engine.spark_conf`), else
    REBALANCE_MS; refused unless a whole number of 0 or more (`topo validate` says so first,
    T104; this guards a conf set outside the topology, in spark-defaults.conf)."""
    given = spark.conf.get(naming.LOOP_REBALANCE_CONF, None)
    if given is None:
        return REBALANCE_MS
    found = naming.loop_rebalance_ms(given)
    if found is None:
        name = naming.LOOP_REBALANCE_CONF
        raise TopoError(f"{name} must be a whole number of milliseconds, not {given!r}")
    return found


def config(plan: LoopPlan, rebalance: int = REBALANCE_MS) -> dict[str, Any]:
    """The loop's configuration (CopyLoop reads it)."""
    spec = plan.spec
    return {
        "format": 1,  # LoopConfig.FORMAT: CopyLoop refuses another format, and any unknown field
        "source": spec.source,
        "target": spec.target,
        "provenance": spec.provenance,
        "no_forward_from": list(spec.no_forward_from),
        "exactly_once": spec.delivery == "exactly-once",
        "group": naming.progress_group(plan.owner, spec.slug),
        "transactional_prefix": naming.transactional_prefix(plan.owner, spec.slug),
        "client_id": f"topo-{plan.owner}-{spec.slug}",
        "source_client": {**plan.source_options, **plan.consumer},
        "target_client": dict(plan.target_options),
        "producer": dict(plan.producer),
        "admin": dict(plan.admin),
        "topics": dict(plan.topic_map),
        "partitions": {topic: plan.partitions.get(topic, 0) for topic in plan.topic_map},
        "start": "latest" if spec.start == "latest" else "earliest",
        "starting": _starting(plan.starting),
        "starting_wins": plan.starting_wins,
        "once": plan.once,
        "tasks": plan.slots,
        "commit_ms": COMMIT_MS[spec.delivery],
        "busy_commit_ms": BUSY_COMMIT_MS,
        "rebalance_ms": rebalance,
        "bounds_ms": [round(bound * 1000) for bound in LATENCY_BUCKETS],
        "on_loss": spec.on_loss,
        "separator": spec.separator,  # how the slots tell a heartbeats topic (naming.is_heartbeats)
    }


def _starting(starting: Mapping[str, Mapping[Any, int]] | None) -> dict[str, dict[str, int]]:
    """Spark's startingOffsets shape (-2 the earliest, -1 the latest), partitions as text."""
    return {
        topic: {str(partition): int(offset) for partition, offset in at.items()}
        for topic, at in (starting or {}).items()
    }
