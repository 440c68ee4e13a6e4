"""The Spark settings every topo job starts with, in a module without pyspark, so the launcher
(and `topo stop`) can read them on an install without the replication engine."""

import re
from collections.abc import Mapping

# The driver JVM's collector: Kafka's own settings (its brokers' and MirrorMaker 2's).
DRIVER_JVM = (
    "-XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35"
    " -XX:+ExplicitGCInvokesConcurrent"
)
# Why each setting: the UI and console progress bars are noise for a replication job; topo's
# jobs are narrow (no shuffle), so few shuffle partitions and no AQE; a modest driver heap so
# Spark fits beside three lab brokers on a small machine (measured in docs/lab.md).
BASE_CONF: Mapping[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "2",
    "spark.sql.adaptive.enabled": "false",
    "spark.driver.memory": "1g",
    # The copy slots run in the driver's JVM (local runner) or the executors': Kafka's own
    # collector settings (its brokers' and MirrorMaker 2's), short pauses over Java's 200 ms
    # default, and Spark's periodic System.gc() (its context cleaner's) concurrent rather than
    # a full pause.
    # spark.driver.extraJavaOptions, where a topology sets it, comes after these and wins.
    "spark.driver.defaultJavaOptions": DRIVER_JVM,
    "spark.executor.defaultJavaOptions": DRIVER_JVM,
    "spark.sql.session.timeZone": "UTC",
    "spark.log.level": "WARN",
    # Spark's own list plus the Kafka client's secrets (JAAS lines, PEM keys): their values are
    # shown as *********(redacted) wherever Spark prints settings or options.
    "spark.redaction.regex": r"(?i)secret|password|token|access[.]?key|jaas|keystore\.key",
}
# The copy slots' channel to their leader in the driver (topology/spark/loop.py): Spark's plugin
# RPC, through this plugin of topo's jar, added to whatever plugins a topology names.
SLOT_PLUGIN = "dev.topo.replication.SlotPlugin"
# The local runner's Spark: a copy slot is a task that runs as long as its flow, and waits on the
# network, so local[N] counts slots, not cores: the machine's cores for Spark's own tasks, each
# flow's slots (its `tasks`), and room for flows a running driver is given later.
SPARE_SLOTS = 16


def with_slot_plugin(conf: Mapping[str, str]) -> dict[str, str]:
    """`conf` with topo's slot plugin among `spark.plugins`, and speculation off (a speculative
    copy of a slot's task would be a second writer)."""
    given = dict(conf)
    plugins = [p.strip() for p in given.get("spark.plugins", "").split(",") if p.strip()]
    if SLOT_PLUGIN not in plugins:
        plugins.append(SLOT_PLUGIN)
    given["spark.plugins"] = ",".join(plugins)
    given["spark.speculation"] = "false"
    return given


def local_master(master: str, slots: int, cores: int) -> str:
    """The local runner's master: `local` and `local[*]` sized for `slots` copy slots (see
    SPARE_SLOTS); a count the topology states is kept."""
    if master.strip() in ("local", "local[*]"):
        return f"local[{cores + slots + SPARE_SLOTS}]"
    return master


# A size Java reads as Spark passes it (spark-submit puts spark.driver.memory after -Xmx as it
# is given): digits and a unit. Others (512mb, 2048) Java reads otherwise or refuses.
_JAVA_SIZE = re.compile(r"\d+[kmgt]", re.IGNORECASE)


def with_driver_heap(conf: Mapping[str, str]) -> dict[str, str]:
    """`conf` (BASE_CONF and a topology's settings merged) with the driver JVM's initial heap
    set to its whole heap, `-Xms` the same as the `-Xmx` spark-submit derives from
    `spark.driver.memory`, as Kafka starts its brokers and MirrorMaker 2. G1's thresholds are
    fractions of the heap the JVM has: of the small heap a JVM starts with, Spark's own
    long-lived objects alone were over 35%, and every large fetch buffer then began a
    concurrent cycle and its pauses. Left as given when a topology sets its own
    `spark.driver.defaultJavaOptions`, or a size that is not digits and a unit."""
    given = dict(conf)
    size = given.get("spark.driver.memory", "1g").strip()
    if given.get("spark.driver.defaultJavaOptions") != DRIVER_JVM or not _JAVA_SIZE.fullmatch(size):
        return given
    given["spark.driver.defaultJavaOptions"] = f"{DRIVER_JVM} -Xms{size}"
    return given


def with_java_options(conf: Mapping[str, str], options: tuple[str, ...]) -> dict[str, str]:
    """`conf` with `options` added to the driver's and the executors' default Java options (a
    topology's extraJavaOptions still come after them)."""
    given = dict(conf)
    if not options:
        return given
    for role in ("driver", "executor"):
        key = f"spark.{role}.defaultJavaOptions"
        given[key] = " ".join(part for part in (given.get(key, ""), *options) if part)
    return given
