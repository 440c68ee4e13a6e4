"""The driver's looks as Python reads them (topology/spark/cluster_looks.py): the lines topo's
Java `TopicShapes` and `AdminLooks` answer (their JUnit tests pin them) become names and
partition counts, topic ids and partition ends; the questions are lines too; and a Java failure
becomes one line naming the cluster, never a py4j traceback."""

from typing import Any

import pytest
from py4j.protocol import Py4JJavaError

from topology.core.errors import KafkaUnavailableError
from topology.spark.cluster_looks import AdminLooks, TopicShapes


class _JavaClass:
    def getSimpleName(self) -> str:
        return "TimeoutException"


class _JavaException:
    _target_id = "o1"  # py4j's reference to the exception in the JVM

    def __init__(self, message: str | None, cause: "_JavaException | None" = None) -> None:
        self.message, self.cause = message, cause

    def getMessage(self) -> str | None:
        return self.message

    def getCause(self) -> "_JavaException | None":
        return self.cause

    def getClass(self) -> _JavaClass:
        return _JavaClass()


class _Java:
    def __init__(self, answer: str | None = None, failure: _JavaException | None = None) -> None:
        self.answer, self.failure = answer, failure
        self.asked: list[Any] = []

    def shapes(self, timeout_ms: int) -> str:
        return self._answer(timeout_ms)

    def ids(self, names: str, timeout_ms: int) -> str:
        return self._answer(names, timeout_ms)

    def ends(self, partitions: str, timeout_ms: int) -> str:
        return self._answer(partitions, timeout_ms)

    def _answer(self, *asked: Any) -> str:
        self.asked.append(asked[0] if len(asked) == 1 else asked)
        if self.failure is not None:
            raise Py4JJavaError("An error occurred", self.failure)
        assert self.answer is not None
        return self.answer


def test_each_line_is_a_topic_and_its_partition_count() -> None:
    java = _Java("_schemas\t1\norders\t12\n")
    assert TopicShapes(java, "a:9092").shapes(timeout=2.5) == {"_schemas": 1, "orders": 12}
    assert java.asked == [2500]


def test_no_topics_is_an_empty_look() -> None:
    assert TopicShapes(_Java(""), "a:9092").shapes() == {}


@pytest.mark.parametrize(
    ("failure", "said"),
    [
        (
            _JavaException("Timeout expired while fetching topic metadata"),
            "Timeout expired while fetching topic metadata",
        ),
        (_JavaException(None), "TimeoutException"),
        (
            _JavaException(
                "Failed to construct kafka consumer",
                _JavaException("Could not login: the client is being asked for a password\nmore"),
            ),
            "Failed to construct kafka consumer: Could not login: the client is being asked",
        ),
    ],
)
def test_a_java_failure_is_one_line_naming_the_cluster(failure: _JavaException, said: str) -> None:
    with pytest.raises(KafkaUnavailableError) as raised:
        TopicShapes(_Java(failure=failure), "a:9092").shapes()
    line = str(raised.value)
    assert line.startswith(f"listing topics on a:9092 failed: {said}")
    assert "\n" not in line


def test_the_ids_asked_are_lines_of_names_and_each_answer_a_topic_and_its_id() -> None:
    java = _Java("a\tAAAAAAAAAAAAAAAAAAAAAA\norders\tb2xkb3JkZXJzb3JkZXJzbw\n")
    found = AdminLooks(java, "a:9092").ids(["orders", "a", "orders", "gone"], timeout=1.5)
    assert found == {"a": "AAAAAAAAAAAAAAAAAAAAAA", "orders": "b2xkb3JkZXJzb3JkZXJzbw"}
    assert java.asked == [("a\ngone\norders\n", 1500)]


def test_the_ends_asked_are_lines_of_partitions_and_each_answer_a_partition_and_its_end() -> None:
    java = _Java("orders\t0\t42\norders\t11\t0\n")
    found = AdminLooks(java, "a:9092").ends([("orders", 0), ("orders", 11), ("orders", 0)])
    assert found == {("orders", 0): 42, ("orders", 11): 0}
    [(asked, timeout_ms)] = java.asked
    assert sorted(asked.splitlines()) == ["orders\t0", "orders\t11"] and timeout_ms == 5000


def test_nothing_to_ask_asks_nothing() -> None:
    java = _Java(failure=_JavaException("must not be asked"))
    assert AdminLooks(java, "a:9092").ids([]) == {}
    assert AdminLooks(java, "a:9092").ends([]) == {}
    assert java.asked == []


@pytest.mark.parametrize(
    ("look", "doing"),
    [
        (lambda looks: looks.ids(["orders"]), "reading the topics' ids"),
        (lambda looks: looks.ends([("orders", 0)]), "reading the source partitions' ends"),
    ],
)
def test_a_failed_admin_look_is_one_line_naming_what_and_the_cluster(look: Any, doing: str) -> None:
    failure = _JavaException("Timed out waiting for a node assignment.\nCall: listOffsets")
    with pytest.raises(KafkaUnavailableError) as raised:
        look(AdminLooks(_Java(failure=failure), "a:9092"))
    assert str(raised.value) == (
        f"{doing} on a:9092 failed: Timed out waiting for a node assignment."
    )
