"""The running driver's look at a cluster's topics, every few seconds: each topic's name and
partition count, from one metadata request made in the driver's JVM by topo's jar
(`TopicShapes`). librdkafka's Python client would build a Python object for every partition of
every topic on each look; this gets one line per topic."""

import json
from typing import Any

from py4j.protocol import Py4JJavaError
from pyspark.sql import SparkSession

from topology.core import connection
from topology.core.errors import KafkaUnavailableError, TopoError


class TopicShapes:
    """A look at one cluster's topics through `java`, a `dev.topo.replication.TopicShapes`."""

    def __init__(self, java: Any, where: str) -> None:
        self._java = java
        self._where = where  # the cluster's bootstrap servers, to name it in a failure

    def shapes(self, timeout: float = 10) -> dict[str, int]:
        """Topic name -> partition count (the cluster's own topics, `__...`, left out)."""
        try:
            text = str(self._java.shapes(round(timeout * 1000)))
        except Py4JJavaError as problem:
            reason = _reason(problem)
            raise KafkaUnavailableError(
                f"listing topics on {self._where} failed: {reason}"
            ) from None
        found = {}
        for line in text.splitlines():
            name, count = line.split("\t")
            found[name] = int(count)
        return found


def opened(spark: SparkSession, config: dict[str, str], client_id: str) -> TopicShapes:
    """A look at the cluster of `config` (librdkafka's settings, as the other clients get them;
    its `admin:` settings count, as for an admin client), in the session's JVM; nothing is
    asked yet."""
    where = config.get("bootstrap.servers", "?")
    settings = connection.java_client_config(connection.for_client(config, admin=True))
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    given = json.dumps({**settings, "client.id": client_id})
    try:
        return TopicShapes(jvm.dev.topo.replication.TopicShapes.open(given), where)
    except Py4JJavaError as problem:  # a setting the Java client refuses
        raise TopoError(f"a client of {where}: {_reason(problem)}") from None


def _reason(problem: Py4JJavaError) -> str:
    """The Java exception's own message (its class's name without one), and its first
    cause's when it has one ("Failed to construct kafka consumer: <why>"): one line."""
    said = []
    cause = problem.java_exception
    for _ in range(2):
        said.append(str(cause.getMessage() or cause.getClass().getSimpleName()))
        cause = cause.getCause()
        if cause is None:
            break
    lines = ": ".join(said).splitlines()
    return lines[0] if lines else "no reason given"
