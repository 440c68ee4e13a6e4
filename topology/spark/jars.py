"""The Kafka connector jars Spark needs, resolved with mvn (never with Spark's own Ivy)."""

from collections.abc import Callable
from pathlib import Path

from topology.host import maven

CONNECTOR_JARS = "spark-kafka"


def kafka_connector_jars(report: Callable[[str], None] | None = None) -> list[Path]:
    """spark-sql-kafka for the pinned pyspark and what it needs beyond pyspark's own jars."""
    return maven.resolve(CONNECTOR_JARS, report=report)
