"""The running driver's periodic looks at its clusters, made in its JVM by topo's jar: each
cluster's topics and partition counts every few seconds (`TopicShapes`), and its topics' ids and
its partitions' ends for the metrics (`AdminLooks`). librdkafka's Python client would build a
Python object for every topic and partition on each look; these send and get lines of text."""

import json
from collections.abc import Callable, Iterable
from typing import Any

from py4j.protocol import Py4JJavaError
from pyspark.sql import SparkSession

from topology.core import connection
from topology.core.errors import KafkaUnavailableError, TopoError

Partition = tuple[str, int]


class TopicShapes:
    """A look at one cluster's topics through `java`, a `dev.topo.replication.TopicShapes`."""

    def __init__(self, java: Any, where: str) -> None:
        self._java = java
        self._where = where  # the cluster's bootstrap servers, to name it in a failure

    def shapes(self, timeout: float = 10) -> dict[str, int]:
        """Topic name -> partition count (the cluster's own topics, `__...`, left out)."""
        text = _asked(self._where, "listing topics", lambda: self._java.shapes(_ms(timeout)))
        found = {}
        for line in text.splitlines():
            name, count = line.split("\t")
            found[name] = int(count)
        return found


class AdminLooks:
    """The metrics' looks at one cluster through `java`, a `dev.topo.replication.AdminLooks`."""

    def __init__(self, java: Any, where: str) -> None:
        self._java = java
        self._where = where

    def ids(self, topics: Iterable[str], timeout: float = 5) -> dict[str, str]:
        """Each topic's id (Kafka gives a topic a new one each time it is made); a topic that
        does not exist is left out. KafkaUnavailableError when the cluster gives no answer."""
        names = "".join(f"{topic}\n" for topic in sorted(set(topics)))
        if not names:
            return {}
        doing = "reading the topics' ids"
        text = _asked(self._where, doing, lambda: self._java.ids(names, _ms(timeout)))
        found = {}
        for line in text.splitlines():
            name, made = line.split("\t")
            found[name] = made
        return found

    def ends(self, partitions: Iterable[Partition], timeout: float = 5) -> dict[Partition, int]:
        """Where each partition ends for a read_committed reader (its last stable offset); a
        partition that no longer exists is left out. KafkaUnavailableError when the cluster
        gives no answer, or one partition's end cannot be had: an end unknown is not an end
        reached."""
        asked = "".join(f"{topic}\t{partition}\n" for topic, partition in set(partitions))
        if not asked:
            return {}
        doing = "reading the source partitions' ends"
        text = _asked(self._where, doing, lambda: self._java.ends(asked, _ms(timeout)))
        found = {}
        for line in text.splitlines():
            topic, partition, end = line.split("\t")
            found[(topic, int(partition))] = int(end)
        return found


def shapes_opened(spark: SparkSession, config: dict[str, str], client_id: str) -> TopicShapes:
    """A topic look at the cluster of `config`, in the session's JVM; nothing is asked yet."""
    where, given = _settings(config, client_id)
    return TopicShapes(_opened(spark, where, given, "TopicShapes"), where)


def admin_opened(spark: SparkSession, config: dict[str, str], client_id: str) -> AdminLooks:
    """The metrics' looks at the cluster of `config`, in the session's JVM; nothing is asked
    yet."""
    where, given = _settings(config, client_id)
    return AdminLooks(_opened(spark, where, given, "AdminLooks"), where)


def _settings(config: dict[str, str], client_id: str) -> tuple[str, str]:
    """The cluster's bootstrap servers (to name it in a failure), and the Java client settings
    of `config` (librdkafka's, as the other clients get them; its `admin:` settings count, as
    for an admin client) as the JSON the Java classes open with."""
    settings = connection.java_client_config(connection.for_client(config, admin=True))
    given = json.dumps({**settings, "client.id": client_id})
    return config.get("bootstrap.servers", "?"), given


def _opened(spark: SparkSession, where: str, given: str, java_class: str) -> Any:
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    try:
        return getattr(jvm.dev.topo.replication, java_class).open(given)
    except Py4JJavaError as problem:  # a setting the Java client refuses
        raise TopoError(f"a client of {where}: {_reason(problem)}") from None


def _asked(where: str, doing: str, ask: Callable[[], Any]) -> str:
    """The Java look's answer; its failure as one line naming the cluster."""
    try:
        return str(ask())
    except Py4JJavaError as problem:
        raise KafkaUnavailableError(f"{doing} on {where} failed: {_reason(problem)}") from None


def _ms(seconds: float) -> int:
    return round(seconds * 1000)


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
